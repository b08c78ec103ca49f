import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from skillkit.runtime import process
from skillkit.runtime.process import ProcessTree, is_alive, list_descendants, wait_gone

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="walks /proc")

# A child, and a subshell with a grandchild in the group and one escaped with setsid.
TREE = """
sleep 300 & echo $!
bash -c 'sleep 300 & echo $!; setsid sleep 300 & echo $!; wait' & echo $!
wait
"""


@pytest.fixture(params=[True, False], ids=["children-files", "full-scan"])
def walk_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param and not process._has_children_files():
        pytest.skip("this kernel has no /proc/PID/task/TID/children")
    monkeypatch.setattr(process, "_CHILDREN_FILES", request.param)
    return bool(request.param)


@pytest.fixture
def tree() -> Iterator[tuple[subprocess.Popen[str], list[int]]]:
    shell = subprocess.Popen(
        ["bash", "-c", TREE], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert shell.stdout is not None
    pids = [int(shell.stdout.readline()) for _ in range(4)]
    yield shell, pids
    for pid in [shell.pid, *pids]:
        if is_alive(pid):
            os.kill(pid, signal.SIGKILL)
    shell.wait()


def test_every_descendant_is_found(
    walk_mode: bool, tree: tuple[subprocess.Popen[str], list[int]]
) -> None:
    shell, pids = tree
    found = {pid for pid, _ in list_descendants(shell.pid)}
    assert set(pids) <= found


async def test_signal_reaches_the_group_and_the_escaped_grandchild(
    walk_mode: bool, tree: tuple[subprocess.Popen[str], list[int]]
) -> None:
    shell, pids = tree
    ProcessTree(shell.pid).signal(signal.SIGKILL)
    shell.wait()
    assert await wait_gone(pids, 5) == []


def test_a_zombie_counts_as_gone() -> None:
    child = subprocess.Popen(["true"])
    while True:  # exited but not reaped: a zombie
        with open(f"/proc/{child.pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
    assert not is_alive(child.pid)
    child.wait()
    assert not is_alive(child.pid)
