"""Evaluations: does the agent get it right, does the skill trigger — measured.

A suite (`load_suite`) names cases — a prompt, files for a scratch workspace, an
optional starting conversation — and checks on the answer (exact, contains, regex,
JSON schema, a Python function, an LLM judge) and on the trajectory (skills loaded or
not, tools and actions called with given arguments, tools never called, turns, cost,
files afterwards). `run_eval` runs every (case, model, repeat) as a row of a batch
engine and returns pass rates with Wilson intervals; `compare_runs` finds the cases
that got worse or better between two runs; `trigger_eval` measures whether a skill is
loaded for the prompts it should be, among the installed catalog. See docs/evals.md.
"""

from skillkit.evals.checks import JUDGE_SCHEMA, CheckResult, JudgeFactory
from skillkit.evals.record import EvalRun, ToolCallRecord
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

__all__ = [
    "CHECK_KINDS",
    "JUDGE_SCHEMA",
    "AgentMaker",
    "Case",
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
    "eval_rows",
    "fisher_exact",
    "load_suite",
    "outcome_of",
    "parse_suite",
    "read_run",
    "run_eval",
    "run_eval_to_dir",
    "summarize",
    "two_proportion_p",
    "wilson_interval",
]
