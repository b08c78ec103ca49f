"""``skillkit sessions`` in real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillkit.models import (
    AssistantMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.session import Session, SessionStore
from tests.session.helpers import run_cli

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-broken()\n+fixed()"


def make_session(home: Path, cwd: Path, prompt: str = "fix <b>app.py</b> & ship") -> Session:
    session = SessionStore(home).create(cwd)
    session.append_message(UserMessage(content=prompt))
    session.append_message(
        AssistantMessage(
            content=[
                ThinkingPart("the bug is on line 1"),
                ToolCall("c1", "edit", {"path": "app.py"}),
            ],
            stop_reason="tool_use",
        )
    )
    session.append_message(ToolResultMessage("c1", "edit", [TextPart(DIFF)]))
    session.append_message(AssistantMessage(content=[TextPart("Fixed. <script>alert(1)</script>")]))
    session.close()
    return session


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    return home, cwd


def test_list_shows_this_folders_sessions_newest_first(place: tuple[Path, Path]) -> None:
    home, cwd = place
    first = make_session(home, cwd, "first task")
    second = make_session(home, cwd, "second task")
    make_session(home, cwd.parent, "elsewhere")
    done = run_cli("sessions", "list", home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(second.id[:12]) and "second task" in lines[0]
    assert lines[1].startswith(first.id[:12])
    rows = [
        json.loads(line)
        for line in run_cli(
            "sessions", "list", "--json", "--all", home=home, cwd=cwd
        ).stdout.splitlines()
    ]
    assert {row["title"] for row in rows} == {"first task", "second task", "elsewhere"}
    assert all(row["messages"] == 4 for row in rows)


def test_show_prints_the_branch(place: tuple[Path, Path]) -> None:
    home, cwd = place
    session = make_session(home, cwd)
    done = run_cli("sessions", "show", session.id[:6], home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert f"session   {session.id}" in done.stdout
    assert "tool_result" in done.stdout and "[edit]" in done.stdout
    missing = run_cli("sessions", "show", "nosuchid", home=home, cwd=cwd)
    assert missing.returncode == 1 and "no session 'nosuchid'" in missing.stderr


def test_export_markdown_and_a_self_contained_html_page(place: tuple[Path, Path]) -> None:
    home, cwd = place
    session = make_session(home, cwd)
    markdown = run_cli("sessions", "export", session.id, home=home, cwd=cwd)
    assert markdown.returncode == 0, markdown.stderr
    assert "## User" in markdown.stdout and "> the bug is on line 1" in markdown.stdout
    assert "```\n" + DIFF + "\n```" in markdown.stdout

    page = cwd / "out.html"
    done = run_cli(
        "sessions", "export", session.id, "--format", "html", "-o", str(page), home=home, cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "fix &lt;b&gt;app.py&lt;/b&gt; &amp; ship" in text
    assert "<details><summary>edit</summary>" in text
    assert '<div class="thinking">the bug is on line 1</div>' in text
    assert (
        '<span class="add">+fixed()</span>' in text and '<span class="del">-broken()</span>' in text
    )
    assert "http://" not in text and "https://" not in text and " src=" not in text


def test_rm_deletes_and_is_refused_while_a_session_is_written(place: tuple[Path, Path]) -> None:
    home, cwd = place
    kept = make_session(home, cwd)
    busy = SessionStore(home).open(kept.id)  # this process writes it
    refused = run_cli("sessions", "rm", kept.id, home=home, cwd=cwd)
    assert refused.returncode == 1 and "another SkillKit process" in refused.stderr
    busy.close()
    done = run_cli("sessions", "rm", kept.id, home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert not kept.path.exists()
    assert (
        run_cli("sessions", "list", home=home, cwd=cwd).stdout.strip()
        == "no sessions in this folder"
    )


def test_an_answer_that_ended_in_error_says_its_stop_once(place: tuple[Path, Path]) -> None:
    from skillkit.session.export import to_html, to_markdown

    home, cwd = place
    session = SessionStore(home).create(cwd)
    session.append_message(UserMessage(content="go"))
    session.append_message(
        AssistantMessage(content=[TextPart("Half")], stop_reason="aborted", error="aborted")
    )
    session.append_message(UserMessage(content="again"))
    session.append_message(
        AssistantMessage(content=[], stop_reason="error", error="model call failed: 503")
    )
    markdown, page = to_markdown(session), to_html(session)
    session.close()
    assert "*aborted*" in markdown and "aborted: aborted" not in markdown
    assert "*error: model call failed: 503*" in markdown
    assert '<div class="error">aborted</div>' in page
    assert '<div class="error">error: model call failed: 503</div>' in page


def test_the_html_export_renders_an_answers_markdown_and_runs_none_of_it(
    place: tuple[Path, Path],
) -> None:
    from skillkit.session.export import to_html

    home, cwd = place
    session = SessionStore(home).create(cwd)
    session.append_message(UserMessage(content="**not rendered** for the user"))
    answer = (
        "## Result\n\n**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```py\nx = 1\n```\n\n<script>alert(1)</script> <img src=x onerror=alert(2)> "
        "[click](javascript:alert(3)) ![pic](http://example.invalid/p.png)"
    )
    session.append_message(AssistantMessage(content=[TextPart(answer)]))
    page = to_html(session)
    session.close()
    assert "<h2>Result</h2>" in page and "<strong>bold</strong>" in page
    assert "<code>code</code>" in page and "<td>1</td>" in page
    assert '<code class="language-py">x = 1\n</code>' in page
    assert "<script>" not in page and "<img" not in page  # raw HTML stays text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="javascript:' not in page  # a link that would run code is no link
    assert "**not rendered** for the user" in page  # the user's words as typed
    assert "default-src 'none'" in page  # and the page loads and runs nothing else


def test_exports_and_the_tree_show_what_the_user_typed(place: tuple[Path, Path]) -> None:
    from skillkit.session.branching import tree_lines
    from skillkit.session.export import to_html, to_markdown

    home, cwd = place
    session = SessionStore(home).create(cwd)
    skill = (
        '<skill_content name="release">\nStep 1: tag.\n</skill_content>\n\nUser request: cut 1.2'
    )
    session.append_message(UserMessage(content=skill))
    session.append_message(AssistantMessage(content=[TextPart("Tagged.")]))
    shell = "I ran this shell command myself; it exited 0.\n$ git tag\nv1.2\n"
    session.append_message(UserMessage(content=shell))
    markdown, page, tree = to_markdown(session), to_html(session), "\n".join(tree_lines(session))
    session.close()
    for shown in (markdown, page, tree):
        assert "/skill:release cut 1.2" in shown and "!git tag" in shown
        assert "skill_content" not in shown and "I ran this shell command" not in shown


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["sessions", "export"], "export needs a session ID"),
        (["sessions", "export", "abc", "--to", "x"], "--to copies every session"),
        (["sessions", "export", "--all"], "--all needs --to"),
        (["sessions", "export", "abc", "--all", "--to", "x"], "give no ID with it"),
    ],
)
def test_export_called_wrongly_is_a_usage_error(
    place: tuple[Path, Path], args: list[str], says: str
) -> None:
    home, cwd = place
    done = run_cli(*args, home=home, cwd=cwd)
    assert done.returncode == 2
    assert says in done.stderr and done.stderr.count("\n") == 1
