"""``skillkit sessions``: list, show, export and delete sessions.

Only argparse is imported up front; the session modules are imported by the handlers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillkit.session.store_protocol import SessionStoreProtocol

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``sessions`` subcommand."""
    parser = subparsers.add_parser(
        "sessions",
        help="list, show, export and delete saved sessions",
        description="Saved sessions live under ~/.skillkit/sessions, one folder per "
        "working directory. ID is a session id, a unique prefix of one, or a file path.",
    )
    commands = parser.add_subparsers(dest="sessions_command", metavar="COMMAND")
    listing = commands.add_parser("list", help="sessions of this folder, newest first")
    listing.add_argument("--all", action="store_true", help="sessions of every folder")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(handler=run_list)
    show = commands.add_parser("show", help="a session's details and current branch")
    show.add_argument("id", metavar="ID")
    show.set_defaults(handler=run_show)
    export = commands.add_parser("export", help="write a session as Markdown or HTML")
    export.add_argument("id", metavar="ID")
    export.add_argument("--format", choices=("md", "html"), default="md")
    export.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    export.set_defaults(handler=run_export)
    remove = commands.add_parser("rm", help="delete a session")
    remove.add_argument("id", metavar="ID")
    remove.set_defaults(handler=run_rm)
    for command in (listing, show, export, remove):
        command.add_argument(
            "--session-store",
            metavar="URL",
            help="the store to read: sqlite:///path/to/sessions.db (default: the JSONL "
            "files under ~/.skillkit/sessions)",
        )
    parser.set_defaults(handler=run_list, all=False, json=False, session_store=None)


def _store(args: argparse.Namespace) -> SessionStoreProtocol:
    """The store ``--session-store`` names (`StoreURLError` for a bad URL)."""
    from skillkit.session import open_store

    return open_store(getattr(args, "session_store", None))


_ROLES = {
    "UserMessage": "user",
    "AssistantMessage": "assistant",
    "ToolResultMessage": "tool_result",
    "CustomMessage": "custom",
}


def _fail(text: str) -> int:
    print(f"skillkit: error: sessions: {text}", file=sys.stderr)
    return 1


def _age(seconds: float) -> str:
    delta = max(0.0, time.time() - seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if delta >= size:
            return f"{int(delta // size)}{unit} ago"
    return "just now"


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f}{unit}" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    return f"{value:.1f}GB"


def run_list(args: argparse.Namespace) -> int:
    """Print the sessions (exit 0 even when there are none)."""
    import msgspec

    from skillkit.session import StoreURLError

    try:
        store = _store(args)
    except StoreURLError as exc:
        return _fail(str(exc))
    infos = store.list(None if args.all else Path.cwd())
    if args.json:
        out = sys.stdout.buffer
        for info in infos:
            row = msgspec.structs.asdict(info)
            for private in ("indexed_size", "indexed_mtime_ns"):
                row.pop(private, None)
            out.write(msgspec.json.encode(row) + b"\n")
        out.flush()
        return 0
    if not infos:
        print("no sessions" + ("" if args.all else " in this folder"))
        return 0
    for info in infos:
        title = " ".join(info.title.split())[:70] or "(empty)"
        where = f"  {info.cwd}" if args.all else ""
        print(
            f"{info.id[:12]}  {_age(info.modified):>8}  {info.messages:>4} msgs  "
            f"{_size(info.size):>8}  {title}{where}"
        )
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Print a session's header and the entries of its current branch."""
    from skillkit.models import message_text
    from skillkit.session import MessageEntry, SessionNotFoundError, StoreURLError
    from skillkit.session.format import FormatError

    try:
        session = _store(args).open(args.id, write=False)
    except (SessionNotFoundError, StoreURLError, FormatError, OSError) as exc:
        return _fail(str(exc))
    header = session.header
    print(f"session   {session.id}")
    print(f"file      {session.path}")
    print(f"folder    {header.cwd}")
    print(f"created   {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(header.created))}")
    if session.session_name:
        print(f"name      {session.session_name}")
    if header.parent_session:
        print(f"forked    from {header.parent_session}")
    branch = session.branch()
    print(f"entries   {len(session.entries)} ({len(branch)} on the current branch)")
    labels = session.labels()
    print()
    for entry in branch:
        if isinstance(entry, MessageEntry):
            role = _ROLES.get(type(entry.message).__name__, "message")
            text = " ".join(message_text(entry.message).split())
            calls = getattr(entry.message, "tool_calls", [])
            if calls:
                text = (text + " " if text else "") + " ".join(f"[{c.name}]" for c in calls)
        else:
            role, text = _describe(entry)
        label = f" ({labels[entry.id]})" if entry.id in labels else ""
        print(f"{entry.id}  {role:<11} {text[:90]}{label}")
    for warning in session.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _describe(entry: object) -> tuple[str, str]:
    """The kind and a short text of an entry that is not a message."""
    from skillkit.session import (
        BranchEntry,
        CompactionEntry,
        CustomEntry,
        LabelEntry,
        ModeChangeEntry,
        ModelChangeEntry,
        NameEntry,
    )

    match entry:
        case ModelChangeEntry(model=model):
            return "model", model
        case ModeChangeEntry(mode=mode):
            return "mode", mode
        case CompactionEntry(tokens_before=before, tokens_after=after, summary=summary):
            return "compaction", f"{before} -> {after} tokens: {' '.join(summary.split())}"
        case CustomEntry(kind=kind):
            return "custom", kind
        case LabelEntry(target_id=target, label=label):
            return "label", f"{target}: {label}" if label else f"{target}: (removed)"
        case NameEntry(name=name):
            return "name", name
        case BranchEntry(summary=summary):
            return "branch", summary or ""
    return "entry", ""


def run_export(args: argparse.Namespace) -> int:
    """Write the session's current branch as Markdown or HTML."""
    from skillkit.session import SessionNotFoundError, StoreURLError
    from skillkit.session.export import export_session
    from skillkit.session.format import FormatError

    try:
        session = _store(args).open(args.id, write=False)
    except (SessionNotFoundError, StoreURLError, FormatError, OSError) as exc:
        return _fail(str(exc))
    text = export_session(session, args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


def run_rm(args: argparse.Namespace) -> int:
    """Delete a session; refused while another process writes it."""
    from skillkit.session import SessionLockedError, SessionNotFoundError, StoreURLError

    try:
        deleted = _store(args).delete(args.id)
    except (SessionNotFoundError, SessionLockedError, StoreURLError, OSError) as exc:
        return _fail(str(exc))
    print(f"deleted {deleted.name if isinstance(deleted, Path) else deleted}")
    return 0
