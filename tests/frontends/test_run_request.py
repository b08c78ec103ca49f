"""What a plain ``skillkit`` run asks for is checked before any agent is built: a run
that fits comes back whole, one that does not is the one-line usage error, never an
exception (`skillkit.frontends.args.run_request`)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from skillkit.cli import build_parser
from skillkit.frontends.args import RunRequest, run_request


class _Stdin(io.TextIOWrapper):
    def __init__(self, data: bytes, *, tty: bool) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _request(
    monkeypatch: pytest.MonkeyPatch, *argv: str, stdin: bytes = b"", tty: bool = False
) -> RunRequest | str:
    monkeypatch.setattr(sys, "stdin", _Stdin(stdin, tty=tty))
    return run_request(build_parser([]).parse_args(list(argv)))


def test_a_print_run_comes_back_with_its_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _request(monkeypatch, "-p", "hello") == RunRequest(prompt="hello")


def test_a_dash_reads_the_prompt_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    request = _request(monkeypatch, "-p", "-", stdin="\ufeffsummarize this\n".encode())

    assert request == RunRequest(prompt="summarize this\n")


def test_a_prompt_on_stdin_that_is_not_utf8_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    said = _request(monkeypatch, "-p", "-", stdin=b"ok \xff")

    assert said == "the prompt on stdin is not UTF-8 text (byte 3)"


def test_the_terminal_gets_no_prompt_and_needs_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _request(monkeypatch, tty=True) == RunRequest()
    assert _request(monkeypatch, tty=False) == (
        "interactive mode needs a terminal; pass a prompt with -p PROMPT"
    )


def test_an_output_schema_is_read_for_a_print_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    schema = tmp_path / "answer.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))

    request = _request(monkeypatch, "-p", "count", "--output-schema", str(schema))

    assert isinstance(request, RunRequest)
    assert request.prompt == "count" and request.output_schema is not None
    assert _request(monkeypatch, "--output-schema", str(schema), tty=True) == (
        "--output-schema needs a prompt: -p PROMPT"
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["-p", "  "], "the prompt is empty"),
        (["--mode", "json"], "--mode json needs a prompt: -p PROMPT"),
        (["-p", "hi", "--mode", "rpc"], "--mode rpc reads its commands from stdin; drop -p"),
        (["-p", "hi", "--ui-timeout", "3"], "--ui-timeout needs --mode rpc"),
        (["-p", "hi", "-r"], "-r/--resume picks a session in the terminal"),
    ],
)
def test_options_that_do_not_go_together_are_one_line(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], says: str
) -> None:
    said = _request(monkeypatch, *argv, tty=True)

    assert isinstance(said, str) and said.startswith(says) and "\n" not in said
