"""Session benchmark: resume, list and append, each against a plain floor measured in
the same run.

Run: python bench/bench_sessions.py [--mb 100] [--sessions 10000] [--turns 2000]

- resume: open a ``--mb`` MB session and build the context a runner resumes from
  (`SessionStore.open` + `Session.context`); floor: read the same file and
  ``json.loads`` each line. Target: <= 1 s for 100 MB. ``tree``: what ``/tree`` draws
  of that session.
- list: `SessionStore.list` over ``--sessions`` sessions of one folder with the index
  warm (and the cold first listing that builds it); floor: ``os.scandir`` + ``stat`` of
  the same files. Target: <= 300 ms for 10,000. ``pick``: what ``skillkit -r`` does
  before it draws (the listing, the picker's rows and one filter).
- append: the cost a session adds to a turn — the same scripted runner (each turn a whole
  run, over a transcript growing to ``2 * --turns`` messages) with and without a
  recording session (and, for scale, with a do-nothing sink); and one
  `Session.append_message` against a bare ``os.write`` of the same line. Target:
  <= 50 µs per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter
from skillkit.events import Discard
from skillkit.frontends.session_picker import PickerState, session_rows
from skillkit.models import (
    AssistantMessage,
    LLMRequest,
    TextPart,
    TokenUsage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.secrets import Redactor
from skillkit.session import SessionHeader, SessionStore, tree_lines
from skillkit.session.format import MessageEntry, encode_line

OUTPUT = ("def handler(event):\n    return process(event)  # some code here\n" * 60)[:3000]


def turn_messages(number: int) -> list[object]:
    return [
        UserMessage(content=f"Step {number}: read the next file and tell me what it does."),
        AssistantMessage(
            content=[
                TextPart("Reading it."),
                ToolCall(f"c{number}", "read", {"path": f"f{number}.py"}),
            ],
            stop_reason="tool_use",
            usage=TokenUsage(input=1200, output=40),
            provider="openai",
            model="gpt-4o",
        ),
        ToolResultMessage(f"c{number}", "read", [TextPart(OUTPUT)]),
        AssistantMessage(
            content=[TextPart("It handles events by passing them to process().")],
            usage=TokenUsage(input=2100, output=20),
            provider="openai",
            model="gpt-4o",
        ),
    ]


def write_big_session(store: SessionStore, cwd: Path, megabytes: int) -> Path:
    session = store.create(cwd)
    target = megabytes * 1024 * 1024
    number = 0
    while session.size < target:
        for message in turn_messages(number):
            session.append_message(message)  # type: ignore[arg-type]
        number += 1
    session.close()
    return session.path


def bench_resume(store: SessionStore, cwd: Path, megabytes: int) -> None:
    path = write_big_session(store, cwd, megabytes)
    size = path.stat().st_size

    def floor() -> float:
        started = time.perf_counter()
        with open(path, "rb") as handle:
            for line in handle:
                json.loads(line)
        return time.perf_counter() - started

    def resume() -> tuple[float, int]:
        started = time.perf_counter()
        session = store.open(path)
        messages = session.context()
        session.close()
        return time.perf_counter() - started, len(messages)

    def tree() -> float:  # what `/tree` draws (the newest 200 lines of the whole tree)
        session = store.open(path, write=False)
        started = time.perf_counter()
        tree_lines(session)
        return time.perf_counter() - started

    floor_s = min(floor() for _ in range(3))
    tree_s = min(tree() for _ in range(3))
    runs = [resume() for _ in range(3)]
    resume_s = min(t for t, _ in runs)
    print(
        f"resume  {size / 1e6:7.1f} MB, {runs[0][1]} messages: {resume_s * 1000:7.1f} ms "
        f"(floor json.loads per line {floor_s * 1000:7.1f} ms, ratio {resume_s / floor_s:4.2f})"
        f"  target <= 1000 ms: {'ok' if resume_s <= 1.0 else 'MISSED'}"
    )
    print(f"tree    the same session's /tree: {tree_s * 1000:7.1f} ms")


def bench_list(store: SessionStore, cwd: Path, count: int) -> None:
    folder = store.folder(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for number in range(count):
        session_id = f"{number:016x}"
        header = SessionHeader(id=session_id, cwd=str(cwd), created=now - count + number)
        lines = [encode_line(header)]
        parent = None
        for index, message in enumerate(turn_messages(number)[:2] + turn_messages(number)[3:]):
            entry = MessageEntry(
                id=f"{index:08x}",
                parent_id=parent,
                time=now - count + number,
                message=message,  # type: ignore[arg-type]
            )
            parent = entry.id
            lines.append(encode_line(entry))
        (folder / f"s_{session_id}.jsonl").write_bytes(b"".join(lines))

    def floor() -> float:
        started = time.perf_counter()
        for item in os.scandir(folder):
            if item.name.endswith(".jsonl"):
                item.stat()
        return time.perf_counter() - started

    started = time.perf_counter()
    infos = store.list(cwd)
    cold = time.perf_counter() - started
    assert len(infos) == count
    warm = []
    for _ in range(5):
        started = time.perf_counter()
        infos = store.list(cwd)
        warm.append(time.perf_counter() - started)
    warm_s = statistics.median(warm)
    floor_s = statistics.median(floor() for _ in range(5))
    print(
        f"list    {count} sessions: warm {warm_s * 1000:7.1f} ms, cold (index built) "
        f"{cold * 1000:7.1f} ms (floor scandir+stat {floor_s * 1000:6.1f} ms, ratio "
        f"{warm_s / floor_s:4.2f})  target <= 300 ms: {'ok' if warm_s <= 0.3 else 'MISSED'}"
    )

    def pick() -> float:  # what `skillkit -r` does before it draws: rows, then a filter
        started = time.perf_counter()
        state = PickerState(session_rows(store.list(cwd)))
        state.set_query("step 42")
        assert state.visible
        return time.perf_counter() - started

    pick_s = statistics.median(pick() for _ in range(5))
    print(
        f"pick    {count} sessions (list + picker rows + one filter): {pick_s * 1000:7.1f} ms"
        f"  target <= 300 ms: {'ok' if pick_s <= 0.3 else 'MISSED'}"
    )


async def run_turns(turns: int, session: object | None, *, sink: bool = False) -> float:
    def reply(request: LLMRequest) -> str:
        return "It handles events by passing them to process()."

    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply, chunk_size=4096, model="scripted"),
        contributors=[session] if session is not None else [],  # type: ignore[list-item]
        sinks=[Discard] if sink else [],
        redactor=Redactor.from_environment(),
    )
    for number in range(20):  # warm up, and a transcript of a realistic length
        await agent.chat(f"warm-up {number}")
    started = time.perf_counter()
    for number in range(turns):
        await agent.chat(f"Step {number}: what does the next file do?")
    elapsed = time.perf_counter() - started
    await agent.aclose()
    return elapsed / turns


def bench_append(store: SessionStore, cwd: Path, turns: int) -> None:
    bare, quiet_sink, recorded = [], [], []
    for _ in range(5):
        bare.append(asyncio.run(run_turns(turns, None)))
        quiet_sink.append(asyncio.run(run_turns(turns, None, sink=True)))
        recorded.append(asyncio.run(run_turns(turns, store.create(cwd))))
    base, with_sink, with_session = min(bare), min(quiet_sink), min(recorded)
    added = (with_session - base) * 1e6
    print(
        f"append  per turn (one run: user + assistant entries): without a session "
        f"{base * 1e6:6.1f} µs, with one {with_session * 1e6:6.1f} µs: adds {added:5.1f} µs"
        f"  target <= 50 µs: {'ok' if added <= 50 else 'MISSED'}"
    )
    print(
        f"        (for scale: a do-nothing sink, which makes the run build every event, "
        f"{with_sink * 1e6:6.1f} µs)"
    )
    session = store.create(cwd)
    message = turn_messages(1)[3]
    line = encode_line(MessageEntry(id="00000000", parent_id=None, time=0.0, message=message))  # type: ignore[arg-type]
    session.redactor = Redactor.from_environment()
    rounds = 20000
    started = time.perf_counter()
    for _ in range(rounds):
        session.append_message(message)  # type: ignore[arg-type]
    entry_us = (time.perf_counter() - started) / rounds * 1e6
    session.close()
    fd = os.open(cwd / "floor.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    started = time.perf_counter()
    for _ in range(rounds):
        os.write(fd, line)
    floor_us = (time.perf_counter() - started) / rounds * 1e6
    os.close(fd)
    print(
        f"append  one entry: {entry_us:5.1f} µs (floor bare os.write of the line "
        f"{floor_us:4.1f} µs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = SessionStore(root / "home", fsync="run")
        (root / "big").mkdir()
        (root / "many").mkdir()
        (root / "turns").mkdir()
        bench_append(store, root / "turns", args.turns)
        bench_list(store, root / "many", args.sessions)
        bench_resume(store, root / "big", args.mb)


if __name__ == "__main__":
    main()
