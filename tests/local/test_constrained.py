"""`call_first`: the user's turn is rewritten into a grammar-constrained call of an offered
tool (when the message asks for one), a file the user named is read before the answer, and
the answer is words (opening with Yes or No for a yes/no question)."""

from __future__ import annotations

import jsonschema
import pytest

from skillkit.local.constrained import (
    ANSWER_GRAMMAR,
    MAX_STRING,
    POLAR_GRAMMAR,
    answer_now,
    asks_for_tools,
    call_first,
    call_next,
    calls_schema,
    grounded_values,
    is_polar_question,
    reply_in_words,
)
from skillkit.models import (
    AssistantMessage,
    LLMRequest,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)

WEATHER = ToolSchema(
    "get_weather",
    "Get the weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
LS = ToolSchema("ls", "List.", {"type": "object", "properties": {"path": {"type": "string"}}})


def _request(*messages: object, **options: object) -> LLMRequest:
    return LLMRequest(
        model="m", messages=list(messages), tools=[WEATHER, LS], options=dict(options)
    )  # type: ignore[arg-type]


def test_the_users_turn_asks_for_a_constrained_call_of_the_offered_tools() -> None:
    sent = call_first(_request(UserMessage("Weather in Oslo?"), temperature=0.1))
    assert sent is not None and sent.tools == []
    kwargs = sent.options["chat_template_kwargs"]
    assert [t["function"]["name"] for t in kwargs["offered_tools"]] == ["get_weather", "ls"]
    assert kwargs["call_now"] is True and sent.options["temperature"] == 0.1


@pytest.mark.parametrize(
    ("call", "valid"),
    [
        ({"name": "get_weather", "arguments": {"city": "Oslo"}}, True),
        ({"name": "ls", "arguments": {}}, True),
        ({"name": "get_weather", "arguments": {}}, False),  # a required argument missing
        ({"name": "bash", "arguments": {"command": "rm -rf /"}}, False),  # not offered
        ({"name": "ls", "arguments": {"path": "x" * (MAX_STRING + 1)}}, False),
    ],
)
def test_the_schema_admits_exactly_the_valid_calls(call: dict[str, object], valid: bool) -> None:
    schema = calls_schema([WEATHER, LS])
    if valid:
        jsonschema.validate(call, schema)
    else:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(call, schema)


def test_other_turns_go_as_they_are() -> None:
    call = ToolCall("1", "ls", {})
    after_result = _request(
        UserMessage("List"), AssistantMessage([call]), ToolResultMessage("1", "ls", [TextPart("a")])
    )
    assert call_first(after_result) is None
    assert call_first(_request(UserMessage("hi"), tool_choice="none")) is None
    assert call_first(LLMRequest(model="m", messages=[UserMessage("hi")])) is None


# --------------------------------------------------------------------------- grounded arguments

READ = ToolSchema(
    "read",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
GREP = ToolSchema(
    "grep",
    "Search file contents.",
    {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
)
GROUNDED = {"read": {"path": "path"}, "grep": {"pattern": "word"}}


def _ask(*messages: object) -> LLMRequest:
    return LLMRequest(model="m", messages=list(messages), tools=[LS, GREP, READ])  # type: ignore[arg-type]


def _arguments(sent: LLMRequest, tool: str) -> dict[str, object]:
    for option in sent.options["json_schema"]["oneOf"]:
        if option["properties"]["name"]["const"] == tool:
            return option["properties"]["arguments"]  # type: ignore[no-any-return]
    raise KeyError(tool)


def test_a_path_argument_may_only_name_a_file_the_conversation_names() -> None:
    sent = call_first(
        _ask(UserMessage("How many lines does data/a-1.csv have?")), grounded=GROUNDED
    )
    assert sent is not None
    assert _arguments(sent, "read")["properties"] == {
        "path": {"type": "string", "enum": ["data/a-1.csv"]}
    }
    schema = sent.options["json_schema"]
    jsonschema.validate({"name": "read", "arguments": {"path": "data/a-1.csv"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "read", "arguments": {"path": "read.txt"}}, schema)


def test_a_tool_whose_grounded_argument_has_nothing_to_name_is_not_offered() -> None:
    sent = call_first(
        _ask(UserMessage("List the files in this folder.")),
        grounded=GROUNDED,
        common=["A small assistant in the user's folder. List files, read one, search them."],
    )
    assert sent is not None
    offered = [t["function"]["name"] for t in sent.options["chat_template_kwargs"]["offered_tools"]]
    assert offered == ["ls"]  # no file named, no word to search for but the tools' own


def test_a_word_argument_is_a_word_of_the_users_not_a_function_word_or_the_tools() -> None:
    sent = call_first(
        _ask(UserMessage("Which file contains the word zebra?")),
        grounded=GROUNDED,
        common=["Use the grep tool to search them."],
    )
    assert sent is not None
    # "Which", "the": function words; "file": in read's description
    assert _arguments(sent, "grep")["properties"]["pattern"]["enum"] == [
        "contains",
        "word",
        "zebra",
    ]
    values = grounded_values(_ask(UserMessage("Search them for zebra")), "word", {"search"})
    assert values == ["zebra"]


def test_paths_come_from_tool_results_too_the_latest_first() -> None:
    call = ToolCall("1", "ls", {})
    request = _ask(
        UserMessage("What is here?"),
        AssistantMessage([call]),
        ToolResultMessage("1", "ls", [TextPart("a.txt\nsub/\nb.md")]),
        UserMessage("Read b.md please"),
    )
    assert grounded_values(request, "path") == ["b.md", "a.txt"]
    failed = ToolResultMessage("2", "read", [TextPart("nope.txt: no such file")], is_error=True)
    assert "nope.txt" not in grounded_values(_ask(UserMessage("hi"), failed), "path")


def test_nothing_is_constrained_when_no_tool_can_be_called() -> None:
    request = LLMRequest(model="m", messages=[UserMessage("hello")], tools=[READ])
    assert call_first(request, grounded=GROUNDED) is None


def test_the_template_arguments_of_the_request_are_kept() -> None:
    request = LLMRequest(
        model="m",
        messages=[UserMessage("What is here?")],
        tools=[LS],
        options={"chat_template_kwargs": {"tool_examples": {"ls": {}}}},
    )
    sent = call_first(request)
    assert sent is not None
    kwargs = sent.options["chat_template_kwargs"]
    assert kwargs["tool_examples"] == {"ls": {}} and kwargs["call_now"] is True


# --------------------------------------------------------------------------- answers


def test_a_turn_after_a_tool_result_answers_in_words() -> None:
    call = ToolCall("1", "ls", {})
    request = _request(
        UserMessage("List"), AssistantMessage([call]), ToolResultMessage("1", "ls", [TextPart("a")])
    )
    sent = answer_now(request)
    assert sent is not None and sent.tools == [] and sent.options["grammar"] == ANSWER_GRAMMAR
    offered = sent.options["chat_template_kwargs"]["offered_tools"]
    assert [t["function"]["name"] for t in offered] == ["get_weather", "ls"]
    assert answer_now(_request(UserMessage("hi"))) is None  # the user's turn: a call
    assert answer_now(LLMRequest(model="m", messages=request.messages)) is None  # no tools


# --------------------------------------------------------------------------- no tool needed

BUILT_IN = [
    ToolSchema("ls", "List a directory's entries, sorted by name.", {"type": "object"}),
    GREP,
    READ,
]


@pytest.mark.parametrize(
    ("message", "asks"),
    [
        ("hello", False),
        ("Thanks!", False),
        ("How are you?", False),  # a question of function words only
        ("Good morning, nice work", False),
        ("ls", True),  # a tool's name
        ("Show me the entries here.", True),  # a word of ls's description
        ("Which directories are there", True),  # "directories" and "directory's"
        ("Where is zebra mentioned?", True),  # a question with a word of its own
        ("Summarize notes.md", True),  # a path
    ],
)
def test_a_message_asks_for_a_tool_by_its_own_words_and_the_tools(message: str, asks: bool) -> None:
    request = LLMRequest(model="m", messages=[UserMessage(message)], tools=BUILT_IN)
    assert asks_for_tools(request) is asks


def test_a_users_own_tool_is_asked_for_in_its_own_words() -> None:
    request = _request(UserMessage("weather in Oslo"))
    assert asks_for_tools(request)
    assert not asks_for_tools(_request(UserMessage("hello")))


def test_a_message_that_asks_for_no_tool_is_answered_in_words() -> None:
    sent = reply_in_words(_request(UserMessage("hello"), temperature=0.2))
    assert sent is not None and sent.tools == []
    assert sent.options["grammar"] == ANSWER_GRAMMAR and sent.options["temperature"] == 0.2
    kwargs = sent.options["chat_template_kwargs"]
    assert kwargs["words_now"] is True and "call_now" not in kwargs  # listed, no examples
    assert [t["function"]["name"] for t in kwargs["offered_tools"]] == ["get_weather", "ls"]
    assert reply_in_words(_request(UserMessage("hello"), tool_choice="auto")) is None


# --------------------------------------------------------------------------- a named file unread


def _after(user: str, *calls: ToolCall) -> LLMRequest:
    messages: list[object] = [UserMessage(user)]
    for call in calls:
        messages.append(AssistantMessage([call]))
        messages.append(ToolResultMessage(call.id, call.name, [TextPart("x")]))
    return _ask(*messages)


def test_a_file_the_user_named_and_no_call_touched_is_read_before_the_answer() -> None:
    sent = call_next(
        _after("Are a.txt and sub/b.md the same?", ToolCall("1", "read", {"path": "a.txt"})),
        grounded=GROUNDED,
    )
    assert sent is not None and sent.options["chat_template_kwargs"]["call_now"] is True
    offered = [t["function"]["name"] for t in sent.options["chat_template_kwargs"]["offered_tools"]]
    assert offered == ["read"]  # only the tools whose required arguments are paths
    assert _arguments(sent, "read")["properties"]["path"]["enum"] == ["sub/b.md"]


def test_once_every_named_file_is_touched_the_answer_follows() -> None:
    both = _after(
        "Are a.txt and b.md the same?",
        ToolCall("1", "read", {"path": "a.txt"}),
        ToolCall("2", "read", {"path": "./b.md"}),
    )
    assert call_next(both, grounded=GROUNDED) is None
    assert answer_now(both) is not None
    # a file touched before the user's last message counts for nothing
    again = _ask(*_after("Read a.txt", ToolCall("1", "read", {"path": "a.txt"})).messages)
    again = _ask(*again.messages, UserMessage("Is a.txt long?"))
    assert call_first(again, grounded=GROUNDED) is not None
    none_named = _after("Which file says zebra?", ToolCall("1", "grep", {"pattern": "zebra"}))
    assert call_next(none_named, grounded=GROUNDED) is None
    assert call_next(_after("Is a.txt long?"), grounded=GROUNDED) is None  # the user's turn


# --------------------------------------------------------------------------- yes or no


@pytest.mark.parametrize(
    ("question", "polar"),
    [
        ("Are a.txt and b.txt the same?", True),
        ("Look at both. Do they match?", True),
        ("Compare them: is the first longer?", True),
        ("What is in a.txt?", False),
        ("Is it long. Which one?", False),
        ("Does it work", False),  # no question mark
    ],
)
def test_a_yes_no_question_is_known_by_its_auxiliary_verb(question: str, polar: bool) -> None:
    assert is_polar_question(question) is polar


def test_the_answer_to_a_yes_no_question_opens_with_yes_or_no() -> None:
    sent = answer_now(_after("Is a.txt empty?", ToolCall("1", "read", {"path": "a.txt"})))
    assert sent is not None and sent.options["grammar"] == POLAR_GRAMMAR
    sent = answer_now(_after("What is in a.txt?", ToolCall("1", "read", {"path": "a.txt"})))
    assert sent is not None and sent.options["grammar"] == ANSWER_GRAMMAR
