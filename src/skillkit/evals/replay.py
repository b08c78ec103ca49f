"""A recorded session as a regression case: a bug once seen becomes a test.

`case_from_messages` takes a session's current branch: the last user message is the
case's prompt, the turns before it (their text) its starting conversation, the files
the run read (still present in the session's folder, small text files) its workspace
files, and the run's final state its expectations — each skill it loaded, each tool
it called (by name), each file it wrote with the content it wrote, and the first line
of its final answer. Edit the case after making it: a case states what must stay true.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from skillkit.models import AgentMessage

__all__ = ["append_case", "case_from_messages", "from_session_command"]

#: Largest file copied into a case's workspace.
MAX_FILE_BYTES = 64 * 1024
#: Longest first line of the answer kept as a ``contains`` expectation.
MAX_ANSWER_CHARS = 160

_READ_TOOLS = frozenset({"read"})
_WRITE_TOOLS = frozenset({"write"})


def case_from_messages(
    messages: list[AgentMessage], *, name: str, cwd: Path | None = None
) -> dict[str, Any]:
    """The case (as suite YAML data) for a transcript; `ValueError` when it has no
    user prompt."""
    from skillkit.models import AssistantMessage, ToolResultMessage, UserMessage, message_text
    from skillkit.skills.prompt import SKILL_TOOL_NAME

    last_user = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), default=None)
    if last_user is None:
        raise ValueError("the session has no user message")
    history: list[dict[str, str]] = []
    for message in messages[:last_user]:
        text = message_text(message).strip()
        if isinstance(message, UserMessage) and text:
            history.append({"user": text})
        elif isinstance(message, AssistantMessage) and text:
            history.append({"assistant": text})
    run = messages[last_user + 1 :]
    failed = {m.tool_call_id for m in run if isinstance(m, ToolResultMessage) and m.is_error}
    expect: list[dict[str, Any]] = []
    files: dict[str, str] = {}
    tools: list[str] = []
    written: dict[str, str] = {}
    answer = ""
    for message in run:
        if not isinstance(message, AssistantMessage):
            continue
        if message.text.strip():
            answer = message.text
        for call in message.tool_calls:
            if call.id in failed:
                continue
            args = call.arguments
            if call.name == SKILL_TOOL_NAME and isinstance(args.get("name"), str):
                if not args.get("file"):
                    entry = {"skill_loaded": args["name"]}
                    if entry not in expect:
                        expect.append(entry)
                continue
            if call.name not in tools:
                tools.append(call.name)
            path = args.get("path")
            if call.name in _READ_TOOLS and isinstance(path, str) and cwd is not None:
                _copy_input(cwd, path, files)
            if call.name in _WRITE_TOOLS and isinstance(path, str):
                relative = _relative(cwd, path)
                if relative is not None and isinstance(args.get("content"), str):
                    written[relative] = args["content"]
    expect.extend({"tool_called": tool} for tool in tools)
    expect.extend({"file": {"path": p, "exact": text}} for p, text in written.items())
    first_line = next((line.strip() for line in answer.splitlines() if line.strip()), "")
    if first_line:
        expect.append({"contains": first_line[:MAX_ANSWER_CHARS]})
    if not expect:
        expect.append({"not_contains": "Traceback"})
    case: dict[str, Any] = {"name": name, "prompt": message_text(messages[last_user])}
    if history:
        case["session"] = history
    if files:
        case["files"] = files
    case["expect"] = expect
    return case


def _relative(cwd: Path | None, path: str) -> str | None:
    """``path`` relative to the session's folder, or None when it lies outside."""
    candidate = Path(path)
    if not candidate.is_absolute():
        parts = candidate.parts
        return None if ".." in parts or not parts else candidate.as_posix()
    if cwd is None:
        return None
    try:
        relative = candidate.relative_to(cwd)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts and ".." not in relative.parts else None


def _copy_input(cwd: Path, path: str, files: dict[str, str]) -> None:
    relative = _relative(cwd, path)
    if relative is None or relative in files:
        return
    source = cwd / relative
    try:
        if not source.is_file() or source.stat().st_size > MAX_FILE_BYTES:
            return
        files[relative] = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return


def skill_folders(case: dict[str, Any], cwd: Path | None) -> list[str]:
    """The folders, under the session's project, of the skills the case expects loaded
    (a suite's ``skills`` entries, so the case's workspace offers them too)."""
    from skillkit.skills.sources import SKILL_ROOTS

    if cwd is None:
        return []
    found: list[str] = []
    for entry in case.get("expect", []):
        name = entry.get("skill_loaded") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            continue
        for root in SKILL_ROOTS:
            folder = cwd / root / name
            if (folder / "SKILL.md").is_file():
                found.append(str(folder))
                break
    return found


def append_case(suite: Path, case: dict[str, Any], skills: list[str] | None = None) -> None:
    """Add ``case`` to the suite file (made when missing); a case of the same name is
    replaced, and ``skills`` folders the suite does not list yet are added to its
    ``skills``. The file is checked again after the change (`SuiteError` if the result
    is not a valid suite; the file is then left as it was)."""
    from skillkit.evals.suite import SuiteError, parse_suite

    data: dict[str, Any] = {"name": suite.stem, "cases": []}
    if suite.exists():
        loaded = yaml.safe_load(suite.read_text(encoding="utf-8"))
        if not isinstance(loaded, dict) or not isinstance(loaded.get("cases", []), list):
            raise SuiteError(f"{suite}: not a suite (a mapping with a 'cases' list)")
        data = loaded
    cases = [
        c
        for c in data.get("cases", [])
        if not (isinstance(c, dict) and c.get("name") == case["name"])
    ]
    data["cases"] = [*cases, case]
    listed = data.get("skills", [])
    listed = [listed] if isinstance(listed, str) else list(listed or [])
    extra = [folder for folder in skills or [] if folder not in listed]
    if extra:
        data["skills"] = [*listed, *extra]
    text = _dump(data)
    parse_suite(text, source=str(suite), base=str(suite.resolve().parent))
    suite.write_text(text, encoding="utf-8")


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def from_session_command(session_id: str, args: argparse.Namespace) -> int:
    """``skillkit eval from-session ID [--suite FILE]``."""
    from skillkit.evals.suite import SuiteError
    from skillkit.session import MessageEntry, SessionNotFoundError, StoreURLError, open_store
    from skillkit.session.format import FormatError

    try:
        session = open_store(getattr(args, "session_store", None)).open(session_id, write=False)
    except (SessionNotFoundError, StoreURLError, FormatError, OSError) as exc:
        print(f"skillkit: error: eval: {exc}", file=sys.stderr)
        return 2
    messages = [e.message for e in session.branch() if isinstance(e, MessageEntry)]
    cwd = Path(session.header.cwd) if session.header.cwd else None
    name = f"session-{session.id[:8]}"
    try:
        case = case_from_messages(messages, name=name, cwd=cwd)
    except ValueError as exc:
        print(f"skillkit: error: eval: {exc}", file=sys.stderr)
        return 2
    skills = skill_folders(case, cwd)
    if args.suite is None:
        sys.stdout.write(_dump({**({"skills": skills} if skills else {}), "cases": [case]}))
        return 0
    try:
        append_case(Path(args.suite), case, skills)
    except (SuiteError, OSError, yaml.YAMLError) as exc:
        print(f"skillkit: error: eval: {exc}", file=sys.stderr)
        return 2
    print(f"skillkit: eval: case '{name}' added to {args.suite}", file=sys.stderr)
    return 0
