"""``skillkit skills install``: skills alone, fetched from a source and copied into a
skills folder of the project or the home (no plugin, no lock file)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from skillkit.extensions.installer import _NAME, InstallError, Source, git

__all__ = ["SKILL_FOLDERS", "install_skills", "stage_skills"]

SKILL_FOLDERS = {
    "agents": ".agents/skills",
    "claude": ".claude/skills",
    "skillkit": ".skillkit/skills",
}
"""Where ``skillkit skills install --to`` puts skills, under the project or the home."""


def stage_skills(source: Source) -> tuple[Path, list[Path], str, list[Path]]:
    """Fetch ``source`` and find its skills: a folder with ``SKILL.md``, a folder of
    such folders, or its ``skills/``. Returns (temporary root, skill folders, commit,
    temporary paths to remove). Raises `InstallError`."""
    temp = Path(tempfile.mkdtemp(prefix="skillkit-skills-"))
    try:
        commit = ""
        if source.kind == "git":
            checkout = temp / "repo"
            git("clone", "--quiet", "--no-checkout", "--", source.location, str(checkout))
            commit = git(
                "rev-parse", "--verify", f"{source.ref or 'HEAD'}^{{commit}}", cwd=checkout
            )
            commit = commit.strip()
            git("-c", "advice.detachedHead=false", "checkout", "--quiet", commit, cwd=checkout)
            base = checkout / source.path if source.path else checkout
        else:
            base = Path(source.location) / source.path if source.path else Path(source.location)
        if (base / "SKILL.md").is_file():
            found = [base]
        else:
            where = base / "skills" if (base / "skills").is_dir() else base
            found = sorted(p.parent for p in where.glob("*/SKILL.md"))
        if not found:
            raise InstallError(f"{source.text}: no SKILL.md found")
        return base, found, commit, [temp]
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def install_skills(found: list[Path], target: Path) -> list[Path]:
    """Copy each skill folder into ``target/<folder name>`` (replacing one there)."""
    target.mkdir(parents=True, exist_ok=True)
    placed = []
    for folder in found:
        name = folder.name if folder.name != "." else "skill"
        if not _NAME.fullmatch(name):
            raise InstallError(f"skill folder {name!r} cannot be a folder name")
        destination = target / name
        shutil.rmtree(destination, ignore_errors=True)
        shutil.copytree(folder, destination, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        placed.append(destination)
    return placed
