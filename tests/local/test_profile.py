"""`ModelProfile`: the default model gets shorter versions of SkillKit's own defaults
only; whatever the user chose reaches it as given."""

from __future__ import annotations

from skillkit.extensions.builtin import DEFAULT_SYSTEM_PROMPT
from skillkit.local.model import default_model
from skillkit.local.profile import SKILLKIT_DEFAULT_PROMPT, ModelProfile
from skillkit.models import LLMRequest, ToolSchema, UserMessage

OWN = frozenset({"ls", "read", "bash", "grep", "write"})


def _request(*tools: str, system_prompt: str = SKILLKIT_DEFAULT_PROMPT, **options: object):  # type: ignore[no-untyped-def]
    return LLMRequest(
        model="m",
        messages=[UserMessage("hi")],
        system_prompt=system_prompt,
        tools=[ToolSchema(name, name, {"type": "object"}) for name in tools],
        options=dict(options),
    )


def _profile(**fields: object) -> ModelProfile:
    return ModelProfile(tools={"ls", "read"}, own_tools=OWN, system_prompt="short", **fields)  # type: ignore[arg-type]


def test_the_copy_of_skillkits_default_prompt_is_the_agents() -> None:
    assert SKILLKIT_DEFAULT_PROMPT == DEFAULT_SYSTEM_PROMPT


def test_skillkits_defaults_are_shortened_and_said() -> None:
    shaped, notes = _profile().shape(_request("ls", "read", "bash", "grep"))
    assert [t.name for t in shaped.tools] == ["ls", "read"]
    assert shaped.system_prompt == "short"
    assert len(notes) == 2 and "bash, grep" in notes[0]


def test_sections_after_the_default_prompt_are_kept() -> None:
    prompt = (
        SKILLKIT_DEFAULT_PROMPT + "\n\n# Skills\n- pdf: fill PDF forms\n\n# AGENTS.md\nBe terse."
    )
    shaped, _ = _profile().shape(_request(system_prompt=prompt))
    assert (
        shaped.system_prompt == "short\n\n# Skills\n- pdf: fill PDF forms\n\n# AGENTS.md\nBe terse."
    )


def test_a_users_system_prompt_is_sent_as_given() -> None:
    prompt = "You are a pirate. Answer in rhymes.\n\n# AGENTS.md\nBe terse."
    request = _request("ls", system_prompt=prompt)
    shaped, notes = _profile().shape(request)
    assert shaped is request and notes == []


def test_tools_passed_in_code_are_offered_beside_the_chosen_built_ins() -> None:
    shaped, _ = _profile().shape(_request("get_weather", "skill", "ls", "bash", "mcp__db__query"))
    assert [t.name for t in shaped.tools] == ["get_weather", "skill", "ls", "mcp__db__query"]


def test_only_user_tools_are_left_alone() -> None:
    request = _request("get_weather", system_prompt="Be brief.")
    assert _profile().shape(request) == (request, [])


def test_the_requests_own_options_win() -> None:
    profile = ModelProfile(options={"stop": ["x"], "temperature": 0.0})
    shaped = profile.apply(_request(stop=["y"]))
    assert shaped.options == {"stop": ["y"], "temperature": 0.0}


def test_an_empty_profile_changes_nothing() -> None:
    request = _request("ls", "bash")
    assert ModelProfile().apply(request) is request


def test_the_default_models_own_tools_are_skillkits_built_in_tools() -> None:
    from skillkit.permissions.gate import BUILTIN_KINDS
    from skillkit.subagents.task_tool import TASK_TOOL_NAME

    own = set(default_model().entry["own_tools"])
    assert own == {*BUILTIN_KINDS, TASK_TOOL_NAME}
    assert set(default_model().entry["offered_tools"]) <= own


def test_skillkits_generated_sections_can_be_left_out_but_never_the_users() -> None:
    env = "# Environment\nWorking directory: /x"
    prompt = f"{SKILLKIT_DEFAULT_PROMPT}\n\n{env}\n\n# AGENTS.md\nBe terse."
    profile = _profile(drop_sections=("# Environment",))
    shaped, notes = profile.shape(_request(system_prompt=prompt))
    assert shaped.system_prompt == "short\n\n# AGENTS.md\nBe terse."
    assert "without # Environment" in notes[-1]
    own = f"Be a pirate.\n\n{env}"
    assert profile.shape(_request(system_prompt=own))[0].system_prompt == own
