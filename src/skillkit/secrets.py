"""Secrets kept out of what SkillKit shows and records: `Redactor`.

A `Redactor` knows a set of secret values, each with a name, and replaces every
occurrence of one in a text with ``[REDACTED:NAME]``. `Redactor.from_environment`
builds the usual one: the configured API key(s) plus the value of every environment
variable whose name says it holds a credential (`is_secret_name`: ``*_API_KEY``,
``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``, ``*_KEY`` ...). Values shorter than
`MIN_SECRET_LENGTH` characters are not secrets to it — redacting ``1`` or ``true``
everywhere would ruin every text and protect nothing.

It matches exact values only: a key that was transformed (base64, URL-encoded, split
across lines) is not recognised. Redaction is one substring test per secret (the fast
path: most texts hold none, and this runs at the speed of a plain ``str.replace``
loop), then the occurrences of the secrets found are collected and overlapping ones
merged, so a secret that contains or overlaps another is replaced whole.

This module imports nothing from SkillKit, so every layer may use it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MIN_SECRET_LENGTH",
    "PROVIDER_KEY_VARIABLES",
    "RedactingLogFilter",
    "Redactor",
    "hide_secret_values",
    "is_secret_name",
    "marker",
]

MIN_SECRET_LENGTH = 8
"""Values shorter than this are never treated as secrets."""

PROVIDER_KEY_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "DASHSCOPE_API_KEY",
    "DEEPSEEK_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "MINIMAX_API_KEY",
    "MISTRAL_API_KEY",
    "MOONSHOT_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
)
"""The variables the built-in provider catalog reads keys from (always secrets)."""

# Words that mark a credential anywhere in a name, and words that do so only as a whole
# part of it (``GITHUB_TOKEN``, ``SSH_KEY``; not ``TOKENIZERS_PARALLELISM``, ``KEYBOARD``).
_SECRET_NAME = re.compile(
    r"SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY"
    r"|TOKEN(?:S)?(?:_|$)|(?:^|_)(?:KEY|AUTH|PAT|COOKIE|SESSION_?ID)(?:_|$)"
)
# Names that hold where a secret is, not the secret itself.
_LOCATION_NAME = re.compile(r"_(?:FILE|PATH|DIR|SOCK|SOCKET|HOST|PORT)$")

_AUTH_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-auth-token",
    }
)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable (or header, or option) called ``name`` holds a
    credential by its name: it contains SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL,
    API_KEY, PRIVATE_KEY or ACCESS_KEY; or ends a part in TOKEN; or has KEY, AUTH, PAT,
    COOKIE or SESSION_ID as a whole ``_``-separated part; or is a well-known auth header
    (``Authorization``, ``X-Api-Key``...). Names ending in ``_FILE``, ``_PATH``, ``_DIR``,
    ``_SOCK``, ``_HOST`` or ``_PORT`` say where a secret is and are not secret names.
    Case-insensitive; ``-`` counts as ``_``."""
    if name.strip().lower() in _AUTH_HEADERS:
        return True
    upper = name.strip().upper().replace("-", "_")
    if _LOCATION_NAME.search(upper):
        return False
    return _SECRET_NAME.search(upper) is not None


def marker(name: str) -> str:
    """The text a secret called ``name`` is replaced with: ``[REDACTED:NAME]``."""
    return f"[REDACTED:{name}]"


class Redactor:
    """Replaces known secret values in text and JSON-like data.

    ``secrets`` maps a name (shown in the marker) to its value; values shorter than
    ``min_length`` are ignored. When two names share a value the first one names it.
    A `Redactor` never changes the secrets it knows (`with_secrets` makes a new one) and
    may be shared between threads; `redact` never raises for a ``str``, `redact_json`
    for any value.
    """

    __slots__ = ("_by_value", "_independent_sets", "_min_length", "_values")

    def __init__(
        self, secrets: Mapping[str, str] | None = None, *, min_length: int = MIN_SECRET_LENGTH
    ) -> None:
        self._min_length = max(1, min_length)
        by_value: dict[str, str] = {}
        for name, value in (secrets or {}).items():
            if not isinstance(value, str):
                continue
            for candidate in (value, value.strip()):
                if len(candidate) >= self._min_length:
                    by_value.setdefault(candidate, name)
        self._by_value = by_value
        # Longest first: a secret holding another is replaced whole.
        self._values = tuple(sorted(by_value, key=len, reverse=True))
        self._independent_sets: dict[tuple[str, ...], bool] = {}

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        api_keys: Mapping[str, str | None] | None = None,
        names: Iterable[str] = (),
        min_length: int = MIN_SECRET_LENGTH,
    ) -> Redactor:
        """A redactor for ``environ`` (default: this process's environment).

        It knows the value of every variable for which `is_secret_name` holds, of the
        provider key variables (`PROVIDER_KEY_VARIABLES`) and of any variable listed in
        ``names``; and each value of ``api_keys`` (name → key, for keys passed in code,
        such as ``{"api_key": config.api_key}``; None values are skipped).
        """
        env = os.environ if environ is None else environ
        wanted = set(PROVIDER_KEY_VARIABLES) | set(names)
        secrets: dict[str, str] = {}
        for name, value in (api_keys or {}).items():
            if value:
                secrets[name] = value
        for name in sorted(env):
            if name in wanted or is_secret_name(name):
                secrets.setdefault(name, env[name])
        return cls(secrets, min_length=min_length)

    def with_secrets(self, secrets: Mapping[str, str | None]) -> Redactor:
        """A redactor knowing this one's secrets and ``secrets`` (name → value; None and
        short values are skipped). A value both know keeps this redactor's name."""
        merged = Redactor(min_length=self._min_length)
        by_value = dict(self._by_value)
        for name, value in secrets.items():
            if isinstance(value, str):
                for candidate in (value, value.strip()):
                    if len(candidate) >= self._min_length:
                        by_value.setdefault(candidate, name)
        merged._by_value = by_value
        merged._values = tuple(sorted(by_value, key=len, reverse=True))
        merged._independent_sets = {}
        return merged

    @property
    def names(self) -> list[str]:
        """The names of the secrets known (sorted), never their values."""
        return sorted(set(self._by_value.values()))

    def __bool__(self) -> bool:
        return bool(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Redactor({len(self._values)} secrets: {', '.join(self.names)})"

    def redact(self, text: str) -> str:
        """``text`` with every known secret replaced by its `marker`. Occurrences that
        overlap (two secrets sharing characters, or one secret overlapping itself) are
        replaced as one span named by its first secret, so no part of either is left.
        Text holding no secret is returned as is (the same object)."""
        present = tuple(value for value in self._values if value in text)
        if not present:
            return text
        if self._independent(present):  # no two occurrences can overlap: plain replaces
            for value in present:
                text = text.replace(value, marker(self._by_value[value]))
            return text
        spans: list[tuple[int, int, str]] = []
        for value in present:
            name, size = self._by_value[value], len(value)
            at = text.find(value)
            while at != -1:
                spans.append((at, at + size, name))
                at = text.find(value, at + 1)
        spans.sort(key=lambda span: (span[0], -span[1]))
        parts: list[str] = []
        done = 0
        start, end, name = spans[0]
        for next_start, next_end, next_name in spans[1:]:
            if next_start < end:  # overlapping: one span
                end = max(end, next_end)
                continue
            parts += (text[done:start], marker(name))
            done = end
            start, end, name = next_start, next_end, next_name
        parts += (text[done:start], marker(name), text[end:])
        return "".join(parts)

    def _independent(self, values: tuple[str, ...]) -> bool:
        """Whether no occurrences of ``values`` can overlap one another (nor any marker
        hold one of them), so replacing them one by one is exact. Cached per set."""
        known = self._independent_sets.get(values)
        if known is None:
            markers = "".join(marker(self._by_value[value]) for value in values)
            known = not any(value in markers for value in values) and not any(
                _can_overlap(first, second) for first in values for second in values
            )
            if len(self._independent_sets) < 256:
                self._independent_sets[values] = known
        return known

    def held_suffix(self, text: str) -> int:
        """The length of the longest end of ``text`` that is the start (not the whole) of
        a known secret: what a streaming writer holds back until more text arrives, so
        a secret split across chunks is still redacted. 0 when nothing need be held."""
        longest = 0
        for value in self._values:
            for size in range(min(len(value) - 1, len(text)), longest, -1):
                if text.endswith(value[:size]):
                    longest = size
                    break
        return longest

    def redact_json(self, value: Any) -> Any:
        """A copy of a JSON-like ``value`` (dicts, lists, tuples, strings, numbers,
        booleans, None) with every string — keys included — passed through `redact`.
        Tuples come back as lists; other objects are returned as they are. Works for
        any nesting depth (no recursion)."""
        if not self._values:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if not isinstance(value, dict | list | tuple):
            return value
        holder: list[Any] = [None]
        stack: list[tuple[Any, Any, Any]] = [(value, holder, 0)]
        while stack:
            node, parent, slot = stack.pop()
            if isinstance(node, str):
                parent[slot] = self.redact(node)
            elif isinstance(node, dict):
                copy: dict[Any, Any] = {}
                parent[slot] = copy
                for key, item in node.items():
                    new_key = self.redact(key) if isinstance(key, str) else key
                    copy[new_key] = None
                    stack.append((item, copy, new_key))
            elif isinstance(node, list | tuple):
                items: list[Any] = [None] * len(node)
                parent[slot] = items
                stack.extend((item, items, index) for index, item in enumerate(node))
            else:
                parent[slot] = node
        return holder[0]


def _can_overlap(first: str, second: str) -> bool:
    """Whether an occurrence of ``first`` and one of ``second`` (the same text or not)
    can share characters: one holds the other, or ``first`` ends with ``second``'s
    start."""
    if first != second and (second in first or first in second):
        return True
    return any(first.endswith(second[:size]) for size in range(1, min(len(first), len(second))))


def hide_secret_values(mapping: Mapping[Any, Any], *, _depth: int = 0) -> dict[Any, Any]:
    """A copy of ``mapping`` (headers, options) where the value of every key that names
    a credential (`is_secret_name`) is ``"***"``; nested mappings are treated alike (to
    a depth of 16; deeper ones are hidden whole)."""
    out: dict[Any, Any] = {}
    for key, value in mapping.items():
        if isinstance(key, str) and is_secret_name(key) and value:
            out[key] = "***"
        elif isinstance(value, Mapping):
            out[key] = "***" if _depth >= 16 else hide_secret_values(value, _depth=_depth + 1)
        else:
            out[key] = value
    return out


class RedactingLogFilter(logging.Filter):
    """A `logging.Filter` that redacts every record a handler emits: the formatted
    message (its arguments merged in) and the text of an attached traceback. Add it to
    a *handler* (``handler.addFilter(RedactingLogFilter(redactor))``) so records from
    every logger through that handler are covered. Never drops a record."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what can be shown
            message = str(record.msg)
        record.msg, record.args = self.redactor.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.redact(record.stack_info)
        return True
