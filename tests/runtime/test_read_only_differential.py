"""The differential property: whatever the classifier lets run unasked, the read-only
sandbox holds to it — and so does it for any invocation its allowlist tables describe.

Every command of the classifier's unasked corpus (the read-only rows of its table that
it still judges read-only), the findings that slipped past it, and commands generated
from its allowlist (`skillkit.permissions.readonly.PROGRAMS`, with the options each
program accepts) run inside the read-only sandbox over a workspace with ``.git/`` and
``.skillkit/`` and a HOME holding a canary ``~/.ssh/id_rsa``. Afterwards the workspace,
HOME and a sample of ``/`` are byte-identical (contents, modes, mtimes, the set of
entries), and the canary never appears in the output.

Examples: ``SKILLKIT_DIFFERENTIAL_EXAMPLES`` (default 60, the CI profile; the whole run
stays well under a minute on two cores).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillkit.confinement import READ_ONLY
from skillkit.permissions.classifier import RiskLevel, ShellClassifier
from skillkit.permissions.readonly import PROGRAMS, Program
from skillkit.runtime import BashRuntime
from skillkit.runtime.sandbox import Bubblewrap, Sandbox, default_masked_paths, find_bubblewrap
from tests.conftest import host_folder_outside_tmp
from tests.permissions.test_classifier import TABLE

FOUND = find_bubblewrap()
pytestmark = pytest.mark.skipif(
    not isinstance(FOUND, Bubblewrap), reason=f"no usable bubblewrap: {FOUND}"
)

CANARY = "canary-differential-93c1e0"
EXAMPLES = int(os.environ.get("SKILLKIT_DIFFERENTIAL_EXAMPLES", "60"))
TIMEOUT = 3.0

FINDINGS = [
    "env time --output=.git/config cat notes.txt",
    "env time --format=x --output=.skillkit/plugins/evil.py cat notes.txt",
    "env time -o .mcp.json cat notes.txt",
    "cat ~/.ssh/id_rsa",
    'cat ~/".ssh/id_rsa"',
    "grep -r KEY ~",
    "python3 -c 'print(open(\"'$HOME'/.ssh/id_rsa\").read())'",
    "xxd notes.txt notes.bin",
    "git branch evil-branch",
    "git -c core.hooksPath=/x status",
    "touch new.txt",
    "sed -i s/notes/evil/ notes.txt",
    "echo evil >> .git/hooks/post-checkout",
    "mkdir -p .skillkit/plugins && echo x > .skillkit/plugins/x.py",
    "mv .git .git-old",
    "rm -rf .skillkit",
    "tar -cf archive.tar notes.txt",
    "sort -o notes.txt notes.txt",
    "tee .envrc < notes.txt",
    "cp notes.txt ~/copied.txt",
    "ln -s /etc/passwd link",
    "chmod 000 notes.txt",
    "truncate -s 0 notes.txt",
    "date -s 2000-01-01",
    "find . -name notes.txt -delete",
]
"""Commands that were (or could be) misjudged: the kernel must hold them all."""


def unasked_corpus() -> list[str]:
    """The read-only rows of the classifier's table it still lets run unasked."""
    classifier = ShellClassifier("/work/project", home="/home/dev")
    rows = [command for command, level, _ in TABLE if level is RiskLevel.SAFE]
    return [command for command in rows if classifier.classify(command).read_only]


# --------------------------------------------------------------------------- snapshots


def snapshot(root: Path) -> dict[str, tuple[int, int, int, str]]:
    """Every entry below ``root``: (mode, size, mtime, sha256 of a file or a link's
    target). The root's own mtime counts too (an entry made and removed changes it)."""
    found: dict[str, tuple[int, int, int, str]] = {}
    info = os.lstat(root)
    found["."] = (info.st_mode, 0, info.st_mtime_ns, "")
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            digest = ""
            if stat.S_ISREG(info.st_mode) and os.access(path, os.R_OK):
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            elif stat.S_ISLNK(info.st_mode):
                digest = os.readlink(path)
            size = 0 if stat.S_ISDIR(info.st_mode) else info.st_size
            found[os.path.relpath(path, root)] = (info.st_mode, size, info.st_mtime_ns, digest)
    return found


ROOT_SAMPLE = [Path("/etc"), Path("/usr/bin"), Path("/usr/lib"), Path("/opt"), Path("/root")]


def root_sample() -> dict[str, tuple[int, int]]:
    """A sample of ``/``: the entries of a few system folders (names, modes, mtimes)."""
    found: dict[str, tuple[int, int]] = {}
    for folder in ROOT_SAMPLE:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[entry.path] = (info.st_mode, info.st_mtime_ns)
    return found


# --------------------------------------------------------------------------- the scene


@dataclass
class Scene:
    workspace: Path
    home: Path
    runtime: BashRuntime

    def run(self, command: str) -> str:
        result = asyncio.run(
            self.runtime.execute(
                command,
                self.workspace,
                {"HOME": str(self.home)},
                TIMEOUT,
                confinement=READ_ONLY,
            )
        )
        return result.output

    def check(self, command: str, before: dict[str, dict[str, tuple[int, int, int, str]]]) -> None:
        output = self.run(command)
        assert CANARY not in output, command
        after = {"workspace": snapshot(self.workspace), "home": snapshot(self.home)}
        for name, entries in before.items():
            assert after[name] == entries, f"{command!r} changed the {name}"

    def snapshots(self) -> dict[str, dict[str, tuple[int, int, int, str]]]:
        return {"workspace": snapshot(self.workspace), "home": snapshot(self.home)}


@contextmanager
def scene() -> Iterator[Scene]:
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        base = host_folder_outside_tmp()
    folder = Path(tempfile.mkdtemp(prefix="skillkit-differential-", dir=base))
    try:
        workspace = folder / "ws"
        (workspace / "src").mkdir(parents=True)
        (workspace / "notes.txt").write_text("notes\nKEY=value\n")
        (workspace / "src" / "app.py").write_text("print('hello')\n")
        (workspace / "README.md").write_text("# install\n")
        (workspace / "package.json").write_text('{"dependencies": {}}\n')
        (workspace / "access.log").write_text("1.2.3.4 GET /\n")
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        (workspace / ".skillkit" / "plugins").mkdir(parents=True)
        (workspace / ".skillkit" / "settings.json").write_text("{}\n")
        (workspace / ".mcp.json").write_text("{}\n")
        home = folder / "home"
        (home / ".ssh").mkdir(parents=True)
        (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{CANARY}\n")
        (home / ".bashrc").write_text("# rc\n")
        sandbox = Sandbox(workspace=workspace, masked_paths=default_masked_paths(home))
        runtime = BashRuntime(sandbox=sandbox)
        yield Scene(workspace, home, runtime)
        asyncio.run(runtime.aclose())
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", str(folder)], check=False)
        shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------- the tests


def test_the_unasked_corpus_and_the_findings_change_nothing() -> None:
    corpus = unasked_corpus()
    assert len(corpus) >= 10  # the table's read-only rows are there to be run
    system = root_sample()
    with scene() as here:
        before = here.snapshots()
        for command in [*corpus, *FINDINGS]:
            here.check(command, before)
    assert root_sample() == system


def _invocation(name: str, program: Program) -> st.SearchStrategy[str]:
    options = sorted(program.flags | program.valued | program.optional)
    chosen = st.lists(st.sampled_from(options), max_size=3) if options else st.just([])
    operands: dict[str, list[list[str]]] = {
        "paths": [[], ["notes.txt"], [".git/config"], ["~/.ssh/id_rsa"], ["src", "notes.txt"]],
        "pattern": [["KEY", "notes.txt"], ["KEY", "-r", "."], ["canary", "~/.ssh"]],
        "text": [["hello"], []],
        "none": [[]],
        "format": [["%s"], ["x"]],
    }
    values = ["1", "notes.txt", ".git/config", "~/.ssh/id_rsa", "/tmp/out"]

    def build(picked: list[str], value: str, tail: list[str]) -> str:
        words = [name]
        for option in picked:
            if option in program.valued:
                words += [option, value]
            elif option in program.optional:
                words.append(f"{option}={value}" if option.startswith("--") else option)
            else:
                words.append(option)
        return " ".join([*words, *tail])

    return st.builds(
        build,
        chosen,
        st.sampled_from(values),
        st.sampled_from(operands.get(program.operands, [[]])),
    )


GENERATED = st.sampled_from(sorted(PROGRAMS)).flatmap(
    lambda name: _invocation(name, PROGRAMS[name])
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
@given(commands=st.lists(GENERATED, min_size=1, max_size=4))
def test_invocations_generated_from_the_allowlist_change_nothing(commands: list[str]) -> None:
    with scene() as here:
        before = here.snapshots()
        for command in commands:
            here.check(command, before)
