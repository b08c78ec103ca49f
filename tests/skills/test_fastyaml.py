"""The fast frontmatter reader agrees with PyYAML wherever it answers."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.skills._fastyaml import load_simple

TOKENS = st.sampled_from(
    [
        "git",
        "Use when the user asks",
        "yes",
        "No",
        "null",
        "on",
        "true",
        "3",
        "007",
        "-4",
        "1.5",
        "'quoted'",
        "'it''s'",
        "''",
        '"double"',
        '"a \\" b"',
        "[a, b]",
        "[]",
        "[ ]",
        "[a,]",
        "[1, 'x y', \"z\"]",
        "a: b",
        "a #c",
        "a#c",
        "Bash(git:*)",
        "~",
        "|",
        ">",
        "&anchor x",
        "*alias",
        "!tag x",
        "x, y",
        "x [y] {z}",
        "café au lait",
        "a\tb",
        "2024-01-01",
        "0x1F",
        ".inf",
        "-",
        "- item",
        "{a: 1}",
        "'unclosed",
        "x '",
        "é",
        "\u2028",
        "a\x85b",
        "{type: string}",
        "{type: integer, default: 5}",
        "{a: [b]}",
        "{}",
        "{a:b}",
        "{a: b,}",
        "{yes: 1}",
        "{a: 'x, y'}",
        "{a: b c}",
        '{"a": 1}',
        '{"a":1}',
        '{"a": [1, "b"], "c": {"d": true, "e": null}}',
        '["x", null, false]',
        '{"a": 1e5}',
        '{"a": 1.5}',
        '{"a": "x\\u00e9"}',
        '{"a": "b: c # d"}',
        '{"a": "x"} trailing',
        '{"a": {"b": {"c": []}}}',
        '{"a": 1, "a": 2}',
        '["é", "\\t"]',
    ]
)
BLOCK_STYLES = ["|", "|-", ">", ">-", "|+", ">2"]
KEYS = st.sampled_from(
    [
        "name",
        "description",
        "metadata",
        "skillkit",
        "requires",
        "bins",
        "a-b",
        "_x",
        "Yes",
        "1a",
        "key with space",
        "k",
    ]
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = []
    indent = 0
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(
            st.sampled_from(["pair", "pair", "open", "close", "comment", "blank", "raw", "block"])
        )
        key = draw(KEYS)
        if kind == "block":
            lines.append(" " * indent + f"{key}: {draw(st.sampled_from(BLOCK_STYLES))}")
            inner = indent + draw(st.sampled_from([1, 2, 4]))
            for _ in range(draw(st.integers(1, 4))):
                shape = draw(st.sampled_from(["text", "text", "blank", "deeper", "spaces"]))
                if shape == "text":
                    lines.append(" " * inner + draw(TOKENS))
                elif shape == "blank":
                    lines.append(" " * draw(st.integers(0, inner + 1)))
                elif shape == "deeper":
                    lines.append(" " * (inner + 1) + draw(TOKENS))
                else:
                    lines.append(" " * inner + draw(TOKENS) + "  ")
        elif kind == "pair":
            lines.append(" " * indent + f"{key}: {draw(TOKENS)}")
        elif kind == "open":
            lines.append(" " * indent + f"{key}:")
            indent += draw(st.sampled_from([2, 4]))
        elif kind == "close":
            indent = max(0, indent - 2)
            lines.append(" " * indent + f"{key}: {draw(TOKENS)}")
        elif kind == "comment":
            lines.append(" " * draw(st.integers(0, 4)) + "# note")
        elif kind == "blank":
            lines.append("")
        else:
            lines.append(draw(st.text(max_size=12)))
    return "\n".join(lines)


def _yaml(text: str) -> object:
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except Exception:
        return "<error>"


@settings(max_examples=1500)
@given(documents())
def test_fast_reader_returns_what_pyyaml_returns_or_nothing(text: str) -> None:
    fast = load_simple(text)
    if fast is not None:
        expected = _yaml(text)
        assert fast == (expected if expected is not None else {}), text


def test_common_frontmatter_is_read_by_the_fast_reader() -> None:
    text = (
        "name: git-summary\ndescription: Summarize a repository, its commits and files.\n"
        'license: MIT\nmetadata:\n  author: me\n  version: "1.0"\n  skillkit:\n'
        "    requires:\n      bins: [git]\n      env: ['GITHUB_TOKEN']\n    always: 0\n"
    )
    fast = load_simple(text)
    assert fast is not None
    assert fast == yaml.safe_load(text)


def test_folded_and_literal_descriptions_are_read_by_the_fast_reader() -> None:
    text = (
        "name: pdf\ndescription: >\n  Extract text from PDF files:\n  forms, tables.\n\n"
        "  Use it for any PDF.\nlicense: |-\n  MIT\n  see LICENSE\n"
    )
    fast = load_simple(text)
    assert fast is not None
    assert fast == yaml.safe_load(text)
    assert (
        fast["description"] == "Extract text from PDF files: forms, tables.\nUse it for any PDF.\n"
    )


def test_anything_unusual_is_left_to_pyyaml() -> None:
    for text in [
        "a: yes",
        "a: |+\n  x",
        "a: >\n  x\n   y",
        "a:\n- b",
        "a: b: c",
        "a: 1.5",
        "a: [x, [y]]",
        "a: 'x",
    ]:
        assert load_simple(text) is None, text
