"""`LocalServer`: llama.cpp's HTTP server, embedded in this process, on 127.0.0.1.

The server speaks the real wire formats -- OpenAI Chat Completions and Responses at
`LocalServer.base_url`, Anthropic Messages at `LocalServer.anthropic_base_url` -- so
SkillKit's ordinary adapters talk to it over HTTP like any other provider.

    with LocalServer() as server:          # the default model, a free port
        client = openai.OpenAI(base_url=server.base_url, api_key="not-needed")

A server stops when its `stop` is called, when its ``with`` / ``async with`` block ends,
and at interpreter exit (a running server never outlives the process).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import socket
import threading
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from types import TracebackType
from typing import Any

from skillkit.local.errors import (
    LocalModelError,
    ModelFileError,
    PortInUseError,
    ServerStartError,
)
from skillkit.local.gguf import GGUFInfo, read_gguf_info
from skillkit.local.model import default_model, find_default_gguf, tool_template
from skillkit.local.runtime import default_threads, load_runtime

__all__ = ["CLIENT_HEADERS", "DEFAULT_PROMPT_CACHE_MIB", "MAX_DEFAULT_CONTEXT", "LocalServer"]

MAX_DEFAULT_CONTEXT = 8192
"""Context window used when none is asked for: the model's own, at most this many tokens
(a bigger window costs memory for a cache a small model rarely fills)."""

DEFAULT_PROMPT_CACHE_MIB = 256
"""RAM for cached prompts between requests (llama.cpp's own default is 8 GiB)."""

CLIENT_HEADERS: dict[str, str] = {"Connection": "close"}
"""Headers every HTTP client of a `LocalServer` should send. The embedded server closes a
connection after a streamed response although it announced keep-alive, so a client that
reuses the connection gets "server disconnected" on its next request; asking for a fresh
connection per request (cheap on loopback) avoids that."""

_live: weakref.WeakSet[LocalServer] = weakref.WeakSet()


DEFAULT_MAX_OUTPUT = 512
"""Tokens one request to the default model may write when the client sends no limit."""


class LocalServer:
    """One embedded llama.cpp server for one GGUF model.

    ``model`` is a GGUF path, or None for the default model. ``port=0`` picks a free port.
    ``threads`` defaults to `default_threads` (``SKILLKIT_LOCAL_THREADS`` overrides it).
    ``context_window`` defaults to the model's training context, at most
    `MAX_DEFAULT_CONTEXT`. ``chat_template`` is ``"tools"`` (SkillKit's tool-aware
    ChatML template), ``"model"`` (the template in the GGUF file), the path of a Jinja file,
    or None (``"tools"`` for the default model, ``"model"`` otherwise).

    ``reproducible=True`` turns off prompt caching, so a request's greedy output never
    depends on earlier requests (tests and benchmarks want this); otherwise prompts are
    cached in at most ``prompt_cache_mib`` of RAM, which makes multi-turn chats fast.
    ``temperature`` sets the default sampling temperature for requests that do not send
    one (None: the default model's catalog value, llama.cpp's default for other files).

    `start` blocks until the server answers its health check; it raises a
    `LocalModelError` subclass with a one-line message for every failure a user can fix.
    Methods are safe to call from several threads; `start` and `stop` are idempotent.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        threads: int | None = None,
        context_window: int | None = None,
        chat_template: str | None = None,
        reproducible: bool = False,
        prompt_cache_mib: int = DEFAULT_PROMPT_CACHE_MIB,
        temperature: float | None = None,
        alias: str | None = None,
        parallel: int = 1,
        startup_timeout: float = 120.0,
        verbose: bool = False,
    ) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be between 0 and 65535, got {port}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if context_window is not None and context_window < 64:
            raise ValueError(f"context_window must be at least 64 tokens, got {context_window}")
        if parallel < 1:
            raise ValueError(f"parallel must be at least 1, got {parallel}")
        self._model_arg = None if model is None else Path(os.fspath(model))
        self.host = host
        self._requested_port = port
        self.threads = threads if threads is not None else default_threads()
        self._context_arg = context_window
        self._template_arg = chat_template
        self.reproducible = reproducible
        self.prompt_cache_mib = max(0, prompt_cache_mib)
        self._temperature_arg = temperature
        self._alias_arg = alias
        self.parallel = parallel
        self.startup_timeout = startup_timeout
        self.verbose = verbose
        self._lock = threading.RLock()
        self._server: Any = None
        self._url: str | None = None
        self.info: GGUFInfo | None = None
        self.model_id = alias or ""
        self.context_window = context_window or 0
        self.template = ""

    # ------------------------------------------------------------------ state

    @property
    def is_default_model(self) -> bool:
        return self._model_arg is None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` of the running server (`ServerStartError` when stopped)."""
        if self._url is None:
            raise ServerStartError("the local model server is not running: call start() first")
        return self._url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible endpoint (Chat Completions, Responses): ``URL/v1``."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The base URL for the Anthropic SDK (which appends ``/v1/messages``)."""
        return self.url

    @property
    def model_path(self) -> Path:
        """The GGUF file this server loads (resolving the default model's location)."""
        return self._model_arg if self._model_arg is not None else find_default_gguf()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LocalServer:
        """Load the model, start serving and wait until healthy. Returns ``self``."""
        with self._lock:
            if self._server is not None:
                return self
            runtime = load_runtime()
            path = self.model_path
            info = read_gguf_info(path)
            if self._requested_port and not _port_free(self.host, self._requested_port):
                raise _port_in_use(self.host, self._requested_port)
            params = self._params(runtime, path, info)
            try:
                server = runtime.Server(params)
            except RuntimeError:
                if self._requested_port and not _port_free(self.host, self._requested_port):
                    raise _port_in_use(self.host, self._requested_port) from None
                raise ServerStartError(
                    f"llama.cpp could not load {path} ({info.architecture or 'unknown'} "
                    f"architecture): the file may be truncated or need a newer llama.cpp; "
                    f"try another GGUF or a smaller context window"
                ) from None
            self._server = server
            self._url = str(server.listening_address).rstrip("/")
            self.info = info
            _live.add(self)
            try:
                self._wait_healthy()
            except LocalModelError:
                self.stop()
                raise
            return self

    def stop(self) -> None:
        """Stop serving and free the model's memory. Safe to call at any time, repeatedly."""
        with self._lock:
            server, self._server = self._server, None
            self._url = None
            _live.discard(self)
        del server  # the runtime stops its server when the object is released

    async def astart(self) -> LocalServer:
        """`start` without blocking the event loop."""
        return await asyncio.to_thread(self.start)

    async def astop(self) -> None:
        """`stop` without blocking the event loop."""
        await asyncio.to_thread(self.stop)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> LocalServer:
        return await self.astart()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    def __repr__(self) -> str:
        where = self._url or "stopped"
        return f"LocalServer({self.model_id or self._model_arg or 'default'!s}, {where})"

    # ------------------------------------------------------------------ internals

    def _params(self, runtime: Any, path: Path, info: GGUFInfo) -> Any:
        default = default_model()
        params = runtime.CommonParams()
        params.model.path = str(path)
        params.hostnames = [self.host]
        params.port = self._requested_port
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        context = self._context_arg or min(
            info.context_length or MAX_DEFAULT_CONTEXT, MAX_DEFAULT_CONTEXT
        )
        params.n_ctx = context
        params.n_parallel = self.parallel
        params.cache_prompt = not self.reproducible
        params.cache_ram_mib = 0 if self.reproducible else self.prompt_cache_mib
        params.ui = False
        params.warmup = False  # the first request loads what warm-up would; start is faster
        params.endpoint_slots = False
        params.offline = True
        params.verbosity = 3 if self.verbose else 0
        alias = self._alias_arg or (default.id if self.is_default_model else info.name)
        params.model_alias = {alias}
        template = self._template_arg or (
            default.chat_template if self.is_default_model else "model"
        )
        if template == "tools":
            params.chat_template = tool_template()
        elif template != "model":
            params.chat_template = _read_template(template)
        params.use_jinja = True
        temperature = self._temperature_arg
        if temperature is None and self.is_default_model:
            temperature = default.temperature
        if temperature is not None:
            params.sampling.temp = temperature
        if self.is_default_model:
            # a 135M model at temperature 0 can repeat itself until the context is full:
            # cap what one request writes unless the client asks for more. (A repeat
            # penalty stops the loops but also stops it from calling tools.)
            params.n_predict = DEFAULT_MAX_OUTPUT
        self.model_id = alias
        self.context_window = context
        self.template = template
        return params

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last = "no answer"
        while True:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except urllib.error.HTTPError as exc:  # 503 while the model loads
                last = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                last = str(getattr(exc, "reason", exc))
            if time.monotonic() >= deadline:
                raise ServerStartError(
                    f"the local model server did not become healthy within "
                    f"{self.startup_timeout:g} s ({last})"
                )
            time.sleep(0.05)


def _read_template(path: str) -> str:
    try:
        return Path(os.path.expanduser(path)).read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelFileError(
            f"cannot read chat template {path}: {exc.strerror or exc} "
            f"(use 'tools', 'model' or the path of a Jinja file)"
        ) from None


def _port_free(host: str, port: int) -> bool:
    """Whether a server could listen on ``host:port`` now (as llama.cpp binds: with
    SO_REUSEADDR, so connections lingering in TIME_WAIT do not count)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _port_in_use(host: str, port: int) -> PortInUseError:
    return PortInUseError(
        f"port {port} on {host} is already in use: choose another with --port, "
        f"or --port 0 for a free one"
    )


@atexit.register
def _stop_all() -> None:
    for server in list(_live):
        server.stop()
