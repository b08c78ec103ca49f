"""Evaluation benchmarks (not part of the test run).

    python bench/bench_evals.py [ROWS] [CASES] [COMMAND_ROWS] [--commands-only]
    python bench/bench_evals.py --instructions

``--instructions`` counts, instead of timing, the instructions each command executes
(valgrind's callgrind; the count does not drift with the machine's load, where times on
a shared machine do): ``skillkit batch`` and ``skillkit eval`` on the same 50 and 100
rows, so that the slope between the two sizes is the cost of one row without the
command's fixed start-up and the overhead per row is eval's slope over batch's.

1. The commands: COMMAND_ROWS prompts (default 300) through the real ``skillkit batch``
   (the floor) and ``skillkit eval`` with five non-judge checks a case, the same
   scripted model (one ``ls`` call, then an answer) and concurrency, each row's agent
   made as ``skillkit -p`` makes it. Wall time and CPU time (of the command's process),
   medians of five, alternating; eval once more with TMPDIR on tmpfs (/dev/shm), where
   its scratch folders cost no disk. This is the overhead a user sees.
2. The bare agent, the worst case for the ratio (an agent that costs almost nothing):
   the same ROWS prompts (default 2,000) run as ``skillkit batch`` runs them —
   `run_to_file` with `AgentRowTask`, results appended to a file — and as an eval suite
   — `run_eval_to_dir` with `EvalTask`: a scratch workspace per row, a file placed in
   it, the trajectory recorded, five non-judge checks (contains, regex, tool_called,
   max_turns, file), the outcome in each result. Both on the local engine, concurrency
   64, the agent of tests/evals/agents.py (scripted model at zero latency, one real
   tool call a row). The floor is the batch run, in the same process, alternating with
   the eval run; medians of five. Run again with the scratch folders on tmpfs
   (/dev/shm), which splits the file system's share (making and removing a folder per
   row) from SkillKit's.
3. Scale: CASES cases (default 10,000) × 3 models = 30,000 rows on the local engine with
   a zero-latency scripted model answering at once, two checks a case, into a run
   folder: rows a second, and the time to load the suite file.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evals.agents import make_agent

from skillkit import AgentConfig, AgentRunner
from skillkit.adapters.scripted import FunctionAdapter, Reply
from skillkit.batch import AgentRowTask, LocalEngine, run_to_file
from skillkit.evals import EvalTask, load_suite, run_eval_to_dir

CONCURRENCY = 64
SHM = Path("/dev/shm")
MAIN = "import sys; from skillkit.cli import main; sys.exit(main())"


def prompts(count: int) -> list[str]:
    return [f"hello number {i}" for i in range(count)]


def write_dataset(folder: Path, count: int) -> Path:
    path = folder / "rows.jsonl"
    path.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts(count)))
    return path


def write_suite(folder: Path, count: int) -> Path:
    lines = ["name: overhead", "cases:"]
    for index, prompt in enumerate(prompts(count)):
        lines += [
            f"  - name: c{index}",
            f"    prompt: {prompt}",
            "    files: {notes.txt: hello}",
            "    expect:",
            f"      - contains: {prompt.upper()}",
            "      - regex: 'HELLO NUMBER \\d+'",
            "      - tool_called: {name: shout}",
            "      - max_turns: 2",
            "      - file: {path: notes.txt, contains: hello}",
        ]
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def batch_agent() -> AgentRunner:
    return make_agent("m", Path("."), None)


async def batch_run(dataset: Path, out: Path) -> float:
    out.unlink(missing_ok=True)  # noqa: ASYNC240 - before the clock starts
    start = time.perf_counter()
    await run_to_file(dataset, out, AgentRowTask(batch_agent), engine=LocalEngine(CONCURRENCY))
    return time.perf_counter() - start


async def eval_run(suite_path: Path, out: Path) -> float:
    for name in ("results.jsonl", "rows.jsonl"):
        (out / name).unlink(missing_ok=True)
    suite = load_suite(suite_path)
    start = time.perf_counter()
    await run_eval_to_dir(
        suite, out, EvalTask(suite, make_agent), models=["m"], engine=LocalEngine(CONCURRENCY)
    )
    return time.perf_counter() - start


def answer_at_once(model: str, workspace: Path, max_turns: int | None) -> AgentRunner:
    model_reply = Reply(text=f"OK from {model}")
    return AgentRunner(
        AgentConfig(model="scripted"), adapter=FunctionAdapter(lambda _: model_reply)
    )


def write_scale_suite(folder: Path, cases: int) -> Path:
    lines = ["name: scale", "cases:"]
    for index in range(cases):
        lines += [
            f"  - name: c{index}",
            f"    prompt: question {index}",
            "    expect: [{contains: OK}, {max_turns: 1}]",
        ]
    path = folder / "scale.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def skillkit(*args: str, cwd: Path, tmpdir: str | None = None) -> tuple[float, float]:
    """Run the real command; its wall time and CPU time (user + system). ``tmpdir``:
    the TMPDIR it runs with (where eval's scratch folders go)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        cwd=cwd,
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(cwd), **({"TMPDIR": tmpdir} if tmpdir else {})},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def commands_files(folder: Path, rows: int) -> None:
    """The rows, the suite (five non-judge checks a case) and the scripted model."""
    (folder / "rows.jsonl").write_text(
        "".join(json.dumps({"prompt": p}) + "\n" for p in prompts(rows))
    )
    lines = ["name: commands", "cases:"]
    for index, prompt in enumerate(prompts(rows)):
        lines += [
            f"  - name: c{index}",
            f"    prompt: {prompt}",
            "    expect: [{contains: done}, {regex: 'd.ne'}, {tool_called: ls}, "
            "{tool_not_called: bash}, {max_turns: 2}]",
        ]
    (folder / "suite.yaml").write_text("\n".join(lines) + "\n")
    (folder / "model.yaml").write_text(
        "replies:\n  - tool_calls: [{name: ls, arguments: {}}]\n  - text: done\n"
    )


def commands(folder: Path, rows: int) -> None:
    commands_files(folder, rows)
    batch: list[tuple[float, float]] = []
    evals: list[tuple[float, float]] = []
    shm: list[tuple[float, float]] = []
    for attempt in range(5):
        batch.append(
            skillkit(
                "batch", "rows.jsonl", "--prompt", "{prompt}", "--model", "scripted:model.yaml",
                "--concurrency", "16", "--out", f"batch{attempt}.jsonl", cwd=folder,
            )
        )  # fmt: skip
        evals.append(
            skillkit(
                "eval", "suite.yaml", "--models", "scripted:model.yaml",
                "--concurrency", "16", "--out", f"eval{attempt}", cwd=folder,
            )
        )  # fmt: skip
        if SHM.is_dir():
            shm.append(
                skillkit(
                    "eval", "suite.yaml", "--models", "scripted:model.yaml",
                    "--concurrency", "16", "--out", f"shm{attempt}", cwd=folder,
                    tmpdir=str(SHM),
                )
            )  # fmt: skip
    bw, bc = (statistics.median(v) for v in zip(*batch, strict=True))
    print(f"commands: {rows} rows, scripted model (one ls call), concurrency 16, medians of 5")
    print(
        f"skillkit batch (floor):       wall {bw / rows * 1e3:6.1f} ms/row  "
        f"cpu {bc / rows * 1e3:6.1f} ms/row"
    )
    for label, runs in (("skillkit eval, 5 checks:", evals), ("  the same, TMPDIR on tmpfs:", shm)):
        if not runs:
            continue
        ew, ec = (statistics.median(v) for v in zip(*runs, strict=True))
        print(
            f"{label:<30}wall {ew / rows * 1e3:6.1f} ms/row  "
            f"cpu {ec / rows * 1e3:6.1f} ms/row  "
            f"(overhead wall {(ew / bw - 1) * 100:+.1f} %, cpu {(ec / bc - 1) * 100:+.1f} %)"
        )


def instructions(folder: Path) -> None:
    """Instructions per row of batch and eval (see the module's docstring)."""
    import re
    import shutil

    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed (apt-get install valgrind)")
        return
    counts: dict[tuple[str, int], int] = {}
    for rows in (50, 100):
        work = folder / f"instructions{rows}"
        work.mkdir()
        commands_files(work, rows)
        for kind, args in (
            ("batch", ["batch", "rows.jsonl", "--prompt", "{prompt}", "--out", "b.jsonl"]),
            ("eval", ["eval", "suite.yaml", "--out", "e"]),
        ):
            model = ["--models" if kind == "eval" else "--model", "scripted:model.yaml"]
            skillkit(*args, *model, "--concurrency", "16", cwd=work)  # warm the caches
            for leftover in ("b.jsonl", "e"):
                shutil.rmtree(work / leftover, ignore_errors=True)
                (work / leftover).unlink(missing_ok=True)
            log = work / f"{kind}.log"
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work / kind}.cg",
                 f"--log-file={log}", sys.executable, "-c", MAIN, *args, *model,
                 "--concurrency", "16"],
                cwd=work, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "HOME": str(work)},
            )  # fmt: skip
            found = re.search(r"Collected : (\d+)", log.read_text())
            if found is None:
                print(f"instructions: no count in {log}")
                return
            counts[(kind, rows)] = int(found.group(1))
    per_row = {kind: (counts[(kind, 100)] - counts[(kind, 50)]) / 50 for kind in ("batch", "eval")}
    print("instructions (callgrind), scripted model (one ls call), concurrency 16:")
    for kind in ("batch", "eval"):
        print(
            f"  skillkit {kind:<5}  50 rows {counts[(kind, 50)] / 1e9:6.3f} G   "
            f"100 rows {counts[(kind, 100)] / 1e9:6.3f} G   per row {per_row[kind] / 1e6:6.2f} M"
        )
    print(f"  eval's overhead per row: {(per_row['eval'] / per_row['batch'] - 1) * 100:+.1f} %")


async def main(rows: int, cases: int, command_rows: int, only_commands: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if "--instructions" in sys.argv:
            instructions(folder)
            return
        commands_folder = folder / "commands"
        commands_folder.mkdir()
        commands(commands_folder, command_rows)
        if only_commands:
            return
        dataset = write_dataset(folder, rows)
        suite_path = write_suite(folder, rows)
        await batch_run(dataset, folder / "warm.jsonl")
        await eval_run(suite_path, folder / "warm")
        batch_times: list[float] = []
        eval_times: list[float] = []
        for _ in range(5):
            batch_times.append(await batch_run(dataset, folder / "batch.jsonl"))
            eval_times.append(await eval_run(suite_path, folder / "eval"))
        floor, measured = statistics.median(batch_times), statistics.median(eval_times)
        in_memory: float | None = None
        if SHM.is_dir():  # noqa: ASYNC240 - the scratch folders on tmpfs: no disk in the way
            tempfile.tempdir = str(SHM)
            try:
                in_memory = statistics.median(
                    [await eval_run(suite_path, folder / "shm") for _ in range(3)]
                )
            finally:
                tempfile.tempdir = None
        print(
            f"bare agent: {rows} rows, local engine, concurrency {CONCURRENCY}, one tool call a row"
        )
        print(
            f"skillkit batch (floor):       {rows / floor:8.0f} rows/s  "
            f"{floor / rows * 1e6:7.0f} µs/row"
        )
        print(
            f"eval, 5 non-judge checks:     {rows / measured:8.0f} rows/s  "
            f"{measured / rows * 1e6:7.0f} µs/row  "
            f"(overhead {(measured / floor - 1) * 100:+.1f} %, "
            f"+{(measured - floor) / rows * 1e6:.0f} µs/row)"
        )
        if in_memory is not None:
            print(
                f"  the same, scratch on tmpfs: {rows / in_memory:8.0f} rows/s  "
                f"{in_memory / rows * 1e6:7.0f} µs/row  "
                f"(overhead {(in_memory / floor - 1) * 100:+.1f} %; the rest of the difference "
                f"is the file system of {tempfile.gettempdir()})"
            )

        scale_path = write_scale_suite(folder, cases)
        start = time.perf_counter()
        suite = load_suite(scale_path)
        loaded = time.perf_counter() - start
        models = ["scripted:a", "scripted:b", "scripted:c"]
        task = EvalTask(suite, answer_at_once)
        start = time.perf_counter()
        summary = await run_eval_to_dir(
            suite, folder / "scale", task, models=models, engine=LocalEngine(CONCURRENCY)
        )
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"scale: {cases} cases × 3 models = {summary.total} rows in {elapsed:.1f} s: "
            f"{summary.total / elapsed:.0f} rows/s (suite loaded in {loaded:.2f} s; "
            f"peak RSS {peak:.0f} MiB)"
        )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    count = numbers[0] if len(numbers) > 0 else 2000
    scale = numbers[1] if len(numbers) > 1 else 10000
    command_rows = numbers[2] if len(numbers) > 2 else 300
    asyncio.run(main(count, scale, command_rows, "--commands-only" in sys.argv))
