"""`Redactor`: the values of credential-like environment variables and configured keys
never survive redaction; short values and ordinary variables are left alone."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillkit.secrets import Redactor, hide_secret_values, is_secret_name, marker

ENVIRONMENT = {
    "OPENAI_API_KEY": "sk-proj-Abc123Def456Ghi789",
    "ANTHROPIC_API_KEY": "sk-ant-api03-zyx987wvu654",
    "GITHUB_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "DB_PASSWORD": "correct horse battery",
    "MY_SERVICE_SECRET": "s3cr3t-value-42",
    "SHORT_TOKEN": "1",
    "TINY_PASSWORD": "abc",
    "HOME": "/home/someone-long",
    "PATH": "/usr/local/bin:/usr/bin",
    "TOKENIZERS_PARALLELISM": "falsefalse",
    "GOOGLE_APPLICATION_CREDENTIALS_FILE": "/home/someone-long/creds.json",
}
SECRET_NAMES = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "DB_PASSWORD",
    "MY_SERVICE_SECRET",
]


def test_every_secret_value_from_the_environment_is_replaced_by_its_marker() -> None:
    redactor = Redactor.from_environment(ENVIRONMENT)
    text = "\n".join(f"{name}={ENVIRONMENT[name]}" for name in ENVIRONMENT)

    redacted = redactor.redact(text)

    for name in SECRET_NAMES:
        assert ENVIRONMENT[name] not in redacted
        assert f"{name}={marker(name)}" in redacted
    assert redactor.names == sorted(SECRET_NAMES)


def test_short_values_and_ordinary_variables_are_untouched() -> None:
    redactor = Redactor.from_environment(ENVIRONMENT)
    text = "exit 1 after abc; HOME=/home/someone-long falsefalse /usr/local/bin:/usr/bin"
    assert redactor.redact(text) is text
    assert redactor.redact("/home/someone-long/creds.json") == "/home/someone-long/creds.json"


def test_the_process_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLKIT_TEST_DEPLOY_TOKEN", "tok-from-the-real-environment")
    redacted = Redactor.from_environment().redact("token tok-from-the-real-environment!")
    assert redacted == "token [REDACTED:SKILLKIT_TEST_DEPLOY_TOKEN]!"


def test_configured_keys_are_secrets_whatever_their_name() -> None:
    redactor = Redactor.from_environment({}, api_keys={"api_key": "key-given-in-code", "x": None})
    assert redactor.redact("used key-given-in-code") == "used [REDACTED:api_key]"
    assert (
        redactor.with_secrets({"extra": "another-secret"}).redact(
            "another-secret key-given-in-code"
        )
        == "[REDACTED:extra] [REDACTED:api_key]"
    )


def test_a_secret_holding_another_is_replaced_whole() -> None:
    redactor = Redactor({"SHORT_KEY": "abcdefgh", "LONG_KEY": "xxabcdefghyy"})
    assert redactor.redact("abcdefgh xxabcdefghyy") == "[REDACTED:SHORT_KEY] [REDACTED:LONG_KEY]"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True),
        ("openai_apikey", True),
        ("GH_TOKEN", True),
        ("NPM_TOKENS", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("AWS_ACCESS_KEY_ID", True),
        ("DB_PASSWORD", True),
        ("PGPASSWORD", True),
        ("SSH_KEY", True),
        ("Authorization", True),
        ("x-api-key", True),
        ("NPM_AUTH", True),
        ("TOKENIZERS_PARALLELISM", False),
        ("KEYBOARD_LAYOUT", False),
        ("MONKEY", False),
        ("PWD", False),
        ("OLDPWD", False),
        ("PATH", False),
        ("HOME", False),
        ("SSH_AUTH_SOCK", False),
        ("GOOGLE_APPLICATION_CREDENTIALS_FILE", False),
        ("PASSWORD_STORE_DIR", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_redact_json_replaces_strings_at_any_depth_and_keys_too() -> None:
    redactor = Redactor.from_environment(ENVIRONMENT)
    key = ENVIRONMENT["GITHUB_TOKEN"]
    value = {"headers": {"auth": f"token {key}"}, key: [1, None, True, (f"x{key}x",)]}

    redacted = redactor.redact_json(value)

    assert key not in json.dumps(redacted)
    assert redacted["headers"]["auth"] == "token [REDACTED:GITHUB_TOKEN]"
    assert redacted["[REDACTED:GITHUB_TOKEN]"] == [1, None, True, ["x[REDACTED:GITHUB_TOKEN]x"]]
    assert value["headers"]["auth"] == f"token {key}"  # the input is not changed


def test_redact_json_handles_100000_levels_without_recursion() -> None:
    redactor = Redactor({"K_TOKEN": "deep-secret-value"})
    deep: list[object] = ["deep-secret-value"]
    for _ in range(100_000):
        deep = [deep]
    out = redactor.redact_json(deep)
    for _ in range(100_000):
        out = out[0]
    assert out == ["[REDACTED:K_TOKEN]"]


def test_hide_secret_values_masks_auth_headers_only() -> None:
    shown = hide_secret_values(
        {"headers": {"Authorization": "Bearer abc", "X-Trace": "1"}, "api_key": "k", "n": 2}
    )
    assert shown == {"headers": {"Authorization": "***", "X-Trace": "1"}, "api_key": "***", "n": 2}


def test_the_repr_never_shows_a_secret() -> None:
    redactor = Redactor.from_environment(ENVIRONMENT)
    for name in SECRET_NAMES:
        assert ENVIRONMENT[name] not in repr(redactor)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(max_size=20), min_size=1, max_size=6),
    st.sampled_from(SECRET_NAMES),
)
def test_a_secret_anywhere_in_any_text_is_gone(parts: list[str], name: str) -> None:
    redactor = Redactor.from_environment(ENVIRONMENT)
    text = ENVIRONMENT[name].join(parts) + ENVIRONMENT[name]
    assert ENVIRONMENT[name] not in redactor.redact(text)


def test_held_suffix_is_the_longest_end_that_starts_a_secret() -> None:
    redactor = Redactor({"A_TOKEN": "abcdefgh", "B_TOKEN": "xyzxyzxyz"})
    assert redactor.held_suffix("hello") == 0
    assert redactor.held_suffix("hello abc") == 3
    assert redactor.held_suffix("say xyzxyzxy") == 8
    assert redactor.held_suffix("abcdefgh") == 0  # a whole secret is redacted, not held
    assert Redactor().held_suffix("abc") == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=30))
def test_a_secret_split_across_stream_chunks_is_redacted(sizes: list[int]) -> None:
    redactor = Redactor({"A_TOKEN": "abcdefgh-secret"})
    text = "start abcdefgh-secret middle abcdefgh-secr end abcdefgh-secret"
    chunks, at = [], 0
    for size in sizes * 20:
        chunks.append(text[at : at + size])
        at += size
    chunks.append(text[at:])
    shown, pending = [], ""
    for chunk in chunks:
        pending += chunk
        hold = redactor.held_suffix(pending)
        shown.append(redactor.redact(pending[: len(pending) - hold]))
        pending = pending[len(pending) - hold :]
    shown.append(redactor.redact(pending))
    assert "".join(shown) == redactor.redact(text)


def test_overlapping_secrets_leave_no_part_of_either() -> None:
    redactor = Redactor({"A_TOKEN": "abcdefgh", "B_TOKEN": "efghijkl"})
    assert redactor.redact("x abcdefghijkl y") == "x [REDACTED:A_TOKEN] y"
    assert redactor.redact("abcdefgh efghijkl") == "[REDACTED:A_TOKEN] [REDACTED:B_TOKEN]"


def test_a_secret_overlapping_itself_is_replaced_whole() -> None:
    redactor = Redactor({"A_TOKEN": "abcabcab"})
    assert redactor.redact("-abcabcabcab-") == "-[REDACTED:A_TOKEN]-"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(alphabet="abc", min_size=8, max_size=10), min_size=1, max_size=3),
    st.text(alphabet="abc-", max_size=60),
)
def test_no_secret_survives_in_any_arrangement(secrets: list[str], text: str) -> None:
    redactor = Redactor({f"S{i}_TOKEN": value for i, value in enumerate(secrets)})
    for value in secrets:
        text = value.join([text[:10], text[10:30], text[30:]])
    redacted = redactor.redact(text)
    assert all(value not in redacted for value in secrets)


def test_log_records_are_redacted_by_the_handler_filter() -> None:
    import io
    import logging

    from skillkit.secrets import RedactingLogFilter

    secret = ENVIRONMENT["GITHUB_TOKEN"]
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingLogFilter(Redactor.from_environment(ENVIRONMENT)))
    logger = logging.getLogger("skillkit.test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("calling with %s", secret)
        try:
            raise RuntimeError(f"bad token {secret}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    output = stream.getvalue()
    assert secret not in output
    assert "calling with [REDACTED:GITHUB_TOKEN]" in output
    assert "RuntimeError: bad token [REDACTED:GITHUB_TOKEN]" in output
