"""Checkpoint benchmark: snapshot, no-change turn, restore and store size, each against a
floor measured in the same run.

Run: python bench/bench_checkpoints.py [--files 10000] [--mb 200] [--turns 100]

- snapshot: a checkpoint (`SnapshotStore.snapshot`) of a ``--files`` file, ``--mb`` MB
  workspace after 10 files changed (incremental; the first one is reported too), with
  the kernel's change watch (the default) and without it (``watch=False``: git walks);
  floor: ``os.walk`` + ``lstat`` of every file and reading the 10 changed ones (what a
  store that walks must do at least). Target: <= 100 ms.
- no-change turn: the same scripted turn (one ``bash`` call that changes nothing, in that
  workspace) with and without the `Checkpoints` contributor (runs alternate, medians of
  many turns), and a turn whose tools are all read-only; the bash turn again with a
  store that has no watch (``watch=False``). Target: <= 5 % added. The bash turn takes
  two snapshots; with the watch each is a read of the kernel's queue, without it each
  is one walk of the workspace compared with the last (floor printed: that walk). The
  snapshot after a call runs while the model answers, so the bash turns are measured
  twice: with the scripted model answering at once (the walk after the call is all
  waited for at the run's end) and with a model that takes ``--model-ms`` (default 100)
  to answer each request, floor the same turn without checkpoints.
- restore: `SnapshotStore.restore` of 10 changed files; floor: writing the same 10
  files' bytes. Target: <= 100 ms.
- store size: ``--turns`` turns each editing N lines (1, 3, 5, 10, 30) of one text file,
  then `SnapshotStore.compact`; growth of the store (every file in its folder) against
  the changed bytes: the bytes of the new lines the edits wrote (the lines they replaced
  are not counted). Target: <= 2x. After compact git holds the newest snapshot and the
  journal every other one as the lines that differ.
- restore of a journalled snapshot: after compact, a restore of the snapshot ten turns
  back (its objects are written back from the journal first). Target: <= 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.checkpoints import Checkpoints, SnapshotStore
from skillkit.models import LLMRequest, ToolResultMessage
from skillkit.tools.builtin import builtin_tools


def make_workspace(root: Path, files: int, total_mb: int) -> list[Path]:
    size = total_mb * 1024 * 1024 // files
    rng = random.Random(7)
    paths = []
    for index in range(files):
        folder = root / f"pkg{index // 100:03d}"
        folder.mkdir(exist_ok=True)
        path = folder / f"module{index:05d}.py"
        path.write_bytes(rng.randbytes(size // 2).hex().encode()[:size])
        paths.append(path)
    return paths


def change(paths: list[Path], count: int, rng: random.Random) -> list[Path]:
    chosen = rng.sample(paths, count)
    for path in chosen:
        with open(path, "r+b") as out:
            out.seek(rng.randrange(1000))
            out.write(os.urandom(8).hex().encode())
    return chosen


def bench_snapshot(root: Path, paths: list[Path], store: SnapshotStore, label: str) -> None:
    started = time.perf_counter()
    store.snapshot()
    first = time.perf_counter() - started
    rng = random.Random(1)
    times, floors = [], []
    for _ in range(7):
        changed = change(paths, 10, rng)
        started = time.perf_counter()
        store.snapshot()
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        for folder, _, names in os.walk(root):
            for name in names:
                os.lstat(os.path.join(folder, name))
        for path in changed:
            path.read_bytes()
        floors.append(time.perf_counter() - started)
    took, floor = statistics.median(times), statistics.median(floors)
    print(
        f"snapshot ({label}), 10 of {len(paths)} files changed: {took * 1000:7.1f} ms "
        f"(floor walk+lstat {floor * 1000:6.1f} ms, ratio {took / floor:4.2f}); "
        f"first snapshot {first:5.2f} s   target <= 100 ms: {'ok' if took <= 0.1 else 'MISSED'}"
    )


def bench_restore_journalled(paths: list[Path], store: SnapshotStore) -> None:
    """Restore of a snapshot only the journal holds (after `SnapshotStore.compact`): its
    objects are written back from the newest snapshot's tree and the journal's records
    first. Floor: writing the bytes of the files that differ."""
    rng = random.Random(4)
    times, floors, compacts = [], [], []
    for _ in range(3):
        base = store.snapshot()
        touched: set[Path] = set()
        for _ in range(10):  # ten turns of one changed file after it
            touched.update(change(paths, 1, rng))
            store.snapshot()
        started = time.perf_counter()
        store.compact()
        compacts.append(time.perf_counter() - started)
        started = time.perf_counter()
        store.restore(base.id)
        times.append(time.perf_counter() - started)
        contents = [(path, path.read_bytes()) for path in touched]
        started = time.perf_counter()
        for path, data in contents:
            path.write_bytes(data)
        floors.append(time.perf_counter() - started)
        store.snapshot()
    took, floor = statistics.median(times), statistics.median(floors)
    print(
        f"restore of a journalled snapshot 10 turns back ({len(touched)} files): "
        f"{took * 1000:7.1f} ms (floor write {floor * 1000:6.2f} ms; compact before it "
        f"{statistics.median(compacts):5.2f} s)   target <= 100 ms: "
        f"{'ok' if took <= 0.1 else 'MISSED'}"
    )


def bench_restore(paths: list[Path], store: SnapshotStore) -> None:
    rng = random.Random(2)
    times, floors = [], []
    for _ in range(7):
        base = store.snapshot()
        changed = change(paths, 10, rng)
        contents = [p.read_bytes() for p in changed]
        store.snapshot()
        started = time.perf_counter()
        store.restore(base.id)
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        for path, data in zip(changed, contents, strict=True):
            path.write_bytes(data)
        floors.append(time.perf_counter() - started)
        store.restore(base.id)
    took, floor = statistics.median(times), statistics.median(floors)
    print(
        f"restore of 10 files: {took * 1000:7.1f} ms (floor write {floor * 1000:6.2f} ms)   "
        f"target <= 100 ms: {'ok' if took <= 0.1 else 'MISSED'}"
    )


async def _turns(
    root: Path, store: SnapshotStore | None, tool: str, count: int, delay: float = 0.0
) -> list[float]:
    async def reply(request: LLMRequest) -> Reply:
        if delay:
            await asyncio.sleep(delay)  # the model thinking
        if isinstance(request.messages[-1], ToolResultMessage):
            return Reply(text="nothing to change")
        if tool == "bash":
            return Reply(tool_calls=[("bash", {"command": "true"})])
        return Reply(tool_calls=[("read", {"path": "pkg000/module00000.py", "limit": 5})])

    contributors: list[Any] = [Checkpoints(store)] if store is not None else []
    agent = AgentRunner(
        AgentConfig(model="scripted"),
        adapter=FunctionAdapter(reply, model="scripted"),
        tools=builtin_tools(root, allow_writes=True),
        contributors=contributors,
    )
    await agent.chat("warm up")
    times = []
    for _ in range(count):
        agent.replace_messages([])
        started = time.perf_counter()
        await agent.chat("look around")
        times.append(time.perf_counter() - started)
    await agent.aclose()
    return times


def bench_turn(root: Path, store: SnapshotStore, walked: SnapshotStore, model_ms: int) -> None:
    slow = f", model answers in {model_ms} ms"
    for tool, label, kept_store, count, delay in (
        ("bash", "bash", store, 15, 0.0),
        ("read", "read", store, 150, 0.0),
        ("bash", "bash, no watch", walked, 5, 0.0),
        ("bash", "bash" + slow, store, 5, model_ms / 1000),
        ("bash", "bash, no watch" + slow, walked, 5, model_ms / 1000),
    ):
        bare_times: list[float] = []
        kept_times: list[float] = []
        for _ in range(4):  # alternate, so a busy moment of the machine hits both
            bare_times += asyncio.run(_turns(root, None, tool, count, delay))
            kept_times += asyncio.run(_turns(root, kept_store, tool, count, delay))
        bare, kept = statistics.median(bare_times), statistics.median(kept_times)
        added = kept / bare - 1
        print(
            f"no-change turn ({label}): {kept * 1000:7.2f} ms with checkpoints, floor "
            f"{bare * 1000:7.2f} ms without (ratio {kept / bare:5.3f}, {added * 100:+6.1f} %, "
            f"{(kept - bare) * 1000:+6.2f} ms)   target <= 5 %: "
            f"{'ok' if added <= 0.05 else 'MISSED'}"
        )
    walks = []
    for _ in range(5):
        started = time.perf_counter()
        for folder, _, names in os.walk(root):
            for name in names:
                os.lstat(os.path.join(folder, name))
        walks.append(time.perf_counter() - started)
    print(
        f"  without a watch each snapshot must at least walk and lstat every file: "
        f"{statistics.median(walks) * 1000:6.1f} ms a walk, two per bash call"
    )


def bench_size(root: Path, turns: int, lines_per_edit: int) -> None:
    workspace = root / f"text{lines_per_edit}"
    workspace.mkdir()
    rng = random.Random(3)
    files = []
    for index in range(50):
        path = workspace / f"notes{index}.md"
        path.write_text("".join(f"line {n}: {rng.random():.12f}\n" for n in range(400)))
        files.append(path)
    store = SnapshotStore(workspace, root / f"text{lines_per_edit}-store")
    store.snapshot()
    store.compact()
    base = store.size()
    changed = 0
    for turn in range(turns):
        path = rng.choice(files)
        lines = path.read_text().splitlines(keepends=True)
        at = rng.randrange(len(lines) - lines_per_edit)
        for offset in range(lines_per_edit):
            new = f"edited in turn {turn}: {rng.random():.12f}\n"
            changed += len(new.encode())
            lines[at + offset] = new
        path.write_text("".join(lines))
        store.snapshot()
    loose = store.size() - base
    store.compact()
    grown = store.size() - base
    journal = (store.folder / "journal.z").stat().st_size
    print(
        f"store after {turns} turns editing {lines_per_edit} line(s) each: +{grown} bytes for "
        f"{changed} changed bytes (ratio {grown / changed:4.2f}; journal {journal} bytes; "
        f"{loose} bytes before compact)   target <= 2x: "
        f"{'ok' if grown <= 2 * changed else 'MISSED'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--model-ms", type=int, default=100)
    parser.add_argument(
        "--only", choices=["turn"], help="only the no-change turns (after the first snapshots)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        workspace = root / "ws"
        workspace.mkdir()
        paths = make_workspace(workspace, args.files, args.mb)
        walked = SnapshotStore(workspace, root / "walked", watch=False)
        bench_snapshot(workspace, paths, walked, "no watch")
        store = SnapshotStore(workspace, root / "store")
        bench_snapshot(workspace, paths, store, "watched")
        if args.only == "turn":
            time.sleep(2.5)  # the walk trusts no time this recent (`walks.trusted`)
            bench_turn(workspace, store, walked, args.model_ms)
            return
        bench_restore(paths, store)
        bench_restore_journalled(paths, store)
        bench_turn(workspace, store, walked, args.model_ms)
        for lines_per_edit in (1, 3, 5, 10, 30):
            bench_size(root, args.turns, lines_per_edit)


if __name__ == "__main__":
    main()
