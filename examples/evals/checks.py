"""Check functions of examples/evals/suite.yaml (``python: checks:short_answer``)."""

from skillkit.evals import EvalRun


def short_answer(run: EvalRun) -> tuple[bool, str]:
    """Passes when the answer is one line of at most 80 characters."""
    return len(run.text) <= 80 and "\n" not in run.text.strip(), "the answer is too long"
