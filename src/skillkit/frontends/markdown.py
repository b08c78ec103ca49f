"""Markdown streamed into completed blocks, for rendering while an answer arrives.

`MarkdownBlocks` takes an answer's text a delta at a time and hands back each top-level
Markdown block (a paragraph, a heading, a list, a table, a fenced code block, a block
quote) once it is complete — that is, once a later block has begun — so the terminal
renders every block exactly once and keeps only the open block live. The block
boundaries come from ``markdown-it-py`` (the parser rich's Markdown uses); no Markdown
is parsed here by hand. The open text is parsed again only when a line ends, and an
open fenced code block only looks at its new lines for the closing fence, so the cost
per delta does not grow with the answer's length.

`markdown_preview` renders the start of an answer in a few lines of a given width, for
the views that show answers in brief (``/tree``, a resumed session's earlier turns).
"""

from __future__ import annotations

import itertools

from markdown_it import MarkdownIt
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import Markdown
from rich.segment import Segment, Segments
from rich.style import Style
from rich.text import Text

__all__ = [
    "MarkdownBlocks",
    "OpenBlock",
    "TextMarkdown",
    "block_segments",
    "last_lines",
    "markdown_preview",
]


def _fence_opener(line: str) -> str:
    """The fence (``` or ~~~ run) that ``line`` opens, or ''."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return ""
    for char in "`~":
        run = len(stripped) - len(stripped.lstrip(char))
        if run >= 3:
            return char * run
    return ""


class TextMarkdown(Markdown):
    """rich's `Markdown` with raw HTML read as text: rich draws nothing for HTML, so
    ``<b>x</b>`` or ``<script>…`` in a model's answer would vanish from the terminal;
    here it is shown as written, never interpreted. The text is parsed once, by one
    parser shared by every instance (rich builds a new parser for each)."""

    def __init__(
        self,
        markup: str,
        code_theme: str = "monokai",
        justify: JustifyMethod | None = None,
        style: str | Style = "none",
        hyperlinks: bool = True,
        inline_code_lexer: str | None = None,
        inline_code_theme: str | None = None,
    ) -> None:
        # the attributes rich's own __init__ sets, without its parse
        self.markup = markup
        self.parsed = _TEXT_PARSER.parse(markup)
        self.code_theme = code_theme
        self.justify = justify
        self.style = style
        self.hyperlinks = hyperlinks
        self.inline_code_lexer = inline_code_lexer
        self.inline_code_theme = inline_code_theme or code_theme


_TEXT_PARSER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")


class MarkdownBlocks:
    """Splits streamed Markdown into complete top-level blocks.

    ``feed(delta)`` returns the blocks that became complete (their source text, in
    order); ``finish()`` returns what is left at the end of the answer; ``open_text``
    is the block still arriving.
    """

    def __init__(self) -> None:
        # block structure only: where blocks begin does not depend on inline markup
        self._parser = (
            MarkdownIt("commonmark")
            .enable("table")
            .enable("strikethrough")
            .disable(["inline", "text_join"])
        )
        self._lines: list[str] = []  # complete lines of the open text
        self._tail = ""  # the line still arriving
        self._fence = ""  # the fence of an open code block at the start of the open text

    @property
    def open_text(self) -> str:
        """The open (not yet complete) text."""
        return "".join(self._lines) + self._tail

    def feed(self, delta: str) -> list[str]:
        """Add ``delta``; the blocks it completed."""
        if "\n" not in delta:
            self._tail += delta
            return []
        *done, self._tail = (self._tail + delta).split("\n")
        done_blocks: list[str] = []
        for line in done:
            done_blocks.extend(self._add_line(line + "\n"))
        return done_blocks

    def finish(self) -> list[str]:
        """The rest of the answer as blocks (the open text, when not blank); resets."""
        rest = self.open_text
        self._lines, self._tail, self._fence = [], "", ""
        return [rest] if rest.strip() else []

    def _add_line(self, line: str) -> list[str]:
        if self._fence:
            self._lines.append(line)
            stripped = line.strip()
            if (
                len(self._lines) > 1
                and stripped.startswith(self._fence[0] * len(self._fence))
                and not stripped.strip(self._fence[0])
            ):
                block, self._lines, self._fence = "".join(self._lines), [], ""
                return [block]
            return []
        if not self._lines and not line.strip():
            return []  # blank lines between blocks
        if not self._lines:
            self._fence = _fence_opener(line)
            self._lines.append(line)
            return []
        self._lines.append(line)
        if line.strip() and not self._lines[-2].strip():
            # a line after a blank one may begin a new block: ask the parser
            return self._split()
        if _fence_opener(line) and not line.startswith((" ", "\t")):
            return self._split()
        return []

    def _split(self) -> list[str]:
        tokens = self._parser.parse("".join(self._lines))
        starts = [t.map[0] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]
        starts += [t.map[0] for t in tokens if t.level == 0 and t.nesting == 1 and t.map]
        starts = sorted(set(starts))
        if len(starts) < 2:
            return []
        cut = starts[-1]
        last_line = len(self._lines) - 1
        if cut != last_line:
            return []  # the new line continues the last block
        blocks: list[str] = []
        for begin, end in itertools.pairwise(starts):
            block = "".join(self._lines[begin:end])
            if block.strip():
                blocks.append(block.rstrip("\n") + "\n")
        self._lines = self._lines[cut:]
        self._fence = _fence_opener(self._lines[0])
        return blocks


def block_segments(console: Console, block: str, *, code_theme: str, gap: bool = False) -> Segments:
    """One complete Markdown block rendered for ``console`` (without hyperlinks, so a
    link shows its real target), with the blank lines around it dropped — a list's, a
    paragraph's — and a code block's padding (it has a background) kept; ``gap`` puts
    one blank line before it (between blocks)."""
    markdown = TextMarkdown(block, code_theme=code_theme, hyperlinks=False)
    lines = console.render_lines(markdown, pad=False)
    while lines and _blank(lines[-1]):
        lines.pop()
    while lines and _blank(lines[0]):
        lines.pop(0)
    segments: list[Segment] = [Segment.line()] if gap else []
    for line in lines:
        segments.extend(line)
        segments.append(Segment.line())
    return Segments(segments)


def _blank(line: list[Segment]) -> bool:
    return all(
        not segment.text.strip() and (segment.style is None or segment.style.bgcolor is None)
        for segment in line
    )


def last_lines(text: str, count: int = 12) -> str:
    """The last ``count`` lines of ``text`` (found from its end, so the cost does not grow
    with the text's length)."""
    end = len(text)
    for _ in range(count):
        end = text.rfind("\n", 0, end)
        if end < 0:
            return text
    return text[end + 1 :]


class OpenBlock:
    """A renderable of the open block of ``blocks`` as raw text (its last 12 lines),
    read when it is drawn: a rich ``Live`` showing it needs no update per delta."""

    def __init__(self, blocks: MarkdownBlocks) -> None:
        self.blocks = blocks

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(last_lines(self.blocks.open_text))


PREVIEW_SOURCE = 1500
"""The most of an answer (in characters, cut at a line end) `markdown_preview` renders
(less for a preview of few or narrow lines), so its cost does not grow with the answer."""


def markdown_preview(
    console: Console, text: str, *, width: int, lines: int = 1, code_theme: str = "monokai"
) -> list[Text]:
    """The first ``lines`` lines of ``text`` (Markdown) rendered for ``console`` within
    ``width`` columns (without hyperlinks, blank lines and leading spaces dropped), each
    a `Text` of at most ``width`` cells; when more would follow, the last line shown
    ends with ``…``. With ``lines`` 1, the start of each block is put on the one line,
    separated by `` · ``. Empty for a blank ``text``. At most the first
    `PREVIEW_SOURCE` characters are rendered."""
    source = text.strip()
    width = max(width, 8)
    bound = min(PREVIEW_SOURCE, 2 * width * (lines + 2))
    cut_short = len(source) > bound
    if cut_short:
        end = source.rfind("\n", 0, bound)
        source = source[: end if end > 0 else bound]
    if not source:
        return []
    # one line: each block on one line (rendered wide), then cut to the width
    render_width = width if lines > 1 else max(width * 4, 200)
    options = console.options.update(width=render_width, height=None)
    markdown = TextMarkdown(source, code_theme=code_theme, hyperlinks=False)
    rows: list[Text] = []
    for line in console.render_lines(markdown, options, pad=False):
        row = Text()
        for segment in line:
            if not segment.control:
                row.append(segment.text, segment.style)
        lead = len(row.plain) - len(row.plain.lstrip())
        row = row[lead:] if lead else row
        row.rstrip()
        if row.plain:
            rows.append(row)
    if lines == 1 and rows:
        joined = Text()
        for index, row in enumerate(rows):
            if index:
                joined.append(" · ", "dim")
            joined.append_text(row)
        rows = [joined]
    shown = rows[:lines]
    more = cut_short or len(rows) > lines
    for index, row in enumerate(shown):
        ellipsis = index == len(shown) - 1 and more
        if row.cell_len > width or ellipsis:
            row.truncate(width - 1, overflow="crop")
            row.rstrip()
            row.append("…", "dim")
    return shown
