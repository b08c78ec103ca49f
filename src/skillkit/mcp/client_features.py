"""What SkillKit answers when an MCP server asks something of its client.

`ClientFeatures.configure` gives each server's `mcp.Client` these callbacks, and
so the client capabilities they stand for:

- **roots** — the workspace folder(s), as ``file://`` URIs;
- **sampling** — the server asks the session's model a question. It is judged by the
  permission gate as a call of ``mcp_sampling__<server>`` (the prompt in the
  approval), so ``allow``/``deny`` rules name it like any tool (a rule for the
  server's tools, ``mcp__<server>__*``, does not cover it), asking shows the
  user the prompt, and asking means denied in ``-p``. The model is given no tools
  (a sampling request that offers tools is refused: ``sampling.tools`` is not
  advertised) and nothing of the conversation (``includeContext`` is ignored); its
  answer is bounded (``max_tokens`` at most `SAMPLING_MAX_TOKENS`), and its usage
  counts as the session's;
- **elicitation** — the server asks the user for data: a form (each field one
  question, in the face's question UI) or a URL to open; in ``-p`` it is declined;
- **log messages** — to the ``skillkit.mcp.<server>`` logger, and to stderr with
  ``--verbose`` (``SKILLKIT_VERBOSE=1``); secrets the agent knows are redacted and
  terminal control characters shown as visible stand-ins.

A server is a stranger to the user's session, so every request fails closed and is
bounded: sampling and elicitation are answered only while one of that server's tool
calls runs (asked for that call), one at a time per server, at most `REQUEST_LIMIT`
of each per tool call; a request with a prompt or a form past the size limits is
refused; log messages past `LOG_BURST` per minute are dropped (and the drop is logged
once a minute). A callback never raises: every failure is an error answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.session import ClientRequestContext

    from mcp import Client
    from skillkit.agent.contributors import AgentHandle
    from skillkit.mcp.connection import McpConnection

__all__ = [
    "LOG_BURST",
    "PROMPT_LIMIT",
    "REQUEST_LIMIT",
    "SAMPLING_MAX_TOKENS",
    "ClientFeatures",
    "sampling_tool_name",
]

SAMPLING_MAX_TOKENS = 4096
"""The most tokens a server's sampling request may have the model write."""
PROMPT_LIMIT = 50_000
"""The most characters of text a sampling request (messages and system prompt) or
an elicitation (message and form) may carry."""
REQUEST_LIMIT = 3
"""Sampling requests, and elicitations, a server may make during one tool call."""
LOG_BURST = 200
"""Log messages kept per server per minute; more are dropped."""
# servers' log lines are shown by --verbose, or by a logging set-up the embedder makes
logging.getLogger("skillkit.mcp").addHandler(logging.NullHandler())
_FORM_FIELDS = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sampling_tool_name(server: str) -> str:
    """``mcp_sampling__<server>``: the name the permission gate judges a sampling
    request of ``server`` by (what ``allow``/``deny`` rules name)."""
    return _UNSAFE.sub("_", f"mcp_sampling__{server}")[:64]


_LOG_TEXT = 2000


class ClientFeatures:
    """The client side of SkillKit's MCP connections. ``roots`` gives the folders to
    offer (called at each ``roots/list``); ``agent`` gives the agent the servers serve
    (None: nobody to ask — sampling and elicitation are refused)."""

    def __init__(
        self,
        *,
        roots: Callable[[], Sequence[str | os.PathLike[str]]],
        agent: Callable[[], AgentHandle | None],
    ) -> None:
        self._roots = roots
        self._agent = agent
        self._locks: dict[str, asyncio.Lock] = {}
        self._counts: dict[tuple[str, str, int], int] = {}
        self._logs: dict[str, tuple[float, int, int]] = {}

    def configure(self, client: Client, connection: McpConnection) -> None:
        """Set ``client``'s callbacks (and so its capabilities) for ``connection``."""
        name = connection.name

        async def list_roots(context: ClientRequestContext) -> Any:
            return self.list_roots()

        async def sampling(context: ClientRequestContext, params: Any) -> Any:
            return await self._guard(
                connection, "sampling", lambda call: self._sample(connection, call, params)
            )

        async def elicitation(context: ClientRequestContext, params: Any) -> Any:
            return await self._guard(
                connection, "elicitation", lambda call: self._elicit(connection, call, params)
            )

        async def log(params: mcp_types.LoggingMessageNotificationParams) -> None:
            self.log(name, params)

        client.list_roots_callback = list_roots
        client.sampling_callback = sampling
        client.elicitation_callback = elicitation
        client.logging_callback = log
        client.log_level = "info"

    # ----- roots

    def list_roots(self) -> Any:
        from mcp_types import ListRootsResult, Root

        roots: list[Root] = []
        try:
            for folder in self._roots():
                path = Path(os.path.abspath(os.fspath(folder)))
                roots.append(Root(uri=path.as_uri(), name=path.name or str(path)))  # type: ignore[arg-type]
        except Exception as exc:
            return _error(f"roots are not available: {exc}")
        return ListRootsResult(roots=roots)

    # ----- log messages

    def log(self, server: str, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """Log a server's message: secrets the agent knows redacted, terminal controls
        made visible, at most `LOG_BURST` a minute. Never raises."""
        try:
            now = time.monotonic()
            start, kept, dropped = self._logs.get(server, (now, 0, 0))
            logger = logging.getLogger(f"skillkit.mcp.{server}")
            if now - start >= 60:
                if dropped:
                    self._emit(logger, logging.WARNING, server, f"{dropped} log messages dropped")
                start, kept, dropped = now, 0, 0
            if kept >= LOG_BURST:
                if not dropped:
                    notice = f"more than {LOG_BURST} log messages this minute; the rest are dropped"
                    self._emit(logger, logging.WARNING, server, notice)
                self._logs[server] = (start, kept, dropped + 1)
                return
            self._logs[server] = (start, kept + 1, dropped)
            data = params.data if isinstance(params.data, str) else repr(params.data)
            text = " ".join(data.split())[:_LOG_TEXT]
            redactor = getattr(self._agent(), "redactor", None)
            if redactor is not None:
                text = redactor.redact(text)
            source = f"{server}/{params.logger}" if params.logger else server
            level = _LEVELS.get(str(params.level), logging.INFO)
            self._emit(logger, level, source, text, kind=str(params.level))
        except Exception:  # a log line is never worth a failure
            return

    def _emit(
        self, logger: logging.Logger, level: int, source: str, text: str, *, kind: str = "warning"
    ) -> None:
        from skillkit.text import neutralize

        line = neutralize(f"[{kind}]: {text}")
        logger.log(level, "%s %s", source, line)
        if os.environ.get("SKILLKIT_VERBOSE") == "1":
            sys.stderr.write(f"skillkit: mcp {neutralize(source)} {line}\n")

    # ----- sampling and elicitation

    async def _guard(
        self, connection: McpConnection, what: str, answer: Callable[[Any], Any]
    ) -> Any:
        """Answer a server's request only inside one of its tool calls, within the
        limits, one at a time per server; any failure is an error answer."""
        try:
            if not connection.active_calls:
                return _error(f"{what} is answered only while one of your tool calls runs")
            call = connection.active_calls[-1]
            key = (connection.name, what, id(call))
            count = self._counts.get(key, 0) + 1
            if count > REQUEST_LIMIT:
                return _error(
                    f"too many {what} requests in one tool call (at most {REQUEST_LIMIT})"
                )
            self._counts[key] = count
            lock = self._locks.setdefault(f"{connection.name}:{what}", asyncio.Lock())
            async with lock:
                return await answer(call)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return _error(f"{what} failed: {' '.join(str(exc).split())[:300]}")
        finally:
            live = {id(c) for c in connection.active_calls}
            for stale in [k for k in self._counts if k[0] == connection.name and k[2] not in live]:
                del self._counts[stale]

    async def _sample(self, connection: McpConnection, call: Any, params: Any) -> Any:
        from mcp_types import CreateMessageResult, TextContent

        from skillkit.models import LLMRequest, TextPart, UserMessage
        from skillkit.tools.base import ToolContext

        agent = self._agent()
        if agent is None:
            return _error("sampling is not available: no agent")
        if params.tools or params.tool_choice is not None:
            return _error("sampling with tools is not supported")
        messages, problem = _sampling_messages(params)
        if problem:
            return _error(problem)
        system = params.system_prompt or ""
        if sum(len(m.text) for m in messages) + len(system) > PROMPT_LIMIT:
            return _error(f"the sampling request is longer than {PROMPT_LIMIT} characters")
        prompt = "\n\n".join(f"{m.role}: {m.text}" for m in messages)
        allowed, reason = await self._approve(
            agent,
            connection,
            call,
            {
                "description": f"MCP server '{connection.name}' asks the model",
                "prompt": prompt,
                "system_prompt": system,
                "max_tokens": params.max_tokens,
            },
        )
        if not allowed:
            return _error(f"sampling was denied: {reason}")
        llm_messages = [
            UserMessage([TextPart(m.text)]) if m.role == "user" else _assistant(m.text)
            for m in messages
        ]
        config = agent.config
        options: dict[str, Any] = {
            "max_tokens": max(1, min(params.max_tokens, SAMPLING_MAX_TOKENS))
        }
        if params.temperature is not None:
            options["temperature"] = params.temperature
        request = LLMRequest(
            model=config.model, messages=llm_messages, system_prompt=system, options=options
        )
        adapter = getattr(agent, "adapter", None)
        if adapter is None:
            return _error("sampling is not available: the agent has no model")
        abort = call.abort if isinstance(call, ToolContext) else None
        text: list[str] = []
        usage = None
        async for event in adapter.chat_stream_events(request, abort=abort):
            if event.type == "text_delta" and event.content:
                text.append(event.content)
            elif event.type == "error":
                return _error(f"the model failed: {event.error or 'error'}")
            elif event.type == "done":
                usage = event.usage
        add_usage = getattr(agent, "add_usage", None)
        if usage is not None and callable(add_usage):
            add_usage(usage)
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="".join(text)),
            model=config.model or "unknown",
            stop_reason="endTurn",
        )

    async def _elicit(self, connection: McpConnection, call: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        from skillkit.permissions.questions import Question, QuestionOption

        agent = self._agent()
        questions_broker = _questions(agent)
        if agent is None or questions_broker is None:
            return ElicitResult(action="decline")
        server = connection.name
        if getattr(params, "mode", "form") == "url":
            url = str(params.url)
            if len(params.message) + len(url) > PROMPT_LIMIT:
                return _error("the elicitation is too long")
            question = Question(
                question=f"MCP server '{server}' asks you to open {url}: {params.message}",
                header=f"MCP {server}",
                options=[QuestionOption(label="Open it"), QuestionOption(label="Decline")],
            )
            response = await self._ask(agent, questions_broker, call, [question])
            if response is None:
                return ElicitResult(action="decline")
            picked = response.answers[0].selected if response.answers else []
            return ElicitResult(action="accept" if picked == ["Open it"] else "decline")
        schema = params.requested_schema or {}
        fields = dict(schema.get("properties") or {})
        if len(fields) > _FORM_FIELDS or len(str(schema)) + len(params.message) > PROMPT_LIMIT:
            return _error("the elicitation form is too large")
        required = set(schema.get("required") or ())
        questions: list[Question] = []
        for name, spec in fields.items():
            spec = spec if isinstance(spec, dict) else {}
            title = spec.get("title") or name
            text = f"{params.message} — {title}" if len(fields) > 1 else params.message
            if spec.get("description"):
                text += f" ({spec['description']})"
            options = _options(spec)
            questions.append(
                Question(
                    question=f"[MCP {server}] {text}" + ("" if name in required else " (optional)"),
                    header=str(title)[:40],
                    options=[QuestionOption(label=o) for o in options],
                )
            )
        response = await self._ask(agent, questions_broker, call, questions)
        if response is None:
            return ElicitResult(action="decline")
        content: dict[str, Any] = {}
        for (name, spec), answer in zip(fields.items(), response.answers, strict=False):
            raw = answer.selected[0] if answer.selected else answer.text.strip()
            if raw == "" and name not in required:
                continue
            value, problem = _typed(raw, spec if isinstance(spec, dict) else {})
            if problem:
                return ElicitResult(action="decline")
            content[name] = value
        if required - content.keys():
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=content)

    async def _ask(self, agent: AgentHandle, broker: Any, call: Any, questions: list[Any]) -> Any:
        """The user's answers (None: no user, declined, timed out, aborted)."""
        from skillkit.permissions.events import QuestionItem, QuestionNeeded, QuestionOption
        from skillkit.tools.base import ToolContext

        async def announce(request: Any) -> None:
            await agent.events.emit(
                "question_needed",
                QuestionNeeded(
                    request_id=request.request_id,
                    agent_id=request.agent_id,
                    questions=[
                        QuestionItem(
                            question=q.question,
                            header=q.header,
                            multi_select=q.multi_select,
                            options=[QuestionOption(label=o.label) for o in q.options],
                        )
                        for q in request.questions
                    ],
                ),
            )

        abort = call.abort if isinstance(call, ToolContext) else None
        response = await broker.ask(
            questions, agent_id=agent.events.agent_id, abort=abort, announce=announce
        )
        if not response.answered:
            return None
        return response

    async def _approve(
        self,
        agent: AgentHandle,
        connection: McpConnection,
        call: Any,
        arguments: dict[str, Any],
    ) -> tuple[bool, str]:
        """Ask the permission gate about `sampling_tool_name`; (allowed, why not).
        No gate: denied."""
        from skillkit.permissions.events import ApprovalNeeded
        from skillkit.tools.base import ToolContext

        permissions = getattr(getattr(agent, "roles", None), "permissions", None)
        gate = getattr(permissions, "gate", None)
        if gate is None:
            return False, "no permission gate to ask"

        async def announce(request: Any) -> None:
            await agent.events.emit("approval_needed", ApprovalNeeded.of(request))

        is_context = isinstance(call, ToolContext)
        outcome = await gate.check(
            sampling_tool_name(connection.name),
            arguments,
            tool_call_id=call.tool_call_id if is_context else "",
            agent_id=agent.events.agent_id,
            abort=call.abort if is_context else None,
            announce=announce,
        )
        return bool(outcome.allowed), str(outcome.message or "not allowed")


_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class _Said:
    __slots__ = ("role", "text")

    def __init__(self, role: str, text: str) -> None:
        self.role, self.text = role, text


def _sampling_messages(params: Any) -> tuple[list[_Said], str]:
    """The request's messages as (role, text); a problem line for content other than
    text (images, audio, tool use)."""
    said: list[_Said] = []
    for message in params.messages:
        content = message.content
        blocks = content if isinstance(content, list) else [content]
        texts: list[str] = []
        for block in blocks:
            if getattr(block, "type", "") != "text":
                return (
                    [],
                    f"sampling content of type {getattr(block, 'type', '?')} is not supported",
                )
            texts.append(block.text)
        said.append(_Said(str(message.role), "\n".join(texts)))
    if not said:
        return [], "the sampling request has no messages"
    return said, ""


def _assistant(text: str) -> Any:
    from skillkit.models import AssistantMessage, TextPart

    return AssistantMessage([TextPart(text)])


def _questions(agent: AgentHandle | None) -> Any:
    permissions = getattr(getattr(agent, "roles", None), "permissions", None)
    return getattr(permissions, "questions", None)


def _options(spec: dict[str, Any]) -> list[str]:
    if spec.get("type") == "boolean":
        return ["true", "false"]
    values = spec.get("enum")
    if isinstance(values, list):
        return [str(v) for v in values][:20]
    one_of = spec.get("oneOf")
    if isinstance(one_of, list):
        return [str(o.get("const")) for o in one_of if isinstance(o, dict) and "const" in o][:20]
    return []


def _typed(raw: str, spec: dict[str, Any]) -> tuple[Any, str]:
    """``raw`` as the field's type; a problem line when it is not one."""
    kind = spec.get("type")
    try:
        if kind == "boolean":
            if raw.lower() not in ("true", "false", "yes", "no"):
                return None, "not a yes/no answer"
            return raw.lower() in ("true", "yes"), ""
        if kind == "integer":
            return int(raw), ""
        if kind == "number":
            return float(raw), ""
    except ValueError:
        return None, f"not a {kind}"
    return raw, ""


def _error(message: str) -> Any:
    from mcp_types import INVALID_REQUEST, ErrorData

    return ErrorData(code=INVALID_REQUEST, message=message)
