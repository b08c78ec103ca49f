"""The slash commands about checkpoints: ``/rewind``, ``/undo``, ``/diff``.

They act on the `skillkit.checkpoints.Checkpoints` among the runner's contributors
(the ``skillkit`` command adds one to every recorded session); without one they fail
with a one-line message. Rewinding is refused while a run is in progress.

==================================  =====================================================
``/rewind``                         the turns: number, time, prompt, files changed +/-
``/rewind TURN [code|conversation|both] [force]``
                                    go back to before TURN (default ``both``); a file
                                    changed outside SkillKit is named and left alone
                                    unless ``force`` is given
``/undo``                           take back the last turn (or the last rewind)
``/diff [TURN]``                    what a turn changed (default: the last), as a diff
==================================  =====================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillkit.commands.dispatch import Command, CommandContext, CommandError

if TYPE_CHECKING:
    from skillkit.checkpoints import Checkpoints

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


def _idle(ctx: CommandContext) -> Checkpoints:
    if ctx.require_runner().is_running:
        raise CommandError("a run is in progress: wait for it to end or abort it first")
    return _checkpoints(ctx)


def _turn_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CommandError(f"not a turn number: {text!r}") from None


def rewind_command(ctx: CommandContext, args: str) -> str:
    from skillkit.checkpoints import ChangedOutsideError
    from skillkit.checkpoints.view import file_lines, restore_line, turn_lines

    words = args.split()
    if not words:
        checkpoints = _checkpoints(ctx)
        lines = turn_lines(checkpoints)
        if not lines:
            return "no turns yet"
        return "\n".join(["turns (rewind with /rewind TURN [code|conversation|both]):", *lines])
    checkpoints = _idle(ctx)
    number = _turn_number(words[0])
    target = "both"
    force = False
    for word in words[1:]:
        if word in _TARGETS:
            target = word
        elif word == "force":
            force = True
        else:
            raise CommandError(f"say code, conversation, both or force, not {word!r}")
    try:
        result = checkpoints.restore(number, target, force=force)  # type: ignore[arg-type]
    except ChangedOutsideError as exc:
        raise CommandError(
            f"{exc}; nothing was rewound. Overwrite them with /rewind {number} {target} force"
        ) from None
    except (KeyError, RuntimeError) as exc:
        raise CommandError(str(exc).strip("'\"")) from None
    return "\n".join([restore_line(result), *file_lines(result.files, counted=False)])


def undo_command(ctx: CommandContext, args: str) -> str:
    from skillkit.checkpoints import ChangedOutsideError
    from skillkit.checkpoints.view import file_lines, restore_line

    checkpoints = _idle(ctx)
    force = args.strip() == "force"
    try:
        result = checkpoints.undo(force=force)
    except ChangedOutsideError as exc:
        raise CommandError(f"{exc}; nothing was undone. Overwrite them with /undo force") from None
    except (KeyError, RuntimeError) as exc:
        raise CommandError(str(exc).strip("'\"")) from None
    return "\n".join([restore_line(result), *file_lines(result.files, counted=False)])


def diff_command(ctx: CommandContext, args: str) -> str:
    from skillkit.checkpoints.view import file_lines

    checkpoints = _checkpoints(ctx)
    number = _turn_number(args.strip()) if args.strip() else -1
    try:
        changes = checkpoints.diff(number)
        patch = checkpoints.patch(number)
    except KeyError as exc:
        raise CommandError(str(exc).strip("'\"")) from None
    if not changes:
        return "that turn changed no file"
    return "\n".join([*file_lines(changes), "", patch.rstrip()])


def checkpoint_commands() -> list[Command]:
    """New `Command` values for ``/rewind``, ``/undo`` and ``/diff``."""
    return [
        Command(
            "rewind",
            "list the turns, or go back to before one (code, conversation or both)",
            rewind_command,
            usage="[TURN [code|conversation|both] [force]]",
        ),
        Command("undo", "take back the last turn (or the last rewind)", undo_command),
        Command("diff", "what a turn changed (default: the last)", diff_command, usage="[TURN]"),
    ]
