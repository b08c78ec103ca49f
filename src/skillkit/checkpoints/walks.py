"""The snapshot without a watch: one walk of the workspace (`walk_stats`), compared
with the walk of the last snapshot.

`differences` tells what moved between two walks the way the watch would tell it (a
`Drained`), so git looks only at those paths. `moves_ignored` says whether what the
project ignores may have changed between them (a ``.gitignore`` or a folder came, went
or changed). `trusted` is what of a walk the next snapshot may compare with: an entry
whose times are too recent to show the next change (file-system clocks tick coarsely)
is kept as differing from any walk, so git looks at it again until its times are old
enough.
"""

from __future__ import annotations

import stat

from skillkit.checkpoints.folders import RACY_NS
from skillkit.checkpoints.modes import Stat
from skillkit.checkpoints.watch import Drained

__all__ = ["differences", "moves_ignored", "trusted"]


def differences(before: dict[str, Stat], after: dict[str, Stat]) -> Drained:
    """What moved between two walks (`walk_stats`), as the watch would tell it: the
    paths whose name, times, size, inode or mode differ, whether names came or went,
    and the folders that came or went (or a ``.gitignore``: what is ignored may have
    changed with it)."""
    paths = {path for path, _ in before.items() ^ after.items()}
    out = Drained(changed=bool(paths), paths=paths)
    for path in sorted(paths):
        old, new = before.get(path), after.get(path)
        was = old is not None and stat.S_ISDIR(old[4])
        now = new is not None and stat.S_ISDIR(new[4])
        if old is None or new is None or was != now:
            out.entries_changed = True
            if now:
                out.new_folders.add(path)
            if was:
                out.gone_folders.add(path)
        if was != now:
            out.folders_changed = True
        if path == ".gitignore" or path.endswith("/.gitignore"):
            # what its folder holds for a snapshot may change, all the way down
            folder = path.rpartition("/")[0] or "."
            out.folders_changed = True
            out.paths.add(folder)
            out.new_folders.add(folder)
    return out


def moves_ignored(walked: dict[str, Stat], previous: dict[str, Stat] | None) -> bool:
    """Whether what the project ignores may differ between the ``previous`` walk (None:
    not known) and ``walked``: a ``.gitignore`` or a folder came, went or changed."""
    if previous is None:
        return True
    changed = walked.items() ^ previous.items()
    return any(path.endswith(".gitignore") or stat.S_ISDIR(key[4]) for path, key in changed)


def trusted(walked: dict[str, Stat], started: int) -> dict[str, Stat]:
    """``walked`` (begun at ``started``, in ns) as the next walk is compared with: each
    entry whose times are too recent to show the next change is never the same in the
    next walk, so git looks at it again (and again, until its times are old enough)."""
    recent = started - RACY_NS
    for path, key in walked.items():
        if key[0] >= recent or key[1] >= recent:
            walked[path] = (-1, -1, -1, -1, key[4])
    return walked
