"""The scan behind a registry: searching the sources, reading each skill file through
a cache (re-read only when its size or time changed, or when asked; bytes equal to the
cached ones keep the cached outcome), keeping a broken file's last good version, and
choosing the winner among same-named skills.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass

from skillkit.skills.diagnostics import Diagnostic, SkillError
from skillkit.skills.discovery import SKILL_FILE_NAMES, discover
from skillkit.skills.loader import parse_skill_bytes
from skillkit.skills.skill import Skill
from skillkit.skills.snapshot import Shadowed
from skillkit.skills.sources import SkillSource

__all__ = ["Scan", "SkillScanner"]


@dataclass(frozen=True, slots=True)
class Scan:
    """What one scan found: the winning skill of each name with its source, the
    skills they shadow, and every diagnostic (folders left out, errors, warnings)."""

    winners: dict[str, tuple[Skill, SkillSource]]
    shadowed: tuple[Shadowed, ...]
    diagnostics: tuple[Diagnostic, ...]


class SkillScanner:
    """The files found by the last search and what each parsed to. Not thread-safe:
    the registry calls it under its lock."""

    def __init__(self) -> None:
        # location -> ((mtime, size), digest of the bytes, what they parsed to)
        self.cache: dict[str, tuple[tuple[int, int], bytes, Skill | SkillError]] = {}
        self.last_good: dict[str, Skill] = {}
        self.found: list[tuple[SkillSource, str]] = []
        self.left_out: list[Diagnostic] = []
        self.linked: list[str] = []

    def touched(self, paths: list[str]) -> tuple[bool, set[str]]:
        """The skills holding ``paths``: (whether a path is not an edit inside a known
        skill, so the sources must be rescanned; the skill files to re-read)."""
        folders = {os.path.dirname(loc): loc for _, loc in self.found}
        structural = False
        forgotten: set[str] = set()
        for path in paths:
            probe = path
            while True:
                location = folders.get(probe)
                if location is not None:
                    forgotten.add(location)
                    if path != location:  # a companion file: the skill's listing changed
                        self.cache.pop(location, None)
                    if path == location and not os.path.exists(path):
                        structural = True
                    if path != location and os.path.basename(path) in SKILL_FILE_NAMES:
                        structural = True  # a skill file inside a skill: a nested skill
                    if path == probe and not os.path.isdir(path):
                        structural = True  # the skill folder itself went away
                    break
                parent = os.path.dirname(probe)
                if parent == probe:
                    structural = True
                    break
                probe = parent
        return structural, forgotten

    def discover(
        self, sources: Iterable[SkillSource], max_depth: int
    ) -> list[tuple[SkillSource, str]]:
        """Every skill file in ``sources``, each real file once (the first source reaching
        it keeps it); records the folders left out and those reached through symlinks."""
        found: list[tuple[SkillSource, str]] = []
        seen: set[str] = set()
        left_out: list[Diagnostic] = []
        linked: list[str] = []
        for source in sources:
            result = discover(source.path, max_depth)
            left_out.extend(result.left_out)
            inside = os.path.join(os.path.realpath(source.path), "")
            for location, real in result.found:
                if real in seen:
                    continue
                seen.add(real)
                found.append((source, location))
                if real != location and not real.startswith(inside):
                    linked.append(os.path.dirname(real))
        self.left_out = left_out
        self.linked = linked
        return found

    def _parse(
        self, location: str, diagnostics: list[Diagnostic], *, reread: bool = False
    ) -> Skill | None:
        """The skill at ``location``: re-read when its size or time changed (or always
        with ``reread``); bytes equal to the cached ones keep the cached outcome."""
        try:
            status = os.stat(location)
        except OSError:
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        cached = self.cache.get(location)
        if cached is not None and cached[0] == stamp and not reread:
            outcome = cached[2]
        else:
            digest, outcome = self._read(location, cached)
            self.cache[location] = (stamp, digest, outcome)
        return self._outcome(location, outcome, diagnostics)

    def _outcome(
        self, location: str, outcome: Skill | SkillError, diagnostics: list[Diagnostic]
    ) -> Skill | None:
        """The skill to use for ``location``: a broken file keeps its last good version."""
        if isinstance(outcome, Skill):
            self.last_good[location] = outcome
            return outcome
        diagnostics.extend(outcome.errors)
        previous = self.last_good.get(location)
        if previous is not None:
            diagnostics.append(
                Diagnostic(location, "file", "broken edit; keeping the last good version", "error")
            )
        return previous

    @staticmethod
    def _read(
        location: str, cached: tuple[tuple[int, int], bytes, Skill | SkillError] | None
    ) -> tuple[bytes, Skill | SkillError]:
        try:
            with open(location, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            error = SkillError([Diagnostic(location, "file", f"cannot be read ({reason})")])
            return b"", error
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if cached is not None and cached[1] == digest:
            return digest, cached[2]
        try:
            return digest, parse_skill_bytes(data, os.path.abspath(location))
        except SkillError as exc:
            return digest, exc

    def scan(
        self,
        sources: Iterable[SkillSource],
        max_depth: int,
        *,
        rescan: bool = True,
        reread: bool = False,
        touched: set[str] | frozenset[str] = frozenset(),
        only_touched: bool = False,
    ) -> Scan:
        """Search ``sources`` (when ``rescan``, or never searched yet) and parse what was
        found, in precedence order: the first skill of each name wins. Skill files in
        ``touched`` (and all with ``reread``) are read again; with ``only_touched`` (an
        edit the watcher reported) the others are taken from the cache unchecked, else
        re-read when their size or time changed."""
        diagnostics: list[Diagnostic] = []
        if rescan or not self.found:
            self.found = self.discover(sources, max_depth)
        diagnostics.extend(self.left_out)
        found = self.found
        winners: dict[str, tuple[Skill, SkillSource]] = {}
        shadowed: list[Shadowed] = []
        live_keys = set()
        for source, location in found:
            live_keys.add(location)
            if only_touched and location not in touched and location in self.cache:
                skill = self._outcome(location, self.cache[location][2], diagnostics)
            else:
                skill = self._parse(location, diagnostics, reread=reread or location in touched)
            if skill is None:
                continue
            diagnostics.extend(skill.warnings)
            if skill.name in winners:
                winner = winners[skill.name][0].location
                shadowed.append(Shadowed(skill, source, winner))
                diagnostics.append(
                    Diagnostic(
                        str(location),
                        "name",
                        f"skill '{skill.name}' is shadowed by {winner}",
                        "warning",
                    )
                )
                continue
            winners[skill.name] = (skill, source)
        for key in list(self.cache):
            if key not in live_keys:
                del self.cache[key]
                self.last_good.pop(key, None)
        return Scan(winners, tuple(shadowed), tuple(diagnostics))
