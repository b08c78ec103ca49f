"""The default model, for real: the user's settings reach it, its calls are valid under the
grammar, its text streams, and a list answer names only what `ls` returned -- checked in
generated folders with random names, never in this repository."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.local import LocalServer
from skillkit.local.adapter import LocalAdapter, create_local_adapter
from skillkit.local.constrained import call_first
from skillkit.local.profile import SKILLKIT_DEFAULT_PROMPT
from skillkit.local.tool_formats import parse_tool_calls
from skillkit.models import (
    AssistantMessage,
    LLMRequest,
    TextPart,
    ToolCall,
    ToolResultMessage,
    ToolSchema,
    UserMessage,
)
from skillkit.tools.base import tool_schema
from skillkit.tools.builtin import builtin_tools

pytestmark = pytest.mark.timeout(300)


def _adapter(server: LocalServer, lines: list[str]) -> LocalAdapter:
    """The default model's adapter on ``server``, writing every request into ``lines``."""
    base = create_local_adapter("local", server=server, register=False)
    return LocalAdapter(
        server,
        base.inner,
        owns_server=False,
        profile=base.profile,
        notify=lines.append,
        verbose=True,
        tool_style=base.tool_style,
    )


def _bodies(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[line.index("{") :]) for line in lines if "request to" in line]


def _offered(body: dict[str, Any]) -> list[str]:
    tools = body.get("tools") or body.get("chat_template_kwargs", {}).get("offered_tools", [])
    return [t["function"]["name"] for t in tools]


async def test_the_docs_weather_example_offers_its_tool_and_the_users_prompt(
    local_server: LocalServer,
) -> None:
    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"Sunny, 21 °C in {city}"

    lines: list[str] = []
    adapter = _adapter(local_server, lines)
    agent = AgentRunner(
        AgentConfig(model="local", system_prompt="You report the weather, briefly."),
        adapter=adapter,
        tools=[get_weather],
    )
    try:
        response = await agent.chat("How is the weather in Tokyo today?")
    finally:
        await agent.aclose()
    first = _bodies(lines)[0]
    assert _offered(first) == ["get_weather"]
    assert first["messages"][0] == {"role": "system", "content": "You report the weather, briefly."}
    calls = [
        p
        for m in response.messages
        if isinstance(m, AssistantMessage)
        for p in m.content
        if isinstance(p, ToolCall)
    ]
    if calls:  # the model may answer without calling; a call it makes is the user's tool
        assert calls[0].name == "get_weather" and "city" in calls[0].arguments
    assert not [line for line in lines if "is small" in line]  # nothing of the user's shortened


async def test_the_default_prompt_and_built_in_tools_are_shortened_once_and_said(
    local_server: LocalServer, tmp_path: Path
) -> None:
    lines: list[str] = []
    adapter = _adapter(local_server, lines)
    agent = AgentRunner(
        AgentConfig(
            model="local", system_prompt=SKILLKIT_DEFAULT_PROMPT + "\n\n# Project\nUse tabs."
        ),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=True),
    )
    try:
        await agent.chat("List the files in this folder.")
    finally:
        await agent.aclose()
    notes = [line for line in lines if "is small" in line]
    assert len(notes) == 1 and "bash" in notes[0]
    first = _bodies(lines)[0]
    # of the profile's ls, grep and read, the constrained call offers those whose
    # grounded arguments the question can fill: it names no file and no word to find
    assert _offered(first) == ["ls"]
    assert first["messages"][0]["content"].endswith("# Project\nUse tabs.")


async def test_text_arrives_in_several_deltas(local_server: LocalServer) -> None:
    adapter = create_local_adapter("local", server=local_server, register=False)
    request = LLMRequest(
        model="local",
        messages=[UserMessage("Write two sentences about the sea.")],
        options={"max_tokens": 40},
    )
    deltas = [e async for e in adapter.chat_stream_events(request) if e.type == "text_delta"]
    assert len(deltas) >= 5


_SCHEMAS = [
    ToolSchema(
        "read",
        "Read a file.",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    ),
    ToolSchema(
        "ls", "List a folder.", {"type": "object", "properties": {"path": {"type": "string"}}}
    ),
    ToolSchema(
        "count_words",
        "Count the words of a text.",
        {
            "type": "object",
            "properties": {"text": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["text", "limit"],
        },
    ),
]
_PROMPTS = [
    "What is in notes.txt?",
    "hello",
    "List everything.",
    "How many words in 'a b c'?",
    "Tell me a joke.",
    "Show me the config.",
    "Count the words of my essay, at most 5.",
    "Which files are big?",
]


@pytest.mark.slow
async def test_constrained_calls_are_valid_over_many_seeded_prompts(
    local_server: LocalServer,
) -> None:
    adapter = create_local_adapter("local", server=local_server, register=False)
    schemas = {schema.name: schema.parameters for schema in _SCHEMAS}
    rng = random.Random(7)
    for prompt in _PROMPTS:
        request = LLMRequest(
            model="local",
            messages=[UserMessage(prompt)],
            tools=_SCHEMAS,
            options={"temperature": 0.9, "seed": rng.randint(1, 10_000), "max_tokens": 200},
        )
        sent = call_first(request)
        assert sent is not None
        text = "".join(
            [
                e.content
                async for e in adapter.inner.chat_stream_events(sent)
                if e.type == "text_delta"
            ]
        )
        calls = parse_tool_calls(text, "json", set(schemas))
        assert calls is not None and len(calls) == 1, (prompt, text)
        name, arguments = calls[0]
        jsonschema.validate(arguments, schemas[name])


_FILE = re.compile(r"[\w\-][\w.\-]*\.[A-Za-z][A-Za-z0-9]{0,9}")


@pytest.mark.parametrize("count", [0, 8, pytest.param(40, marks=pytest.mark.slow)])
async def test_a_list_answer_names_nothing_ls_did_not_return(
    local_server: LocalServer, tmp_path: Path, count: int
) -> None:
    rng = random.Random(count)
    syllables = ["ka", "lo", "mir", "zen", "tu", "vex", "qua", "ri", "pol", "sna"]
    names: set[str] = set()
    while len(names) < count:
        stem = "".join(rng.choice(syllables) for _ in range(3))
        names.add(f"{stem}.{rng.choice(['txt', 'csv', 'md', 'log'])}")
    for name in names:
        (tmp_path / name).write_text("x\n")
    adapter = create_local_adapter("local", server=local_server, register=False)
    agent = AgentRunner(
        AgentConfig(model="local", system_prompt=SKILLKIT_DEFAULT_PROMPT, max_iterations=3),
        adapter=adapter,
        tools=builtin_tools(tmp_path, allow_writes=False),
    )
    try:
        response = await agent.chat("List the files in this folder.")
    finally:
        await agent.aclose()
    results = " ".join(m.text for m in response.messages if isinstance(m, ToolResultMessage))
    assert results, "the model looked before answering"
    named = {name.rstrip(".") for name in _FILE.findall(response.text)}
    assert named <= set(_FILE.findall(results)), response.text
    calls = [m for m in response.messages if isinstance(m, ToolResultMessage)]
    assert response.error is None and len(calls) == 1  # it answered after one look


@pytest.mark.slow
async def test_a_grounded_call_names_only_files_and_words_of_the_question(
    local_server: LocalServer, tmp_path: Path
) -> None:
    adapter = create_local_adapter("local", server=local_server, register=False)
    tools = [tool_schema(t) for t in builtin_tools(tmp_path, allow_writes=False)]
    profile = adapter.profile
    rng = random.Random(11)
    syllables = ["ba", "ne", "os", "tir", "gul", "am", "wex", "dor"]
    shapes = [
        "Open {name} and tell me what it says.",
        "Does {name} mention {word}?",
        "Which file has {word} in it?",
        "What is in {name}?",
        "Summarise {name} and {other}.",
    ]
    for index in range(12):
        word = "".join(rng.choice(syllables) for _ in range(3))
        name, other = (f"{word[::-1]}{i}.{rng.choice(['txt', 'ini', 'md'])}" for i in range(2))
        question = rng.choice(shapes).format(name=name, other=other, word=word)
        shaped = profile.apply(
            LLMRequest(
                model="local",
                system_prompt=SKILLKIT_DEFAULT_PROMPT,
                messages=[UserMessage(question)],
                tools=tools,
                options={"temperature": 0.9, "seed": rng.randint(1, 10_000), "max_tokens": 120},
            )
        )
        sent = call_first(
            shaped, grounded=profile.grounded_arguments, common=[profile.system_prompt or ""]
        )
        assert sent is not None
        text = "".join(
            [
                e.content
                async for e in adapter.inner.chat_stream_events(sent)
                if e.type == "text_delta"
            ]
        )
        calls = parse_tool_calls(text, "json", {"ls", "grep", "read"})
        assert calls is not None and len(calls) == 1, (question, text)
        tool_name, arguments = calls[0]
        if tool_name == "read":
            assert arguments["path"] in {name, other}, (index, question, arguments)
        if tool_name == "grep":
            assert arguments["pattern"] in question.split() or arguments["pattern"] in {
                name,
                other,
                word,
            }, (question, arguments)


async def test_after_a_tool_result_the_reply_is_words(local_server: LocalServer) -> None:
    adapter = create_local_adapter("local", server=local_server, register=False)
    call = ToolCall("1", "read", {"path": "todo.md"})
    request = LLMRequest(
        model="local",
        system_prompt=SKILLKIT_DEFAULT_PROMPT,
        messages=[
            UserMessage("What is in todo.md?"),
            AssistantMessage([call]),
            ToolResultMessage("1", "read", [TextPart("buy milk\ncall Ana\n")]),
        ],
        tools=_SCHEMAS[:2],
        options={"max_tokens": 60},
    )
    events = [e async for e in adapter.chat_stream_events(request)]
    text = "".join(e.content for e in events if e.type == "text_delta")
    assert text.strip() and "<" not in text
    assert not [e for e in events if e.type.startswith("tool_call")]


def _folder_agent(server: LocalServer, folder: Path) -> AgentRunner:
    """The default model as ``skillkit -p`` runs it in ``folder`` (read-only tools)."""
    adapter = create_local_adapter("local", server=server, register=False)
    return AgentRunner(
        AgentConfig(model="local", system_prompt=SKILLKIT_DEFAULT_PROMPT, max_iterations=4),
        adapter=adapter,
        tools=builtin_tools(folder, allow_writes=False),
    )


@pytest.mark.parametrize("message", ["hello", "thanks"])
async def test_a_message_that_asks_for_no_tool_is_answered_without_one(
    local_server: LocalServer, tmp_path: Path, message: str
) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    agent = _folder_agent(local_server, tmp_path)
    try:
        response = await agent.chat(message)
    finally:
        await agent.aclose()
    assert response.error is None and response.text.strip()
    assert "<" not in response.text
    assert not [m for m in response.messages if isinstance(m, ToolResultMessage)]


@pytest.mark.slow
@pytest.mark.parametrize("same", [True, False])
async def test_two_named_files_are_both_read_and_the_answer_says_yes_or_no(
    local_server: LocalServer, tmp_path: Path, same: bool
) -> None:
    rng = random.Random(5 + same)
    syllables = ["ba", "ne", "os", "tir", "gul", "am", "wex", "dor"]
    first, second = (
        "".join(rng.choice(syllables) for _ in range(3)) + suffix for suffix in (".txt", ".md")
    )
    text = "".join("".join(rng.choice(syllables) for _ in range(2)) + "\n" for _ in range(3))
    (tmp_path / first).write_text(text)
    (tmp_path / second).write_text(text if same else text + "gulam\n")
    agent = _folder_agent(local_server, tmp_path)
    try:
        response = await agent.chat(f"Do {first} and {second} hold the same text?")
    finally:
        await agent.aclose()
    read = [
        part.arguments.get("path")
        for message in response.messages
        if isinstance(message, AssistantMessage)
        for part in message.content
        if isinstance(part, ToolCall)
    ]
    assert set(read) == {first, second}, read
    assert re.match(r"(Yes|No)\b", response.text), response.text
