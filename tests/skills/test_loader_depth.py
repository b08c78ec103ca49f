"""Deeply nested frontmatter is refused with one SkillKit error line — never a crash of
the YAML library (PyYAML's C loader overflows the C stack near 50,000 levels)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.skills.diagnostics import SkillError
from skillkit.skills.loader import MAX_NESTING, nesting_bound, parse_skill, parse_skill_bytes
from skillkit.skills.registry import SkillRegistry

SKILLKIT = Path(sys.executable).with_name("skillkit")
DEPTH = 50_000

DEEP_FRONTMATTER = {
    "flow-list": "metadata: " + "[" * DEPTH + "]" * DEPTH,
    "flow-map": "metadata: " + "{a: " * DEPTH + "1" + "}" * DEPTH,
    "block-sequence": "metadata:\n  x:\n    " + "- " * DEPTH + "a",
    "quoted-json": 'metadata: "' + "[" * DEPTH + "]" * DEPTH + '"',
    "unclosed": "metadata: " + "[" * DEPTH,
}


def _write(root: Path, name: str, frontmatter: str) -> Path:
    folder = root / ".skillkit" / "skills" / name
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: Deep.\n{frontmatter}\n---\nbody\n")
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shape", sorted(DEEP_FRONTMATTER))
def test_skills_validate_exits_with_one_error_line(shape: str, tmp_path: Path, home: Path) -> None:
    path = _write(tmp_path, shape, DEEP_FRONTMATTER[shape])

    result = subprocess.run(
        [str(SKILLKIT), "skills", "validate", str(path.parent)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )

    assert result.returncode == 1, result.stderr[-2000:]
    output = (result.stdout + result.stderr).splitlines()
    assert [line for line in output if line.startswith("error:")] == [
        f"error: {path}: frontmatter: is nested too deeply (more than {MAX_NESTING} levels)"
    ]
    assert "Traceback" not in result.stderr


@pytest.mark.timeout(120)
def test_every_skills_command_survives_a_deep_skill_in_the_project(
    tmp_path: Path, home: Path
) -> None:
    _write(tmp_path, "deep", DEEP_FRONTMATTER["flow-list"])
    _write(tmp_path, "fine", "")

    result = subprocess.run(
        [str(SKILLKIT), "skills", "list", "--all"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert "fine" in result.stdout and "nested too deeply" in result.stdout + result.stderr


def test_the_registry_reports_the_deep_skill_and_loads_the_others(
    tmp_path: Path, home: Path
) -> None:
    _write(tmp_path, "deep", DEEP_FRONTMATTER["flow-map"])
    _write(tmp_path, "fine", "")
    registry = SkillRegistry(cwd=tmp_path, home=home)
    registry.load()
    assert "fine" in registry and "deep" not in registry
    assert any("nested too deeply" in str(d) for d in registry.diagnostics)


def test_nesting_within_the_limit_still_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "nested", "metadata: " + "{a: " * 20 + "1" + "}" * 20)
    skill = parse_skill(path)
    node: Any = skill.metadata
    for _ in range(20):
        node = node["a"]
    assert node == 1


def test_deep_indentation_does_not_reach_the_recursion_limit(tmp_path: Path) -> None:
    lines = ["metadata:"] + [" " * (i + 1) + f"k{i}:" for i in range(3000)]
    path = _write(tmp_path, "indented", "\n".join(lines))
    with pytest.raises(SkillError, match="nested too deeply"):
        parse_skill(path)


# --------------------------------------------------------------------------- properties


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


nested = st.recursive(
    st.one_of(st.integers(), st.text(max_size=5), st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(min_size=1, max_size=4), children, max_size=3),
    ),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nested, st.booleans())
def test_the_bound_is_never_below_the_real_depth(value: Any, flow: bool) -> None:
    source = yaml.safe_dump({"metadata": value}, default_flow_style=flow)
    assert nesting_bound(source) >= _depth({"metadata": value})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["[", "]", "{", "}", "- ", "a: ", "\n  ", "? ", "'", '"', "x"])),
    st.integers(min_value=1, max_value=4000),
)
def test_hostile_nesting_gives_a_skill_or_a_skill_error(parts: list[str], repeat: int) -> None:
    text = "---\nname: n\ndescription: d\nmetadata: " + "".join(parts) * repeat + "\n---\n"
    try:
        parse_skill_bytes(text.encode(), Path("/s/n/SKILL.md"))
    except SkillError as exc:
        assert all("\n" not in str(error) for error in exc.errors)
