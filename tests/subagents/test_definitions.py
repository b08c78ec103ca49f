"""Agent files: parsing, one-line errors, bad files reported while the others load,
precedence and hot reload."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.subagents import (
    GENERAL_PURPOSE,
    AgentDefinition,
    AgentDefinitionError,
    AgentRegistry,
    parse_agent_bytes,
    parse_agent_file,
)

GOOD = """---
name: reviewer
description: Reviews a change.
tools: read, grep
model: inherit
mode: plan
skills: [style]
max_turns: 5
---
You review code.
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_a_full_definition_is_read(tmp_path: Path) -> None:
    definition = parse_agent_file(write(tmp_path, "reviewer.md", GOOD), source="project")
    assert definition == AgentDefinition(
        name="reviewer",
        description="Reviews a change.",
        prompt="You review code.",
        tools=("read", "grep"),
        model=None,
        mode="plan",
        skills=("style",),
        max_turns=5,
        location=tmp_path / "reviewer.md",
        source="project",
    )
    assert definition.allows("read") and not definition.allows("bash")
    assert not definition.allows("task")


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        ("description: x", "name: is required"),
        ("name: Bad_Name\ndescription: x", "name: must be lowercase letters"),
        ("name: a", "description: is required"),
        ("name: a\ndescription: x\nmax_turns: 0", "max_turns: must be a whole number"),
        ("name: a\ndescription: x\nmax_turns: many", "max_turns: must be a whole number"),
        ("name: a\ndescription: x\nmode: bypass", "mode: must be inherit or plan"),
        ("name: a\ndescription: x\ntools: 3", "tools: must be a list of names"),
        ("name: a\ndescription: x\nmodel: [a]", "model: must be text"),
        ("name: [unclosed", "frontmatter: is not valid YAML"),
    ],
)
def test_each_problem_is_one_line_naming_file_and_field(
    tmp_path: Path, frontmatter: str, expected: str
) -> None:
    path = write(tmp_path, "a.md", f"---\n{frontmatter}\n---\nbody\n")
    with pytest.raises(AgentDefinitionError) as caught:
        parse_agent_file(path)
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"{path}: {expected}") for line in lines), lines
    assert all(line.startswith(f"{path}: ") for line in lines)


def test_a_file_without_frontmatter_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentDefinitionError, match="frontmatter: is missing"):
        parse_agent_file(write(tmp_path, "plain.md", "just text\n"))


def test_unknown_fields_are_warnings_and_the_agent_loads(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "---\nname: a\ndescription: x\ncolor: blue\n---\n")
    definition = parse_agent_file(path)
    assert [str(w) for w in definition.warnings] == [
        f"{path}: color: unknown field, ignored (known: name, description, tools, model, "
        "mode, skills, max_turns, handoff_to)"
    ]


@settings(max_examples=30, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_parse_or_fail_with_the_one_error_type(data: bytes) -> None:
    try:
        parse_agent_bytes(data, "/agents/x.md")
    except AgentDefinitionError as exc:
        assert all(line.startswith("/agents/x.md: ") for line in str(exc).splitlines())


@settings(max_examples=25, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["name", "description", "tools", "mode", "max_turns"]),
        st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.none()),
    )
)
def test_any_field_values_parse_or_fail_cleanly(fields: dict[str, object]) -> None:
    import json

    text = "---\n" + "\n".join(f"{k}: {json.dumps(v)}" for k, v in fields.items()) + "\n---\n"
    try:
        definition = parse_agent_bytes(text.encode(), "/agents/x.md")
    except AgentDefinitionError:
        return
    assert definition.name == fields["name"]


def test_a_bad_file_is_reported_and_the_others_still_load(tmp_path: Path) -> None:
    project = tmp_path / "project"
    agents = project / ".skillkit" / "agents"
    write(agents, "good.md", "---\nname: good\ndescription: Works.\n---\n")
    bad = write(agents, "bad.md", "---\nname: bad\nmax_turns: -1\n---\n")
    registry = AgentRegistry(cwd=project, home=tmp_path / "home", trusted=True)
    registry.load()

    assert registry.names() == ["general-purpose", "good"]
    errors = [str(d) for d in registry.diagnostics if d.severity == "error"]
    assert f"{bad}: description: is required" in errors
    assert f"{bad}: max_turns: must be a whole number of at least 1 (got -1)" in errors


def test_project_beats_user_beats_code_beats_builtin(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    write(project / ".skillkit/agents", "x.md", "---\nname: shared\ndescription: project\n---\n")
    write(home / ".skillkit/agents", "x.md", "---\nname: shared\ndescription: user\n---\n")
    write(
        home / ".skillkit/agents",
        "gp.md",
        "---\nname: general-purpose\ndescription: my own\n---\n",
    )
    registry = AgentRegistry(cwd=project, home=home, trusted=True)
    registry.register(AgentDefinition(name="shared", description="code"))
    registry.register(AgentDefinition(name="coded", description="code"))

    assert registry.require("shared").description == "project"
    assert registry.require("general-purpose").description == "my own"
    assert registry.require("coded").source == "code"
    shadowed = [str(d) for d in registry.diagnostics if d.field == "name"]
    assert len(shadowed) == 1 and "shadowed" in shadowed[0]


def test_edits_are_picked_up_and_a_broken_edit_keeps_the_last_good_version(
    tmp_path: Path,
) -> None:
    agents = tmp_path / "agents"
    path = write(agents, "a.md", "---\nname: a\ndescription: first\n---\n")
    registry = AgentRegistry(default_sources=False, builtin=())
    registry.add_source(agents, scope="project")
    heard: list[list[str]] = []
    registry.subscribe(heard.append)
    assert registry.load() == ["added agent a"]

    path.write_text("---\nname: a\ndescription: second version\n---\n")
    _touch_later(path)
    assert registry.refresh() == ["reloaded agent a"]
    assert registry.require("a").description == "second version"

    path.write_text("---\nname: a\ndescription: [broken\n---\n")
    _touch_later(path)
    lines = registry.refresh()
    assert len(lines) == 1 and "frontmatter: is not valid YAML" in lines[0]
    assert registry.require("a").description == "second version"

    write(agents, "b.md", "---\nname: b\ndescription: new\n---\n")
    path.unlink()
    assert sorted(registry.refresh()) == ["added agent b", "removed agent a"]
    assert registry.refresh() == []
    assert heard == [
        ["added agent a"],
        ["reloaded agent a"],
        [lines[0]],
        ["added agent b", "removed agent a"],
    ]


def _touch_later(path: Path) -> None:
    """Move the modification time on, so a rewrite within one clock tick is seen."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))


def test_the_builtin_agent_is_always_there() -> None:
    registry = AgentRegistry(default_sources=False)
    assert registry.require("general-purpose") is GENERAL_PURPOSE
    assert GENERAL_PURPOSE.tools is None


def test_an_unknown_name_lists_the_known_ones() -> None:
    from skillkit.subagents import UnknownAgentError

    with pytest.raises(UnknownAgentError, match="agents: general-purpose"):
        AgentRegistry(default_sources=False).require("nope")


def test_a_definition_made_in_code_is_checked() -> None:
    with pytest.raises(ValueError, match="lowercase"):
        AgentDefinition(name="Nope", description="x")
    with pytest.raises(ValueError, match="mode"):
        AgentDefinition(name="a", description="x", mode="bypass")  # type: ignore[arg-type]
