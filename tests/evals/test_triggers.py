"""``skillkit skills eval NAME``: precision and recall of a skill being loaded among the
installed catalog, per model, naming the skill it was confused with."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillkit.evals import SuiteError
from skillkit.evals.triggers import load_triggers
from skillkit.models import ToolResultMessage, UserMessage, message_text
from skillkit.session.store_protocol import open_store
from tests.evals.conftest import FIXTURES, skillkit

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def installed(tmp_path: Path) -> tuple[Path, Path]:
    """The catalog (greeting, welcome — confusable with it — and farewell) installed as
    user skills; an empty working folder."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "catalog", home / ".skillkit" / "skills")
    work = tmp_path / "work"
    work.mkdir()
    return home, work


def test_precision_recall_and_the_confusable_skill_per_model(installed: tuple[Path, Path]) -> None:
    home, work = installed
    scripts = FIXTURES / "scripts"
    models = f"scripted:{scripts / 'greet_only.yaml'},scripted:{scripts / 'welcome_only.yaml'}"
    result = skillkit("skills", "eval", "greeting", "--models", models, "--json",
                      "--repeats", "2", cwd=work, home=home)  # fmt: skip
    assert result.returncode == 0, result.stderr
    eager, confused = json.loads(result.stdout)
    # always loads greeting: every should-trigger run, and the goodbye prompt too
    assert (eager["true_positive"], eager["false_negative"]) == (4, 0)
    assert (eager["false_positive"], eager["true_negative"]) == (2, 0)
    assert eager["recall"] == 1.0 and eager["precision"] == pytest.approx(4 / 6)
    assert eager["false_triggers"] == ["Say goodbye to Carol, she is leaving today"]
    # always loads welcome: greeting is never loaded, welcome stands in for it
    assert confused["recall"] == 0.0 and confused["precision"] is None
    assert confused["confusable"] == {"welcome": 4}
    assert confused["true_negative"] == 2


def test_the_table_names_the_confusable_skill(installed: tuple[Path, Path]) -> None:
    home, work = installed
    model = f"scripted:{FIXTURES / 'scripts' / 'welcome_only.yaml'}"
    result = skillkit("skills", "eval", "greeting", "--models", model, cwd=work, home=home)
    assert result.returncode == 0, result.stderr
    row = result.stdout.splitlines()[2]
    assert row.split()[1:7] == ["–", "0%", "0", "2", "0", "1"]
    assert row.endswith("welcome (2)")


def test_skills_eval_records_each_run_as_a_session_only_when_asked(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    home, work = installed
    model = f"scripted:{FIXTURES / 'scripts' / 'greet_only.yaml'}"
    url = f"sqlite://{tmp_path}/triggers.db"
    args = ("skills", "eval", "greeting", "--models", model, "--json")
    result = skillkit(*args, "--repeats", "2", "--session-store", url, cwd=work, home=home)
    assert result.returncode == 0, result.stderr
    assert f"in {url}" in result.stderr and "'eval triggers-greeting CASE MODEL #N'" in (
        result.stderr
    )
    (score,) = json.loads(result.stdout)
    assert score["true_positive"] == 4  # recording changes no result
    store = open_store(url)
    try:
        kept = {str(info.name): info.id for info in store.list(work)}
        prompts = {
            "should-1": "Say hello to Ada",
            "should-2": "Greet Bob for me",
            "should-not-1": "Say goodbye to Carol, she is leaving today",
        }
        assert sorted(kept) == sorted(
            f"eval triggers-greeting {case} {model} #{repeat}"
            for case in prompts
            for repeat in (0, 1)
        )
        for case, prompt in prompts.items():
            session = store.open(kept[f"eval triggers-greeting {case} {model} #0"], write=False)
            users = [m for m in session.context() if isinstance(m, UserMessage)]
            assert message_text(users[-1]) == prompt
            loaded = [m for m in session.context() if isinstance(m, ToolResultMessage)]
            assert loaded and not loaded[0].is_error  # the skill call is kept with its result
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()

    plain = skillkit(*args, cwd=work, home=home)
    assert plain.returncode == 0, plain.stderr
    assert "kept as a session" not in plain.stderr
    assert open_store(None, home=home).list(work) == []  # nothing recorded unless asked


def test_skills_eval_refuses_a_session_store_it_cannot_open_before_running(
    installed: tuple[Path, Path],
) -> None:
    home, work = installed
    model = f"scripted:{FIXTURES / 'scripts' / 'greet_only.yaml'}"
    bad = skillkit("skills", "eval", "greeting", "--models", model,
                   "--session-store", "redis://h/0", cwd=work, home=home)  # fmt: skip
    assert bad.returncode == 2
    assert "session store" in bad.stderr and "redis" in bad.stderr
    assert bad.stdout == ""


def test_a_skill_without_trigger_cases_or_an_unknown_skill_is_a_usage_error(
    installed: tuple[Path, Path],
) -> None:
    home, work = installed
    missing = skillkit("skills", "eval", "farewell", "--models", "scripted:x", cwd=work, home=home)
    assert missing.returncode == 2 and "cannot read the trigger cases" in missing.stderr
    unknown = skillkit("skills", "eval", "nosuch", "--models", "scripted:x", cwd=work, home=home)
    assert unknown.returncode == 2 and "no skill named 'nosuch'" in unknown.stderr


def test_an_extra_source_is_refused_since_the_agents_would_not_see_it(
    installed: tuple[Path, Path],
) -> None:
    home, work = installed
    result = skillkit("skills", "eval", "greeting", "--source", str(FIXTURES / "catalog"),
                      "--models", "scripted:x", cwd=work, home=home)  # fmt: skip
    assert result.returncode == 2 and "--source does not reach the agents" in result.stderr


def test_a_bad_triggers_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "triggers.yaml"
    path.write_text("should_trigger:\n  - a\nshould_not_trigger: 3\n")
    with pytest.raises(SuiteError, match=r"triggers.yaml:3: should_not_trigger: a list"):
        load_triggers(path, "s")
    path.write_text("should_trigger: [a]\nsometimes: [b]\n")
    with pytest.raises(SuiteError, match=r"triggers.yaml:2: sometimes: unknown field"):
        load_triggers(path, "s")
