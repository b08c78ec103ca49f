"""Completion at the terminal's prompt and ``@path`` mentions.

`PromptCompleter` completes slash commands and their first argument and ``@path``
mentions by fuzzy search over the workspace's files (`workspace_files`,
`fuzzy_files`); `attach_mentions` appends the mentioned files' content to a prompt.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent, Completion
    from prompt_toolkit.document import Document

    from skillkit.commands.dispatch import Command
    from skillkit.model_registry import ModelDefinition
    from skillkit.models import UserContent
    from skillkit.session import Session

__all__ = [
    "IMAGE_SUFFIXES",
    "PromptCompleter",
    "attach_mentions",
    "entry_choices",
    "fuzzy_files",
    "image_prompt",
    "image_refusal",
    "mentioned_images",
    "outgoing_prompt",
    "workspace_files",
]

_MENTION = re.compile(r"(?<![\w@])@([^\s@]+)")
_MENTION_BYTES = 20_000  # of one mentioned file's content sent with the prompt
_FILE_LIST_LIMIT = 20_000
_FILE_LIST_TTL = 10.0


def workspace_files(root: Path) -> list[str]:
    """The files of the workspace at ``root``, relative, ``/``-separated: ``git ls-files``
    (tracked and untracked, ``.gitignore`` respected) in a git checkout, else a walk that
    skips hidden folders; at most 20,000."""
    import subprocess

    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root,
            capture_output=True,
            timeout=5,
            check=True,
        )
        names = [n for n in listed.stdout.decode("utf-8", "replace").split("\0") if n]
        return sorted(set(names))[:_FILE_LIST_LIMIT]
    except (OSError, subprocess.SubprocessError):
        pass
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(folder).relative_to(root)
        found.extend((base / f).as_posix() for f in sorted(files))
        if len(found) >= _FILE_LIST_LIMIT:
            break
    return found[:_FILE_LIST_LIMIT]


def fuzzy_files(query: str, files: list[str], limit: int = 20) -> list[str]:
    """The files matching ``query`` best: every character of it in order (any case);
    a name that starts with it first, then one that contains it, then the rest, shorter
    paths first."""
    wanted = query.lower()
    ranked: list[tuple[int, int, str]] = []
    for path in files:
        lower = path.lower()
        name = lower.rsplit("/", 1)[-1]
        if name.startswith(wanted):
            rank = 0
        elif wanted in lower:
            rank = 1
        else:
            position = 0
            for char in wanted:
                position = lower.find(char, position) + 1
                if position == 0:
                    break
            else:
                rank = 2
            if position == 0:
                continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked[:limit]]


IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""The file names an ``@path`` mention treats as an image."""


def mentioned_images(text: str, root: Path) -> list[str]:
    """The images ``text`` names, in order, each once: ``@path`` mentions of an image file
    under ``root``, and pasted paths of image files (absolute or ``~/…``, quotes around
    them allowed) — by the file's suffix, any case."""
    found: list[str] = []
    base = root.resolve()
    for match in _MENTION.finditer(text):
        name = match.group(1).rstrip(".,;:!?)")
        if Path(name).suffix.lower() not in IMAGE_SUFFIXES or name in found:
            continue
        path = (root / name).resolve()
        if path.is_relative_to(base) and path.is_file():
            found.append(name)
    for match in _PASTED_PATH.finditer(text):
        name = match.group(1) or match.group(2)
        if Path(name).suffix.lower() not in IMAGE_SUFFIXES or name in found:
            continue
        if Path(name).expanduser().is_file():
            found.append(name)
    return found


_PASTED_PATH = re.compile(r"""['"]((?:~|/)[^'"\n]+)['"]|(?<![\w@])((?:~/|/)[^\s'"@]+)""")
"""A pasted path: absolute or ``~/…``, bare or in quotes (a bare file name in a sentence
is no image to send: "rename a.png" stays a prompt)."""


def image_refusal(model: str, definition: ModelDefinition | None, images: list[str]) -> str | None:
    """The one line saying why a prompt mentioning ``images`` is not sent to ``model``
    (its catalog ``definition``), or None when the model takes images. A model the
    catalog does not know is sent them, as its adapter is (`create_adapter`) — except
    the embedded local model, whose server reads text only."""
    local = model == "local" or model.startswith("local:")  # the embedded server: text only
    if (definition is None and not local) or (definition and "image" in definition.capabilities):
        return None
    named = ", ".join("@" + image for image in images)
    return f"✗ not sent: {model or 'the model'} does not take images ({named})"


MAX_PROMPT_IMAGE_BYTES = 5 * 1024 * 1024
"""The largest image file a prompt sends (the ``read`` tool's own cap)."""


def image_prompt(text: str, root: Path, images: list[str]) -> list[UserContent]:
    """``text`` followed by the ``images`` it names (as `mentioned_images` found them:
    ``@path`` under ``root``, or a pasted path), read and checked to be PNG, JPEG, GIF
    or WebP by their first bytes. Raises ValueError with one line naming the image that
    cannot be sent (unreadable, too large, not an image)."""
    import base64

    from skillkit.models import ImagePart, TextPart
    from skillkit.tools.builtin.read import sniff_image

    parts: list[UserContent] = [TextPart(text)]
    for name in images:
        path = Path(name).expanduser()
        if not path.is_absolute():
            path = root / name
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_PROMPT_IMAGE_BYTES + 1)
        except OSError as exc:
            raise ValueError(f"@{name}: cannot read ({exc.strerror or exc})") from None
        if len(raw) > MAX_PROMPT_IMAGE_BYTES:
            raise ValueError(f"@{name}: larger than {MAX_PROMPT_IMAGE_BYTES} bytes")
        mime = sniff_image(raw[:16])
        if mime is None:
            raise ValueError(f"@{name}: not a PNG, JPEG, GIF or WebP image")
        parts.append(ImagePart(base64.b64encode(raw).decode("ascii"), mime))
    return parts


def outgoing_prompt(
    text: str, root: Path, model: str, lookup: Callable[[str], ModelDefinition | None]
) -> tuple[str | list[UserContent], str]:
    """What the terminal sends for ``text`` typed in ``root`` to ``model`` (``lookup``
    finds its catalog entry), and the line saying what went with it ("" for nothing):
    ``@file`` mentions attached, named images sent as image parts. Raises ValueError
    with the one line saying why nothing is sent (a model without images, an image that
    cannot be read)."""
    images = mentioned_images(text, root) if "@" in text or "/" in text else []
    shown: list[str] = []
    if "@" in text:
        text, attached = attach_mentions(text, root)
        shown += attached
    if not images:
        return text, ("↳ attached " + ", ".join(shown)) if shown else ""
    refusal = image_refusal(model, lookup(model), images)
    if refusal is not None:
        raise ValueError(refusal)
    try:
        prompt = image_prompt(text, root, images)
    except ValueError as exc:
        raise ValueError(f"✗ not sent: {exc}") from None
    return prompt, "↳ with " + ", ".join([*shown, *images])


def entry_choices(session: Session | None) -> list[tuple[str, str]]:
    """What ``/tree`` and ``/fork`` take, each with what it is: ``session``'s labels,
    then its entries newest first (at most 200); nothing without a session."""
    from skillkit.session.branching import describe_entry

    if session is None:
        return []
    choices = [(label, f"label of {entry}") for entry, label in session.labels().items()]
    choices += [(e.id, describe_entry(e, 50)) for e in reversed(session.entries[-200:])]
    return choices


def attach_mentions(text: str, root: Path) -> tuple[str, list[str]]:
    """``(text with the files, the files attached)``: the content of each ``@path``
    ``text`` mentions that is a readable text file under ``root`` is appended (at most
    20,000 bytes each, a note saying so when cut)."""
    parts: list[str] = []
    seen: set[str] = set()
    seen_files: list[str] = []
    base = root.resolve()
    for match in _MENTION.finditer(text):
        name = match.group(1).rstrip(".,;:!?)")
        if name in seen:
            continue
        seen.add(name)
        path = (root / name).resolve()
        if not path.is_relative_to(base) or not path.is_file():
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(_MENTION_BYTES + 1)
        except OSError:
            continue
        if b"\0" in data:
            continue  # not a text file
        body = data[:_MENTION_BYTES].decode("utf-8", "replace")
        cut = "\n[… cut at 20,000 bytes]" if len(data) > _MENTION_BYTES else ""
        parts.append(f'<file path="{name}">\n{body}{cut}\n</file>')
        seen_files.append(name)
    attached = list(seen_files)
    return (text if not parts else text + "\n\n" + "\n\n".join(parts)), attached


class PromptCompleter:
    """Tab completion at the prompt: slash commands (and aliases) by name, then their
    first argument (its choices; the model ids ``models`` gives for ``/model``; skill
    names for ``/skill`` and ``/skill:NAME``; the session's labels and entry ids
    ``entries`` gives, with what each entry is, for ``/tree`` and ``/fork``; the saved
    sessions' ids ``sessions`` gives, with each one's name or first prompt, for
    ``/resume`` and ``/open_session``), and ``@path`` mentions by fuzzy search over
    the workspace's files. A prompt_toolkit completer (through `completer`), built
    without importing prompt_toolkit until it is used."""

    def __init__(
        self,
        commands: Callable[[], list[Command]],
        skills: Callable[[], list[str]],
        root: Path,
        models: Callable[[], list[str]] = list,
        entries: Callable[[], list[tuple[str, str]]] = list,
        sessions: Callable[[], list[tuple[str, str]]] = list,
    ) -> None:
        self.commands = commands
        self.skills = skills
        self.models = models
        self.entries = entries
        self.sessions = sessions
        self.root = root
        self._files: list[str] = []
        self._listed = -_FILE_LIST_TTL

    def files(self) -> list[str]:
        now = time.monotonic()
        if now - self._listed > _FILE_LIST_TTL:
            self._files, self._listed = workspace_files(self.root), now
        return self._files

    def completer(self) -> Any:
        """This completer as a prompt_toolkit ``Completer``."""
        from prompt_toolkit.completion import Completer

        owner = self

        class _Completer(Completer):
            def get_completions(
                self, document: Document, complete_event: CompleteEvent
            ) -> Iterator[Completion]:
                return owner.get_completions(document, complete_event)

        return _Completer()

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        from prompt_toolkit.completion import Completion

        before = document.text_before_cursor
        mention = re.search(r"(?:^|\s)@([^\s@]*)$", before)
        if mention is not None:
            query = mention.group(1)
            for path in fuzzy_files(query, self.files()):
                yield Completion("@" + path, start_position=-len(query) - 1)
            return
        if not before.startswith("/") or "\n" in before:
            return
        head, space, rest = before.partition(" ")
        if not space:
            yield from self._names(head[1:])
            return
        if " " in rest:
            return  # only the first argument
        for value, about in self._values(head[1:]):
            if value.startswith(rest) and value != rest:
                yield Completion(value, start_position=-len(rest), display_meta=about)

    def _names(self, typed: str) -> Iterator[Completion]:
        from prompt_toolkit.completion import Completion

        if typed.startswith("skill:"):
            for name in self.skills():
                if name.startswith(typed[6:]):
                    yield Completion("/skill:" + name, start_position=-len(typed) - 1)
            return
        names: set[str] = set()
        for command in self.commands():
            for name in (command.name, *command.aliases):
                if name.startswith(typed) and name not in names:
                    names.add(name)
                    yield Completion(
                        "/" + name, start_position=-len(typed) - 1, display_meta=command.description
                    )

    def _values(self, name: str) -> list[tuple[str, str]]:
        """The values offered for the first argument of ``name``, each with a note."""
        if name == "model":
            return [(model, "") for model in self.models()]
        if name == "skill":
            return [(skill, "") for skill in self.skills()]
        if name in _ENTRY_COMMANDS:
            return self.entries()
        if name in _SESSION_COMMANDS:
            return self.sessions()
        command = next((c for c in self.commands() if name == c.name or name in c.aliases), None)
        if command is None or not command.arguments:
            return []
        return [(choice, "") for choice in command.arguments[0].choices]


_ENTRY_COMMANDS = frozenset({"tree", "fork"})
"""The commands whose first argument is an entry of the session (an id or a label)."""

_SESSION_COMMANDS = frozenset({"resume", "open_session"})
"""The commands whose first argument is a saved session's id."""
