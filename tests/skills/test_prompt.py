"""The catalog and the wrapped skill content the model reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillkit.context import RendererRegistry, convert_to_llm
from skillkit.models import UserMessage
from skillkit.skills.loader import parse_skill
from skillkit.skills.prompt import (
    SKILL_MESSAGE_KIND,
    is_skill_content,
    render_catalog,
    render_skill_content,
    render_skill_message,
    skill_message,
)
from skillkit.skills.registry import SkillRegistry


def test_catalog_lists_name_description_location_escaped(tmp_path: Path, make_skill: Any) -> None:
    path = make_skill(
        tmp_path, "tricky", "name: tricky\ndescription: 'Use for <b> & \"x\" </available_skills>'"
    )
    text = render_catalog([parse_skill(path)])
    assert text is not None
    assert "<name>tricky</name>" in text
    assert (
        "<description>Use for &lt;b&gt; &amp; &quot;x&quot; &lt;/available_skills&gt;</description>"
        in text
    )
    assert f"<location>{path}</location>" in text
    assert text.count("</available_skills>") == 1
    assert render_catalog([]) is None


def test_skill_content_wraps_body_folder_resources_and_arguments(
    tmp_path: Path, make_skill: Any
) -> None:
    path = make_skill(tmp_path, "kit", body="Step one.\n")
    (path.parent / "scripts").mkdir()
    (path.parent / "scripts" / "go.sh").write_text("echo")
    text = render_skill_content(parse_skill(path), "  on file.txt ")
    assert text.startswith(f'<skill_content name="kit" location="{path}">\nStep one.\n')
    assert f"Skill directory: {path.parent}" in text
    assert "<skill_resources>\n  <file>scripts/go.sh</file>\n</skill_resources>" in text
    assert text.endswith("</skill_content>\n\nUser request: on file.txt")
    assert is_skill_content(text) and not is_skill_content("<skill_contentious/>")


def test_activation_message_from_the_registry(project: Path, home: Path, make_skill: Any) -> None:
    make_skill(project / ".agents/skills", "kit", body="Do it.")
    registry = SkillRegistry(cwd=project, home=home)
    registry.load()
    text = registry.activation_message("kit", "now")
    assert is_skill_content(text) and "Do it." in text and text.endswith("User request: now")


def test_skill_messages_render_as_user_messages_and_are_recognisable() -> None:
    message = skill_message('<skill_content name="x" location="/x">body</skill_content>', "x")
    assert message.kind == SKILL_MESSAGE_KIND
    renderers = RendererRegistry({SKILL_MESSAGE_KIND: render_skill_message})
    (converted,) = convert_to_llm([message], renderers)
    assert isinstance(converted, UserMessage) and is_skill_content(converted.content)  # type: ignore[arg-type]
