"""A command cancelled while it is still starting leaves no process behind — neither
the one asyncio made nor what that one had already started."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import uuid

import pytest

from skillkit.runtime.spawn import run_process

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="walks /proc"),
    pytest.mark.timeout(120),
]


def survivors(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return found.stdout.split()


def ignore(stream: int, data: bytes) -> None:
    return None


async def test_cancelled_at_random_moments_of_the_start_no_process_survives() -> None:
    marker = f"skillkit-spawn-cancel-{uuid.uuid4().hex}"
    sleeper = f"{sys.executable} -c 'import time; time.sleep(300)' {marker}"
    script = f"{sleeper} & {sleeper}"  # a grandchild, and the shell waiting on another
    rng = random.Random(7)
    for _ in range(25):
        task = asyncio.ensure_future(run_process(["bash", "-c", script], ignore))
        await asyncio.sleep(rng.uniform(0, 0.03))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    for _ in range(400):  # up to 20 s: a busy machine reaps slowly
        if not survivors(marker):
            break
        await asyncio.sleep(0.05)
    assert survivors(marker) == []
