"""Streamed answer and thinking text, drawn on a rich console as it arrives.

`StreamedText` is the part of `skillkit.frontends.terminal.TerminalRenderer` that draws
text deltas: thinking dimmed, answers as Markdown (`skillkit.frontends.markdown`, each
block drawn once complete, the open block shown raw meanwhile) or as plain text. A
chunk's end that may begin a secret is held back until the next chunk shows it is not
one, so a secret split across deltas is redacted too. With ``hold_partial_line`` the
console gets whole lines only and the open line is kept for `StreamedText.partial_line`
(for a caller drawing a live area under the output).

Every text reaches the console through the ``clean`` function it is given (redaction,
then neutralized control characters) and is drawn as rich ``Text``, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.live import Live
from rich.text import Text

from skillkit.frontends.markdown import MarkdownBlocks, OpenBlock, block_segments, last_lines

__all__ = ["THINKING_STYLE", "StreamedText"]

THINKING_STYLE = "dim italic"
"""The style thinking text is drawn in."""
_CODE_THEME = "monokai"


class StreamedText:
    """The text of one stream at a time on ``console``: `write` each delta, `end_line`
    when a text or thinking block ends (or anything else is drawn). ``clean`` redacts
    and neutralizes a text; ``held_suffix(text)`` says how many characters at its end
    may begin a secret (they wait for the next delta). ``markdown``: whether answers
    are rendered as Markdown (None: when the console is a terminal)."""

    def __init__(
        self,
        console: Console,
        *,
        clean: Callable[[str], str],
        held_suffix: Callable[[str], int],
        markdown: bool | None = None,
    ) -> None:
        self.console = console
        self.markdown = markdown
        self.hold_partial_line = False
        """When True, text reaches the console a whole line at a time and the line still
        open is kept for `partial_line`."""
        self._clean = clean
        self._held_suffix = held_suffix
        self._blocks = MarkdownBlocks()
        self._blocks_drawn = 0  # Markdown blocks drawn of the current answer
        self._live: Live | None = None  # the open block, when lines are not held
        self._pending = ""  # text held back: it may be the start of a secret
        self._pending_style = ""
        self._at_line_start = True
        self._held = Text()  # the open line, when lines are held

    @property
    def at_line_start(self) -> bool:
        """Whether nothing of a line is drawn on the console (the cursor is at a line's
        start); held lines do not count, they are not on the console."""
        return self._at_line_start

    def renders_markdown(self) -> bool:
        """Whether answers are drawn as rendered Markdown (see ``markdown``)."""
        return self.console.is_terminal if self.markdown is None else self.markdown

    def write(self, text: str, style: str = "") -> None:
        """Stream ``text`` (``style`` "" for answer text, `THINKING_STYLE` for
        thinking); an end that may begin a secret waits for the next chunk (or the end
        of the line)."""
        if not text:
            return
        if self._pending and style != self._pending_style:
            self._flush_pending()
        text = self._pending + text
        hold = self._held_suffix(text)
        self._pending, self._pending_style = (text[len(text) - hold :], style) if hold else ("", "")
        self._show(text[: len(text) - hold], style)

    def end_line(self) -> None:
        """Finish the line of streamed text, if one is open (and the Markdown answer
        being drawn: its open block is drawn now)."""
        self._flush_pending()
        if self._blocks.open_text or self._blocks_drawn:
            self._stop_live()
            for block in self._blocks.finish():
                self._draw_block(block)
            self._blocks_drawn = 0
            self._at_line_start = True
        if self._held.plain:
            held, self._held = self._held, Text()
            self.console.print(held, soft_wrap=True)
            return
        if not self._at_line_start:
            self.console.print()
            self._at_line_start = True

    def partial_line(self) -> list[tuple[str, str]]:
        """The open line held back (see ``hold_partial_line``), as ``(style, text)``
        pairs, one per run of one style: ``"thinking"`` for thinking, ``""`` otherwise.
        Already cleaned."""
        plain = self._held.plain
        pieces: list[tuple[str, str]] = []
        for span in self._held.spans:
            style = "thinking" if span.style == THINKING_STYLE else ""
            text = plain[span.start : span.end]
            if pieces and pieces[-1][0] == style:
                pieces[-1] = (style, pieces[-1][1] + text)
            else:
                pieces.append((style, text))
        if self.renders_markdown():
            open_text = self._blocks.open_text
            if open_text:
                pieces.append(("", last_lines(open_text)))
        return pieces

    def _flush_pending(self) -> None:
        pending, self._pending = self._pending, ""
        self._show(pending, self._pending_style)

    def _draw_block(self, block: str) -> None:
        gap = bool(self._blocks_drawn)
        self._blocks_drawn += 1
        self.console.print(block_segments(self.console, block, code_theme=_CODE_THEME, gap=gap))

    def _show_markdown(self, text: str) -> None:
        """Stream answer text as Markdown: each completed block is drawn once; the open
        block is shown raw by the live area (held lines) or a transient rich `Live`,
        which reads it when it refreshes (nothing is drawn per delta)."""
        for block in self._blocks.feed(self._clean(text)):
            self._draw_block(block)
        if self.hold_partial_line or self._live is not None:
            return
        if self._blocks.open_text.strip():
            self._live = Live(
                OpenBlock(self._blocks), console=self.console, transient=True, refresh_per_second=4
            )
            self._live.start()

    def _stop_live(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.update(Text(""))
            live.stop()

    def _show(self, text: str, style: str) -> None:
        if text and not style and self.renders_markdown():
            self._show_markdown(text)
            return
        if text and self.hold_partial_line and self._at_line_start:
            *done, rest = self._clean(text).split("\n")
            for piece in done:
                held, self._held = self._held, Text()
                held.append(piece, style=style or "none")
                self.console.print(held, soft_wrap=True)
            if rest:
                self._held.append(rest, style=style or "none")
            return
        if text:
            text = self._clean(text)
            self.console.print(Text(text, style=style), end="", soft_wrap=True)
            self._at_line_start = text.endswith("\n")
