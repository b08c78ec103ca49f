"""Failure classification, Retry-After parsing and the backoff policy."""

from __future__ import annotations

import email.utils
import json

import pytest

from skillkit.adapters.errors import (
    InStreamError,
    ProviderLabel,
    RetryPolicy,
    classify_failure,
    is_context_overflow,
    parse_retry_after,
)

LABEL = ProviderLabel("OpenAI", "OPENAI_API_KEY", "http://127.0.0.1:9", "gpt-test")


class _Response:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


class StatusError(Exception):
    """Shaped like the SDKs' status errors."""

    def __init__(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"Error code: {status}")
        self.status_code = status
        self.body = body
        self.response = _Response(headers or {})


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=1_000_000) == 30.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 9000 tokens.",
        "prompt is too long: 208310 tokens > 200000 maximum",
        "Your input exceeds the context window of this model.",
        "the request exceeds the available context size, try increasing it",
        "Please reduce the length of the messages or completion.",
    ],
)
def test_context_overflow_messages_of_known_servers(message: str) -> None:
    assert is_context_overflow(message)


def test_ordinary_errors_are_not_context_overflow() -> None:
    assert not is_context_overflow("Rate limit reached for requests")
    assert not is_context_overflow("Invalid value for 'temperature'")


@pytest.mark.parametrize(
    ("status", "body", "kind", "retryable"),
    [
        (401, {"message": "bad key", "type": "invalid_request_error"}, "auth", False),
        (403, {"message": "no", "type": "permission_error"}, "permission", False),
        (404, {"message": "no model"}, "not_found", False),
        (400, {"message": "bad field"}, "bad_request", False),
        (
            413,
            {"type": "error", "error": {"type": "request_too_large", "message": "big"}},
            "context_overflow",
            False,
        ),
        (429, {"message": "slow down"}, "rate_limit", True),
        (429, {"message": "quota", "code": "insufficient_quota"}, "quota", False),
        (500, {"message": "oops"}, "server", True),
        (502, "<html>Bad Gateway</html>", "server", True),
        (503, {"message": "busy"}, "overloaded", True),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "overloaded",
            True,
        ),
    ],
)
def test_status_errors(status: int, body: object, kind: str, retryable: bool) -> None:
    failure = classify_failure(StatusError(status, body), LABEL)
    assert failure.kind == kind
    assert failure.retryable is retryable
    assert failure.status == status
    assert "\n" not in failure.message


def test_the_servers_should_retry_header_wins() -> None:
    failure = classify_failure(
        StatusError(500, {"message": "x"}, {"x-should-retry": "false"}), LABEL
    )
    assert not failure.retryable


def test_in_stream_error_bodies_are_classified_by_type() -> None:
    overloaded = classify_failure(
        InStreamError({"code": "server_is_overloaded", "message": "busy"}), LABEL
    )
    assert overloaded.kind == "overloaded" and overloaded.retryable and overloaded.status is None


def test_transport_failures() -> None:
    assert classify_failure(ConnectionResetError("reset"), LABEL).kind == "connection"
    assert classify_failure(TimeoutError(), LABEL).kind == "timeout"
    malformed = classify_failure(json.JSONDecodeError("Expecting value", "{x", 1), LABEL)
    assert malformed.kind == "malformed" and not malformed.retryable


def test_messages_say_what_to_fix() -> None:
    auth = classify_failure(StatusError(401, {"message": "Incorrect API key"}), LABEL)
    assert auth.message == (
        "OpenAI rejected the API key (401): set OPENAI_API_KEY or pass api_key= with a valid key "
        "— Incorrect API key"
    )
    missing = classify_failure(StatusError(404, {"message": "unknown"}), LABEL)
    assert "'gpt-test'" in missing.message and "base_url" in missing.message


def test_long_provider_messages_stay_on_one_short_line() -> None:
    failure = classify_failure(StatusError(400, {"message": "line\n" * 200}), LABEL)
    assert "\n" not in failure.message and len(failure.message) < 400


def test_backoff_doubles_with_jitter_and_honours_retry_after() -> None:
    policy = RetryPolicy(max_retries=4, base_delay=1.0, max_delay=5.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0)]:
        delay = policy.delay_for(attempt, None)
        assert delay is not None and ceiling / 2 <= delay <= ceiling
    assert policy.delay_for(5, None) is None
    assert policy.delay_for(1, 3.0) == 3.0
    assert policy.delay_for(1, 30.0) is None  # asks for more than max_delay
