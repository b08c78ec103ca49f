"""Questions to the user: the broker and the ``ask_user`` tool."""

from __future__ import annotations

import asyncio

import pytest

from skillkit.abort import AbortSignal
from skillkit.permissions.questions import (
    NO_USER_MESSAGE,
    Question,
    QuestionAnswer,
    QuestionBroker,
    QuestionOption,
    QuestionRequest,
    QuestionResponse,
    ask_user_tool,
)
from skillkit.tools.base import ToolContext

ARGS = {
    "questions": [
        {
            "question": "Which database?",
            "header": "Database",
            "options": [{"label": "Postgres"}, {"label": "SQLite", "description": "file"}],
        },
        {
            "question": "Which features?",
            "header": "Features",
            "multi_select": True,
            "options": [{"label": "auth"}, {"label": "billing"}, {"label": "search"}],
        },
    ]
}


def announcing(broker: QuestionBroker) -> asyncio.Queue[QuestionRequest]:
    queue: asyncio.Queue[QuestionRequest] = asyncio.Queue()
    broker.subscribe(queue.put_nowait)
    return queue


async def run_tool(
    broker: QuestionBroker, args: dict[str, object], abort: AbortSignal | None = None
):  # type: ignore[no-untyped-def]
    tool = ask_user_tool(broker)
    parsed = tool.args_model.model_validate(args)
    return await tool.execute(parsed, ToolContext("call_1", "ask_user", abort, agent_id="main"))


async def test_ask_user_waits_for_options_multi_select_and_free_text() -> None:
    broker = QuestionBroker()
    requests = announcing(broker)
    task = asyncio.ensure_future(run_tool(broker, ARGS))
    request = await asyncio.wait_for(requests.get(), 5)
    assert request.agent_id == "main"
    assert [q.header for q in request.questions] == ["Database", "Features"]
    assert request.questions[1].multi_select
    assert request.questions[0].options[1] == QuestionOption(label="SQLite", description="file")
    assert broker.respond(
        request.request_id,
        {"Which database?": "Postgres", "Which features?": ["auth", "search", "an audit log"]},
    )
    result = await task
    assert not result.is_error
    assert "Which database?\n  → Postgres" in result.output
    assert "auth, search, an audit log" in result.output
    answers = result.details["answers"]
    assert answers[1] == {
        "question": "Which features?",
        "selected": ["auth", "search"],
        "text": "an audit log",
    }


async def test_answers_may_be_given_in_order() -> None:
    broker = QuestionBroker()
    requests = announcing(broker)
    task = asyncio.ensure_future(
        broker.ask([Question(question="Name?"), Question(question="Color?")])
    )
    request = await asyncio.wait_for(requests.get(), 5)
    broker.respond(request.request_id, ["Ada", QuestionAnswer(question="Color?", text="teal")])
    response = await task
    assert [a.display for a in response.answers] == ["Ada", "teal"]


async def test_non_interactive_runs_answer_no_user_available_at_once() -> None:
    broker = QuestionBroker(interactive=False)
    result = await run_tool(broker, ARGS)
    assert result.output == NO_USER_MESSAGE
    assert broker.pending() == []


async def test_timeout_abort_and_decline_end_the_wait() -> None:
    response = await QuestionBroker(timeout=0.01).ask([Question(question="x?")])
    assert not response.answered and "did not answer" in response.unavailable

    broker = QuestionBroker()
    requests = announcing(broker)
    abort = AbortSignal()
    task = asyncio.ensure_future(run_tool(broker, ARGS, abort))
    await asyncio.wait_for(requests.get(), 5)
    abort.abort()
    result = await task
    assert "aborted" in result.output

    task = asyncio.ensure_future(run_tool(broker, ARGS))
    request = await asyncio.wait_for(requests.get(), 5)
    assert broker.decline(request.request_id)
    assert "declined" in (await task).output


async def test_callback_answerer() -> None:
    broker = QuestionBroker(answerer=lambda request: ["SQLite", ["billing"]])
    result = await run_tool(broker, ARGS)
    assert "→ SQLite" in result.output and "→ billing" in result.output
    broken = QuestionBroker(answerer=lambda request: 1 / 0)
    response = await broken.ask([Question(question="x?")])
    assert "callback failed" in response.unavailable


def test_bad_tool_arguments_are_rejected_by_the_schema() -> None:
    tool = ask_user_tool(QuestionBroker())
    with pytest.raises(ValueError):
        tool.args_model.model_validate({"questions": []})
    with pytest.raises(ValueError):
        tool.args_model.model_validate(
            {"questions": [{"question": "x", "header": "a header too long"}]}
        )
    assert tool.read_only is True


async def test_unreadable_answers_are_value_errors_and_keep_the_request_waiting() -> None:
    broker = QuestionBroker()
    requests = announcing(broker)
    task = asyncio.ensure_future(broker.ask([Question(question="x?")]))
    request = await asyncio.wait_for(requests.get(), 5)
    with pytest.raises(ValueError, match="cannot read answers"):
        broker.respond(request.request_id, 42)
    assert broker.respond(request.request_id, QuestionResponse(unavailable="later"))
    assert (await task).unavailable == "later"
