"""Property tests: the parser never raises anything but `SkillError`."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.skills.diagnostics import SkillError
from skillkit.skills.loader import Skill, parse_skill_bytes

LOCATION = Path("/skills/some-skill/SKILL.md")

yaml_fragments = st.sampled_from(
    [
        "name: some-skill\n",
        "description: A thing: with colon\n",
        "description: >\n  folded\n",
        "metadata:\n  skillkit:\n    requires:\n      bins: [git]\n",
        "metadata: {openclaw: {requires: {anyBins: [a, b]}, os: [linux]}}\n",
        "metadata:\n  skillkit:\n    actions:\n      go:\n        description: Go\n"
        "        command: [echo, '{x}']\n        params: {x: string}\n",
        "allowed-tools: Read Bash(git:*)\n",
        "license: 3\n",
        "&a [*a]\n",
        "? [a]\n: b\n",
        "- list\n",
        "x: !!binary Zm9v\n",
        "d: 2024-02-30\n",
        "---\n",
        "\t\n",
        "'unterminated\n",
        "k: {a: [\n",
    ]
)


def _check(data: bytes) -> None:
    for strict in (False, True):
        try:
            skill = parse_skill_bytes(data, LOCATION, strict=strict)
        except SkillError as exc:
            assert exc.errors
            for error in exc.errors:
                assert "\n" not in str(error)
                assert str(error).startswith(str(LOCATION))
        else:
            assert isinstance(skill, Skill)
            assert skill.name and skill.description


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_arbitrary_bytes_give_a_skill_or_a_skill_error(data: bytes) -> None:
    _check(data)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(yaml_fragments, st.text(max_size=30)), max_size=8), st.text(max_size=50))
def test_arbitrary_frontmatter_gives_a_skill_or_a_skill_error(parts: list[str], body: str) -> None:
    _check(("---\n" + "".join(parts) + "\n---\n" + body).encode("utf-8", "surrogatepass"))


@settings(max_examples=200)
@given(
    st.from_regex(r"[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,3}", fullmatch=True),
    st.text(
        st.characters(
            blacklist_categories=("Cs", "Cc", "Cn", "Co", "Zl", "Zp"), blacklist_characters="\ufeff"
        ),
        min_size=1,
        max_size=200,
    ).filter(lambda s: s.strip()),
)
def test_valid_names_and_any_description_round_trip(name: str, description: str) -> None:
    import json

    quoted = json.dumps(description, ensure_ascii=False)
    text = f"---\nname: {json.dumps(name)}\ndescription: {quoted}\n---\nbody"
    skill = parse_skill_bytes(text.encode(), Path(f"/s/{name}/SKILL.md"), strict=True)
    assert skill.name == name
    assert skill.description == description.strip()
