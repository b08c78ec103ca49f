"""A paused run kept in a session (not part of the test run).

    python bench/bench_pending_session.py

A session of 1,000 messages (the transcript of ``bench_run_state.py``) whose last turn
waits for approval. Measured, the median of 30 rounds each:

- save: `record_pause` — the pause written as one entry after the transcript the
  session already holds, and forced to disk;
- load: what a new process does to find it — open the session file and
  `pending_run` (the branch read back to the pause, the transcript from the session).

Floors, measured in the same run: ``RunState.to_json`` / ``from_json`` of the same
paused run (the state saved without a session), and opening the session alone.

Target: save <= 20 ms and load <= 20 ms.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_run_state import transcript

from skillkit.frontends.session_runs import pending_run, record_pause
from skillkit.models import PendingApproval, RunState
from skillkit.session import SessionStore


def median_ms(fn: Callable[[], object], rounds: int = 30) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def main() -> None:
    messages = transcript(1000)
    pending = [PendingApproval(call_id="last", tool="deploy", args={"target": "prod"})]
    with tempfile.TemporaryDirectory() as home:
        store = SessionStore(home)
        session = store.create(home)
        for message in messages:
            session.append_message(message)
        held = session.context(close_open_calls=False)
        state = RunState(messages=held, pending=pending, iterations=400)
        saved = state.to_json()
        floor_save = median_ms(state.to_json)
        floor_load = median_ms(lambda: RunState.from_json(saved))
        save = median_ms(lambda: record_pause(session, state))
        session_id = session.id
        session.close()

        def open_only() -> object:
            opened = store.open(session_id, write=False)
            return opened.branch()

        def load() -> RunState | None:
            return pending_run(store.open(session_id, write=False))

        found = load()
        assert found is not None and found.pending == pending
        assert len(found.messages) == len(messages)
        floor_open = median_ms(open_only)
        loaded = median_ms(load)
    print(f"paused run: {len(messages)} messages ({len(saved) / 1024:.0f} KiB as RunState JSON)")
    print(f"floor RunState.to_json:     {floor_save:7.2f} ms")
    print(f"floor RunState.from_json:   {floor_load:7.2f} ms")
    print(f"floor open the session:     {floor_open:7.2f} ms")
    print(f"save: record_pause (fsync): {save:7.2f} ms   target <= 20 ms")
    print(f"load: open + pending_run:   {loaded:7.2f} ms   target <= 20 ms")


if __name__ == "__main__":
    main()
