"""What the interactive terminal's prompt shows, and its keys.

`PromptView` gives prompt_toolkit the prompt's parts: the ``› `` mark, with one tool
call shown whole above it (Ctrl-O: the last one; ``/expand N``: call N, the number a
folded result's hint gives) until Ctrl-O folds it or the next prompt is sent; the
toolbar under it naming the permission mode; and the key bindings (Enter sends, Ctrl-J
inserts a new line, Ctrl-O shows or folds the last call, Shift+Tab cycles the mode).
It reads the terminal's current session each time, so it follows a ``/resume``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from skillkit.frontends.tool_rows import ToolRecord, expanded_view, pick_record

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings

    from skillkit.frontends.agent_session import AgentSession
    from skillkit.frontends.terminal import TerminalRenderer

__all__ = ["PROMPT", "PromptView"]

PROMPT = ("bold ansicyan", "› ")
"""The prompt's mark, as a prompt_toolkit ``(style, text)`` pair."""
_STYLES = {"diff+": "ansigreen", "diff-": "ansired", "error": "ansired", "dim": "#888888"}


class PromptView:
    """The prompt of a terminal drawing with ``renderer`` and driving ``session()``
    (the session current when asked)."""

    def __init__(self, renderer: TerminalRenderer, session: Callable[[], AgentSession]) -> None:
        self.renderer = renderer
        self._session = session
        self.expanded: ToolRecord | None = None
        """The tool call shown whole above the prompt (None: none); the terminal sets
        None when a prompt is sent."""

    def message(self) -> StyleAndTextTuples:
        """The prompt; with a call `expanded`, that call whole above it (as much as the
        terminal's height leaves room for)."""
        if self.expanded is None:
            return [PROMPT]
        from prompt_toolkit.application.current import get_app

        size = get_app().output.get_size()
        rows = expanded_view(self.expanded, size.rows - 4, size.columns - 3)
        return [*((_STYLES.get(style, style), line) for style, line in rows), PROMPT]

    def toolbar(self) -> StyleAndTextTuples:
        """The line under the prompt: the permission mode and how to change it (empty
        without a permission layer)."""
        permissions = self._session().permissions
        if permissions is None:
            return []
        mode = permissions.mode
        name = f"{mode.value} mode"
        width = _columns()
        rest = f" · {mode.description} · shift+tab to change "
        if width is not None and 3 + len(name) + len(rest) > width:  # the what goes first
            rest = " · shift+tab to change "
        return [("", " ⏵ "), ("bold", name), ("", rest)]

    def expand(self, args: str) -> str | None:
        """``/expand N``: tool call N shown whole above the next prompt (folded by
        Ctrl-O or the prompt after); ``/expand``: the calls kept, numbered (returned, as
        is a message saying N is not kept)."""
        picked = pick_record(self.renderer.tool_records, args)
        if isinstance(picked, str):
            return picked
        self.expanded = picked
        return None

    def key_bindings(self) -> KeyBindings:
        """The prompt's keys; Shift+Tab only when the session has a permission layer."""
        from prompt_toolkit.filters import is_searching
        from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

        bindings = KeyBindings()

        @bindings.add("enter", filter=~is_searching)  # Ctrl-R's Enter takes the match
        def send(event: KeyPressEvent) -> None:
            event.current_buffer.validate_and_handle()

        @bindings.add("c-j")
        def new_line(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-o")
        def expand(event: KeyPressEvent) -> None:
            records = self.renderer.tool_records
            self.expanded = None if self.expanded or not records else records[-1]
            event.app.invalidate()

        if self._session().permissions is not None:

            @bindings.add("s-tab")
            def next_mode(event: KeyPressEvent) -> None:
                session = self._session()
                if session.permissions is not None:
                    session.cycle_mode()
                event.app.invalidate()

        return bindings


def _columns() -> int | None:
    """The terminal's width while the prompt is shown (None outside it)."""
    try:
        from prompt_toolkit.application.current import get_app

        return get_app().output.get_size().columns
    except Exception:
        return None
