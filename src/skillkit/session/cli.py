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
        help="list, show, export, import and delete saved sessions",
        description="Saved sessions live in a store: the JSONL files under "
        "~/.skillkit/sessions (one folder per working directory) unless --session-store "
        "or the sessions.store setting of ~/.skillkit/settings.json names a SQLite or "
        "PostgreSQL one. ID is a session id, a unique prefix of one, or a path.",
    )
    commands = parser.add_subparsers(dest="sessions_command", metavar="COMMAND")
    listing = commands.add_parser("list", help="sessions of this folder, newest first")
    listing.add_argument("--all", action="store_true", help="sessions of every folder")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(handler=run_list)
    show = commands.add_parser("show", help="a session's details and current branch")
    show.add_argument("id", metavar="ID")
    show.set_defaults(handler=run_show)
    export = commands.add_parser(
        "export",
        help="write a session as Markdown, HTML or JSONL; or copy every session elsewhere",
        description="Write one session (ID) as Markdown, HTML or its JSONL file; or, with "
        "--all --to, copy every session of the store to another store (a URL) or to a "
        "folder of JSONL files, losslessly (ids, tree, labels, names, checkpoint links). "
        "Sessions the target already has are left alone, so an interrupted copy can be "
        "run again.",
    )
    export.add_argument("id", metavar="ID", nargs="?")
    export.add_argument("--format", choices=("md", "html", "jsonl"), default="md")
    export.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    export.add_argument("--all", action="store_true", help="every session of the store")
    export.add_argument(
        "--to",
        metavar="URL|DIR",
        help="with --all: a store URL (sqlite:///x.db, postgresql://host/db, "
        "file:///home) or a folder to write <id>.jsonl files into",
    )
    export.set_defaults(handler=run_export)
    importing = commands.add_parser(
        "import",
        help="copy sessions into the store from another store, a folder or a file",
        description="Copy sessions into the store (--session-store, default the JSONL "
        "files) from another store (a URL), a folder of <id>.jsonl files (what "
        "export --all --to DIR writes) or one session file. Sessions already there are "
        "left alone.",
    )
    importing.add_argument("source", metavar="URL|DIR|FILE")
    importing.set_defaults(handler=run_import)
    remove = commands.add_parser("rm", help="delete a session")
    remove.add_argument("id", metavar="ID")
    remove.set_defaults(handler=run_rm)
    for command in (listing, show, export, importing, remove):
        command.add_argument(
            "--session-store",
            metavar="URL",
            help="the store to use: sqlite:///path/to/sessions.db or "
            "postgresql://host/db (default: the JSONL files under ~/.skillkit/sessions)",
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


def _usage(text: str) -> int:
    """Bad input on the command line: one line, exit code 2 (as argparse's errors)."""
    print(f"skillkit: error: sessions: {text}", file=sys.stderr)
    return 2


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
        infos = _store(args).list(None if args.all else Path.cwd())
    except (StoreURLError, OSError) as exc:
        return _fail(str(exc))
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
    from skillkit.context.transcript import typed_text
    from skillkit.models import UserMessage, message_text
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
            text = message_text(entry.message)
            if isinstance(entry.message, UserMessage):  # a note SkillKit wrote: as typed
                text = typed_text(text) or text
            text = " ".join(text.split())
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
    """Write the session's current branch as Markdown or HTML (its whole file for
    ``jsonl``), or copy every session elsewhere (``--all --to``)."""
    from skillkit.session import SessionNotFoundError, StoreURLError
    from skillkit.session.export import export_session
    from skillkit.session.format import FormatError

    if args.all:
        return _export_all(args)
    if args.to:
        return _usage("--to copies every session: use it with --all")
    if not args.id:
        return _usage("export needs a session ID (or --all --to URL|DIR)")
    try:
        store = _store(args)
        session = store.open(args.id, write=False)
        data = (
            store.export_jsonl(session.id)
            if args.format == "jsonl"
            else export_session(session, args.format).encode()
        )
    except (SessionNotFoundError, StoreURLError, FormatError, OSError) as exc:
        return _fail(str(exc))
    if args.output:
        Path(args.output).write_bytes(data)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def _export_all(args: argparse.Namespace) -> int:
    from skillkit.session import StoreURLError, open_store
    from skillkit.session.transfer import copy_sessions, export_to_folder

    if args.id:
        return _usage("--all copies every session: give no ID with it")
    if not args.to:
        return _usage("--all needs --to URL|DIR: the store or folder to copy the sessions to")
    try:
        source = _store(args)
        if "://" in args.to:
            report = copy_sessions(source, open_store(args.to))
        else:
            report = export_to_folder(source, Path(args.to).expanduser())
    except (StoreURLError, OSError) as exc:
        return _fail(str(exc))
    return _report("exported", report, args.to)


def run_import(args: argparse.Namespace) -> int:
    """Copy sessions into the store from another store, a folder or a file."""
    from skillkit.session import StoreURLError, open_store
    from skillkit.session.transfer import copy_sessions, import_files

    try:
        target = _store(args)
        if "://" in args.source:
            report = copy_sessions(open_store(args.source), target)
        else:
            where = Path(args.source).expanduser()
            if where.is_dir():
                files = sorted(where.glob("*.jsonl"))
            elif where.is_file():
                files = [where]
            else:
                return _fail(f"no session file or folder {args.source}")
            report = import_files(target, files)
    except (StoreURLError, OSError) as exc:
        return _fail(str(exc))
    return _report("imported", report, args.source)


def _report(verb: str, report: object, where: str) -> int:
    from skillkit.session.store_base import public_location
    from skillkit.session.transfer import TransferReport

    assert isinstance(report, TransferReport)
    for line in report.failed:
        print(f"skillkit: sessions: not copied: {line}", file=sys.stderr)
    count = len(report.copied)
    note = f" ({len(report.skipped)} already there)" if report.skipped else ""
    failed = f", {len(report.failed)} failed" if report.failed else ""
    word = "session" if count == 1 else "sessions"
    print(f"{verb} {count} {word}{note}{failed}: {public_location(where)}")
    return 1 if report.failed else 0


def run_rm(args: argparse.Namespace) -> int:
    """Delete a session; refused while another process writes it."""
    from skillkit.session import SessionLockedError, SessionNotFoundError, StoreURLError

    try:
        deleted = _store(args).delete(args.id)
    except (SessionNotFoundError, SessionLockedError, StoreURLError, OSError) as exc:
        return _fail(str(exc))
    print(f"deleted {deleted.name if isinstance(deleted, Path) else deleted}")
    return 0
