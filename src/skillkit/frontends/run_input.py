"""The two lines under a working agent: what it is doing, and what the user types.

While a run (or a command such as ``/compact``) works, `RunInput` owns the keyboard:
the terminal is in raw mode, so nothing typed is echoed into the streamed answer and
Esc arrives as a key (never as a printed ``^[``). It draws

- a working line: a spinner, what the agent is doing (thinking, writing, running a
  tool, compacting, waiting to retry the provider), the elapsed time and the keys;
- an input line (``» ``) holding what the user types meanwhile;

and above them the line of streamed text still open (``partial``: the renderer holds it
back, as text written above a live area would be overwritten by it).

Keys: Enter hands the line to ``on_enter`` (the session steers the run with it),
Alt+Enter (Esc then Enter) to ``on_alt_enter`` (queued as a follow-up) — the line is
emptied when the callback returns True and kept otherwise —, Ctrl-J inserts a
newline, Esc calls ``on_escape`` (abort), Ctrl-C calls ``on_interrupt``. What is typed
and not sent survives `RunInput.show_until` returning (the caller hides the lines to ask
for an approval and shows them again after), and is handed back by `take_text`.

`WorkStatus` is the event sink that tells the working line what the agent is doing.
Everything drawn passes through `skillkit.text.neutralize` (tool names come from the
model).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from skillkit.events import (
    AgentEnd,
    AgentStart,
    CompactionEnd,
    CompactionStart,
    Event,
    ProviderRetry,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnStart,
)
from skillkit.models import StreamEvent
from skillkit.text import neutralize

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import StyleAndTextTuples

__all__ = [
    "ESCAPE_DELAY",
    "RUN_KEYS",
    "RunInput",
    "WorkStatus",
    "flush_typeahead",
    "quiet_keyboard",
]

ESCAPE_DELAY = 0.05
"""Seconds the terminal waits after Esc for the rest of an escape sequence: short, so
Esc alone responds at once (prompt_toolkit's default is half a second)."""

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
RUN_KEYS = "esc stops · enter steers · alt+enter queues · ctrl+j new line"
"""The keys named on the working line during a run."""


class WorkStatus:
    """What the agent is doing now, for the working line: an event `Sink`.

    ``label`` is a short phrase (``thinking``, ``writing``, ``running bash``,
    ``compacting the conversation``, ``retry 1 of 3 in 2s``); ``started`` the monotonic
    time the current work began (`begin` sets it; a run's ``agent_start`` does too).
    Never raises.
    """

    def __init__(self) -> None:
        self.label = "working"
        self.started = time.monotonic()
        self._tools: dict[str, str] = {}
        self._retry_until = 0.0

    def begin(self, label: str = "working") -> None:
        """Start timing new work (a run, a command)."""
        self.label = label
        self.started = time.monotonic()
        self._tools.clear()
        self._retry_until = 0.0

    def emit(self, event: Event) -> None:
        match event.payload:
            case AgentStart():
                self.begin()
            case TurnStart():
                self.label = "waiting for the model"
            case StreamEvent(type="thinking_start" | "thinking_delta"):
                self.label = "thinking"
            case StreamEvent(type="text_start" | "text_delta"):
                self.label = "writing"
            case StreamEvent(type="tool_call_start" | "tool_call_delta"):
                self.label = "preparing a tool call"
            case ToolExecutionStart(tool_call_id=call, tool_name=name):
                self._tools[call] = neutralize(name)
                self.label = self._running()
            case ToolExecutionEnd(tool_call_id=call):
                self._tools.pop(call, None)
                self.label = self._running() if self._tools else "waiting for the model"
            case CompactionStart(type="full"):
                self.label = "compacting the conversation"
            case CompactionEnd(type="full"):
                self.label = "working"
            case ProviderRetry(attempt=attempt, max_attempts=most, delay=delay):
                self._retry_until = time.monotonic() + delay
                self.label = f"retry {attempt} of {most}"
            case AgentEnd():
                self.label = "done"
            case _:
                pass

    def line(self, now: float | None = None) -> str:
        """The working line's text (without the spinner)."""
        now = time.monotonic() if now is None else now
        label = self.label
        if self._retry_until > now and label.startswith("retry"):
            label = f"{label} in {self._retry_until - now:.0f}s"
        return f"{label} · {_elapsed(now - self.started)}"

    def _running(self) -> str:
        names = list(dict.fromkeys(self._tools.values()))
        return "running " + ", ".join(names) if names else "waiting for the model"


def _elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    return f"{seconds // 60}m {seconds % 60:02d}s"


@contextlib.contextmanager
def quiet_keyboard() -> Iterator[None]:
    """While the block runs, keys typed when no prompt reads the keyboard (between one
    prompt and the next) are neither echoed nor changed: the terminal is left without
    echo, line buffering and the Enter-to-newline translation, so a typed Enter still
    reads as Enter (never as Ctrl-J) and nothing typed lands in the output. Ctrl-C still
    raises SIGINT. The terminal's settings are restored after. Does nothing without a
    terminal. Prompts (prompt_toolkit) set their own raw mode on top and put these
    settings back when they end."""
    try:
        import termios

        fd = sys.stdin.fileno()
        if not sys.stdin.isatty():
            raise OSError("not a terminal")
        saved = termios.tcgetattr(fd)
    except (ImportError, OSError, ValueError):  # Windows, no terminal, a closed stdin
        yield
        return
    quiet = termios.tcgetattr(fd)
    quiet[0] &= ~termios.ICRNL  # iflag
    quiet[3] &= ~(termios.ECHO | termios.ICANON)  # lflag
    quiet[6][termios.VMIN] = 1
    quiet[6][termios.VTIME] = 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def flush_typeahead() -> None:
    """Drop every key typed and not yet read: prompt_toolkit's stored type-ahead and the
    terminal's pending input. Call it right before a prompt that must only take keys
    pressed after it is drawn (an approval, a plan, a question). Never raises."""
    from prompt_toolkit.application.current import get_app_session
    from prompt_toolkit.input.typeahead import clear_typeahead

    try:
        clear_typeahead(get_app_session().input)
    except Exception:  # no input object (not a terminal): nothing stored
        pass
    try:
        import termios

        if sys.stdin.isatty():
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError):  # Windows, a closed stdin
        pass


class RunInput:
    """The working line and the input line shown while the agent works (see the module
    docs). One instance serves a whole session; the typed text is kept across
    `show_until` calls. Callbacks run on the event loop and must not block."""

    def __init__(
        self,
        status: WorkStatus,
        *,
        on_enter: Callable[[str], bool],
        on_alt_enter: Callable[[str], bool],
        on_escape: Callable[[], None],
        on_interrupt: Callable[[], None],
        partial: Callable[[], list[tuple[str, str]]] | None = None,
    ) -> None:
        from prompt_toolkit.buffer import Buffer

        self.status = status
        self.on_enter = on_enter
        self.on_alt_enter = on_alt_enter
        self.on_escape = on_escape
        self.on_interrupt = on_interrupt
        self.partial = partial
        self.keys = RUN_KEYS
        """The keys the working line names (the caller sets what applies)."""
        self.buffer: Buffer = Buffer(multiline=True)

    def take_text(self) -> str:
        """What was typed and not sent; the input line is emptied."""
        text = self.buffer.text
        self.buffer.reset()
        return text

    async def show_until(self, waits: Iterable[Awaitable[object]]) -> None:
        """Show the lines and take keys until one of ``waits`` is done (they are not
        cancelled). Without a terminal (stdin or stdout not a tty) only waits."""
        futures = [asyncio.ensure_future(w) for w in waits]
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
            return
        from prompt_toolkit.patch_stdout import patch_stdout

        app = self._application()
        with patch_stdout(raw=True):
            shown = asyncio.ensure_future(app.run_async(handle_sigint=False))
            await asyncio.wait([shown, *futures], return_when=asyncio.FIRST_COMPLETED)
            if not shown.done():
                app.exit()
            await shown

    # ----- the application

    def _application(self) -> Application[None]:
        from prompt_toolkit.application import Application
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
        from prompt_toolkit.layout import HSplit, Layout, Window
        from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
        from prompt_toolkit.layout.processors import BeforeInput

        bindings = KeyBindings()
        buffer = self.buffer

        def send(to: Callable[[str], bool]) -> None:
            text = buffer.text.strip()
            if text and to(text):
                buffer.reset()

        @bindings.add("enter")
        def enter(event: KeyPressEvent) -> None:
            send(self.on_enter)

        @bindings.add("escape", "enter")
        def alt_enter(event: KeyPressEvent) -> None:
            send(self.on_alt_enter)

        @bindings.add("c-j")
        def newline(event: KeyPressEvent) -> None:
            buffer.insert_text("\n")

        @bindings.add("escape", eager=False)
        def escape(event: KeyPressEvent) -> None:
            self.on_escape()

        @bindings.add("c-c")
        def interrupt(event: KeyPressEvent) -> None:
            self.on_interrupt()

        from prompt_toolkit.filters import Condition
        from prompt_toolkit.layout import ConditionalContainer

        streaming = ConditionalContainer(
            Window(
                FormattedTextControl(self._partial_line, show_cursor=False),
                wrap_lines=True,
                dont_extend_height=True,
            ),
            filter=Condition(lambda: bool(self._partial_line())),
        )
        working = Window(
            FormattedTextControl(self._working_line, show_cursor=False),
            height=1,
            dont_extend_height=True,
        )
        typed = Window(
            BufferControl(buffer, input_processors=[BeforeInput("» ", style="bold")]),
            dont_extend_height=True,
            wrap_lines=True,
        )
        app: Application[None] = Application(
            layout=Layout(HSplit([streaming, working, typed]), focused_element=typed),
            key_bindings=bindings,
            erase_when_done=True,
            refresh_interval=0.1,
        )
        app.ttimeoutlen = ESCAPE_DELAY
        app.timeoutlen = 0.2  # Esc may start Alt+Enter: wait this long for the Enter
        return app

    def _partial_line(self) -> StyleAndTextTuples:
        if self.partial is None:
            return []
        return [
            ("italic ansibrightblack" if style == "thinking" else "", text)
            for style, text in self.partial()
            if text
        ]

    def _working_line(self) -> StyleAndTextTuples:
        now = time.monotonic()
        spin = _SPINNER[int(now * 10) % len(_SPINNER)]
        return [
            ("ansicyan", f"{spin} "),
            ("bold", self.status.line(now)),
            ("", "  "),
            ("ansibrightblack", self.keys),
        ]
