"""`fit_tool_output` and `ContextBudget.fit_tool_output`: a result the model's window
cannot hold is cut with a note; one that fits is left alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.context import CompactionSettings, ContextBudget
from skillkit.context.tokens import heuristic_tokens
from skillkit.context.tool_output import fit_tool_output
from skillkit.models import ImagePart, TextPart


def test_a_result_that_fits_is_left_alone() -> None:
    assert fit_tool_output([TextPart("short")], 100, window=1000) is None


def test_a_big_result_is_cut_at_a_line_end_with_a_note() -> None:
    text = "".join(f"line {i} of the file\n" for i in range(5000))
    image = ImagePart("aGk=", "image/png")
    fitted = fit_tool_output([TextPart(text), image, TextPart("more")], 1000, window=8192)
    assert fitted is not None
    first = fitted[0]
    assert isinstance(first, TextPart)
    body, _, note = first.text.partition("\n\n[Output cut")
    assert body.endswith("of the file\n") and text.startswith(body)
    assert f"of {len(text) + 4} characters are shown (8192-token window)" in note
    assert heuristic_tokens(first.text) <= 1000
    assert fitted[1] is image and len(fitted) == 2  # text after the cut is left out


def test_the_limit_scales_with_the_window() -> None:
    small = ContextBudget(CompactionSettings(context_window=8192))
    large = ContextBudget(CompactionSettings(context_window=200_000))
    assert small.tool_output_limit("m") < 2_000 < 40_000 < large.tool_output_limit("m")
    text = [TextPart("word " * 20_000)]  # about 25,000 tokens
    assert small.fit_tool_output(text, "m") is not None
    assert large.fit_tool_output(text, "m") is None


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=0, max_size=3000), st.integers(min_value=16, max_value=800))
def test_a_cut_result_always_fits(text: str, limit: int) -> None:
    fitted = fit_tool_output([TextPart(text)], limit, window=4096)
    if fitted is None:
        assert heuristic_tokens(text) <= limit or len(text) <= limit
        return
    (part,) = fitted
    assert isinstance(part, TextPart)
    shown = part.text.split("\n\n[Output cut", 1)[0]
    assert text.startswith(shown)
    assert heuristic_tokens(shown) <= limit
