"""Fixtures for tests that start real process trees."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator

import pytest

from skillkit.runtime.process import is_alive

# A shell that ignores SIGTERM, with a child that ignores it too and starts two
# grandchildren: one in the same process group, one in a new session (setsid).
# Every process's pid is printed as "pid N" before "ready".
STUBBORN_TREE = r"""
trap '' TERM
flag=$(mktemp -u)
bash -c '
  trap "" TERM
  sleep 300 & echo "pid $!"
  setsid sleep 300 & echo "pid $!"
  touch "$0"
  wait' "$flag" &
echo "pid $!"
echo "pid $$"
until [ -e "$flag" ]; do sleep 0.01; done
rm -f "$flag"
echo ready
wait
"""


@pytest.fixture
def stubborn_tree() -> str:
    return STUBBORN_TREE


@pytest.fixture
def pids_in() -> Callable[[list[str]], list[int]]:
    def parse(lines: list[str]) -> list[int]:
        return [int(line.split()[1]) for line in lines if line.startswith("pid ")]

    return parse


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Pids a test started; any left running are killed afterwards."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if is_alive(pid):
            os.kill(pid, signal.SIGKILL)
