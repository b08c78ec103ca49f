"""Text that is safe to show on a terminal: `neutralize`.

Commands, tool output, model text and file contents may hold bytes a terminal acts on
instead of showing: escape sequences (colours, cursor moves, clear-screen, window
titles, OSC 52 clipboard writes, hyperlinks), bell, backspace and carriage return
(which overwrite text already drawn), 8-bit C1 controls, and Unicode bidirectional
controls (which reorder what is shown, so ``rm -rf ~ #‮ txt.cod`` reads differently
from what runs). `neutralize` replaces every one of them with a visible stand-in, so
what the user reads is what the text holds, and the terminal is never driven by it.

`write_note` writes a note for the user to a stream (stderr), wrapped at word
boundaries to the terminal's width when the stream is a terminal.

This module is plain data handling: it imports nothing from SkillKit, so every layer
may use it.
"""

from __future__ import annotations

import re
from typing import TextIO

__all__ = ["is_safe", "neutralize", "one_line", "wrap_note", "write_note"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_LINE_BREAKS = (0x2028, 0x2029)  # separators some renderers treat as new lines


def one_line(text: object) -> str:
    """``text`` (any object, as ``str`` gives it) on one line: runs of whitespace,
    line breaks included, become one space."""
    return " ".join(str(text).split())


def _stand_in(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␛ for ESC, ␍ for CR ...
    if code == 0x7F:
        return "␡"
    return f"<U+{code:04X}>"


_UNSAFE_CODES = (
    *(c for c in range(0x20) if c not in (0x09, 0x0A)),
    *range(0x7F, 0xA0),
    *_BIDI,
    *_LINE_BREAKS,
)
_TABLE: dict[int, str] = {code: _stand_in(code) for code in _UNSAFE_CODES}
_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in _UNSAFE_CODES) + "]")
# Select Graphic Rendition (colours, bold...): the one sequence that only styles text.
_STYLE = re.compile(r"\x1b\[[0-9;:]*m")


def neutralize(text: str, *, drop_styles: bool = False) -> str:
    """``text`` with every control character replaced by a visible stand-in.

    Kept as they are: newline and tab. Replaced: the other C0 controls and DEL by their
    Control Pictures symbol (ESC becomes ``␛``, CR ``␍``, BEL ``␇``, backspace ``␈``,
    DEL ``␡``); C1 controls (U+0080-U+009F, including the 8-bit CSI), the bidirectional
    embeddings, overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E,
    U+200F, U+061C) and the Unicode line and paragraph separators by their code point
    in angle brackets (``<U+202E>``).
    So an escape sequence stays readable (``␛[2J``) but does nothing.

    With ``drop_styles`` well-formed colour/style sequences (``ESC [ ... m``) are removed
    first instead of shown — for program output, where colour codes are noise; the text
    they styled stays visible (a "conceal" style is dropped, not obeyed).

    The result contains no character below U+0020 but newline and tab, none in
    U+007F-U+009F, and no bidirectional control. Text that holds none is returned as is.
    Never raises.
    """
    if _UNSAFE.search(text) is None:
        return text
    if drop_styles:
        text = _STYLE.sub("", text)
    return text.translate(_TABLE)


def is_safe(text: str) -> bool:
    """Whether `neutralize` would return ``text`` unchanged."""
    return _UNSAFE.search(text) is None


_NOTE_INDENT = "  "


def wrap_note(text: str, width: int | None) -> str:
    """``text`` broken at spaces into lines of at most ``width`` columns (a word longer
    than that stays whole on its own line), lines after the first indented by two
    spaces; unchanged when ``width`` is None. Line breaks already in ``text`` are kept."""
    if width is None:
        return text
    import textwrap

    wrapper = textwrap.TextWrapper(
        width=max(width, 20),
        subsequent_indent=_NOTE_INDENT,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(wrapper.fill(line) if line.strip() else line for line in text.split("\n"))


def write_note(text: str, stream: TextIO) -> None:
    """Write ``text`` (one note, already safe to show) and a new line to ``stream``:
    wrapped at word boundaries to the terminal's width (less one column) when
    ``stream`` is a terminal, as one line otherwise (a log or a pipe keeps it whole).
    Never raises for a stream that cannot tell its width."""
    width: int | None = None
    try:
        if stream.isatty():
            import os

            width = os.get_terminal_size(stream.fileno()).columns - 1
    except (OSError, ValueError, AttributeError):
        width = None
    print(wrap_note(text, width), file=stream, flush=True)
