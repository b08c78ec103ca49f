"""The shell-command classifier: which command lines may run unasked, and how risky the
others are.

A command line is **read-only** (`RiskLevel.SAFE`, runs unasked) only when the classifier
understands all of it: the tree-sitter bash grammar parsed it without error or unknown
construct; every word is static (no ``$X``, ``${...}``, ``$(...)``, backticks,
``$((...))``, ``<(...)``, brace expansion, expanding here-document); there are no
variable assignments; every simple command — in lists, pipelines, subshells, groups and
``if``/``while`` bodies alike — is a program on the read-only allowlist
(`skillkit.permissions.readonly`, `skillkit.permissions.git`) used with allowlisted
options; output redirections are absent; and every path it reads (operands, ``<``
redirections, globs expanded against the file system, ``~``) lies inside the workspace
or an additional directory, also after resolving symlinks.

Everything else is at least `RiskLevel.NORMAL` (asks). `RiskLevel.DANGEROUS` marks what a
broad allow rule must never cover: recursive or outside deletes, writes outside the
workspace, force pushes and history rewrites, privilege and disk tools, downloads run
as code, options that make a program run another program (``rg --pre``, ``git -c``,
``env -S``, ``tar -I``...), environment variables that do (``GIT_*``, ``LD_*``,
``PAGER``...), array subscripts evaluated as code, and lines that cannot be parsed.

The verdict lists the paths read and written (``None`` for one that cannot be known
before running) and the directories read recursively, so the gate can apply file deny
rules to shell commands.
"""

from __future__ import annotations

from skillkit.permissions import commands as _c
from skillkit.permissions.shell import parse_script
from skillkit.permissions.shell_paths import ShellPaths
from skillkit.permissions.shell_verdict import RiskLevel, ShellVerdict
from skillkit.permissions.shell_walk import Walker

__all__ = ["RiskLevel", "ShellClassifier", "ShellVerdict"]


class ShellClassifier(ShellPaths):
    """Judges command lines relative to a workspace.

    ``workspace`` is where relative paths start; ``writable`` lists further directories
    that count as workspace (the gate's additional directories). ``home`` expands ``~``.
    `classify` never raises for any text. Where paths lead is `ShellPaths`'s part.
    """

    def classify(self, command_line: str) -> ShellVerdict:
        """Judge ``command_line``. Never raises: an internal failure is a dangerous,
        not-understood verdict."""
        verdict = ShellVerdict()
        try:
            script = parse_script(command_line)
            if _c.FORK_BOMB.search(command_line):
                verdict.raise_to(
                    RiskLevel.DANGEROUS, "fork bomb", "defines a self-replicating function"
                )
            Walker(self, verdict).script(script, (self.workspace,), depth=0)
        except Exception as exc:  # fail closed on anything unforeseen
            verdict.understood = False
            verdict.raise_to(
                RiskLevel.DANGEROUS, "unparseable command", f"cannot judge: {type(exc).__name__}"
            )
        if not verdict.commands and verdict.read_only:
            verdict.reason = "does nothing"
        return verdict
