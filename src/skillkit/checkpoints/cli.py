"""``skillkit sessions rewind ID [TURN] [--code|--conversation|--both] [--force]``: the
turns of a saved session, or a rewind to before one of them, for scripts.

It adds itself to the ``sessions`` command (registered before it). Only argparse is
imported up front.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``rewind`` to the ``sessions`` command (does nothing without one)."""
    sessions = subparsers.choices.get("sessions")
    if sessions is None:
        return
    commands = next(
        (a for a in sessions._actions if isinstance(a, argparse._SubParsersAction)), None
    )
    if commands is None:
        return
    rewind = commands.add_parser(
        "rewind",
        help="list a session's turns, or rewind its code and conversation to before one",
        description="Without TURN: the turns (number, time, prompt, files changed). With "
        "TURN: go back to before it. A file changed outside SkillKit since the last "
        "checkpoint is not overwritten unless --force is given.",
    )
    rewind.add_argument("id", metavar="ID")
    rewind.add_argument("turn", metavar="TURN", type=int, nargs="?")
    what = rewind.add_mutually_exclusive_group()
    for name in ("code", "conversation", "both"):
        what.add_argument(
            f"--{name}", dest="target", action="store_const", const=name, help=f"rewind {name}"
        )
    rewind.add_argument("--force", action="store_true", help="overwrite files changed outside")
    rewind.add_argument(
        "--session-store",
        metavar="URL",
        help="the store the session is in (default: the one the user's settings name, "
        "else the JSONL files under ~/.skillkit/sessions)",
    )
    rewind.set_defaults(handler=run_rewind, target="both")


def _fail(text: str) -> int:
    print(f"skillkit: error: sessions rewind: {text}", file=sys.stderr)
    return 1


def run_rewind(args: argparse.Namespace) -> int:
    from skillkit.checkpoints import ChangedOutsideError, Checkpoints, SnapshotError
    from skillkit.checkpoints.view import file_lines, turn_lines
    from skillkit.session import (
        SessionLockedError,
        SessionNotFoundError,
        StoreURLError,
        open_store,
    )
    from skillkit.session.format import FormatError

    try:
        store = open_store(getattr(args, "session_store", None))
        session = store.open(args.id, write=args.turn is not None)
    except (SessionNotFoundError, SessionLockedError, FormatError, StoreURLError, OSError) as exc:
        return _fail(str(exc))
    try:
        checkpoints = Checkpoints.for_session(session)
        if args.turn is None:
            lines = turn_lines(checkpoints)
            print("\n".join(lines) if lines else "no turns with checkpoints")
            return 0
        try:
            result = checkpoints.restore(args.turn, args.target, force=args.force)
        except ChangedOutsideError as exc:
            return _fail(f"{exc}; nothing was rewound (--force overwrites them)")
        except (KeyError, RuntimeError, SnapshotError) as exc:
            return _fail(str(exc).strip("'\""))
        print(
            f"rewound {result.target} to before turn {args.turn}: "
            f"{len(result.files)} file(s) restored; undo with: skillkit sessions rewind "
            f"{session.id} {result.turn.number} --{result.target}"
        )
        for line in file_lines(result.files, counted=False):
            print(line)
        return 0
    finally:
        session.close()
