"""Trigger evals: is a skill loaded for the prompts it is meant for, and only those?

A skill keeps its trigger cases in ``evals/triggers.yaml`` in its folder::

    should_trigger:
      - Convert this PDF to text
      - Pull the tables out of report.pdf
    should_not_trigger:
      - Write a haiku about autumn
    n: 3            # runs of each prompt per model (optional)
    models: [...]   # default models (optional)

Each prompt runs as an eval case (a batch row per prompt, model and repeat) with the
whole installed catalog offered, as a session would have it. Per model: recall (of the
should-trigger runs, the share that loaded the skill), precision (of the runs that
loaded it, the share that should have), the counts behind them, and the confusable
skills — the other skills loaded on should-trigger prompts where this one was not,
and how often.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillkit.evals.run import EvalResults
from skillkit.evals.suite import Case, Check, Suite, SuiteError
from skillkit.evals.task import outcome_of

__all__ = [
    "TriggerScore",
    "TriggerSet",
    "format_scores",
    "load_triggers",
    "score_triggers",
    "trigger_suite",
]

TRIGGERS_FILE = "evals/triggers.yaml"


@dataclass(frozen=True)
class TriggerSet:
    """A skill's trigger prompts."""

    skill: str
    should_trigger: tuple[str, ...]
    should_not_trigger: tuple[str, ...]
    n: int = 1
    models: tuple[str, ...] = ()
    source: str = ""


def load_triggers(path: Path, skill: str) -> TriggerSet:
    """Read a triggers file; `SuiteError` naming the file, line and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read the trigger cases: {exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise SuiteError(f"{path}{where}: not valid YAML") from None

    def line(key: str) -> int:
        if isinstance(node, yaml.MappingNode):
            for k, _ in node.value:
                if k.value == key:
                    return int(k.start_mark.line) + 1
        return 1

    if not isinstance(data, dict):
        raise SuiteError(f"{path}:1: a mapping with 'should_trigger' and 'should_not_trigger'")
    known = {"should_trigger", "should_not_trigger", "n", "models"}
    for key in data:
        if key not in known:
            raise SuiteError(f"{path}:{line(str(key))}: {key}: unknown field")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("should_trigger", "should_not_trigger"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise SuiteError(f"{path}:{line(key)}: {key}: a list of prompts (texts)")
        lists[key] = tuple(value)
    if not lists["should_trigger"]:
        raise SuiteError(f"{path}:{line('should_trigger')}: should_trigger: needs prompts")
    n = data.get("n", 1)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SuiteError(f"{path}:{line('n')}: n: a whole number of at least 1")
    models = data.get("models", [])
    if isinstance(models, str):
        models = [models]
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise SuiteError(f"{path}:{line('models')}: models: a list of model names")
    return TriggerSet(
        skill, lists["should_trigger"], lists["should_not_trigger"], n, tuple(models), str(path)
    )


def trigger_suite(triggers: TriggerSet) -> Suite:
    """The trigger prompts as an eval suite: one case per prompt, checking that the
    skill is loaded (``should-N``) or not (``should-not-N``)."""
    cases: list[Case] = []
    for index, prompt in enumerate(triggers.should_trigger, 1):
        check = Check("skill_loaded", triggers.skill)
        cases.append(Case(f"should-{index}", prompt, (check,), n=triggers.n))
    for index, prompt in enumerate(triggers.should_not_trigger, 1):
        check = Check("skill_not_loaded", triggers.skill)
        cases.append(Case(f"should-not-{index}", prompt, (check,), n=triggers.n))
    return Suite(
        name=f"triggers-{triggers.skill}",
        cases=tuple(cases),
        models=triggers.models,
        source=triggers.source,
        case_index={case.name: i for i, case in enumerate(cases)},
    )


@dataclass
class TriggerScore:
    """One model's trigger results for the skill."""

    model: str
    true_positive: int = 0
    false_negative: int = 0
    false_positive: int = 0
    true_negative: int = 0
    confusable: Counter[str] = field(default_factory=Counter)
    """Other skills loaded on should-trigger runs that missed this skill."""
    false_triggers: list[str] = field(default_factory=list)
    """Should-not-trigger prompts that loaded it (each once)."""

    @property
    def precision(self) -> float | None:
        loaded = self.true_positive + self.false_positive
        return self.true_positive / loaded if loaded else None

    @property
    def recall(self) -> float | None:
        meant = self.true_positive + self.false_negative
        return self.true_positive / meant if meant else None

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "precision": self.precision,
            "recall": self.recall,
            "true_positive": self.true_positive,
            "false_negative": self.false_negative,
            "false_positive": self.false_positive,
            "true_negative": self.true_negative,
            "confusable": dict(self.confusable.most_common()),
            "false_triggers": self.false_triggers,
        }


def score_triggers(results: EvalResults, suite: Suite, skill: str) -> list[TriggerScore]:
    """Precision, recall and confusable skills per model, from a trigger run."""
    scores: dict[str, TriggerScore] = {}
    for result in results.results:
        outcome = outcome_of(result)
        if outcome is None:
            continue
        score = scores.setdefault(outcome.model, TriggerScore(outcome.model))
        loaded = skill in outcome.skills_loaded
        if outcome.case.startswith("should-not-"):
            if loaded:
                score.false_positive += 1
                prompt = suite.case(outcome.case).prompt
                if prompt not in score.false_triggers:
                    score.false_triggers.append(prompt)
            else:
                score.true_negative += 1
        elif loaded:
            score.true_positive += 1
        else:
            score.false_negative += 1
            score.confusable.update(s for s in outcome.skills_loaded if s != skill)
    return list(scores.values())


def format_scores(skill: str, scores: list[TriggerScore]) -> str:
    def rate(value: float | None) -> str:
        return "–" if value is None else f"{value:.0%}"

    lines = [f"skill {skill}: trigger evals"]
    width = max([5, *(len(s.model) for s in scores)])
    lines.append(f"{'model'.ljust(width)}  precision  recall  TP  FN  FP  TN  confused with")
    for s in scores:
        confused = ", ".join(f"{name} ({count})" for name, count in s.confusable.most_common())
        lines.append(
            f"{s.model.ljust(width)}  {rate(s.precision):>9}  {rate(s.recall):>6}  "
            f"{s.true_positive:>2}  {s.false_negative:>2}  {s.false_positive:>2}  "
            f"{s.true_negative:>2}  {confused or '-'}"
        )
        for prompt in s.false_triggers:
            lines.append(f"{''.ljust(width)}  loaded for a should-not prompt: {prompt!r}")
    return "\n".join(lines)
