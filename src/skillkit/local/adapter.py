"""`LocalAdapter`: SkillKit's OpenAI adapter, talking over HTTP to a `LocalServer` it owns.

This is what the model strings ``local`` and ``local:PATH.gguf`` turn into: the server is
started first, the model is registered in the model registry (so the runner knows its
context window), and every model call goes through `OpenAIAdapter` to the server's
``/v1/chat/completions`` -- a real HTTP wire, not an in-process shortcut. ``aclose()``
stops the server.

Local models are small, so every reply passes through
`skillkit.adapters.repetition.stop_repetition` (a reply that starts writing itself again
is ended there, with a note). The default model also has a profile in ``model.json``
(`skillkit.local.profile.ModelProfile`): of SkillKit's own built-in tools it is offered
only ``offered_tools``, SkillKit's default system prompt is replaced by a short one
written for it (``system_prompt``) -- what the user chose is always sent as given --, tool
results are shown to it numbered (``numbered_results``), its reply to a question is a tool
call under a grammar whose arguments of SkillKit's own tools can only be values the
conversation holds (``call_first``, ``grounded_arguments``; `skillkit.local.constrained`),
a message that asks for no tool ("hello") is answered in words, a file the user named
and no call has read yet is read before the answer, its reply after a tool result is
words (opening with "Yes" or "No" for a yes/no question), and its answers are kept to
what the request contains (`skillkit.local.grounding`).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import Any

import openai

from skillkit.abort import AbortSignal
from skillkit.adapters.base import LLMAdapter
from skillkit.adapters.openai import OpenAIAdapter
from skillkit.adapters.repetition import stop_repetition
from skillkit.local.constrained import (
    answer_now,
    asks_for_tools,
    call_first,
    call_next,
    reply_in_words,
)
from skillkit.local.errors import LocalModelError
from skillkit.local.grounding import keep_grounded, known_words
from skillkit.local.model import default_model, model_path_from_string, tool_template
from skillkit.local.profile import ModelProfile
from skillkit.local.server import CLIENT_HEADERS, LocalServer
from skillkit.local.tool_formats import ToolFormat, recover_tool_calls, tool_format
from skillkit.model_registry import (
    ModelCompat,
    ModelCost,
    ModelDefinition,
    default_registry,
)
from skillkit.models import LLMRequest, StreamEvent, TokenUsage

__all__ = ["LocalAdapter", "ModelProfile", "create_local_adapter", "local_model_definition"]

PROVIDER = "local"
_LLAMACPP_COMPAT = ModelCompat(reasoning_field="reasoning_content")


class LocalAdapter(LLMAdapter):
    """An `OpenAIAdapter` bound to a `LocalServer`.

    ``owns_server`` (default True) makes ``aclose()`` stop the server as well as the HTTP
    client (``client``, closed by ``aclose()`` when given). ``profile`` shapes every
    request (see `ModelProfile`); the first time it shortens one of SkillKit's defaults,
    ``notify`` (default: a line on stderr) is told once what it shortened. ``verbose``
    (default: the ``SKILLKIT_VERBOSE`` environment variable set to ``1``, which
    ``skillkit --verbose`` sets) writes the exact JSON body of every request to stderr.
    ``tool_style`` is the tool-call format of the model's chat template
    (`skillkit.local.tool_formats`): a reply written as a call in it that the server left
    as text becomes a tool call. Replies that start repeating themselves are ended
    (`stop_repetition`); a cut reply
    keeps its usage (input counted by the server's tokenizer, output by the deltas
    received). Otherwise streams, errors, usage and abort behave exactly as
    `OpenAIAdapter`'s. ``aclose()`` is idempotent.
    """

    provider = PROVIDER

    def __init__(
        self,
        server: LocalServer,
        inner: OpenAIAdapter,
        *,
        owns_server: bool = True,
        client: openai.AsyncOpenAI | None = None,
        profile: ModelProfile | None = None,
        notify: Callable[[str], None] | None = None,
        verbose: bool | None = None,
        tool_style: ToolFormat | None = None,
    ) -> None:
        self.server = server
        self.inner = inner
        self.owns_server = owns_server
        self.client = client
        self.profile = profile or ModelProfile()
        self.notify = notify or _to_stderr
        self.verbose = os.environ.get("SKILLKIT_VERBOSE") == "1" if verbose is None else verbose
        self.noticed = False
        self.tool_style = tool_style
        self.closed = False

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def on_retry(self) -> Any:
        return self.inner.on_retry

    @on_retry.setter
    def on_retry(self, callback: Any) -> None:
        self.inner.on_retry = callback

    @property
    def context_window(self) -> int | None:
        return self.inner.context_window

    def chat_stream_events(
        self, request: LLMRequest, *, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        shaped, notes = self.profile.shape(request)
        if notes and not self.noticed:
            self.noticed = True
            self.notify(
                f"skillkit: the local model {self.model} is small: {'; '.join(notes)}. "
                "Tools and prompts you set are sent as given."
            )
        sent, style = shaped, self.tool_style
        if self.profile.call_first:
            common = [self.profile.system_prompt or ""]
            grounded = self.profile.grounded_arguments
            if not asks_for_tools(shaped):
                sent = reply_in_words(shaped) or shaped
            elif constrained := (
                call_first(shaped, grounded=grounded, common=common)
                or call_next(shaped, grounded=grounded)
            ):
                sent, style = constrained, "json"
            else:
                sent = answer_now(shaped) or shaped
        if self.verbose:
            self.notify(f"skillkit: request to {self.server.base_url}: {self.request_body(sent)}")

        async def usage_on_cut(deltas: int) -> TokenUsage | None:
            prompt = await self.count_prompt_tokens(sent)
            return None if prompt is None else TokenUsage(input=prompt, output=deltas)

        events = self.inner.chat_stream_events(sent, abort=abort)
        if style is not None and shaped.tools:
            offered = {schema.name for schema in shaped.tools}
            events = recover_tool_calls(events, style, offered)
        events = stop_repetition(events, usage_on_cut=usage_on_cut)
        if self.profile.grounded:
            known = known_words(self.profile.grounding_texts(request, shaped))
            events = keep_grounded(events, known, usage_on_cut=usage_on_cut)
        return events

    def request_body(self, request: LLMRequest) -> str:
        """The JSON body the server receives for ``request`` (already shaped)."""
        body = {
            "model": self.inner.model,
            "messages": self.inner.build_messages(request, self.inner.model),
            "stream": True,
            **self.inner.build_options(request),
        }
        return json.dumps(body, ensure_ascii=False)

    async def count_prompt_tokens(self, request: LLMRequest) -> int | None:
        """The prompt tokens of ``request`` as the server counts them (its chat template
        applied, then its tokenizer), or None when the server cannot tell."""
        body = json.loads(self.request_body(request))
        try:
            url = self.server.url
        except LocalModelError:
            return None

        def count() -> int | None:
            try:
                applied = _post_json(
                    url + "/apply-template",
                    {
                        k: body[k]
                        for k in ("messages", "tools", "chat_template_kwargs")
                        if k in body
                    },
                )
                tokens = _post_json(
                    url + "/tokenize", {"content": applied["prompt"], "add_special": True}
                )
                return len(tokens["tokens"])
            except (OSError, KeyError, TypeError, ValueError):
                return None

        return await asyncio.to_thread(count)

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        await self.inner.aclose()
        if self.client is not None:
            await self.client.close()
        if self.owns_server:
            await self.server.astop()


def local_model_definition(server: LocalServer, model_string: str = "local") -> ModelDefinition:
    """The registry entry for a running server's model.

    The default model's entry comes from ``model.json`` (with the server's real context
    window); a user's GGUF gets ``id`` = the path part of ``model_string``, so
    ``local:PATH`` is its registry key and the runner finds its context window.
    """
    context = server.context_window
    if server.is_default_model:
        entry = default_model().entry
        return ModelDefinition(
            id=entry["id"],
            provider=PROVIDER,
            context_window=context,
            max_output_tokens=min(int(entry["max_output_tokens"]), context),
            display_name=entry["display_name"],
            cost=ModelCost(0.0, 0.0),
            capabilities=frozenset(entry["capabilities"]),
            compat=_LLAMACPP_COMPAT,
            aliases=tuple(entry.get("aliases", ())),
        )
    model_id = model_string.strip().removeprefix(PROVIDER).removeprefix(":").strip()
    name = server.info.name if server.info is not None else model_id
    return ModelDefinition(
        id=model_id or str(server.model_path),
        provider=PROVIDER,
        context_window=context,
        max_output_tokens=context,
        display_name=f"{name} (local GGUF)",
        cost=ModelCost(0.0, 0.0),
        capabilities=frozenset({"text", "tool_use"}),
        compat=_LLAMACPP_COMPAT,
    )


def create_local_adapter(
    model: str = "local",
    *,
    server: LocalServer | None = None,
    on_retry: Any = None,
    register: bool = True,
    **server_options: Any,
) -> LocalAdapter:
    """Start a `LocalServer` for ``model`` and return a `LocalAdapter` that owns it.

    ``model`` is ``local`` (the default model) or ``local:PATH.gguf``. Pass a running
    ``server`` to share one you manage (the adapter then does not stop it).
    ``server_options`` go to `LocalServer` (``threads``, ``chat_template``...).
    ``register`` adds the model to the default model registry.

    Raises a `LocalModelError` subclass with a one-line message when the server cannot
    start, and `ValueError` when ``model`` is not a ``local`` model string.
    """
    owns = server is None
    if server is None:
        path = model_path_from_string(model)
        server = LocalServer(path, **server_options).start()
    definition = local_model_definition(server, model)
    if register:
        default_registry().register(definition)
    client = openai.AsyncOpenAI(
        base_url=server.base_url,
        api_key="not-needed",
        default_headers=CLIENT_HEADERS,
        max_retries=0,
    )
    inner = OpenAIAdapter(
        server.model_id,
        base_url=server.base_url,
        api_key="not-needed",
        client=client,
        compat=definition.compat,
        on_retry=on_retry,
        provider=PROVIDER,
        context_window=definition.context_window,
    )
    profile = None
    if server.is_default_model:
        entry = default_model().entry
        tools = entry.get("offered_tools")
        options = entry.get("request_options")
        own = entry.get("own_tools")
        profile = ModelProfile(
            tools=tuple(tools) if isinstance(tools, list) else None,
            own_tools=frozenset(own) if isinstance(own, list) else frozenset(),
            system_prompt=entry.get("system_prompt"),
            options=options if isinstance(options, dict) else None,
            grounded=bool(entry.get("grounded", False)),
            call_first=bool(entry.get("call_first", False)),
            drop_sections=tuple(entry.get("drop_sections", ())),
            grounded_arguments=entry.get("grounded_arguments"),
            results=_nouns(entry.get("numbered_results")),
            examples=_examples(entry.get("tool_examples")),
        )
    inner.images = "image" in definition.capabilities
    if server.template == "tools":
        style = tool_format(tool_template())
    elif server.template == "model":
        style = tool_format(server.info.chat_template if server.info is not None else None)
    else:
        style = tool_format(_read_text(server.template))
    return LocalAdapter(
        server, inner, owns_server=owns, client=client, profile=profile, tool_style=style
    )


def _nouns(value: Any) -> dict[str, tuple[str, str]] | None:
    """``numbered_results`` of ``model.json`` (tool -> [singular, plural])."""
    if not isinstance(value, dict):
        return None
    return {str(tool): (str(nouns[0]), str(nouns[1])) for tool, nouns in value.items()}


def _examples(value: Any) -> dict[str, tuple[str, dict[str, Any]]] | None:
    """``tool_examples`` of ``model.json`` (tool -> [what the user says, the arguments])."""
    if not isinstance(value, dict):
        return None
    return {str(tool): (str(pair[0]), dict(pair[1])) for tool, pair in value.items()}


def _to_stderr(line: str) -> None:
    from skillkit.text import write_note

    write_note(line, sys.stderr)


def _post_json(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **CLIENT_HEADERS},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _read_text(path: str) -> str | None:
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None
