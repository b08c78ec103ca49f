"""Provider failures as data: classification, one-line messages, retry policy.

`classify_failure` turns whatever an official SDK raised (a status error, a cut
connection, a timeout, a malformed chunk, an in-stream ``error`` event) into a
`ProviderFailure`: a kind, a one-line message that says what to fix, the HTTP status
and the server's ``Retry-After``. It reads exceptions by their attributes
(``status_code``, ``body``, ``response.headers``), so this module imports no SDK.

Every message is passed through a `Redactor` before it leaves this module: the API
keys from the environment (`Redactor.from_environment`), the credentials the failed
request carried (its ``Authorization`` / ``x-api-key`` headers, read from the
exception) and any ``secrets`` the caller passes never appear in an error text.

`RetryPolicy.delay_for` computes the wait before a retry: exponential backoff with
jitter, or the server's ``Retry-After`` when it sent one. `RetryInfo` is what an
adapter reports to its ``on_retry`` callback before it sleeps.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias

import msgspec

from skillkit.models import StopReason
from skillkit.secrets import Redactor, is_secret_name

__all__ = [
    "ErrorKind",
    "InStreamError",
    "OnRetry",
    "ProviderFailure",
    "ProviderLabel",
    "RetryInfo",
    "RetryPolicy",
    "classify_failure",
    "is_context_overflow",
    "missing_key_failure",
    "parse_retry_after",
    "redact_failure",
]

ErrorKind: TypeAlias = Literal[
    "auth",  # the API key is missing or wrong
    "permission",  # the key may not use this model or endpoint
    "quota",  # the account's quota or credit is used up
    "not_found",  # unknown model or endpoint
    "bad_request",  # the provider rejected the request as malformed
    "context_overflow",  # the input does not fit the model's context window
    "rate_limit",  # 429
    "overloaded",  # 529 / overloaded_error / 503
    "server",  # other 5xx, 408, 409
    "connection",  # could not connect, connection reset, stream cut
    "timeout",  # no answer in time
    "malformed",  # the provider sent data that is not valid JSON / SSE
    "unknown",
]

_NEVER_RETRIED: frozenset[str] = frozenset({"context_overflow", "bad_request"})
"""Kinds that the same request would meet again, whatever the server's retry header."""

# Messages that say the request itself cannot be served (the same request fails again):
# a server that reports them with a 5xx status, or in the stream, is not retried.
_DETERMINISTIC_PATTERNS = re.compile(
    r"not supported|unsupported|does not support|doesn't support|not implemented"
    r"|invalid (request|argument|parameter|value)|is not allowed",
    re.IGNORECASE,
)

_RETRYABLE: frozenset[str] = frozenset(
    {"rate_limit", "overloaded", "server", "connection", "timeout"}
)

# Error messages of providers and OpenAI-compatible servers that mean "the input is
# larger than the context window" (matched case-insensitively).
_OVERFLOW_PATTERNS = re.compile(
    "|".join(
        [
            r"context[_ ]length[_ ]exceeded",
            r"maximum context length",
            r"context window",
            r"context size",
            r"prompt is too long",
            r"prompt too long",
            r"input is too long",
            r"too many (input )?tokens",
            r"exceeds? the (model's )?(maximum )?(context|token)",
            r"reduce the length of the (messages|prompt|input)",
            r"request_too_large",
            r"model_context_window_exceeded",
            r"input length .* exceeds",
        ]
    ),
    re.IGNORECASE,
)

_TYPE_KINDS: dict[str, ErrorKind] = {
    # Anthropic error types
    "authentication_error": "auth",
    "permission_error": "permission",
    "not_found_error": "not_found",
    "invalid_request_error": "bad_request",
    "request_too_large": "context_overflow",
    "rate_limit_error": "rate_limit",
    "overloaded_error": "overloaded",
    "api_error": "server",
    "timeout_error": "timeout",
    # OpenAI error types and codes
    "invalid_api_key": "auth",
    "insufficient_quota": "quota",
    "invalid_prompt": "bad_request",
    "rate_limit_exceeded": "rate_limit",
    "server_error": "server",
    "server_is_overloaded": "overloaded",
    "slow_down": "overloaded",
    "context_length_exceeded": "context_overflow",
    "model_not_found": "not_found",
}


class ProviderLabel(msgspec.Struct, frozen=True):
    """How messages name the provider: ``name`` ("OpenAI"), the environment variable
    that holds its key, the base URL in use and the model asked for."""

    name: str
    api_key_env: str
    base_url: str = ""
    model: str = ""


class ProviderFailure(msgspec.Struct, frozen=True):
    """One classified failure. ``message`` is a single line meant for the user."""

    kind: ErrorKind
    message: str
    status: int | None = None
    retry_after: float | None = None
    should_retry: bool | None = None  # the server's own ``x-should-retry`` verdict

    @property
    def retryable(self) -> bool:
        if self.should_retry is not None and self.kind not in _NEVER_RETRIED:
            return self.should_retry
        return self.kind in _RETRYABLE

    @property
    def stop_reason(self) -> StopReason:
        return "context_overflow" if self.kind == "context_overflow" else "error"


class RetryInfo(msgspec.Struct, frozen=True):
    """Reported before each retry: ``attempt`` counts retries from 1 up to
    ``max_retries``; ``delay`` is the wait in seconds about to start."""

    attempt: int
    max_retries: int
    delay: float
    kind: ErrorKind
    message: str
    status: int | None = None


OnRetry: TypeAlias = Callable[[RetryInfo], None]


class RetryPolicy(msgspec.Struct, frozen=True):
    """Retries before the first streamed token.

    The n-th retry waits ``base_delay * 2**(n-1)`` seconds capped at ``max_delay``, of
    which the upper half is random (jitter). A server's ``Retry-After`` replaces that
    wait; when it asks for more than ``max_delay`` the adapter gives up at once.
    """

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0

    def delay_for(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number ``attempt``; None means do not retry."""
        if attempt > self.max_retries:
            return None
        if retry_after is not None:
            return None if retry_after > self.max_delay else max(0.0, retry_after)
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return ceiling / 2 + random.uniform(0.0, ceiling / 2)


# --------------------------------------------------------------------------- parsing


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, then ``retry-after`` as
    seconds or as an HTTP date. None when absent or unreadable."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def is_context_overflow(message: str) -> bool:
    """Whether a provider's error message says the input exceeds the context window."""
    return bool(_OVERFLOW_PATTERNS.search(message))


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _error_fields(body: object) -> tuple[str, str, str]:
    """(message, type, code) from an error body of either provider's shape."""
    if isinstance(body, str):
        text = body
        try:
            body = json.loads(text)
        except ValueError:
            return text, "", ""
    if not isinstance(body, Mapping):
        return "", "", ""
    inner: Any = body.get("error", body)
    if not isinstance(inner, Mapping):
        return str(inner), str(body.get("type") or ""), ""
    message = inner.get("message") or body.get("message") or ""
    kind = inner.get("type") or ""
    code = inner.get("code") or body.get("code") or ""
    return str(message), str(kind), str(code)


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if isinstance(headers, Mapping) else None


class InStreamError(Exception):
    """A failure the provider reported inside a 200 stream (an ``error`` or
    ``response.failed`` event); ``body`` is its error object."""

    status_code = None

    def __init__(self, body: Mapping[str, Any]) -> None:
        super().__init__(str(body.get("message") or body))
        self.body = body


def _is_http(exc: BaseException, *names: str) -> bool:
    """Whether ``exc`` is one of the HTTP client's (httpx-family) exception classes."""
    return any(
        cls.__name__ in names and cls.__module__.startswith("httpx") for cls in type(exc).__mro__
    )


def _sent_credentials(exc: BaseException) -> dict[str, str]:
    """Credential header values of the request that failed (``Authorization: Bearer
    KEY`` gives both the header and ``KEY``), keyed by header name."""
    found: dict[str, str] = {}
    response = getattr(exc, "response", None)
    for request in (getattr(exc, "request", None), getattr(response, "request", None)):
        try:
            headers = getattr(request, "headers", None)
            items = list(headers.items()) if headers is not None else []
        except Exception:  # an exotic object: nothing to learn from it
            continue
        for name, value in items:
            if not (isinstance(name, str) and isinstance(value, str) and is_secret_name(name)):
                continue
            found.setdefault(name.lower(), value)
            scheme, _, token = value.partition(" ")
            if token.strip() and scheme.isalpha():
                found.setdefault(f"{name.lower()} token", token.strip())
    return found


def redact_failure(
    failure: ProviderFailure,
    exc: BaseException | None = None,
    secrets: Mapping[str, str | None] | None = None,
) -> ProviderFailure:
    """``failure`` with its message redacted: environment keys, the credentials ``exc``'s
    request carried, and ``secrets`` (name → value). Never raises."""
    try:
        known: dict[str, str | None] = dict(secrets or {})
        if exc is not None:
            known.update(_sent_credentials(exc))
        redactor = Redactor.from_environment(api_keys=known)
        message = redactor.redact(failure.message)
    except Exception:  # redaction must not turn one failure into another
        message = "the provider call failed (the error text could not be checked for secrets)"
    if message == failure.message:
        return failure
    return msgspec.structs.replace(failure, message=message)


def missing_key_failure(label: ProviderLabel) -> ProviderFailure:
    """The failure for a request made without any API key."""
    return ProviderFailure(
        "auth", f"No API key for {label.name}: set {label.api_key_env} or pass api_key="
    )


def classify_failure(
    exc: BaseException,
    label: ProviderLabel,
    *,
    connection_errors: tuple[type[BaseException], ...] = (),
    timeout_errors: tuple[type[BaseException], ...] = (),
    secrets: Mapping[str, str | None] | None = None,
) -> ProviderFailure:
    """Classify what an SDK raised. ``connection_errors`` / ``timeout_errors`` are the
    SDK's and its HTTP client's transport exception types. ``secrets`` (name → value,
    such as ``{"api_key": key}``) are redacted from the message, as are the environment's
    keys and the credentials the failed request carried (see `redact_failure`). Never
    raises."""
    return redact_failure(_classify(exc, label, connection_errors, timeout_errors), exc, secrets)


def _classify(
    exc: BaseException,
    label: ProviderLabel,
    connection_errors: tuple[type[BaseException], ...],
    timeout_errors: tuple[type[BaseException], ...],
) -> ProviderFailure:
    if isinstance(exc, (*timeout_errors, TimeoutError)) or _is_http(exc, "TimeoutException"):
        where = f" at {label.base_url}" if label.base_url else ""
        return ProviderFailure("timeout", f"{label.name}{where} did not answer in time")
    if isinstance(exc, (*connection_errors, ConnectionError)) or _is_http(
        exc, "TransportError", "DecodingError", "StreamError"
    ):
        detail = _one_line(str(exc.__cause__ or exc) or type(exc).__name__, 160)
        where = f" at {label.base_url}" if label.base_url else ""
        return ProviderFailure(
            "connection", f"Connection to {label.name}{where} failed or was cut: {detail}"
        )
    if isinstance(exc, ValueError) and not hasattr(exc, "body"):
        return ProviderFailure(
            "malformed", f"{label.name} sent a malformed stream chunk: {_one_line(str(exc), 160)}"
        )
    status = getattr(exc, "status_code", None)
    # An in-stream error arrives on a 200 response: that status says nothing.
    status = status if isinstance(status, int) and status >= 400 else None
    body = getattr(exc, "body", None)
    message, error_type, code = _error_fields(body)
    if not message:
        message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    headers = _headers_of(exc)
    retry_after = parse_retry_after(headers)
    should_retry: bool | None = None
    if headers is not None and headers.get("x-should-retry") in ("true", "false"):
        should_retry = headers.get("x-should-retry") == "true"
    kind = _kind_of(status, error_type, code, message)
    text = _message_for(kind, status, _one_line(str(message)), label)
    return ProviderFailure(kind, text, status, retry_after, should_retry)


def _kind_of(status: int | None, error_type: str, code: str, message: str) -> ErrorKind:
    if "insufficient_quota" in (code, error_type):
        return "quota"
    if status == 429:
        return "rate_limit"
    if code == "context_length_exceeded" or is_context_overflow(message):
        return "context_overflow"
    by_type = _TYPE_KINDS.get(code) or _TYPE_KINDS.get(error_type)
    deterministic = status in (None, 400, 422, 500) and by_type not in ("auth", "permission")
    if deterministic and _DETERMINISTIC_PATTERNS.search(str(message)):
        return "bad_request"
    if status is None:
        return by_type or ("server" if error_type or code else "unknown")
    if status == 401:
        return "auth"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status == 413:
        return "context_overflow"
    if status == 429:
        return "rate_limit"
    if status in (503, 529) or by_type == "overloaded":
        return "overloaded"
    if status >= 500 or status in (408, 409):
        return "server"
    if status in (400, 422):
        return "bad_request"
    return by_type or "unknown"


def _message_for(kind: ErrorKind, status: int | None, detail: str, label: ProviderLabel) -> str:
    name = label.name
    code = f" ({status})" if status else ""
    model = f" '{label.model}'" if label.model else ""
    where = f" at {label.base_url}" if label.base_url else ""
    match kind:
        case "auth":
            return (
                f"{name} rejected the API key{code}: set {label.api_key_env} or pass api_key= "
                f"with a valid key — {detail}"
            )
        case "permission":
            return f"{name} denied access{code}: the API key may not use model{model} — {detail}"
        case "not_found":
            return (
                f"{name}{where} does not know model{model} or the endpoint{code}: check the model "
                f"id and base_url — {detail}"
            )
        case "quota":
            return f"{name} quota is used up{code}: check the key's plan and billing — {detail}"
        case "bad_request":
            return f"{name} rejected the request{code}: {detail}"
        case "context_overflow":
            subject = model or " the model"
            return f"The conversation does not fit the context window of{subject}: {detail}"
        case "rate_limit":
            return f"{name} rate limit reached{code}: {detail}"
        case "overloaded":
            return f"{name} is overloaded{code}: {detail}"
        case "server":
            return f"{name} server error{code}: {detail}"
        case _:
            return f"{name} error{code}: {detail}"
