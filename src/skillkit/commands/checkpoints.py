"""The commands about checkpoints: ``rewind``, ``undo``, ``diff`` — entries of the one
command table (``/rewind 2 code`` in the terminal, ``{"type": "rewind", "turn": 2,
"target": "code"}`` over RPC and HTTP).

They act on the `skillkit.checkpoints.Checkpoints` among the runner's contributors (the
``skillkit`` command adds one to every recorded session); without one they fail with a
one-line message. Rewinding is refused while a run is in progress.

=========================================  =============================================
``/rewind``                                the turns: number, time, prompt, files
                                           changed with +/- lines
``/rewind TURN [code|conversation|both]``  go back to before TURN (default ``both``)
``/rewind TURN both yes``                  the same, overwriting files changed outside
                                           SkillKit (otherwise named and left alone)
``/undo [yes]``                            take back the last turn (or the last rewind)
``/diff [TURN]``                           what a turn changed (default: the last)
=========================================  =============================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillkit.commands.dispatch import (
    Argument,
    Command,
    CommandContext,
    CommandError,
    CommandResult,
)

if TYPE_CHECKING:
    from skillkit.checkpoints import Checkpoints, FileChange, RestoreResult, Turn

__all__ = ["checkpoint_commands", "diff_command", "rewind_command", "undo_command"]

NO_CHECKPOINTS = "this session keeps no checkpoints (started with --no-session?)"
_TARGETS = ("code", "conversation", "both")


def _checkpoints(ctx: CommandContext) -> Checkpoints:
    from skillkit.checkpoints import Checkpoints

    runner = ctx.require_runner()
    for contributor in reversed(runner.contributors):
        if isinstance(contributor, Checkpoints):
            return contributor
    raise CommandError(NO_CHECKPOINTS)


def _restored(ctx: CommandContext, result: RestoreResult) -> CommandResult:
    from skillkit.checkpoints.view import change_record, file_lines, restore_line
    from skillkit.commands.active_agent import follow_moved_branch
    from skillkit.commands.sessions import recorded_session

    lines = [restore_line(result), *file_lines(result.files, counted=False)]
    data: dict[str, object] = {
        "target": result.target,
        "files": [change_record(c) for c in result.files],
        "turn": result.turn.number,
    }
    if result.target != "code":  # the conversation moved: who answers follows it
        runner = ctx.require_runner()
        notice, fields = follow_moved_branch(runner, recorded_session(runner))
        lines.extend([notice] if notice else [])
        data.update(fields)
    output = "\n".join(lines)
    return CommandResult(output=output, data={"output": output, **data})


def _record(turn: Turn, changes: list[FileChange]) -> dict[str, Any]:
    """A turn as the JSON faces get it (`turn_record`), with ``transcript_length``: the
    number of messages before its prompt (where the turn begins in the transcript; a
    face places what the turn changed with it), None when unknown."""
    from skillkit.checkpoints.view import turn_record

    record = turn_record(turn, changes)
    record["transcript_length"] = turn.transcript_length
    return record


def rewind_command(ctx: CommandContext, args: Mapping[str, object]) -> CommandResult:
    """``rewind [TURN] [TARGET] [FORCE]``: without a turn, the turns (``data.turns``);
    with one, go back to before it. ``data``: the ``files`` restored, the ``target``
    and the rewind's own ``turn`` number. Each answer's ``data.output`` is the same
    answer as text (a face that draws no view of its own shows it). Refused over files
    changed outside SkillKit (unless ``force``): an error whose ``data`` names them
    (``changed_outside``), with the ``turn`` and ``target`` asked for, so a face can ask
    and call again."""
    from skillkit.checkpoints import ChangedOutsideError
    from skillkit.checkpoints.view import turn_line

    checkpoints = _checkpoints(ctx)
    number = args.get("turn")
    if not isinstance(number, int):
        turns = [(t, checkpoints.diff(t.number)) for t in checkpoints.list()]
        lines = [turn_line(t, changes) for t, changes in turns]
        output = (
            "\n".join(["turns (rewind with /rewind TURN [code|conversation|both]):", *lines])
            if lines
            else "no turns yet"
        )
        turns_data = [_record(t, c) for t, c in turns]
        return CommandResult(output=output, data={"output": output, "turns": turns_data})
    ctx.require_idle_runner()
    target = str(args.get("target") or "both")
    try:
        result = checkpoints.restore(number, target, force=args.get("force") is True)  # type: ignore[arg-type]
    except ChangedOutsideError as exc:
        return CommandResult(
            error=f"{exc}; nothing was rewound. Overwrite them with /rewind {number} {target} yes",
            data={"changed_outside": exc.paths, "turn": number, "target": target},
        )
    except (KeyError, RuntimeError, ValueError) as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    return _restored(ctx, result)


def undo_command(ctx: CommandContext, args: Mapping[str, object]) -> CommandResult:
    """``undo [FORCE]``: take back the last turn, or the last rewind (refused as
    ``rewind`` is, with ``data.changed_outside``)."""
    from skillkit.checkpoints import ChangedOutsideError

    checkpoints = _checkpoints(ctx)
    ctx.require_idle_runner()
    try:
        result = checkpoints.undo(force=args.get("force") is True)
    except ChangedOutsideError as exc:
        return CommandResult(
            error=f"{exc}; nothing was undone. Overwrite them with /undo yes",
            data={"changed_outside": exc.paths},
        )
    except (KeyError, RuntimeError) as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    return _restored(ctx, result)


def diff_command(ctx: CommandContext, args: Mapping[str, object]) -> CommandResult:
    """``diff [TURN]``: what a turn changed (default: the last), its files with +/- lines
    and the unified ``patch``; ``data.output`` is the same answer as text."""
    from skillkit.checkpoints.view import file_lines

    checkpoints = _checkpoints(ctx)
    number = args.get("turn")
    number = number if isinstance(number, int) else -1
    try:
        turn = checkpoints.turn(number)
        changes = checkpoints.diff(number)
        patch = checkpoints.patch(number)
    except KeyError as exc:
        raise CommandError(str(exc.args[0]) if exc.args else str(exc)) from None
    record = _record(turn, changes)
    record["patch"] = patch
    output = (
        "\n".join([*file_lines(changes), "", patch.rstrip()])
        if changes
        else "that turn changed no file"
    )
    record["output"] = output
    return CommandResult(output=output, data=record)


_TURN = Argument("turn", "integer", help="the turn's number (see /rewind)")
_FORCE = Argument("force", "boolean", help="overwrite files changed outside SkillKit")


def checkpoint_commands() -> list[Command]:
    """New `Command` values for ``rewind``, ``undo`` and ``diff``."""
    return [
        Command(
            "rewind",
            "list the turns, or go back to before one (code, conversation or both)",
            rewind_command,
            arguments=(
                _TURN,
                Argument("target", choices=_TARGETS, help="what to rewind (default: both)"),
                _FORCE,
            ),
        ),
        Command(
            "undo",
            "take back the last turn (or the last rewind)",
            undo_command,
            arguments=(_FORCE,),
        ),
        Command(
            "diff",
            "what a turn changed (default: the last)",
            diff_command,
            arguments=(_TURN,),
        ),
    ]
