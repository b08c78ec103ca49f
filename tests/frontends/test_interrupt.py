"""Ctrl-C routed to callbacks: the innermost block gets it, leaving it restores the outer."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable

import pytest

from skillkit.frontends.interrupt import on_interrupt

pytestmark = pytest.mark.timeout(30)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def test_nested_blocks_route_ctrl_c_to_the_innermost_then_back_to_the_outer() -> None:
    calls: list[str] = []
    with on_interrupt(lambda: calls.append("outer")):
        with on_interrupt(lambda: calls.append("inner")):
            os.kill(os.getpid(), signal.SIGINT)
            await until(lambda: calls == ["inner"])
        os.kill(os.getpid(), signal.SIGINT)
        await until(lambda: calls == ["inner", "outer"])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
