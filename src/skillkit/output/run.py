"""`OutputRun`: one run's structured output — what the request asks for, the partial
value while the answer streams, and the checking of each answer against its retry limit.

The agent loop owns one per run that has an output type; nothing here talks to the
model or the bus.
"""

from __future__ import annotations

from typing import Any

import jiter

from skillkit.models import OutputSchema, StreamEvent, ToolCall, ToolSchema
from skillkit.output.spec import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError

__all__ = ["OutputRun", "parse_partial"]

_TOOL_DESCRIPTION = (
    "Give your final answer by calling this tool once, with the answer as its arguments. "
    "Call it only when the task is done; the run ends when the answer is valid."
)


def parse_partial(text: str) -> Any:
    """The JSON value an unfinished JSON text describes so far (strings cut mid-way are
    kept), or None when nothing can be read from it yet."""
    body = text.lstrip()
    if body.startswith("```"):
        body = body.partition("\n")[2]
    if not body:
        return None
    try:
        return jiter.from_json(body.encode(), partial_mode="trailing-strings")
    except ValueError:
        return None


class OutputRun:
    """The structured output of one run.

    ``native`` says the provider's structured output is used (else the final tool named
    ``tool_name``). After each answer `check_text` / `check_call` record the outcome:
    ``value`` holds the validated value once one was accepted (``accepted``), ``error``
    the last validation error, and ``exhausted`` turns true when more than
    ``spec.retries`` answers were invalid.
    """

    __slots__ = (
        "_buffer",
        "_call_id",
        "_last",
        "accepted",
        "error",
        "failures",
        "native",
        "spec",
        "strict",
        "tool_name",
        "value",
    )

    def __init__(self, spec: OutputSpec, *, native: bool, tool_name: str = OUTPUT_TOOL_NAME):
        self.spec = spec
        self.native = native
        self.tool_name = tool_name
        self.strict = spec.strict_wire_schema()
        self.value: Any = None
        self.accepted = False
        self.error: str | None = None
        self.failures = 0
        self._buffer: list[str] = []
        self._call_id: str | None = None
        self._last: Any = None

    @classmethod
    def choose(cls, spec: OutputSpec, *, supports_native: bool) -> OutputRun:
        """The run for ``spec``: native when asked (``mode="native"``), or with
        ``mode="auto"`` when the model supports it and the schema has a strict form;
        else the final tool."""
        if spec.mode == "native":
            native = True
        elif spec.mode == "tool":
            native = False
        else:
            native = supports_native and spec.strict_wire_schema() is not None
        return cls(spec, native=native)

    # ----- the request

    def request(self) -> OutputSchema:
        """What `skillkit.models.LLMRequest.output` carries for this run."""
        strict = self.strict
        return OutputSchema(
            name=self.tool_name if not self.native else self.spec.name,
            schema=strict if strict is not None else self.spec.wire_schema(),
            description=self.spec.description,
            strict=strict is not None,
            mode="native" if self.native else "tool",
        )

    def tool(self) -> ToolSchema | None:
        """The final tool offered in tool mode (None in native mode)."""
        if self.native:
            return None
        description = _TOOL_DESCRIPTION
        if self.spec.description:
            description = f"{description} The answer: {self.spec.description}"
        schema = self.strict if self.strict is not None else self.spec.wire_schema()
        return ToolSchema(self.tool_name, description, schema)

    # ----- streaming

    def feed(self, event: StreamEvent) -> tuple[bool, Any]:
        """Follow one stream event; ``(True, value)`` when the partial output changed
        (``value`` is the output so far, as JSON data)."""
        kind = event.type
        if self.native:
            if kind == "text_start":
                self._reset()
            elif kind == "text_delta":
                self._buffer.append(event.content)
                return self._parse()
            return False, None
        if kind == "tool_call_start":
            self._reset()
            self._call_id = event.tool_call_id if event.tool_name == self.tool_name else None
        elif kind == "tool_call_delta" and self._call_id is not None:
            self._buffer.append(event.content)
            return self._parse()
        return False, None

    def _reset(self) -> None:
        self._buffer = []
        self._last = None
        self._call_id = None

    def _parse(self) -> tuple[bool, Any]:
        data = parse_partial("".join(self._buffer))
        if data is None:
            return False, None
        value = self.spec.unwrap_partial(data)
        if value is None or value == self._last:
            return False, None
        self._last = value
        return True, value

    # ----- checking answers

    def output_calls(self, calls: list[ToolCall]) -> list[ToolCall]:
        """The calls of the final tool among ``calls`` (none in native mode)."""
        if self.native:
            return []
        return [call for call in calls if call.name == self.tool_name]

    def check_text(self, text: str) -> bool:
        """Check a reply's text as the answer; True when it was accepted."""
        try:
            value = self.spec.parse_text(text)
        except OutputValidationError as exc:
            return self._reject(str(exc))
        return self._accept(value)

    def check_call(self, call: ToolCall) -> str | None:
        """Check a final tool call's arguments; None when accepted, else the error text
        the model is sent as the tool's result. Only the first valid call counts."""
        if self.accepted:
            return None
        arguments = call.arguments
        if "__raw_arguments__" in arguments:
            self._reject("the arguments are not a JSON object")
            return self.retry_text()
        try:
            value = self.spec.parse_wire(arguments)
        except OutputValidationError as exc:
            self._reject(str(exc))
            return self.retry_text()
        self._accept(value)
        return None

    def retry_text(self) -> str:
        """What the model is told after an invalid answer."""
        how = (
            "Reply with only the JSON value, matching the schema."
            if self.native
            else f"Call the {self.tool_name} tool again with corrected arguments."
        )
        return f"The answer is not valid:\n{self.error}\n{how}"

    def missing_call_text(self) -> str:
        """What the model is told when it answered without calling the final tool."""
        return (
            f"You must give the final answer by calling the {self.tool_name} tool. "
            f"Its text was not accepted:\n{self.error}"
        )

    def explain_failure(self, error: str) -> str:
        """``error`` of a failed model call, with a note when the provider rejected a
        request that asked for native structured output (its schema rules are the
        likely cause; the final tool has none)."""
        if not self.native or "rejected the request" not in error:
            return error
        return (
            f"{error} (the request asked for structured output '{self.spec.name}' with the "
            "provider's native JSON schema mode; a schema it does not accept can be asked "
            "for with the final tool instead: OutputSpec.of(..., mode='tool'))"
        )

    @property
    def exhausted(self) -> bool:
        """More invalid answers than the spec allows retries."""
        return not self.accepted and self.failures > self.spec.retries

    def give_up_text(self) -> str:
        """The run's error once the retries are used up."""
        tries = self.failures
        return (
            f"the model's output was not valid after {tries} attempt"
            f"{'s' if tries != 1 else ''}: {self.error}"
        )

    def _accept(self, value: Any) -> bool:
        self.value = value
        self.accepted = True
        self.error = None
        return True

    def _reject(self, error: str) -> bool:
        self.failures += 1
        self.error = error
        return False
