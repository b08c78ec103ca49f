"""Deterministic agents for the batch tests (importable by Ray workers).

Each row's agent is asked "Count the letters of WORD": the model calls the real
``letters`` tool, then answers with its result. ``boom`` makes the model fail, ``slow``
makes the tool sleep (so a worker can be killed mid-row), and with
``SKILLKIT_TEST_PID_DIR`` set every tool call leaves a file named after the row's word
and its process id there.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from skillkit import AgentConfig, AgentRunner, tool
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.models import LLMRequest, ToolResultMessage, UserMessage, message_text
from skillkit.secrets import Redactor


@tool(thread=False)
async def letters(word: str) -> str:
    """Count the letters of a word."""
    marks = os.environ.get("SKILLKIT_TEST_PID_DIR")
    if marks:
        (Path(marks) / f"{word}.{os.getpid()}").touch()
    if word.startswith("slow"):
        await asyncio.sleep(float(os.environ.get("SKILLKIT_TEST_SLOW", "0.3")))
    return str(len(word))


def _word(request: LLMRequest) -> str:
    for message in request.messages:
        if isinstance(message, UserMessage):
            return message_text(message).split()[-1]
    return ""


def reply(request: LLMRequest) -> Reply:
    word = _word(request)
    last = request.messages[-1]
    if isinstance(last, ToolResultMessage):
        return Reply(text=f"{word} has {message_text(last)} letters")
    if word == "boom":
        return Reply(error="the model fell over")
    return Reply(tool_calls=[("letters", {"word": word})])


def make_agent() -> AgentRunner:
    """A fresh agent: the scripted model above and the ``letters`` tool."""
    return AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply, model="scripted"),
        tools=[letters],
        redactor=Redactor(),
    )
