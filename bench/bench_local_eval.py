"""The embedded local model, evaluated on small grounded tasks over generated folders.

Each task makes a fresh folder under the system's temporary directory with random file
names and contents (seeded: ``--seed``), runs one `AgentRunner.chat` on the default local
model exactly as ``skillkit -p`` shapes it (SkillKit's default system prompt and the
read-only built-in tools, so the model's profile applies), and scores it:

- valid calls: tool calls that name an offered tool with arguments valid under its JSON
  schema, over all tool calls;
- right tool: the task's first tool call is one of the tools the task needs;
- grounded success: the answer holds the expected names or value and names no file that
  is not in the folder or the question (a grep task's answer names the file that holds
  the word and no other; a count task's first stated number, list items aside, is the
  count);
- invented names: file names in the answer that are neither in the folder nor in the
  question (the target is 0 for the list tasks over 0, 8 and 40 files).

Task kinds (at least 20 tasks): list a folder (0, 3, 8, 15, 40 files), read a value
from a file, find which file holds a word, count a file's lines, compare two files.

Then speed: time to first token and generation tokens/s, cold (a new server, first
request) and warm (the same request again), for SkillKit's `LocalAdapter` and for a bare
HTTP client on llama.cpp's own server with the same body; SkillKit's overhead is the
difference on the same server, same prompt (target <= 5 %).

    .venv/bin/python bench/bench_local_eval.py [--seed 1 | --seeds 101 102 103]
        [--split test|dev] [--kinds list value ...] [--profile FIELD=JSON] [--show]
        [--skip-speed] [--speed-runs 3] [--json]

The task phrasings come in two splits: ``dev``, the ones SkillKit's local profile was
developed against, and ``test`` (the default), held out for reported numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import jsonschema  # noqa: E402

from skillkit import AgentConfig, AgentRunner  # noqa: E402
from skillkit.local import CLIENT_HEADERS, LocalServer  # noqa: E402
from skillkit.local.adapter import LocalAdapter, create_local_adapter  # noqa: E402
from skillkit.local.profile import SKILLKIT_DEFAULT_PROMPT  # noqa: E402
from skillkit.models import (  # noqa: E402
    AssistantMessage,
    LLMRequest,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from skillkit.tools.builtin import builtin_tools  # noqa: E402

_SYLLABLES = ["ka", "lo", "mir", "zen", "tu", "vex", "qua", "ri", "pol", "sna", "dru", "fen"]
_EXTENSIONS = ["txt", "md", "csv", "log", "ini", "json", "yaml", "py"]
_FILE_NAME = re.compile(r"[\w\-][\w.\-]*\.[A-Za-z][A-Za-z0-9]{0,9}")


def _word(rng: random.Random, parts: int = 3) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts))


def _names(rng: random.Random, count: int) -> list[str]:
    names: set[str] = set()
    while len(names) < count:
        names.add(f"{_word(rng)}.{rng.choice(_EXTENSIONS)}")
    return sorted(names)


PHRASINGS: dict[str, dict[str, list[str]]] = {
    # "dev": the phrasings SkillKit's local profile was developed against; "test": held
    # out (written before the profile's tool examples and never looked at while
    # developing), for the reported numbers -- run them with new seeds too.
    "dev": {
        "list": [
            "List the files in this folder.",
            "What files are in this folder?",
            "Show me the files here.",
            "ls",
        ],
        "value": [
            "What is the value of {key} in {target}?",
            "What is {key} set to in {target}?",
            "Find the value of {key} in {target}.",
        ],
        "grep": [
            "Which file contains the word {word}?",
            "In which file does the word {word} appear?",
            "Where is {word} mentioned?",
        ],
        "count": [
            "How many lines does {target} have?",
            "Count the lines in {target}.",
            "How long is {target}, in lines?",
        ],
        "compare": [
            "Are {first} and {second} the same?",
            "Do {first} and {second} have the same contents?",
            "Is {first} identical to {second}?",
        ],
    },
    "test": {
        "list": [
            "Which files does this directory contain?",
            "Give me a list of the files in the current directory.",
            "What is in this directory?",
        ],
        "value": [
            "Look up {key} in {target}: what is it?",
            "Tell me the {key} setting from {target}.",
        ],
        "grep": ["Search for {word}: which file has it?", "Find the file that mentions {word}."],
        "count": ["What is the line count of {target}?", "Tell me how many lines are in {target}."],
        "compare": [
            "Is {second} a copy of {first}?",
            "Compare {first} with {second}: are they equal?",
        ],
    },
}


@dataclass
class Task:
    kind: str
    prompt: str
    folder: Path
    needs: frozenset[str]  # tools the first call may use
    expect: list[str]  # every one must be in the answer (case-insensitive)
    files: list[str] = field(default_factory=list)


def _fill(folder: Path, rng: random.Random, count: int) -> list[str]:
    names = _names(rng, count)
    for name in names:
        lines = [f"{_word(rng, 2)} {_word(rng, 2)}" for _ in range(rng.randint(1, 4))]
        (folder / name).write_text("\n".join(lines) + "\n")
    return names


def make_tasks(base: Path, rng: random.Random, split: str = "dev") -> list[Task]:
    tasks: list[Task] = []
    phrasings = PHRASINGS[split]

    def ask(kind: str, **fields: str) -> str:
        return rng.choice(phrasings[kind]).format(**fields)

    def folder(tag: str) -> Path:
        path = base / f"{tag}-{len(tasks)}"
        path.mkdir()
        return path

    for count in (0, 3, 8, 15, 40):
        where = folder("list")
        names = _fill(where, rng, count)
        tasks.append(
            Task(
                "list",
                ask("list"),
                where,
                frozenset({"ls"}),
                names[:3] if names else [],
                names,
            )
        )
    for _ in range(4):
        where = folder("value")
        names = _fill(where, rng, rng.randint(2, 6))
        target, key, value = rng.choice(names), _word(rng, 2), str(rng.randint(1000, 99999))
        (where / target).write_text(f"{_word(rng, 2)} = {rng.randint(1, 9)}\n{key} = {value}\n")
        tasks.append(
            Task(
                "value",
                ask("value", key=key, target=target),
                where,
                frozenset({"read", "grep"}),
                [value],
                names,
            )
        )
    for _ in range(4):
        where = folder("grep")
        names = _fill(where, rng, rng.randint(3, 6))
        target, word = rng.choice(names), _word(rng, 4)
        with (where / target).open("a") as handle:
            handle.write(f"{word}\n")
        tasks.append(
            Task(
                "grep",
                ask("grep", word=word),
                where,
                frozenset({"grep", "find", "ls"}),
                [target],
                names,
            )
        )
    for _ in range(4):
        where = folder("count")
        names = _fill(where, rng, rng.randint(1, 4))
        target, count = rng.choice(names), rng.randint(2, 9)
        (where / target).write_text("".join(f"{_word(rng, 2)}\n" for _ in range(count)))
        tasks.append(
            Task(
                "count",
                ask("count", target=target),
                where,
                frozenset({"read", "bash", "grep"}),
                [str(count)],
                names,
            )
        )
    for index in range(4):
        where = folder("compare")
        first, second = _names(rng, 2)
        text = "".join(f"{_word(rng, 2)}\n" for _ in range(3))
        same = index % 2 == 0
        (where / first).write_text(text)
        (where / second).write_text(text if same else text + f"{_word(rng, 2)}\n")
        tasks.append(
            Task(
                "compare",
                ask("compare", first=first, second=second),
                where,
                frozenset({"read", "bash"}),
                ["yes" if same else "no"],
                [first, second],
            )
        )
    return tasks


@dataclass
class Score:
    kind: str
    calls: int = 0
    valid: int = 0
    right_tool: bool = False
    grounded: bool = False
    invented: list[str] = field(default_factory=list)
    answer: str = ""
    first_call: str = ""
    seconds: float = 0.0
    error: str | None = None


def _valid(call: ToolCall, schemas: dict[str, dict[str, Any]]) -> bool:
    schema = schemas.get(call.name)
    if schema is None:
        return False
    try:
        jsonschema.validate(call.arguments, schema)
    except jsonschema.ValidationError:
        return False
    return True


class _Recording(LocalAdapter):
    """The adapter, recording the tools each shaped request offered."""

    offered: dict[str, dict[str, Any]]

    def chat_stream_events(self, request: LLMRequest, *, abort: Any = None) -> Any:
        shaped = self.profile.apply(request)
        self.offered = {schema.name: schema.parameters for schema in shaped.tools}
        return super().chat_stream_events(request, abort=abort)


async def run_task(task: Task, server: LocalServer, overrides: dict[str, Any]) -> Score:
    base = create_local_adapter("local", server=server)
    adapter = _Recording(
        base.server,
        base.inner,
        owns_server=False,
        client=base.client,
        profile=dataclasses.replace(base.profile, **overrides) if overrides else base.profile,
        notify=lambda line: None,
    )
    adapter.offered = {}
    prompt = f"{SKILLKIT_DEFAULT_PROMPT}\n\n# Environment\nWorking directory: {task.folder}"
    runner = AgentRunner(
        AgentConfig(model="local", system_prompt=prompt, max_iterations=4),
        adapter=adapter,
        tools=builtin_tools(task.folder, allow_writes=False),
    )
    started = time.perf_counter()
    try:
        response = await asyncio.wait_for(runner.chat(task.prompt), 120)
    finally:
        await runner.aclose()
    score = Score(task.kind, answer=response.text.strip(), seconds=time.perf_counter() - started)
    score.error = response.error
    calls = [
        part
        for message in response.messages
        if isinstance(message, AssistantMessage)
        for part in message.content
        if isinstance(part, ToolCall)
    ]
    score.calls = len(calls)
    if calls:
        score.first_call = f"{calls[0].name}({json.dumps(calls[0].arguments)})"
    score.valid = sum(_valid(call, adapter.offered) for call in calls)
    score.right_tool = bool(calls) and calls[0].name in task.needs
    results = " ".join(m.text for m in response.messages if isinstance(m, ToolResultMessage))
    given = set(task.files) | set(_FILE_NAME.findall(task.prompt))
    if task.kind == "list":
        given = set(_FILE_NAME.findall(results)) | set(_FILE_NAME.findall(task.prompt))
    named = {name.rstrip(".") for name in _FILE_NAME.findall(score.answer)}
    score.invented = sorted(name for name in named if name not in given)
    answer = score.answer.lower()
    if task.kind == "list" and not task.files:
        expected_ok = not named and bool(calls)
    elif task.kind == "compare":
        expected_ok = re.search(rf"\b{task.expect[0]}\b", answer) is not None
    elif task.kind == "count":
        claimed = _claimed_numbers(score.answer)
        expected_ok = bool(claimed) and claimed[0] == task.expect[0]
    elif task.kind == "grep":
        # the file that holds the word, and no other file of the folder (a whole listing
        # names it too)
        expected_ok = task.expect[0].lower() in answer and named <= {task.expect[0]}
    else:
        expected_ok = all(item.lower() in answer for item in task.expect)
    score.grounded = expected_ok and not score.invented and bool(calls)
    return score


def _claimed_numbers(answer: str) -> list[str]:
    """The numbers an answer states, in order: whole numbers that are not part of a
    name or a decimal and not a list's item number (``3.`` at the start of a line or
    after ``:`` or ``,``, as `skillkit.local.grounding` tells them apart); a number that
    ends a sentence ("It has 8.") is stated."""
    claimed = []
    for match in re.finditer(r"(?<![\w.])(\d+)(?![\w]|\.\w)", answer):
        item = answer[match.end() : match.end() + 1] == "."
        if item and answer[: match.start()].rstrip(" \t")[-1:] in ("", "\n", ":", ","):
            continue
        claimed.append(match.group(1))
    return claimed


# --------------------------------------------------------------------------- speed

_SPEED_PROMPT = "Write a short story about a dragon who learns to code."


def _bare_stream(url: str, body: dict[str, Any]) -> tuple[float, int, float]:
    """(seconds to first content, content deltas, seconds in all) for a raw SSE client."""
    request = urllib.request.Request(
        url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **CLIENT_HEADERS},
    )
    started = time.perf_counter()
    first, deltas = 0.0, 0
    with urllib.request.urlopen(request, timeout=120) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices", []):
                if choice.get("delta", {}).get("content"):
                    deltas += 1
                    if not first:
                        first = time.perf_counter() - started
    return first, deltas, time.perf_counter() - started


async def _skillkit_stream(adapter: LocalAdapter, tokens: int) -> tuple[float, int, float]:
    request = LLMRequest(
        model="local",
        messages=[UserMessage(_SPEED_PROMPT)],
        options={"max_tokens": tokens, "temperature": 0.0},
    )
    started = time.perf_counter()
    first, deltas = 0.0, 0
    async for event in adapter.inner.chat_stream_events(request):
        if event.type == "text_delta":
            deltas += 1
            if not first:
                first = time.perf_counter() - started
    return first, deltas, time.perf_counter() - started


def speed(runs: int, tokens: int) -> dict[str, Any]:
    """Cold and warm TTFT and tokens/s, SkillKit's adapter against a bare client."""
    body = {
        "model": "x",
        "messages": [{"role": "user", "content": _SPEED_PROMPT}],
        "max_tokens": tokens,
        "temperature": 0.0,
        "stream": True,
    }
    rows: dict[str, list[tuple[float, int, float]]] = {
        "bare cold": [],
        "bare warm": [],
        "skillkit cold": [],
        "skillkit warm": [],
    }
    for _ in range(runs):
        for who in ("bare", "skillkit"):
            server = LocalServer(None, threads=1).start()
            try:
                if who == "bare":
                    rows["bare cold"].append(_bare_stream(server.url, body))
                    rows["bare warm"].append(_bare_stream(server.url, body))
                else:
                    adapter = create_local_adapter("local", server=server, register=False)

                    async def both(adapter: LocalAdapter = adapter) -> None:
                        rows["skillkit cold"].append(await _skillkit_stream(adapter, tokens))
                        rows["skillkit warm"].append(await _skillkit_stream(adapter, tokens))
                        await adapter.aclose()

                    asyncio.run(both())
            finally:
                server.stop()
    out: dict[str, Any] = {}
    for name, samples in rows.items():
        ttft = statistics.median(s[0] for s in samples)
        rate = statistics.median((s[1] - 1) / max(s[2] - s[0], 1e-9) for s in samples)
        out[name] = {"ttft_s": round(ttft, 3), "tokens_per_s": round(rate, 1)}
    for phase in ("cold", "warm"):
        bare, ours = out[f"bare {phase}"], out[f"skillkit {phase}"]
        out[f"overhead {phase}"] = {
            "ttft_pct": round(100 * (ours["ttft_s"] / bare["ttft_s"] - 1), 1),
            "tokens_per_s_pct": round(100 * (1 - ours["tokens_per_s"] / bare["tokens_per_s"]), 1),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed-runs", type=int, default=3)
    parser.add_argument("--speed-tokens", type=int, default=128)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--show", action="store_true", help="print every answer")
    parser.add_argument(
        "--split",
        choices=sorted(PHRASINGS),
        default="test",
        help="the task phrasings: dev (developed against) or test (held out; default)",
    )
    parser.add_argument("--seeds", type=int, nargs="*", help="several seeds, scored together")
    parser.add_argument("--kinds", nargs="*", help="only these task kinds (while developing)")
    parser.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="FIELD=JSON",
        help="override a field of the default model's profile, e.g. call_first=false",
    )
    args = parser.parse_args()
    overrides = {
        key: _override(key, json.loads(value))
        for key, value in (item.split("=", 1) for item in args.profile)
    }
    base = Path(tempfile.mkdtemp(prefix="skillkit-local-eval-"))
    for seed in args.seeds or [args.seed]:
        (base / str(seed)).mkdir()
    report: dict[str, Any] = {}
    try:
        tasks = [
            task
            for seed in args.seeds or [args.seed]
            for task in make_tasks(base / str(seed), random.Random(seed), args.split)
            if not args.kinds or task.kind in args.kinds
        ]
        server = LocalServer(None, threads=1, reproducible=True).start()
        scores: list[Score] = []
        try:
            for task in tasks:
                score = asyncio.run(run_task(task, server, overrides))
                scores.append(score)
                if args.show:
                    print(
                        f"[{task.kind}] {task.prompt} {score.first_call} -> {score.answer!r} "
                        f"calls={score.calls} valid={score.valid} right={score.right_tool} "
                        f"grounded={score.grounded} invented={score.invented} "
                        f"{score.seconds:.1f}s" + (f" ERROR {score.error}" if score.error else ""),
                        flush=True,
                    )
        finally:
            server.stop()
        report["eval"] = {
            "split": args.split,
            "seeds": args.seeds or [args.seed],
            "profile overrides": args.profile,
            **_summary(scores, tasks),
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if not args.skip_speed:
        report["speed"] = speed(args.speed_runs, args.speed_tokens)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for section, values in report.items():
            print(f"== {section}")
            for key, value in values.items():
                print(f"{key:>22}: {value}")


def _override(key: str, value: Any) -> Any:
    """A profile field's value from JSON (sets for ``tools``, pairs for ``results``)."""
    if key in ("tools", "own_tools") and isinstance(value, list):
        return frozenset(value)
    if key == "results" and isinstance(value, dict):
        return {tool: tuple(nouns) for tool, nouns in value.items()}
    return value


def _summary(scores: list[Score], tasks: list[Task]) -> dict[str, Any]:
    calls = sum(s.calls for s in scores)
    pct: Callable[[float], float] = lambda x: round(100 * x, 1)  # noqa: E731
    list_invented = sum(
        len(s.invented)
        for s, t in zip(scores, tasks, strict=True)
        if t.kind == "list" and len(t.files) in (0, 8, 40)
    )
    out: dict[str, Any] = {
        "tasks": len(scores),
        "valid calls %": pct(sum(s.valid for s in scores) / calls) if calls else 0.0,
        "tool calls": calls,
        "right tool %": pct(sum(s.right_tool for s in scores) / len(scores)),
        "grounded success %": pct(sum(s.grounded for s in scores) / len(scores)),
        "invented names": sum(len(s.invented) for s in scores),
        "invented in list 0/8/40": list_invented,
        "runs that failed": sum(s.error is not None for s in scores),
        "median s per task": round(statistics.median(s.seconds for s in scores), 1),
    }
    for kind in ("list", "value", "grep", "count", "compare"):
        mine = [s for s in scores if s.kind == kind]
        if mine:
            out[f"grounded {kind}"] = f"{sum(s.grounded for s in mine)}/{len(mine)}"
    return out


if __name__ == "__main__":
    main()
