"""The model's questions (``ask_user``) as an ACP form elicitation.

When the client offers form elicitation (``clientCapabilities.elicitation.form``, a
part of the protocol the SDK marks unstable), each question becomes one field of one
form: a choice among its options (several for a multi-select question), or free text
for a question without options. `answers` reads the client's answer back, strictly: a
field missing, of the wrong type or naming an option that was not offered makes the
whole answer invalid, and the questions are declined — as they are when the user
declines or dismisses the form.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import (
    ElicitationMultiSelectPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    TitledMultiSelectItems,
)

from skillkit.permissions.events import QuestionItem

__all__ = ["answers", "form"]


def form(questions: Sequence[QuestionItem]) -> ElicitationSchema:
    """The form asking ``questions``: field ``q1``, ``q2``... per question, all required."""
    properties: dict[str, Any] = {}
    for number, item in enumerate(questions, 1):
        title = item.header or f"Question {number}"
        choices = [
            EnumOption(const=o.label, title=o.label, description=o.description or None)
            for o in item.options
        ]
        if item.multi_select and choices:
            properties[f"q{number}"] = ElicitationMultiSelectPropertySchema(
                type="array",
                title=title,
                description=item.question,
                min_items=1,
                items=TitledMultiSelectItems(any_of=choices),
            )
        else:
            properties[f"q{number}"] = ElicitationStringPropertySchema(
                type="string",
                title=title,
                description=item.question,
                one_of=choices or None,
                min_length=None if choices else 1,
            )
    return ElicitationSchema(
        type="object", properties=properties, required=sorted(properties, key=_number)
    )


def answers(questions: Sequence[QuestionItem], content: object) -> list[str | list[str]] | None:
    """The answers in ``content`` (the accepted form's values), one per question, or
    None when they are not a valid answer to every question."""
    if not isinstance(content, dict):
        return None
    out: list[str | list[str]] = []
    for number, item in enumerate(questions, 1):
        value = content.get(f"q{number}")
        labels = {o.label for o in item.options}
        if item.multi_select and labels:
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) and v in labels for v in value)
            ):
                return None
            out.append(list(value))
        elif isinstance(value, str) and value.strip() and (not labels or value in labels):
            out.append(value)
        else:
            return None
    return out


def _number(name: str) -> int:
    return int(name[1:])
