"""What a plain ``skillkit`` run was asked for, checked before any agent is built.

`run_request` reads the parsed command line of a run that names no subcommand: the
prompt of ``-p`` (``-`` reads it from stdin), the task of ``skillkit "TASK"``, the
JSON schema of ``--output-schema``, and whether ``--mode``, ``--ui-timeout`` and
``-r`` go with them. What does not fit is one line of text, the usage error the
command prints (exit code 2) — nothing is raised.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.output import OutputSpec

__all__ = ["RunRequest", "run_request"]


@dataclass(frozen=True)
class RunRequest:
    """A run's checked options."""

    prompt: str | None = None
    """The prompt of ``-p`` (UTF-8 text, not blank); None: an interactive session, or
    ``--mode rpc``."""
    task: str | None = None
    """The first prompt of an interactive session (``skillkit "TASK"``), or None."""
    output_schema: OutputSpec | None = None
    """What the answer of ``-p`` must be (``--output-schema FILE``), or None."""


class _Refused(Exception):
    """A usage error's message, on its way to `run_request`'s answer."""


def run_request(args: argparse.Namespace) -> RunRequest | str:
    """The run ``args`` ask for, or the one-line message of a usage error: an empty or
    non-UTF-8 prompt or task, a task with ``-p`` or a ``--mode``, an unreadable output
    schema or one without a prompt, ``--mode json`` without ``-p``, ``--mode rpc`` with
    it, ``--ui-timeout`` without ``--mode rpc``, an interactive session without a
    terminal on stdin, ``-r`` with ``-p``."""
    try:
        prompt = _prompt(args)
        task = _task(args, prompt)
        schema = None if args.output_schema is None else _output_schema(args, prompt)
        _check_mode(args, prompt)
    except _Refused as refused:
        return str(refused)
    return RunRequest(prompt, task, schema)


def _prompt(args: argparse.Namespace) -> str | None:
    """The prompt of ``-p`` (read from stdin for ``-``; None without ``-p``)."""
    prompt: str | None = args.prompt
    if prompt == "-":
        try:
            prompt = sys.stdin.buffer.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _Refused(f"the prompt on stdin is not UTF-8 text (byte {exc.start})") from None
    elif prompt is not None and not _is_utf8(prompt):
        raise _Refused("the prompt is not UTF-8 text")
    if prompt is not None and not prompt.strip():
        raise _Refused("the prompt is empty")
    return prompt


def _task(args: argparse.Namespace, prompt: str | None) -> str | None:
    """The task of ``skillkit "TASK"`` (None without one): a task opens an interactive
    session, so not with -p or a --mode."""
    task: str | None = getattr(args, "task", None)
    if task is None:
        return None
    if not task.strip():
        raise _Refused("the task is empty")
    if prompt is not None or args.mode != "text":
        raise _Refused(
            'a task opens an interactive session; give a prompt once: -p PROMPT or "TASK"'
        )
    return task


def _output_schema(args: argparse.Namespace, prompt: str | None) -> OutputSpec:
    """The `OutputSpec` of the JSON schema in the ``--output-schema`` file."""
    from skillkit.output import OutputSpec, read_schema_file

    if prompt is None:
        raise _Refused("--output-schema needs a prompt: -p PROMPT")
    try:
        return OutputSpec.of(read_schema_file(args.output_schema))
    except ValueError as exc:
        raise _Refused(str(exc)) from None


def _check_mode(args: argparse.Namespace, prompt: str | None) -> None:
    """``--mode``, ``--ui-timeout`` and ``-r`` fit the prompt (or its absence)."""
    if args.mode == "rpc":
        if prompt is not None:
            raise _Refused("--mode rpc reads its commands from stdin; drop -p")
    elif args.ui_timeout is not None:
        raise _Refused("--ui-timeout needs --mode rpc")
    elif prompt is None:
        if args.mode != "text":
            raise _Refused(f"--mode {args.mode} needs a prompt: -p PROMPT")
        if not sys.stdin.isatty():
            raise _Refused("interactive mode needs a terminal; pass a prompt with -p PROMPT")
    if args.resume and prompt is not None:
        raise _Refused(
            "-r/--resume picks a session in the terminal; with -p use --session ID or -c"
        )


def _is_utf8(text: str) -> bool:
    """False for text holding bytes that were not UTF-8 (argv decodes them to lone
    surrogates, which no event, session file or provider can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
