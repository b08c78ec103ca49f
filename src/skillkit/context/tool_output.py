"""`fit_tool_output`: a tool result cut to what the model's context can hold.

A result bigger than the model can take is never sent whole: a 200 KB file read into an
8k-token window would overflow every turn, and compaction cannot shrink a result that
is needed verbatim, so the run would loop read -> compaction -> read. Instead the text
is cut (at a line end where one is near) and a note says how much was left out and how
to ask for less. The limit scales with the model's window (`ContextBudget` gives a
quarter of the budget); images pass unchanged.
"""

from __future__ import annotations

from skillkit.context.tokens import Tokenizer, heuristic_tokens
from skillkit.models import TextPart, UserContent

__all__ = ["CUT_NOTE", "fit_tool_output"]

CUT_NOTE = (
    "\n\n[Output cut to fit the model's context: the first {shown} of {total} characters "
    "are shown ({window}-token window). Ask for a smaller part: a line range (offset and "
    "limit), a narrower pattern, or fewer results.]"
)
"""The note appended to a cut result (``{shown}``, ``{total}``, ``{window}`` filled in)."""


def fit_tool_output(
    content: list[UserContent], limit: int, *, window: int, count: Tokenizer | None = None
) -> list[UserContent] | None:
    """``content`` with its text cut to about ``limit`` tokens (counted by ``count``,
    else `heuristic_tokens`), the cut noted in the text; None when it already fits (the
    common case costs one length check per text part). ``window`` is named in the note."""
    total_chars = 0
    for part in content:
        if type(part) is TextPart:
            total_chars += len(part.text)
    if total_chars <= limit:  # no text has more tokens than characters
        return None
    counter = count or heuristic_tokens
    texts = [part.text for part in content if type(part) is TextPart]
    tokens = sum(counter(text) for text in texts)
    if tokens <= limit:
        return None
    keep = int(total_chars * limit / tokens * 0.9)  # characters of text to keep, in all
    out: list[UserContent] = []
    shown = 0
    noted = False
    for part in content:
        if type(part) is not TextPart:
            out.append(part)
            continue
        if noted:
            continue
        room = keep - shown
        if len(part.text) <= room:
            out.append(part)
            shown += len(part.text)
            continue
        cut = part.text[:room]
        line_end = cut.rfind("\n")
        if line_end > room // 2:
            cut = cut[: line_end + 1]
        shown += len(cut)
        note = CUT_NOTE.format(shown=shown, total=total_chars, window=window)
        out.append(TextPart(cut + note))
        noted = True
    return out
