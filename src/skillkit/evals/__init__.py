"""Evaluations: does the agent get it right, does the skill trigger — measured.

A suite (`load_suite`) names cases — a prompt, files for a scratch workspace, an
optional starting conversation — and checks on the answer (exact, contains, regex,
JSON schema, a Python function, an LLM judge) and on the trajectory (skills loaded or
not, tools and actions called with given arguments, tools never called, turns, cost,
files afterwards). `run_eval` runs every (case, model, repeat) as a row of a batch
engine and returns pass rates with Wilson intervals; `compare_runs` finds the cases
that got worse or better between two runs; `score_triggers` measures whether a skill
is loaded for the prompts it should be, among the installed catalog. See docs/evals.md.

The names below are imported on first use: ``skillkit eval --help`` stays light.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillkit.evals.checks import JUDGE_SCHEMA, CheckResult, JudgeFactory
    from skillkit.evals.compare import CaseChange, compare_runs
    from skillkit.evals.record import EvalRun, ToolCallRecord
    from skillkit.evals.replay import case_from_messages
    from skillkit.evals.report import render_report, write_report
    from skillkit.evals.run import (
        CaseScore,
        EvalResults,
        EvalRunError,
        ModelScore,
        eval_rows,
        read_run,
        run_eval,
        run_eval_to_dir,
        summarize,
    )
    from skillkit.evals.stats import fisher_exact, two_proportion_p, wilson_interval
    from skillkit.evals.suite import (
        CHECK_KINDS,
        Case,
        Check,
        Suite,
        SuiteError,
        load_suite,
        parse_suite,
    )
    from skillkit.evals.task import AgentMaker, EvalTask, Outcome, outcome_of
    from skillkit.evals.triggers import (
        TriggerScore,
        TriggerSet,
        load_triggers,
        score_triggers,
        trigger_suite,
    )

__all__ = [
    "CHECK_KINDS",
    "JUDGE_SCHEMA",
    "AgentMaker",
    "Case",
    "CaseChange",
    "CaseScore",
    "Check",
    "CheckResult",
    "EvalResults",
    "EvalRun",
    "EvalRunError",
    "EvalTask",
    "JudgeFactory",
    "ModelScore",
    "Outcome",
    "Suite",
    "SuiteError",
    "ToolCallRecord",
    "TriggerScore",
    "TriggerSet",
    "case_from_messages",
    "compare_runs",
    "eval_rows",
    "fisher_exact",
    "load_suite",
    "load_triggers",
    "outcome_of",
    "parse_suite",
    "read_run",
    "render_report",
    "run_eval",
    "run_eval_to_dir",
    "score_triggers",
    "summarize",
    "trigger_suite",
    "two_proportion_p",
    "wilson_interval",
    "write_report",
]

_HOMES = {
    "JUDGE_SCHEMA": "checks",
    "CheckResult": "checks",
    "JudgeFactory": "checks",
    "EvalRun": "record",
    "ToolCallRecord": "record",
    "CaseScore": "run",
    "EvalResults": "run",
    "EvalRunError": "run",
    "ModelScore": "run",
    "eval_rows": "run",
    "read_run": "run",
    "run_eval": "run",
    "run_eval_to_dir": "run",
    "summarize": "run",
    "fisher_exact": "stats",
    "two_proportion_p": "stats",
    "wilson_interval": "stats",
    "CHECK_KINDS": "suite",
    "Case": "suite",
    "Check": "suite",
    "Suite": "suite",
    "SuiteError": "suite",
    "load_suite": "suite",
    "parse_suite": "suite",
    "AgentMaker": "task",
    "EvalTask": "task",
    "Outcome": "task",
    "outcome_of": "task",
    "CaseChange": "compare",
    "compare_runs": "compare",
    "render_report": "report",
    "write_report": "report",
    "case_from_messages": "replay",
    "TriggerScore": "triggers",
    "TriggerSet": "triggers",
    "load_triggers": "triggers",
    "score_triggers": "triggers",
    "trigger_suite": "triggers",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'skillkit.evals' has no attribute {name!r}")
    value = getattr(import_module(f"skillkit.evals.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
