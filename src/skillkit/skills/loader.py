"""The SKILL.md parser's entry points (`parse_skill`, `parse_skill_bytes`), per the
Agent Skills specification.

A skill is a folder holding ``SKILL.md`` (``skill.md`` is accepted too): YAML
frontmatter between ``---`` lines, then Markdown instructions. The frontmatter fields
are ``name``, ``description`` (both required), ``license``, ``compatibility``,
``metadata`` and ``allowed-tools``. SkillKit's own additions (requirements, actions)
live under ``metadata.skillkit`` so a SkillKit skill stays valid everywhere else.

Two modes:

- **strict** — every rule of the specification is an error and unknown top-level
  fields are rejected. For authors validating their skill (``skillkit skills validate
  --strict``).
- **lenient** (default) — what a careful client does with skills written for other
  agents: cosmetic problems (name/folder mismatch, over-long fields, numbers where text
  is expected) are warnings and the skill loads; the file is refused only when the
  description is missing or the frontmatter cannot be read.

Real files are messy; the parser accepts a UTF-8 BOM, CRLF line ends, block scalars,
``metadata`` written as a JSON string, and retries unquoted ``key: a: b`` values as
quoted text. It never raises anything but `SkillError`: frontmatter nested deeper than
`MAX_NESTING` levels (counted before any YAML parser sees it, so a hostile file cannot
exhaust the stack of PyYAML's C loader) is refused with a one-line error.

The parts live apart: `Skill` in `skillkit.skills.skill`, reading the frontmatter in
`skillkit.skills.frontmatter`, the rules of each field in `skillkit.skills.fields`; their
public names are importable from here too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from skillkit.skills.diagnostics import Diagnostic, Findings, SkillError
from skillkit.skills.fields import (
    CLIENT_FIELDS,
    MAX_COMPATIBILITY,
    MAX_DESCRIPTION,
    MAX_NAME,
    OWN_KEYS,
    SPEC_FIELDS,
    check_allowed_tools,
    check_compatibility,
    check_description,
    check_flag,
    check_metadata,
    check_name,
    optional_text,
    plain_data,
)
from skillkit.skills.frontmatter import (
    MAX_NESTING,
    decode_text,
    load_frontmatter,
    nesting_bound,
    restore_written_text,
    split_frontmatter,
)
from skillkit.skills.skill import Skill

__all__ = [
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "MAX_NESTING",
    "SPEC_FIELDS",
    "Skill",
    "find_skill_file",
    "nesting_bound",
    "parse_skill",
    "parse_skill_bytes",
    "validate_skill",
]

SKILL_FILE_NAMES = ("SKILL.md", "skill.md")


# --------------------------------------------------------------------------- entry points


def find_skill_file(folder: Path) -> Path | None:
    """The ``SKILL.md`` (or ``skill.md``) in ``folder``, or None."""
    for candidate in SKILL_FILE_NAMES:
        path = folder / candidate
        if path.is_file():
            return path
    return None


def parse_skill(path: str | os.PathLike[str], *, strict: bool = False) -> Skill:
    """Parse the skill at ``path`` (its folder or its ``SKILL.md``).

    Raises `SkillError` (and nothing else) when the file is not a usable skill in the
    chosen mode; every message names the file, the field and the rule.
    """
    location = Path(path)
    if location.is_dir():
        found = find_skill_file(location)
        if found is None:
            raise SkillError([Diagnostic(str(location), "file", "no SKILL.md in this folder")])
        location = found
    location = Path(os.path.abspath(location))
    try:
        data = location.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SkillError(
            [Diagnostic(str(location), "file", f"cannot be read ({reason})")]
        ) from None
    return parse_skill_bytes(data, location, strict=strict)


def validate_skill(path: str | os.PathLike[str], *, strict: bool = False) -> list[Diagnostic]:
    """Every finding (errors and warnings) for the skill at ``path``; never raises."""
    try:
        skill = parse_skill(path, strict=strict)
    except SkillError as exc:
        return list(exc.errors)
    return list(skill.warnings)


def parse_skill_bytes(
    data: bytes, location: str | os.PathLike[str], *, strict: bool = False
) -> Skill:
    """Parse the content of a ``SKILL.md`` file that lives at ``location``.

    The folder name used for the name rule is ``location``'s parent. Raises `SkillError`
    only.
    """
    from skillkit.skills.actions import parse_actions
    from skillkit.skills.eligibility import parse_requirements

    where = Path(location)
    findings = Findings(str(where), strict=strict)
    if strict and where.name != "SKILL.md":
        findings.warning("file", f"should be named SKILL.md (found {where.name})")
    text = decode_text(data, findings)
    frontmatter_text, body = split_frontmatter(text, findings)
    raw, simple = load_frontmatter(frontmatter_text, findings)

    fields = {str(k): v for k, v in raw.items()}
    if not simple:
        restore_written_text(fields, frontmatter_text)
    folder = where.parent.name
    name = check_name(fields.get("name"), folder, findings)
    description = check_description(fields, findings)
    license_ = optional_text(fields, "license", findings)
    compatibility = check_compatibility(fields, findings)
    metadata = check_metadata(fields, findings, plain=simple)
    allowed_tools = check_allowed_tools(fields, findings)
    extra = {k: v for k, v in fields.items() if k not in SPEC_FIELDS}
    for key in extra:
        if strict:
            hint = ""
            if key in CLIENT_FIELDS:
                hint = f"; put it under metadata.skillkit.{key} to keep the skill portable"
            findings.error(key, f"unknown field (allowed: {', '.join(SPEC_FIELDS)}){hint}")

    own = metadata.get("skillkit")
    own = own if isinstance(own, Mapping) else {}
    for key in own:
        if key not in OWN_KEYS:
            known = ", ".join(sorted(OWN_KEYS))
            findings.problem(f"metadata.skillkit.{key}", f"unknown key (known: {known})")
    hidden = check_flag(own, "disable-model-invocation", "metadata.skillkit", findings)
    if hidden is None:
        hidden = check_flag(extra, "disable-model-invocation", "", findings)
    invocable = check_flag(own, "user-invocable", "metadata.skillkit", findings)
    if invocable is None:
        invocable = check_flag(extra, "user-invocable", "", findings)
    requirements = parse_requirements(metadata, findings)
    actions = parse_actions(metadata, where.parent, findings)

    findings.raise_if_errors()
    assert name is not None and description is not None
    return Skill(
        name=name,
        description=description,
        location=where,
        body=body,
        license=license_,
        compatibility=compatibility,
        allowed_tools=allowed_tools,
        metadata=metadata,
        extra=(extra if simple else plain_data(extra, findings, "frontmatter")) if extra else {},
        disable_model_invocation=bool(hidden),
        user_invocable=True if invocable is None else invocable,
        requirements=requirements,
        actions=actions,
        warnings=tuple(findings.warnings),
    )
