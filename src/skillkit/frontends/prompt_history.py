"""The prompts typed in the terminal, kept across sessions for ↑ and Ctrl-R.

`PromptHistory` is a prompt_toolkit history stored in ``~/.skillkit/prompt-history``
(one file for every folder, as a shell's). What it writes has its known secrets
replaced first (`skillkit.secrets.Redactor`): a key pasted into a prompt never lands in
the file. The file is created readable by its owner only, and at most the last 1,000
prompts are read back; an unreadable or unwritable file leaves the history in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import History

from skillkit.secrets import Redactor

__all__ = ["HISTORY_LIMIT", "PromptHistory", "history_file"]

HISTORY_LIMIT = 1000
"""How many of the latest prompts are read back."""


def history_file(home: Path | None = None) -> Path:
    """Where the prompts are kept: ``HOME/.skillkit/prompt-history``."""
    return (home if home is not None else Path.home()) / ".skillkit" / "prompt-history"


class PromptHistory(History):
    """Prompts in ``path``, one JSON string a line (so a prompt keeps its new lines),
    oldest first; ``redactor`` names the secrets never written."""

    def __init__(self, path: Path, redactor: Redactor) -> None:
        super().__init__()
        self.path = path
        self.redactor = redactor

    def load_history_strings(self) -> Iterable[str]:
        """The stored prompts, newest first (as prompt_toolkit asks)."""
        import json

        try:
            lines = self.path.read_text("utf-8", "replace").splitlines()
        except OSError:
            return []
        prompts: list[str] = []
        for line in reversed(lines[-HISTORY_LIMIT:]):
            try:
                text = json.loads(line)
            except ValueError:
                continue
            if isinstance(text, str):
                prompts.append(text)
        return prompts

    def store_string(self, string: str) -> None:
        """Append ``string``, redacted; a file that cannot be written is left alone."""
        import json

        line = json.dumps(self.redactor.redact(string), ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
                handle.write(line)
        except OSError:
            pass
