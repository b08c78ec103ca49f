import os
import signal
import subprocess
import sys
import time
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


def test_tags_add_up_so_nested_calls_keep_every_tag() -> None:
    outer = process.tagged_environment({"PATH": "/bin"}, "skouter")
    inner = process.tagged_environment(outer, "skinner")
    assert outer[process.TAG_VARIABLE] == "skouter"
    assert inner[process.TAG_VARIABLE] == "skouter:skinner" and inner["PATH"] == "/bin"


def test_kill_tagged_finds_an_orphan_in_another_session_and_only_it() -> None:
    tag, other = process.new_tag(), process.new_tag()
    # Each shell starts a double-forked setsid sleeper and prints its pid, then exits.
    script = "setsid bash -c 'sleep 300 >/dev/null 2>&1 & echo $!' </dev/null"
    pids = []
    for t in (tag, other):
        env = process.tagged_environment(os.environ, t)
        out = subprocess.run(
            ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=30
        )
        pids.append(int(out.stdout.split()[0]))
    try:
        # (The shell that started the sleeper may still be exiting: it carries the tag too.)
        assert pids[0] in [pid for pid, _ in process.find_tagged(tag)]
        assert pids[1] not in [pid for pid, _ in process.find_tagged(tag)]
        assert pids[0] in process.kill_tagged(tag)
        assert gone_within(pids[0], 5)
        assert is_alive(pids[1])  # another call's process is left alone
        assert process.find_tagged(tag) == []
    finally:
        for pid in pids:
            if is_alive(pid):
                os.kill(pid, signal.SIGKILL)


def gone_within(pid: int, seconds: float) -> bool:
    for _ in range(int(seconds / 0.01)):
        if not is_alive(pid):
            return True
        time.sleep(0.01)
    return not is_alive(pid)
