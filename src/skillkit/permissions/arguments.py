"""The argument models of the permission layer's tools, ``ask_user`` and
``exit_plan_mode``.

Imported only when a call is validated (`skillkit.tools.arguments`); the tools show the
model the schemas stored in ``arguments.json`` (`skillkit.permissions.schemas`),
regenerated with ``python -m skillkit.permissions.arguments`` after a model here changes
(a test fails until then).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AskUserArgs", "ExitPlanModeArgs", "OptionArg", "QuestionArg"]


class OptionArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(description="The choice as shown to the user (1-5 words).")
    description: str = Field("", description="What choosing it means.")


class QuestionArg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(description="The full question, ending with a question mark.")
    header: str = Field("", max_length=12, description="A very short label (<= 12 chars).")
    multi_select: bool = Field(False, description="Allow picking several options.")
    options: list[OptionArg] = Field(
        default_factory=list, max_length=6, description="Suggested answers (may be empty)."
    )


class AskUserArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    questions: list[QuestionArg] = Field(min_length=1, max_length=4)


class ExitPlanModeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plan: str = Field(min_length=1, description="The plan, in Markdown.")


if __name__ == "__main__":
    from skillkit.permissions.schemas import ARGUMENTS

    ARGUMENTS.write()
