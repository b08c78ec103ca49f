"""``skillkit -p`` writes a session; ``-c``, ``--session`` and ``--no-session``."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.models import UserMessage
from skillkit.session import SessionStore
from tests.session.helpers import ROOT, resendable, run_cli

HELLO = f"scripted:{ROOT / 'examples' / 'scripts' / 'hello.yaml'}"
TOOL_CALL = f"scripted:{ROOT / 'examples' / 'scripts' / 'tool_call.yaml'}"


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    return home, cwd


def user_texts(home: Path, cwd: Path, session_id: str) -> list[str]:
    context = SessionStore(home).open(session_id, write=False).context()
    assert resendable(context) == []
    return [m.content for m in context if isinstance(m, UserMessage)]  # type: ignore[misc]


def test_print_mode_writes_a_session_and_continue_goes_on_with_it(
    place: tuple[Path, Path],
) -> None:
    home, cwd = place
    first = run_cli("-p", "weather?", "--model", TOOL_CALL, home=home, cwd=cwd)
    assert first.returncode == 0, first.stderr
    (info,) = SessionStore(home).list(cwd)
    assert info.title == "weather?" and info.messages == 4

    again = run_cli("-p", "and now?", "-c", "--model", HELLO, home=home, cwd=cwd)
    assert again.returncode == 0, again.stderr
    assert [i.id for i in SessionStore(home).list(cwd)] == [info.id]
    assert user_texts(home, cwd, info.id) == ["weather?", "and now?"]

    by_id = run_cli("-p", "third", "--session", info.id[:8], "--model", HELLO, home=home, cwd=cwd)
    assert by_id.returncode == 0, by_id.stderr
    assert user_texts(home, cwd, info.id) == ["weather?", "and now?", "third"]

    fresh = run_cli("-p", "new topic", "--model", HELLO, home=home, cwd=cwd)
    assert fresh.returncode == 0, fresh.stderr
    assert len(SessionStore(home).list(cwd)) == 2


def test_no_session_writes_nothing(place: tuple[Path, Path]) -> None:
    home, cwd = place
    done = run_cli("-p", "hello", "--no-session", "--model", HELLO, home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert not (home / ".skillkit" / "sessions").exists()


def test_a_missing_or_busy_session_is_a_one_line_error(place: tuple[Path, Path]) -> None:
    home, cwd = place
    missing = run_cli("-p", "x", "--session", "abcdef", "--model", HELLO, home=home, cwd=cwd)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "skillkit: error: no session 'abcdef'"

    busy = SessionStore(home).create(cwd)
    try:
        refused = run_cli("-p", "x", "-c", "--model", HELLO, home=home, cwd=cwd)
        assert refused.returncode == 2
        assert "another SkillKit process" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    finally:
        busy.close()


def test_the_session_flags_exclude_each_other(place: tuple[Path, Path]) -> None:
    home, cwd = place
    done = run_cli("-p", "x", "-c", "--no-session", "--model", HELLO, home=home, cwd=cwd)
    assert done.returncode == 2 and "not allowed with" in done.stderr
