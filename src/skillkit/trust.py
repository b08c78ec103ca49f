"""Project trust: whether what a project ships may act with the user's rights.

A project folder — possibly a repository just cloned — can carry things that would
otherwise act for the user: its own plugin files (``.skillkit/plugins/*.py``, Python
code) and its own settings (``.skillkit/settings.json`` and ``settings.local.json``,
which could grant permissions). Both count only in a project the user trusts, and one
decision covers both. The decision, first match wins:

1. the caller's explicit setting (``trusted=True/False``: an SDK argument or a
   command-line flag);
2. the environment variable ``SKILLKIT_TRUST_PROJECT``: ``1``/``true``/``yes`` trusts the
   project, ``0``/``false``/``no`` refuses it (for CI and scripts);
3. the trust store: projects the user trusted before (``skillkit plugins trust``, or
   answering yes to the terminal's prompt), kept in ``~/.skillkit/trusted-projects.json``;
4. a frontend's prompt (``ask``), if the caller offers one; a yes is remembered;
5. otherwise the project is not trusted.

Trust is per project folder (its resolved path), not per file: files added to a trusted
project later (e.g. by ``git pull``) count too. Revoke with ``skillkit plugins untrust``.

This module sits below every other layer (it imports nothing from SkillKit but the
bounded JSON loader), so the permission layer and the plugin manager share it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from skillkit import safejson

__all__ = [
    "TRUST_ENV",
    "AskTrust",
    "TrustStore",
    "decide_trust",
    "default_trust_file",
    "settled_trust",
]

TRUST_ENV = "SKILLKIT_TRUST_PROJECT"
"""The environment variable that trusts (``1``) or refuses (``0``) the project."""

AskTrust = Callable[[Path, Sequence[Path]], bool]
"""``ask(project_dir, files) -> bool``: a frontend's trust prompt."""

_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off"})


def default_trust_file() -> Path:
    """``~/.skillkit/trusted-projects.json`` (the home directory as of this call)."""
    return Path.home() / ".skillkit" / "trusted-projects.json"


class TrustStore:
    """The project folders the user trusts, kept in a small JSON file.

    A missing, unreadable or malformed file means nothing is trusted (never an error).
    Writes replace the file atomically.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_trust_file()

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            data = safejson.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {str(k): v if isinstance(v, dict) else {} for k, v in projects.items()}

    def _write(self, projects: Mapping[str, Mapping[str, object]]) -> None:
        import json

        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": 1, "projects": projects}, indent=2, sort_keys=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trusted-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text + "\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def is_trusted(self, project: str | os.PathLike[str]) -> bool:
        return _key(project) in self._read()

    def trust(self, project: str | os.PathLike[str]) -> None:
        projects = self._read()
        projects[_key(project)] = {"trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self._write(projects)

    def untrust(self, project: str | os.PathLike[str]) -> bool:
        """Forget ``project``; returns whether it was trusted."""
        projects = self._read()
        if projects.pop(_key(project), None) is None:
            return False
        self._write(projects)
        return True

    def projects(self) -> list[Path]:
        return [Path(p) for p in sorted(self._read())]


def _key(project: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(project)))


def settled_trust(
    project: str | os.PathLike[str],
    *,
    trusted: bool | None = None,
    store: TrustStore | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[bool | None, str]:
    """Steps 1–3 of the decision (no prompt): True/False and why, or ``(None, why)``
    when nothing settles it. Never raises."""
    if trusted is not None:
        return trusted, "set by the caller"
    env = (environ if environ is not None else os.environ).get(TRUST_ENV, "").strip().lower()
    if env in _YES:
        return True, f"{TRUST_ENV}={env}"
    if env in _NO:
        return False, f"refused by {TRUST_ENV}={env}"
    store = store if store is not None else TrustStore()
    if store.is_trusted(project):
        return True, f"trusted in {store.path}"
    return None, "the project is not trusted (run `skillkit plugins trust` to allow it)"


def decide_trust(
    project: str | os.PathLike[str],
    files: Sequence[Path],
    *,
    trusted: bool | None = None,
    store: TrustStore | None = None,
    ask: AskTrust | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[bool, str]:
    """Whether ``project`` is trusted, and why (in words), following the order in the
    module docs; ``files`` are what the prompt lists. A prompt that raises counts as a no."""
    store = store if store is not None else TrustStore()
    settled, why = settled_trust(project, trusted=trusted, store=store, environ=environ)
    if settled is not None:
        return settled, why
    if ask is not None:
        try:
            answer = bool(ask(Path(_key(project)), list(files)))
        except Exception:
            answer = False
        if answer:
            store.trust(project)
            return True, "trusted at the prompt"
        return False, "not trusted at the prompt"
    return False, why
