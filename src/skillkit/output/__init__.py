"""Structured output: a run's final answer as a validated value.

``await agent.chat(prompt, output_type=Weather)`` asks the model for an answer that is
a ``Weather`` (a pydantic model, a dataclass, a ``TypedDict`` or a JSON schema dict) and
returns it, validated, as `AgentResponse.output`. The modules, one concept each:

- `spec`: `OutputSpec`, a type turned into a JSON schema and a validator;
- `strict`: `strict_schema`, the form strict provider modes accept;
- `run`: `OutputRun`, one run's output — the request part, partial values while the
  answer streams (`parse_partial`, jiter's partial mode), and checking answers
  against the retry limit.

See ``docs/structured-output.md``.
"""

from skillkit.output.run import OutputRun, parse_partial
from skillkit.output.spec import (
    OUTPUT_TOOL_NAME,
    OutputMode,
    OutputSpec,
    OutputValidationError,
    read_schema_file,
)
from skillkit.output.strict import strict_schema

__all__ = [
    "OUTPUT_TOOL_NAME",
    "OutputMode",
    "OutputRun",
    "OutputSpec",
    "OutputValidationError",
    "parse_partial",
    "read_schema_file",
    "strict_schema",
]
