"""`McpConnection`: one configured MCP server, its connection and what it lists.

The connection lives in a task of its own (the MCP client's transport and session are
entered and left in that one task); calls are made from the caller's task, so
cancelling a caller — an aborted run — cancels the server's handler too.

States (`McpConnection.status`):

- ``idle`` — configured, not started (servers start lazily);
- ``starting`` — spawning / connecting and initialising;
- ``connected`` — tools, prompts and resources listed; calls go through;
- ``failed`` — it could not start (``error`` says why in one line); the next
  `McpConnection.connect` tries again;
- ``disconnected`` — it was connected and went away (crashed, closed the stream);
  the next call starts it again (`McpConnection.restarts` counts these);
- ``closed`` — `McpConnection.aclose` was called; nothing starts it again.

What SkillKit tells a server about itself: its client name and version
(``skillkit``, `skillkit.__version__`) in ``initialize``, and the client capabilities
that ``configure_client`` gives the `mcp.Client` (roots, sampling, elicitation, log
messages: see `skillkit.mcp.client_features`). While a tool call runs, its caller
is in `McpConnection.active_calls`, so a request the server makes in the middle of it
(sampling, elicitation) is judged for that call.

Tool-list changes arrive through ``subscriptions/listen`` on 2026 connections and as
``notifications/*/list_changed`` on older ones; either way the lists are fetched again
and ``on_change`` is called, so the next turn offers the new tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Literal, TextIO, TypeAlias

from skillkit.errors import describe_exception
from skillkit.mcp.client_start import client_info as _client_info
from skillkit.mcp.client_start import default_client as _default_client
from skillkit.mcp.client_start import stderr_file as _stderr_file
from skillkit.mcp.client_start import stderr_tail as _stderr_tail
from skillkit.mcp.config import McpServerConfig

if TYPE_CHECKING:
    import mcp_types
    from mcp.shared.dispatcher import ProgressFnT

    from mcp import Client

__all__ = ["ConnectionStatus", "McpCallError", "McpConnection", "ProgressCallback"]

ConnectionStatus = Literal["idle", "starting", "connected", "failed", "disconnected", "closed"]

ProgressCallback: TypeAlias = "ProgressFnT"
"""``progress(progress, total, message)``: a server's progress notification."""

ClientFactory = Callable[[McpServerConfig, AsyncExitStack, TextIO], Awaitable["Client"]]
"""Makes the (not yet entered) `mcp.Client` for a server; for tests and embedding."""

ClientConfigurer = Callable[["Client", "McpConnection"], None]
"""Sets a (not yet entered) client's callbacks for one connection (must not raise)."""

_PAGE_LIMIT = 100
_METHOD_NOT_FOUND = -32601


class McpCallError(Exception):
    """A call could not be made or did not finish; the message is one line for the
    model and the user."""


class McpConnection:
    """One server (``config``). ``on_change`` is called (no arguments, must not raise)
    whenever its status or lists change. ``client_factory`` replaces how the
    `mcp.Client` is made (default: stdio or Streamable HTTP from the config).

    Every public coroutine is safe to call from any task; none raises for the server's
    failures except `call_tool` / `read_resource` / `get_prompt`, which raise
    `McpCallError` (and `asyncio.CancelledError` when the caller is cancelled)."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        on_change: Callable[[], None] | None = None,
        client_factory: ClientFactory | None = None,
        configure_client: ClientConfigurer | None = None,
    ) -> None:
        self.config = config
        self.status: ConnectionStatus = "idle"
        self.error = ""
        self.restarts = 0
        self.protocol_version = ""
        self.tools: list[mcp_types.Tool] = []
        self.prompts: list[mcp_types.Prompt] = []
        self.resources: list[mcp_types.Resource] = []
        self.resource_templates: list[mcp_types.ResourceTemplate] = []
        self.has_resources = False
        self.instructions = ""
        """The server's instructions (from ``initialize``), '' when it gave none."""
        self.active_calls: list[Any] = []
        """The callers of the tool calls running now, oldest first (see `call_tool`)."""
        self._configure_client = configure_client
        self._on_change = on_change
        self._client_factory = client_factory or _default_client
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._stderr_path = ""
        self._refreshing: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def _changed(self) -> None:
        if self._on_change is not None:
            with contextlib.suppress(Exception):
                self._on_change()

    # ----- lifecycle

    async def connect(self) -> bool:
        """Start the server if it is not connected, and wait (at most the config's
        ``startup_timeout``) until it is. Returns whether it is connected; on failure
        ``status`` is ``failed`` and ``error`` says why. Concurrent callers share one
        attempt."""
        async with self._lock:
            if self.status == "connected":
                return True
            if self.status == "closed":
                return False
            if self.status == "disconnected":
                self.restarts += 1
            await self._stop_task()
            self.forget_stderr()
            self.status, self.error = "starting", ""
            self._changed()
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()
            stop = asyncio.Event()
            self._stop = stop
            self._task = asyncio.create_task(
                self._run(ready, stop), name=f"skillkit-mcp:{self.name}"
            )
            try:
                await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout)
            except TimeoutError:
                message = self._explain(None).replace(
                    "the server went away",
                    f"did not start within {self.config.startup_timeout:g} seconds",
                )
                await self._stop_task()
                self._fail("failed", message)
                return False
            except asyncio.CancelledError:
                await self._stop_task()
                self._fail("failed", "start cancelled")
                raise
            except BaseException as exc:
                message = self._explain(exc)
                await self._stop_task()
                self._fail("failed", message)
                return False
            return True

    async def aclose(self) -> None:
        """Stop the server (its process and everything the client holds) for good.
        Idempotent; never raises."""
        async with self._lock:
            self.status = "closed"
            await self._stop_task()
            self.forget_stderr()
            if self._refreshing is not None:
                self._refreshing.cancel()
        self._changed()

    async def _stop_task(self) -> None:
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self._client = None
        if task is None:
            return
        if stop is not None:
            stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except BaseException:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def _fail(self, status: ConnectionStatus, message: str) -> None:
        if self.status == "closed":
            return
        self.status = status
        self.error = " ".join(message.split())
        self._changed()

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """The connection's own task: enter the client, list, wait for ``stop``."""
        stderr, self._stderr_path = _stderr_file()
        try:
            async with AsyncExitStack() as stack:
                client = await self._client_factory(self.config, stack, stderr)
                client.message_handler = self._on_message
                client.client_info = _client_info()
                if self._configure_client is not None:
                    self._configure_client(client, self)
                await stack.enter_async_context(client)
                self.protocol_version = client.protocol_version
                self.instructions = (client.instructions or "").strip()
                await self._fetch_lists(client)
                self._client = client
                self.status, self.error = "connected", ""
                ready.set_result(None)
                self._changed()
                listener = asyncio.create_task(self._listen(client, stop))
                try:
                    await stop.wait()
                finally:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
        except asyncio.CancelledError:
            if not ready.done():
                ready.set_exception(McpCallError("start cancelled"))
            raise
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not stop.is_set():
                self._fail("disconnected", self._explain(exc))
        finally:
            if self._client is not None and not stop.is_set() and self.status == "connected":
                self._fail("disconnected", self._explain(None))
            stderr.close()

    def forget_stderr(self) -> None:
        """Delete the file holding the server's stderr (after it stopped)."""
        path, self._stderr_path = self._stderr_path, ""
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)

    async def _listen(self, client: Client, stop: asyncio.Event) -> None:
        """Follow list changes on a 2026 connection (older ones notify through
        `_on_message`); a stream that is lost means the server went away."""
        from mcp.client.subscriptions import ListenNotSupportedError

        caps = client.server_capabilities
        wanted = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        }
        if not any(wanted.values()):
            return
        try:
            async with client.listen(
                tools_list_changed=wanted["tools_list_changed"],
                prompts_list_changed=wanted["prompts_list_changed"],
                resources_list_changed=wanted["resources_list_changed"],
            ) as subscription:
                async for _event in subscription:
                    await self._refresh(client)
        except ListenNotSupportedError:
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not stop.is_set():
                self._client = None
                self._fail("disconnected", self._explain(exc))
                stop.set()

    async def _on_message(self, message: Any) -> None:
        """Notifications of older protocol versions: a list changed, fetch it again."""
        method = getattr(message, "method", "")
        if isinstance(method, str) and method.endswith("/list_changed"):
            client = self._client
            if client is not None and (self._refreshing is None or self._refreshing.done()):
                self._refreshing = asyncio.create_task(self._refresh(client))

    async def _refresh(self, client: Client) -> None:
        try:
            await self._fetch_lists(client)
        except Exception:
            return  # a broken connection shows at the next call
        self._changed()

    async def _fetch_lists(self, client: Client) -> None:
        caps = client.server_capabilities
        tools: list[Any] = []
        if caps.tools is not None:
            tools = await _all_pages(
                lambda cursor: client.list_tools(cursor=cursor, cache_mode="refresh"), "tools"
            )
        prompts: list[Any] = []
        if caps.prompts is not None:
            prompts = await _all_pages(
                lambda cursor: client.list_prompts(cursor=cursor, cache_mode="refresh"), "prompts"
            )
        resources: list[Any] = []
        if caps.resources is not None:
            resources = await _all_pages(
                lambda cursor: client.list_resources(cursor=cursor, cache_mode="refresh"),
                "resources",
            )
        templates: list[Any] = []
        if caps.resources is not None:
            mcp_error, _, _ = _sdk_errors()
            try:
                templates = await _all_pages(
                    lambda cursor: client.list_resource_templates(
                        cursor=cursor, cache_mode="refresh"
                    ),
                    "resource_templates",
                )
            except mcp_error as exc:
                if exc.code != _METHOD_NOT_FOUND:
                    raise
                # a server with resources but no templates may not serve the listing
                templates = []
        self.tools, self.prompts, self.resources = tools, prompts, resources
        self.resource_templates = templates
        self.has_resources = bool(resources) or bool(templates)

    def _explain(self, exc: BaseException | None) -> str:
        """One line: what went wrong, and the last line the server wrote to stderr."""
        text = _exception_text(exc) if exc is not None else "the server went away"
        tail = _stderr_tail(self._stderr_path)
        return f"{text} (stderr: {tail})" if tail else text

    # ----- calls

    async def _ready_client(self) -> Client:
        if (self.status != "connected" or self._client is None) and not await self.connect():
            raise McpCallError(f"MCP server '{self.name}' is not available: {self.error}")
        client = self._client
        if client is None:
            raise McpCallError(f"MCP server '{self.name}' is not available: {self.error}")
        return client

    async def _guarded(self, what: str, call: Callable[[Client], Awaitable[Any]]) -> Any:
        mcp_error, connection_closed, request_timeout = _sdk_errors()
        client = await self._ready_client()
        try:
            return await call(client)
        except mcp_error as exc:
            if exc.code == request_timeout:
                raise McpCallError(
                    f"{what} timed out after {self.config.timeout:g} seconds "
                    "(the server was told to stop)"
                ) from None
            if exc.code == connection_closed:
                self._lost(client, exc)
                raise McpCallError(
                    f"{what} failed: MCP server '{self.name}' went away ({self.error}); "
                    "it is started again on the next call"
                ) from None
            raise McpCallError(f"{what} failed: {_exception_text(exc)}") from None
        except (OSError, EOFError) as exc:
            self._lost(client, exc)
            raise McpCallError(
                f"{what} failed: MCP server '{self.name}' went away ({self.error}); "
                "it is started again on the next call"
            ) from None
        except Exception as exc:  # a reply the SDK refused (bad shape, failed validation)
            raise McpCallError(f"{what} failed: {_exception_text(exc)}") from None

    def _lost(self, client: Client, exc: BaseException) -> None:
        if self._client is client:
            self._client = None
            self._fail("disconnected", self._explain(exc))
            if self._stop is not None:
                self._stop.set()

    async def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any],
        *,
        progress: ProgressCallback | None = None,
        meta: Mapping[str, Any] | None = None,
        caller: Any = None,
        task_status: Callable[[str], None] | None = None,
    ) -> mcp_types.CallToolResult:
        """Call ``tool_name`` (the server's own name), starting the server first if it
        is not connected. The config's ``timeout`` bounds the call (each request of it,
        when the server runs it as a task, and ``task_timeout`` the whole task);
        ``meta`` goes in the request's ``_meta``; ``caller`` (the tool call's
        `ToolContext`) is in ``active_calls`` while it runs; ``task_status`` is told
        each new status line of a task (see `skillkit.mcp.tasks`). Raises
        `McpCallError` with a one-line message."""
        timeout = self.config.timeout
        if caller is not None:
            self.active_calls.append(caller)
            try:
                return await self.call_tool(
                    tool_name, arguments, progress=progress, meta=meta, task_status=task_status
                )
            finally:
                self.active_calls.remove(caller)

        async def call(client: Client) -> Any:
            from skillkit.mcp.tasks import watch_tasks

            with watch_tasks(task_status):
                return await client.call_tool(
                    tool_name,
                    dict(arguments),
                    read_timeout_seconds=timeout,
                    progress_callback=progress,
                    meta=dict(meta) if meta else None,  # type: ignore[arg-type]
                )

        result: mcp_types.CallToolResult = await self._guarded(
            f"MCP tool '{tool_name}' of '{self.name}'", call
        )
        return result

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        """Read the resource at ``uri``. Raises `McpCallError`."""
        timeout = self.config.timeout

        async def read(client: Client) -> Any:
            with _deadline(timeout):
                return await client.read_resource(uri)

        result: mcp_types.ReadResourceResult = await self._guarded(
            f"reading {uri} from '{self.name}'", read
        )
        return result

    async def list_resources(self) -> list[mcp_types.Resource]:
        """The resources the server lists now (asked afresh, never from a cache: a tool
        call may just have made one); ``resources`` is updated. Raises `McpCallError`."""
        timeout = self.config.timeout

        async def fetch(client: Client) -> Any:
            with _deadline(timeout):
                return await _all_pages(
                    lambda cursor: client.list_resources(cursor=cursor, cache_mode="refresh"),
                    "resources",
                )

        resources: list[mcp_types.Resource] = await self._guarded(
            f"listing the resources of '{self.name}'", fetch
        )
        self.resources = resources
        self.has_resources = self.has_resources or bool(resources)
        return resources

    async def complete(self, template: str, argument: str, value: str) -> list[str]:
        """The values the server suggests for ``argument`` of resource template
        ``template`` (its URI template) starting from ``value``. Raises `McpCallError`."""
        from mcp_types import ResourceTemplateReference

        timeout = self.config.timeout
        reference = ResourceTemplateReference(type="ref/resource", uri=template)

        async def complete(client: Client) -> Any:
            with _deadline(timeout):
                return await client.complete(reference, {"name": argument, "value": value})

        result = await self._guarded(
            f"completing {argument} of {template} ('{self.name}')", complete
        )
        return [str(v) for v in result.completion.values]

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> mcp_types.GetPromptResult:
        """The prompt ``name`` with ``arguments``. Raises `McpCallError`."""
        timeout = self.config.timeout

        async def get(client: Client) -> Any:
            with _deadline(timeout):
                return await client.get_prompt(name, dict(arguments or {}))

        result: mcp_types.GetPromptResult = await self._guarded(
            f"prompt '{name}' of '{self.name}'", get
        )
        return result


_ERRORS: tuple[type[Any], int, int] | None = None


def _sdk_errors() -> tuple[type[Any], int, int]:
    """(``MCPError``, the connection-closed code, the timeout code), imported once: the
    SDK's packages resolve names lazily, which costs tens of µs per ``from`` import."""
    global _ERRORS
    if _ERRORS is None:
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        from mcp import MCPError

        _ERRORS = (MCPError, CONNECTION_CLOSED, REQUEST_TIMEOUT)
    return _ERRORS


@contextlib.contextmanager
def _deadline(seconds: float) -> Any:
    """Turn a late answer into the SDK's timeout error (as ``read_timeout_seconds``
    does for tool calls)."""
    import anyio

    mcp_error, _, request_timeout = _sdk_errors()
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError:
        raise mcp_error(request_timeout, "timed out") from None


async def _all_pages(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGE_LIMIT):
        page = await fetch(cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _exception_text(exc: BaseException) -> str:
    """One line for ``exc``, looking inside exception groups (anyio task groups wrap
    the real failure)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    if type(exc).__name__ == "MCPError":
        message = " ".join((str(exc) or "error").split())
        first = message.split(" ", 1)[0]
        if first[:1].isupper() and not first[1:2].isupper():  # "Unknown tool", not "MCP"
            message = message[:1].lower() + message[1:]
        return message
    return " ".join(describe_exception(exc).split())
