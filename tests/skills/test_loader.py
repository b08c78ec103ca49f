"""The SKILL.md parser: every specification rule in both modes, messy files, messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.skills.diagnostics import SkillError
from skillkit.skills.loader import parse_skill, parse_skill_bytes, validate_skill


def skill_file(tmp_path: Path, folder: str, text: str | bytes, name: str = "SKILL.md") -> Path:
    path = tmp_path / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def errors_of(path: Path, *, strict: bool) -> list[str]:
    with pytest.raises(SkillError) as info:
        parse_skill(path, strict=strict)
    return [str(e) for e in info.value.errors]


def fm(body: str) -> str:
    return f"---\n{body}\n---\n# Body\n"


# --------------------------------------------------------------------------- valid files


def test_a_minimal_skill_parses_with_its_fields(tmp_path: Path) -> None:
    path = skill_file(
        tmp_path,
        "pdf-tools",
        "---\nname: pdf-tools\ndescription: Work with PDFs.\nlicense: MIT\n"
        "compatibility: Needs poppler\nallowed-tools: Bash(git add:*) Read\n"
        "metadata:\n  author: me\n  version: '1.0'\n---\n\n# PDF tools\n\nSteps.\n",
    )
    skill = parse_skill(path, strict=True)
    assert skill.name == "pdf-tools"
    assert skill.description == "Work with PDFs."
    assert skill.license == "MIT"
    assert skill.compatibility == "Needs poppler"
    assert skill.allowed_tools == ("Bash(git add:*)", "Read")
    assert skill.metadata == {"author": "me", "version": "1.0"}
    assert skill.body == "# PDF tools\n\nSteps."
    assert skill.location == path
    assert skill.warnings == ()


def test_parse_accepts_the_folder_as_well_as_the_file(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A."))
    assert parse_skill(path.parent).location == path


def test_allowed_tools_as_a_yaml_list_loads_leniently_and_is_reported_strictly(
    tmp_path: Path,
) -> None:
    path = skill_file(
        tmp_path,
        "alpha",
        fm("name: alpha\ndescription: A.\nallowed-tools:\n  - Read\n  - Bash(jq:*)"),
    )
    skill = parse_skill(path)
    assert skill.allowed_tools == ("Read", "Bash(jq:*)")
    assert [w.field for w in skill.warnings] == ["allowed-tools"]
    with pytest.raises(SkillError) as caught:
        parse_skill(path, strict=True)
    assert [(e.field, e.severity) for e in caught.value.errors] == [("allowed-tools", "error")]
    assert "space-separated string" in caught.value.errors[0].message


def test_companion_files_are_listed_without_hidden_or_cache_entries(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A."))
    for rel in ["scripts/run.py", "references/REF.md", "assets/t.txt", ".hidden", "x/.git/y"]:
        target = path.parent / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    (path.parent / "__pycache__").mkdir()
    (path.parent / "__pycache__" / "m.pyc").write_text("x")
    skill = parse_skill(path)
    assert skill.files == ("assets/t.txt", "references/REF.md", "scripts/run.py")
    assert not skill.files_truncated


# --------------------------------------------------------------------------- name rules

NAME_CASES = [
    ("x" * 65, "name: must be 1-64 characters (got 65)"),
    ("PDF-Tools", "name: may contain only lowercase letters, digits and hyphens"),
    ("pdf_tools", "name: may contain only lowercase letters, digits and hyphens (found '_')"),
    ("-pdf", "name: must not start or end with a hyphen"),
    ("pdf-", "name: must not start or end with a hyphen"),
    ("pdf--tools", "name: must not contain consecutive hyphens"),
]


@pytest.mark.parametrize(("name", "message"), NAME_CASES)
def test_name_rule_is_an_error_in_strict_mode(tmp_path: Path, name: str, message: str) -> None:
    path = skill_file(tmp_path, name, fm(f"name: '{name}'\ndescription: A."))
    errors = errors_of(path, strict=True)
    assert any(message in e for e in errors), errors
    assert all(e.startswith(f"{path}: name: ") for e in errors)


@pytest.mark.parametrize(("name", "message"), NAME_CASES)
def test_name_rule_is_a_warning_in_lenient_mode(tmp_path: Path, name: str, message: str) -> None:
    path = skill_file(tmp_path, name, fm(f"name: '{name}'\ndescription: A."))
    skill = parse_skill(path)
    assert skill.name == name
    assert any(message in str(w) for w in skill.warnings)


def test_name_must_equal_the_folder_name(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "pdf", fm("name: pdfs\ndescription: A."))
    assert errors_of(path, strict=True) == [
        f"{path}: name: must equal the folder name 'pdf' (got 'pdfs')"
    ]
    skill = parse_skill(path)
    assert skill.name == "pdfs"
    assert [w.severity for w in skill.warnings] == ["warning"]


def test_missing_name_falls_back_to_the_folder_only_when_lenient(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("description: A."))
    assert errors_of(path, strict=True) == [f"{path}: name: is missing (required)"]
    skill = parse_skill(path)
    assert skill.name == "alpha"
    assert "using the folder name 'alpha'" in str(skill.warnings[0])


def test_unicode_lowercase_names_are_allowed(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "données", fm("name: données\ndescription: A."))
    assert parse_skill(path, strict=True).name == "données"


# --------------------------------------------------------------------------- description


def test_missing_description_is_an_error_in_both_modes(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha"))
    for strict in (True, False):
        assert errors_of(path, strict=strict) == [f"{path}: description: is missing (required)"]


def test_empty_description_is_an_error_in_both_modes(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: '   '"))
    for strict in (True, False):
        assert errors_of(path, strict=strict) == [f"{path}: description: must not be empty"]


def test_over_long_description(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm(f"name: alpha\ndescription: {'d' * 1025}"))
    assert errors_of(path, strict=True) == [
        f"{path}: description: must be 1-1024 characters (got 1025)"
    ]
    assert len(parse_skill(path).description) == 1025


def test_description_of_1024_characters_is_fine(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm(f"name: alpha\ndescription: {'d' * 1024}"))
    assert parse_skill(path, strict=True).warnings == ()


def test_a_mapping_description_is_refused_in_both_modes(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription:\n  a: b"))
    for strict in (True, False):
        assert errors_of(path, strict=strict) == [
            f"{path}: description: must be text (got a mapping)"
        ]


# --------------------------------------------------------------------------- other fields


def test_compatibility_over_500_characters(tmp_path: Path) -> None:
    path = skill_file(
        tmp_path, "alpha", fm(f"name: alpha\ndescription: A.\ncompatibility: {'c' * 501}")
    )
    assert errors_of(path, strict=True) == [
        f"{path}: compatibility: must be 1-500 characters (got 501)"
    ]
    assert parse_skill(path).compatibility == "c" * 501


def test_empty_compatibility(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A.\ncompatibility: ''"))
    assert errors_of(path, strict=True) == [
        f"{path}: compatibility: must be 1-500 characters (got 0)"
    ]
    assert parse_skill(path).compatibility is None


def test_metadata_must_be_a_mapping(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A.\nmetadata: [1, 2]"))
    assert errors_of(path, strict=True) == [
        f"{path}: metadata: must be a mapping (got a list); ignored"
    ]
    skill = parse_skill(path)
    assert skill.metadata == {}
    assert "metadata: must be a mapping" in str(skill.warnings[0])


def test_allowed_tools_of_the_wrong_type(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A.\nallowed-tools: {a: 1}"))
    assert errors_of(path, strict=True) == [
        f"{path}: allowed-tools: must be a space-separated string or a list of strings "
        "(got a mapping); ignored"
    ]
    assert parse_skill(path).allowed_tools == ()


def test_unknown_fields_are_rejected_only_in_strict_mode(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A.\nauthor: me"))
    (error,) = errors_of(path, strict=True)
    assert error.startswith(f"{path}: author: unknown field (allowed: name, description")
    skill = parse_skill(path)
    assert skill.extra == {"author": "me"}
    assert skill.warnings == ()


def test_client_fields_in_strict_mode_point_to_the_portable_place(tmp_path: Path) -> None:
    path = skill_file(
        tmp_path, "alpha", fm("name: alpha\ndescription: A.\ndisable-model-invocation: true")
    )
    (error,) = errors_of(path, strict=True)
    assert "metadata.skillkit.disable-model-invocation" in error
    assert parse_skill(path).disable_model_invocation is True


def test_disable_model_invocation_under_metadata_skillkit_is_portable(tmp_path: Path) -> None:
    path = skill_file(
        tmp_path,
        "alpha",
        fm(
            "name: alpha\ndescription: A.\nmetadata:\n"
            "  skillkit:\n    disable-model-invocation: true"
        ),
    )
    assert parse_skill(path, strict=True).disable_model_invocation is True


def test_numbers_and_booleans_where_text_is_expected(tmp_path: Path) -> None:
    path = skill_file(
        tmp_path, "alpha", fm("name: alpha\ndescription: 42\nlicense: 2024\ncompatibility: true")
    )
    errors = errors_of(path, strict=True)
    assert f"{path}: description: must be text (got a number 42; quote it)" in errors
    assert f"{path}: license: must be text (got a number 2024; quote it)" in errors
    skill = parse_skill(path)
    assert (skill.description, skill.license, skill.compatibility) == ("42", "2024", "true")
    assert len(skill.warnings) == 3


def test_a_numeric_name_is_converted_when_lenient(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "2024", fm("name: 2024\ndescription: A."))
    assert parse_skill(path).name == "2024"
    assert errors_of(path, strict=True) == [
        f"{path}: name: must be text (got a number 2024; quote it)"
    ]


# --------------------------------------------------------------------------- messy files


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    text = "\ufeff---\r\nname: alpha\r\ndescription: A.\r\n---\r\n# Body\r\nline\r\n"
    path = skill_file(tmp_path, "alpha", text.encode("utf-8"))
    skill = parse_skill(path, strict=True)
    assert skill.description == "A."
    assert skill.body == "# Body\nline"


def test_three_dashes_inside_a_value_do_not_end_the_frontmatter(tmp_path: Path) -> None:
    text = (
        "---\nname: alpha\ndescription: |\n  Before\n  ---\n  after --- too\n---\nBody\n---\nmore"
    )
    skill = parse_skill(skill_file(tmp_path, "alpha", text), strict=True)
    assert skill.description == "Before\n---\nafter --- too"
    assert skill.body == "Body\n---\nmore"


def test_unquoted_colon_in_a_description_is_retried_as_text(tmp_path: Path) -> None:
    text = fm("name: alpha\ndescription: Use this skill when: the user asks about PDFs")
    path = skill_file(tmp_path, "alpha", text)
    skill = parse_skill(path)
    assert skill.description == "Use this skill when: the user asks about PDFs"
    assert "quote them in the file" in str(skill.warnings[0])
    (error,) = errors_of(path, strict=True)
    assert error.startswith(f"{path}: frontmatter: is not valid YAML (mapping values")


def test_unquoted_colon_with_continuation_lines(tmp_path: Path) -> None:
    text = fm("name: alpha\ndescription: Use when: the user\n  asks about PDFs\nlicense: MIT")
    skill = parse_skill(skill_file(tmp_path, "alpha", text))
    assert skill.description == "Use when: the user asks about PDFs"
    assert skill.license == "MIT"


def test_block_scalars(tmp_path: Path) -> None:
    text = fm(
        "name: alpha\ndescription: >\n  Folded\n  text: with colon\ncompatibility: |\n  a\n  b"
    )
    skill = parse_skill(skill_file(tmp_path, "alpha", text), strict=True)
    assert skill.description == "Folded text: with colon"
    assert skill.compatibility == "a\nb"


def test_json_metadata_on_one_line(tmp_path: Path) -> None:
    text = fm(
        'name: alpha\ndescription: A.\nmetadata: {"openclaw": {"requires": {"bins": ["uv"]}}}'
    )
    skill = parse_skill(skill_file(tmp_path, "alpha", text), strict=True)
    assert skill.metadata == {"openclaw": {"requires": {"bins": ["uv"]}}}


def test_json5_style_metadata_block_with_trailing_commas(tmp_path: Path) -> None:
    text = fm(
        'name: alpha\ndescription: A.\nmetadata:\n  {\n    "openclaw":\n      {\n'
        '        "requires": { "bins": ["uv"], "env": ["KEY"] },\n'
        '        "primaryEnv": "KEY",\n      },\n  }'
    )
    skill = parse_skill(skill_file(tmp_path, "alpha", text))
    assert skill.metadata["openclaw"]["requires"] == {"bins": ["uv"], "env": ["KEY"]}


def test_metadata_given_as_a_json_string(tmp_path: Path) -> None:
    text = fm('name: alpha\ndescription: A.\nmetadata: \'{"author": "me"}\'')
    path = skill_file(tmp_path, "alpha", text)
    assert parse_skill(path).metadata == {"author": "me"}
    assert "metadata: must be a mapping (got a JSON string" in errors_of(path, strict=True)[0]


def test_dates_and_numbers_in_metadata_become_plain_data(tmp_path: Path) -> None:
    text = fm("name: alpha\ndescription: A.\nmetadata:\n  released: 2024-05-01\n  1: one\n  v: 1.5")
    skill = parse_skill(skill_file(tmp_path, "alpha", text))
    assert skill.metadata == {"released": "2024-05-01", "1": "one", "v": 1.5}


def test_lowercase_skill_md_is_accepted(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", fm("name: alpha\ndescription: A."), name="skill.md")
    assert parse_skill(path.parent).name == "alpha"
    assert [str(d) for d in validate_skill(path.parent, strict=True)] == [
        f"{path}: file: should be named SKILL.md (found skill.md)"
    ]


# --------------------------------------------------------------------------- unreadable files


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# No frontmatter\n", "frontmatter: is missing (the file must start with a '---' line)"),
        ("---\nname: alpha\ndescription: A.\n", "frontmatter: is not closed"),
        ("---\nname: [alpha\n---\n", "frontmatter: is not valid YAML ("),
        ("---\n- a\n- b\n---\n", "frontmatter: must be a mapping of fields (got a list)"),
        ("---\nd: 2001-13-01\n---\n", "frontmatter: is not valid YAML (month must be in 1..12)"),
    ],
)
def test_unreadable_frontmatter_is_an_error_in_both_modes(
    tmp_path: Path, text: str, message: str
) -> None:
    path = skill_file(tmp_path, "alpha", text)
    for strict in (True, False):
        errors = errors_of(path, strict=strict)
        assert errors[0].startswith(f"{path}: {message}"), errors


def test_invalid_utf8_names_the_offset(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", b"---\nname: \xff\n---\n")
    assert errors_of(path, strict=False) == [
        f"{path}: file: is not valid UTF-8 (bad byte at offset 10)"
    ]


def test_yaml_error_names_the_line(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", "---\nname: alpha\ndescription: [a, b\n---\n")
    (error,) = errors_of(path, strict=False)
    assert "at line" in error and "\n" not in error


def test_a_missing_folder_or_file_is_a_skill_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match=r"no SKILL\.md in this folder"):
        parse_skill(tmp_path)
    with pytest.raises(SkillError, match=r"file: cannot be read"):
        parse_skill(tmp_path / "nope" / "SKILL.md")


def test_recursive_yaml_aliases_are_refused(tmp_path: Path) -> None:
    text = "---\nname: alpha\ndescription: A.\nmetadata: &a\n  self: *a\n---\n"
    errors = errors_of(skill_file(tmp_path, "alpha", text), strict=False)
    assert "metadata: is nested too deeply or too large" in errors[0]


def test_alias_bombs_are_refused(tmp_path: Path) -> None:
    lines = [
        "name: alpha",
        "description: A.",
        "metadata:",
        "  a0: &a0 [x, x, x, x, x, x, x, x, x, x]",
    ]
    for i in range(1, 8):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"  a{i}: &a{i} [{refs}]")
    errors = errors_of(skill_file(tmp_path, "alpha", fm("\n".join(lines))), strict=False)
    assert "too large" in errors[0]


def test_every_message_is_one_line(tmp_path: Path) -> None:
    path = skill_file(tmp_path, "alpha", "---\nname: Bad--Name-\ndescription:\n---\n")
    for error in errors_of(path, strict=True):
        assert "\n" not in error and error.startswith(str(path))


def test_parse_skill_bytes_uses_the_given_location(tmp_path: Path) -> None:
    skill = parse_skill_bytes(
        b"---\nname: beta\ndescription: B.\n---\n", tmp_path / "beta" / "SKILL.md"
    )
    assert skill.name == "beta" and skill.warnings == ()
