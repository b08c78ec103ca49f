"""Helpers for the subagent tests: a model whose replies follow a script per
conversation, so a parent and its children each get their own, whatever the order in
which their calls interleave."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.models import AssistantMessage, LLMRequest, UserMessage


def first_user_text(request: LLMRequest) -> str:
    for message in request.messages:
        if isinstance(message, UserMessage):
            content = message.content
            return content if isinstance(content, str) else ""
    return ""


def conversations(scripts: Mapping[str, Sequence[Reply | str]]) -> FunctionAdapter:
    """A model that answers each conversation from its own script: the script is chosen
    by the conversation's first user message, the reply by how many replies it already
    has."""

    def reply(request: LLMRequest) -> Reply | str:
        script = scripts[first_user_text(request)]
        done = sum(isinstance(m, AssistantMessage) for m in request.messages)
        return script[done]

    return FunctionAdapter(reply)


def task_call(
    agent: str, prompt: str, description: str = "look around"
) -> tuple[str, dict[str, str]]:
    return ("task", {"agent": agent, "description": description, "prompt": prompt})
