"""``skillkit eval`` as a user runs it: a suite on a scripted model with a scripted
judge, every check kind passing on the good model and failing on the bad one, the run
folder and its manifest, ``compare`` naming the regressed case, ``from-session`` making
a case that passes, and usage errors as one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillkit.batch import canonical_hash
from skillkit.evals import CHECK_KINDS, read_run
from tests.evals.conftest import make_project, skillkit

pytestmark = pytest.mark.timeout(240)


@dataclass
class Runs:
    project: Path
    home: Path
    good: Path  # the good model, the judge saying yes
    bad: Path  # the bad model, the judge saying no
    good_stderr: str
    good_stdout: str


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("eval")
    project = make_project(folder)
    home = folder / "home"
    good = skillkit(
        "eval", "suite.yaml", "--out", "runs/good", "--allow", "write",
        "--report", "good.html", cwd=project, home=home,
    )  # fmt: skip
    assert good.returncode == 0, good.stderr
    bad = skillkit(
        "eval", "suite.yaml", "--models", "scripted:scripts/bad.yaml",
        "--judge-model", "scripted:scripts/judge_no.yaml",
        "--out", "runs/bad", "--report", "bad.html", cwd=project, home=home,
    )  # fmt: skip
    assert bad.returncode == 0, bad.stderr
    yield Runs(project, home, project / "runs/good", project / "runs/bad", good.stderr, good.stdout)


def outcomes(folder: Path) -> list[dict[str, object]]:
    lines = (folder / "results.jsonl").read_text().splitlines()
    return [json.loads(line)["output"] for line in lines]


def checks_by_kind(outcome: dict[str, object]) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for check in outcome["checks"]:  # type: ignore[attr-defined]
        found.setdefault(check["kind"], []).append(check)
    return found


# max_cost needs a model with prices and action_called a skill with actions: both are
# run through the command in test_cli_cost_and_actions.py
TRIED = set(CHECK_KINDS) - {"max_cost", "action_called"}


def test_every_check_kind_passes_on_the_good_model(runs: Runs) -> None:
    rows = [o for o in outcomes(runs.good) if o["case"] == "all-kinds"]
    assert len(rows) == 4 and all(o["passed"] for o in rows)
    kinds = checks_by_kind(rows[0])
    assert set(kinds) == TRIED
    assert all(c["passed"] for checks in kinds.values() for c in checks)
    assert kinds["judge"][0]["reasoning"] == "The answer greets Ada by name, as the rubric asks."
    assert rows[0]["skills_loaded"] == ["greeting"]
    assert rows[0]["tools"] == ["skill", "write"]


def test_every_check_kind_fails_on_the_bad_model_with_a_reason(runs: Runs) -> None:
    rows = [o for o in outcomes(runs.bad) if o["case"] == "all-kinds"]
    assert len(rows) == 4 and not any(o["passed"] for o in rows)
    kinds = checks_by_kind(rows[0])
    failed = {kind for kind, checks in kinds.items() if not any(c["passed"] for c in checks)}
    assert failed == TRIED - {"file"}
    assert not kinds["file"][0]["passed"] and kinds["file"][1]["passed"]  # people.txt is there
    assert all(c.get("reason") for checks in kinds.values() for c in checks if not c["passed"])
    assert kinds["judge"][0]["reasoning"] == "The answer says goodbye instead of greeting Ada."
    assert (
        kinds["skill_loaded"][0]["reason"] == "skill 'greeting' was not loaded (loaded: farewell)"
    )
    assert "'bash' was called 1 times" in kinds["tool_not_called"][0]["reason"]


def test_the_run_prints_progress_a_table_and_keeps_a_manifest(runs: Runs) -> None:
    assert "5/5 rows  pass 100%" in runs.good_stderr
    assert "all-kinds" in runs.good_stdout and "4/4 100%" in runs.good_stdout
    assert "scripted:scripts/good.yaml: 5/5 passed (100%, 95% CI 57%–100%)" in runs.good_stdout
    manifest = json.loads((runs.good / "results.jsonl.manifest.json").read_text())
    assert manifest["complete"] and manifest["rows"] == 5
    assert manifest["settings"]["suite_sha256"]
    assert manifest["settings"]["models"] == ["scripted:scripts/good.yaml"]
    results, _ = read_run(runs.good)
    assert manifest["results_sha256"] == canonical_hash(results.results)


def test_the_same_suite_gives_the_same_hash_again(runs: Runs) -> None:
    again = skillkit(
        "eval", "suite.yaml", "--out", "runs/again", "--allow", "write", "--concurrency", "1",
        cwd=runs.project, home=runs.home,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    first = json.loads((runs.good / "results.jsonl.manifest.json").read_text())
    second = json.loads((runs.project / "runs/again/results.jsonl.manifest.json").read_text())
    assert first["results_sha256"] == second["results_sha256"]


def test_compare_names_the_regressed_case_as_significant(runs: Runs) -> None:
    result = skillkit("eval", "compare", "runs/good", "runs/bad", cwd=runs.project, home=runs.home)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "Regressions: 1" in lines
    assert "  all-kinds: 4/4 → 0/4 (-100%; significant, p=0.0286)" in lines
    assert "Unchanged: 1" in lines  # 'stable' passes in both
    back = skillkit("eval", "compare", "runs/bad", "runs/good", cwd=runs.project, home=runs.home)
    assert back.returncode == 0 and "Improvements: 1" in back.stdout


def test_a_run_folder_is_not_overwritten_without_resume(runs: Runs) -> None:
    result = skillkit("eval", "suite.yaml", "--out", "runs/good", cwd=runs.project, home=runs.home)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("add --resume to go on with it, or give another --out")
    other = skillkit(
        "eval", "suite.yaml", "--out", "runs/good", "--resume",
        "--models", "scripted:scripts/bad.yaml", cwd=runs.project, home=runs.home,
    )  # fmt: skip
    assert other.returncode == 2 and "made by another suite or other models" in other.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("missing.yaml",), "missing.yaml: cannot read the suite"),
        (("suite.yaml", "--models", "nosuch:model"), "model nosuch:model"),
        (("compare", "runs/good"), "compare takes two runs"),
        (("compare", "runs/good", "nowhere"), "nowhere: no eval results here"),
    ],
)
def test_bad_input_is_one_error_line(runs: Runs, args: tuple[str, ...], message: str) -> None:
    result = skillkit("eval", *args, cwd=runs.project, home=runs.home)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skillkit: error: eval: "), result.stderr
    assert message in lines[0]


def test_a_bad_suite_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "cases:\n  - name: a\n    prompt: p\n    expect: [{regex: '('}]\n"
    )
    result = skillkit("eval", "s.yaml", "--models", "scripted:x", cwd=tmp_path, home=tmp_path)
    assert result.returncode == 2
    assert "s.yaml:4: cases.0.expect.0.regex: not a valid regular expression" in result.stderr


def test_a_judge_check_without_a_model_is_refused_before_any_row(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "cases:\n  - name: a\n    prompt: p\n    expect:\n      - judge: Is it good?\n"
    )
    result = skillkit("eval", "s.yaml", "--models", "scripted:x", cwd=tmp_path, home=tmp_path)
    assert result.returncode == 2
    assert "judge checks without a model: a (line 5)" in result.stderr
    assert not (tmp_path / "evals").exists()


def test_from_session_turns_a_recorded_run_into_a_passing_case(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    work = tmp_path / "work"
    (work / ".skillkit").mkdir(parents=True)
    (work / "people.txt").write_text("Ada\n")
    import shutil

    shutil.copytree(project / "catalog", work / ".skillkit" / "skills")
    script = tmp_path / "session.yaml"
    script.write_text(
        "replies:\n"
        "  - tool_calls: [{name: read, arguments: {path: people.txt}}]\n"
        "  - tool_calls: [{name: skill, arguments: {name: greeting}}]\n"
        "  - tool_calls: [{name: write, arguments: {path: out.txt, content: 'Hello, Ada!'}}]\n"
        "  - text: Hello, Ada! It is in out.txt.\n"
    )
    model = f"scripted:{script}"
    made = skillkit("-p", "Greet the person in people.txt", "--model", model,
                    "--allow", "write", cwd=work, home=home)  # fmt: skip
    assert made.returncode == 0, made.stderr
    listed = skillkit("sessions", "list", cwd=work, home=home)
    session_id = listed.stdout.split()[0]
    printed = skillkit("eval", "from-session", session_id, cwd=work, home=home)
    assert printed.returncode == 0, printed.stderr
    import yaml

    case = yaml.safe_load(printed.stdout)["cases"][0]
    assert case["prompt"] == "Greet the person in people.txt"
    assert case["files"] == {"people.txt": "Ada\n"}
    assert case["expect"] == [
        {"skill_loaded": "greeting"},
        {"tool_called": "read"},
        {"tool_called": "write"},
        {"file": {"path": "out.txt", "exact": "Hello, Ada!"}},
        {"contains": "Hello, Ada! It is in out.txt."},
    ]
    added = skillkit("eval", "from-session", session_id, "--suite", "regressions.yaml",
                     cwd=tmp_path, home=home)  # fmt: skip
    assert added.returncode == 0, added.stderr
    replayed = skillkit(
        "eval", "regressions.yaml", "--models", model, "--allow", "write",
        "--out", "replay", "--fail-under", "1", cwd=tmp_path, home=home,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "1/1 passed (100%" in replayed.stdout
    broken = tmp_path / "broken.yaml"
    broken.write_text("replies:\n  - text: I did nothing.\n")
    failing = skillkit(
        "eval", "regressions.yaml", "--models", f"scripted:{broken}",
        "--out", "replay2", "--fail-under", "1", cwd=tmp_path, home=home,
    )  # fmt: skip
    assert failing.returncode == 1 and "pass rate 0.0% is under 100.0%" in failing.stderr
