"""The span and attribute names SkillKit's traces use.

The ``gen_ai.*`` names follow the OpenTelemetry semantic conventions for generative AI
(agent, model and tool spans). Those conventions are still in development and have moved
out of the main conventions package, so SkillKit writes the strings down here instead of
importing them: a rename upstream changes this module, nothing else. The ``skillkit.*``
names are SkillKit's own (cost, how a run ended).

This module imports nothing, so reading a name costs nothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

__all__ = [
    "ERROR_TYPE",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_OUTPUT_MESSAGES",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MAX_TOKENS",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_REQUEST_TEMPERATURE",
    "GEN_AI_RESPONSE_FINISH_REASONS",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_SYSTEM_INSTRUCTIONS",
    "GEN_AI_TOKEN_TYPE",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_DESCRIPTION",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS",
    "METRIC_OPERATION_DURATION",
    "METRIC_TOKEN_USAGE",
    "OPERATION_CHAT",
    "OPERATION_EXECUTE_TOOL",
    "OPERATION_INVOKE_AGENT",
    "PROVIDER_NAMES",
    "SERVER_ADDRESS",
    "SERVER_PORT",
    "SKILLKIT_HANDOFF_TO_AGENT",
    "SKILLKIT_RUN_ITERATIONS",
    "SKILLKIT_RUN_STOP_REASON",
    "SKILLKIT_USAGE_COST",
    "provider_name",
    "server_of",
]

# ----- operations (the value of gen_ai.operation.name, and the first word of span names)

OPERATION_INVOKE_AGENT: Final = "invoke_agent"
"""One run of the agent loop; span ``invoke_agent {agent name}``, kind INTERNAL."""
OPERATION_CHAT: Final = "chat"
"""One model call; span ``chat {model}``, kind CLIENT."""
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
"""One tool call; span ``execute_tool {tool name}``, kind INTERNAL."""

# ----- every GenAI span

GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
"""The provider in the conventions' words (`provider_name` of the adapter's provider:
``openai``, ``anthropic``, ``gcp.gemini``, ``x_ai``...)."""
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
"""The session the run belongs to, when the runner was told (`AgentRunner.conversation_id`)."""
ERROR_TYPE: Final = "error.type"
"""Why a span ended in error: the failure's kind when the adapter knows it
(``rate_limit``, ``connection``, ``auth``... `StreamEvent.error_kind`), else an
exception's class name, a SkillKit stop reason (``error``, ``context_overflow``,
``aborted``, ``guardrail``) or ``tool_error``. A run's span carries the kind of the model
call that failed it."""
SERVER_ADDRESS: Final = "server.address"
"""The host of the adapter's ``base_url`` (model spans and metrics; absent without one)."""
SERVER_PORT: Final = "server.port"
"""The port of the adapter's ``base_url`` (its scheme's default when the URL has none)."""

# ----- agent spans

GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"

# ----- model spans

GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
"""The provider's id of the reply (`StreamEvent.response_id`), when it sent one."""
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
"""The model that answered as the provider names it (`StreamEvent.response_model`); on
metrics too."""
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
"""Every input token, cached ones included (SkillKit's ``input + cache_read +
cache_write``), as the conventions ask."""
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
"""Output tokens spent on reasoning (part of the output tokens), when the provider says
(`StreamEvent.reasoning_tokens`: OpenAI's Chat Completions and Responses APIs)."""
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"

# ----- tool spans

GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
"""The description the model was offered for the tool (from the run's last model request)."""
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
"""Always ``function`` for SkillKit tools."""

# ----- metrics (histograms, recorded per model call when a meter provider is set)

METRIC_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
"""Tokens per model call, one record per ``gen_ai.token.type`` (``input``, ``output``);
unit ``{token}``."""
METRIC_OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
"""Seconds from a model request to its stream's last event; unit ``s``."""
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
"""``input`` or ``output``, on `METRIC_TOKEN_USAGE` records."""

# ----- content (only when content capture is on; JSON text, secrets redacted)

GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"

# ----- SkillKit's own

SKILLKIT_USAGE_COST: Final = "skillkit.usage.cost"
"""Cost in US dollars at the model's known prices (absent when the prices are unknown);
on a run span, the sum over its model calls."""
SKILLKIT_RUN_STOP_REASON: Final = "skillkit.run.stop_reason"
SKILLKIT_HANDOFF_TO_AGENT: Final = "skillkit.handoff.to_agent"
"""On an ``invoke_agent`` span that ended with a handoff: the agent that answers next."""
"""How a run ended: ``stop``, ``length``, ``aborted``, ``error``, ``max_iterations``..."""
SKILLKIT_RUN_ITERATIONS: Final = "skillkit.run.iterations"
"""How many model calls (turns) a run made."""

# ----- provider names

PROVIDER_NAMES: Final[dict[str, str]] = {
    "google": "gcp.gemini",
    "gemini": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "vertex_ai": "gcp.vertex_ai",
    "xai": "x_ai",
    "mistral": "mistral_ai",
    "bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
    "azure_openai": "azure.ai.openai",
    "azure_inference": "azure.ai.inference",
    "watsonx": "ibm.watsonx.ai",
}
"""SkillKit provider prefixes whose well-known ``gen_ai.provider.name`` is spelt
differently; the others (``openai``, ``anthropic``, ``deepseek``, ``groq``, ``ollama``,
``scripted``...) are already the conventions' name or have none, and pass through."""


def provider_name(provider: str) -> str:
    """The ``gen_ai.provider.name`` of a SkillKit provider prefix (unknown ones
    unchanged)."""
    return PROVIDER_NAMES.get(provider, provider)


@lru_cache(maxsize=64)
def server_of(base_url: str) -> tuple[str, int] | None:
    """``server.address`` and ``server.port`` of a base URL (the scheme's default port
    when it names none); None when it has no host."""
    try:
        from urllib.parse import urlsplit

        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    if port is None:
        port = 80 if parts.scheme == "http" else 443
    return host, port
