"""`ModelProfile`: the default model gets shorter versions of SkillKit's own defaults
only; whatever the user chose reaches it as given."""

from __future__ import annotations

from skillkit.extensions.builtin import DEFAULT_SYSTEM_PROMPT
from skillkit.local.model import default_model
from skillkit.local.profile import SKILLKIT_DEFAULT_PROMPT, ModelProfile, word_result
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


def test_with_an_order_skillkits_tools_come_first_in_it_and_the_users_after() -> None:
    profile = ModelProfile(tools=("ls", "grep", "read"), own_tools=OWN)
    shaped, notes = profile.shape(_request("get_weather", "read", "bash", "grep", "ls"))
    assert [t.name for t in shaped.tools] == ["ls", "grep", "read", "get_weather"]
    assert "not bash" in notes[0]
    same = _request("ls", "grep")
    assert profile.shape(same) == (same, [])  # in order already, nothing left out


def test_examples_are_given_for_skillkits_own_offered_tools_only() -> None:
    profile = _profile(
        examples={"read": ("What is in a.txt?", {"path": "a.txt"}), "get_weather": ("x", {})}
    )
    shaped = profile.apply(_request("read", "bash", "get_weather"))
    assert shaped.options["chat_template_kwargs"] == {
        "tool_examples": {"read": {"user": "What is in a.txt?", "arguments": {"path": "a.txt"}}}
    }


def test_tool_results_are_worded_numbered_and_counted() -> None:
    from skillkit.models import AssistantMessage, TextPart, ToolCall, ToolResultMessage

    profile = _profile(results={"read": ("line", "lines")})
    request = LLMRequest(
        model="m",
        messages=[
            UserMessage("How long is a.txt?"),
            AssistantMessage([ToolCall("1", "read", {"path": "a.txt"})]),
            ToolResultMessage("1", "read", [TextPart("alpha\nbeta\n")], details={"lines": 2}),
            ToolResultMessage("2", "get_weather", [TextPart("Sunny")]),
            ToolResultMessage("3", "read", [TextPart("a.txt: no such file")], is_error=True),
            ToolResultMessage("4", "read", [TextPart("No matches for 'x'.")]),
        ],
        tools=[ToolSchema("read", "read", {"type": "object"})],
        options={"chat_template_kwargs": {"x": 1}},
    )
    shaped = profile.apply(request)
    texts = [m.text for m in shaped.messages if isinstance(m, ToolResultMessage)]
    assert texts == [
        "The read tool returned 2 lines:\n1. alpha\n2. beta",
        "The get_weather tool returned:\nSunny",
        "The read tool returned:\na.txt: no such file",
        "The read tool returned:\nNo matches for 'x'.",
    ]
    assert shaped.options["chat_template_kwargs"] == {"x": 1, "worded_results": True}
    assert request.messages[2].text == "alpha\nbeta\n"  # the conversation itself is unchanged


def test_a_worded_result_keeps_notes_and_hints_as_they_are() -> None:
    nouns = ("entry", "entries")
    assert word_result("ls", "(empty directory)", nouns) == "The ls tool returned empty directory."
    assert word_result("ls", "a.txt\n", nouns) == "The ls tool returned 1 entry:\n1. a.txt"
    assert word_result("ls", "", nouns) == "The ls tool returned nothing."
    paged = word_result(
        "read", "x\ny\n\n[Showing lines 1-2 of 9. Use offset=3 to continue.]", nouns
    )
    assert paged == (
        "The read tool returned 2 entries:\n1. x\n2. y\n"
        "[Showing lines 1-2 of 9. Use offset=3 to continue.]"
    )


def test_the_default_profiles_grounded_arguments_and_examples_name_its_offered_tools() -> None:
    entry = default_model().entry
    offered = set(entry["offered_tools"])
    assert set(entry["grounded_arguments"]) <= offered
    assert set(entry["tool_examples"]) == offered
    assert entry["call_first"] is True


def _two_reads(
    first: str, second: str, question: str = "Are a.txt and b.txt the same?"
) -> LLMRequest:
    from skillkit.models import AssistantMessage, TextPart, ToolCall, ToolResultMessage

    return LLMRequest(
        model="m",
        messages=[
            UserMessage(question),
            AssistantMessage([ToolCall("1", "read", {"path": "a.txt"})]),
            ToolResultMessage("1", "read", [TextPart(first)], details={}),
            AssistantMessage([ToolCall("2", "read", {"path": "b.txt"})]),
            ToolResultMessage("2", "read", [TextPart(second)], details={}),
        ],
        tools=[ToolSchema("read", "read", {"type": "object"})],
    )


def test_a_second_result_of_a_tool_says_whether_it_is_the_same_as_the_first() -> None:
    from skillkit.models import ToolResultMessage

    profile = _profile(results={"read": ("line", "lines")})
    same = profile.apply(_two_reads("x\ny\n", "x\ny\n"))
    texts = [m.text for m in same.messages if isinstance(m, ToolResultMessage)]
    assert texts == [
        "The read tool returned 2 lines:\n1. x\n2. y",
        "The read tool returned 2 lines:\n1. x\n2. y\nSame as a.txt.",
    ]
    other = profile.apply(_two_reads("x\ny\n", "x\ny\nz\n"))
    assert other.messages[-1].text == (  # type: ignore[union-attr]
        "The read tool returned 3 lines:\n1. x\n2. y\n3. z\nNot the same as a.txt."
    )


def test_results_before_the_users_last_message_are_not_compared() -> None:
    from skillkit.models import ToolResultMessage

    profile = _profile(results={"read": ("line", "lines")})
    request = _two_reads("x\n", "x\n")
    messages = [*request.messages[:3], UserMessage("and b.txt?"), *request.messages[3:]]
    shaped = profile.apply(LLMRequest(model="m", messages=messages, tools=request.tools))
    texts = [m.text for m in shaped.messages if isinstance(m, ToolResultMessage)]
    assert texts[-1] == "The read tool returned 1 line:\n1. x"


def test_grounding_texts_hold_the_results_and_counts_but_not_the_item_numbers() -> None:
    profile = _profile(results={"read": ("line", "lines")})
    texts = profile.grounding_texts(_two_reads("x\ny\n", "x\ny\nz\n"))
    assert "x\ny\nz\n" in texts and "short" in texts
    assert "The read tool returned 3 lines:" in texts
    assert not any(text.startswith("1. ") or "\n1. " in text for text in texts)


def test_grounding_texts_read_the_shaped_results_as_they_would_word_them() -> None:
    profile = _profile(results={"read": ("line", "lines")})
    request = _two_reads("x\ny\n", "x\ny\nz\n")
    assert profile.grounding_texts(request, profile.apply(request)) == profile.grounding_texts(
        request
    )
