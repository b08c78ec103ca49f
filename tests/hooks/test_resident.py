"""The sandbox a session keeps for its hooks: the same confinement as a fresh one, nothing
a hook starts outlives it, and it is replaced when the mounts would differ."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillkit.hooks import parse_hooks
from skillkit.hooks.config import HookCommand
from skillkit.hooks.process import OUTPUT_LIMIT, HookProcesses
from skillkit.runtime import Sandbox

pytestmark = pytest.mark.timeout(60)


def hook(command: str, **options: object) -> HookCommand:
    entry = {"PreToolUse": [{"hooks": [{"command": command, **options}]}]}
    config = parse_hooks(entry, source="user", path="-", may_unconfine=True)
    assert not config.problems, config.problems
    return config.hooks[0]


@pytest.fixture
async def processes(tmp_path: Path) -> AsyncIterator[HookProcesses]:
    workspace = tmp_path / "project"
    workspace.mkdir()
    sandbox = Sandbox(mode="auto", workspace=workspace)
    if not sandbox.active:
        pytest.skip("no sandbox here")
    made = HookProcesses(workspace, sandbox=sandbox)
    yield made
    made.close()
    sandbox.close()


def launcher_pids(processes: HookProcesses) -> set[int]:
    resident = processes._resident
    assert resident is not None
    return {launcher.process.pid for launcher in resident._launchers.values()}


def alive(pids: set[int]) -> bool:
    return any(os.path.exists(f"/proc/{pid}") for pid in pids)


def running(marker: str) -> list[int]:
    """Pids of processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(name))
    return found


async def test_hooks_share_one_sandbox_and_read_their_own_stdin(
    processes: HookProcesses,
) -> None:
    first = await processes.run(hook("cat"), {"n": 1})
    pids = launcher_pids(processes)
    second = await processes.run(hook("cat; echo oops >&2; exit 2"), {"n": 2})
    assert (first.status, first.exit_code, first.stdout) == ("completed", 0, '{"n": 1}')
    assert (second.status, second.exit_code) == ("failed", 2)
    assert second.stdout == '{"n": 2}' and second.stderr == "oops\n"
    assert launcher_pids(processes) == pids


async def test_side_by_side_hooks_run_at_once(processes: HookProcesses) -> None:
    await processes.run(hook("true"), {})
    runs = await asyncio.gather(
        *(processes.run(hook(f"sleep 0.3; echo {n}"), {}) for n in range(4))
    )
    assert [run.stdout.strip() for run in runs] == ["0", "1", "2", "3"]


async def test_nothing_a_hook_starts_outlives_it_even_without_its_tag(
    processes: HookProcesses,
) -> None:
    marker = "4711.25"
    command = f"env -i setsid sh -c 'sleep {marker}' </dev/null >/dev/null 2>&1 & exit 0"
    run = await processes.run(hook(command), {})
    assert run.status == "completed"
    assert running(marker) == []


async def test_a_hanging_hook_and_its_children_go_at_the_timeout(
    processes: HookProcesses,
) -> None:
    marker = "4712.25"
    command = f"trap '' TERM; env -i setsid sleep {marker} & sleep {marker}"
    run = await processes.run(hook(command, timeout=1), {})
    assert run.status == "timeout"
    assert running(marker) == []


async def test_a_flooding_hook_is_bounded(processes: HookProcesses) -> None:
    run = await processes.run(hook("head -c 5000000 /dev/zero | tr '\\0' x"), {})
    assert run.status == "completed"
    assert run.stdout.startswith("x" * OUTPUT_LIMIT)
    assert run.stdout.endswith(f"[{5_000_000 - OUTPUT_LIMIT} more bytes of hook output dropped]")


async def test_a_protected_folder_made_later_is_protected(processes: HookProcesses) -> None:
    await processes.run(hook("true"), {})
    before = launcher_pids(processes)
    claude = processes.cwd / ".claude"
    claude.mkdir()
    run = await processes.run(hook("echo x > .claude/settings.json"), {})
    assert run.exit_code != 0
    assert not (claude / "settings.json").exists()
    assert launcher_pids(processes) != before


async def test_a_protected_folder_made_again_is_still_protected(processes: HookProcesses) -> None:
    claude = processes.cwd / ".claude"
    claude.mkdir()
    await processes.run(hook("true"), {})
    before = launcher_pids(processes)
    shutil.rmtree(claude)
    claude.mkdir()  # the same path, another folder: the old mount would not cover it
    run = await processes.run(hook("echo x > .claude/settings.json"), {})
    assert run.exit_code != 0
    assert not (claude / "settings.json").exists()
    assert launcher_pids(processes) != before


async def test_the_workspace_is_writable_and_nothing_outside(
    processes: HookProcesses, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    run = await processes.run(hook(f"touch inside; touch {outside}/escaped"), {})
    assert run.exit_code != 0
    assert (processes.cwd / "inside").exists()
    assert not (outside / "escaped").exists()


async def test_a_read_only_hook_gets_a_sandbox_of_its_own(processes: HookProcesses) -> None:
    writer = await processes.run(hook("touch a"), {})
    reader = await processes.run(hook("touch b", sandbox="read_only"), {})
    assert writer.exit_code == 0 and reader.exit_code != 0
    assert not (processes.cwd / "b").exists()
    assert len(launcher_pids(processes)) == 2


async def test_the_environment_has_no_provider_keys_and_a_private_tmp(
    processes: HookProcesses, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    run = await processes.run(hook('echo "[$OPENAI_API_KEY]$TMPDIR $CLAUDE_PROJECT_DIR"'), {})
    assert run.stdout.strip() == f"[]/tmp {processes.cwd}"


async def test_close_stops_the_launchers(processes: HookProcesses) -> None:
    await processes.run(hook("true"), {})
    pids = launcher_pids(processes)
    processes.close()
    for _ in range(1000):  # up to 20 s: a busy machine reaps slowly
        if not alive(pids):
            break
        await asyncio.sleep(0.02)
    assert not alive(pids)


async def test_a_plugin_root_with_shell_metacharacters_stays_a_word(
    processes: HookProcesses, tmp_path: Path
) -> None:
    root = tmp_path / "plug $(touch pwned); `touch pwned2`"
    (root / "bin").mkdir(parents=True)
    script = root / "bin" / "hook.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    entry = {"PreToolUse": [{"hooks": [{"command": '"${CLAUDE_PLUGIN_ROOT}/bin/hook.sh"'}]}]}
    config = parse_hooks(entry, source="plugin", path="-", plugin_root=str(root))
    run = await processes.run(config.hooks[0], {})
    assert run.stdout == "ran\n"
    assert not (processes.cwd / "pwned").exists() and not (processes.cwd / "pwned2").exists()


async def test_a_plain_command_runs_without_a_shell_and_a_script_without_shebang_with_one(
    processes: HookProcesses,
) -> None:
    bare = processes.cwd / "bare-script"
    bare.write_text("echo from-sh $0\n")
    bare.chmod(0o755)
    plain = await processes.run(hook(f"{bare} one"), {})
    assert plain.stdout.startswith("from-sh")
    ps = await processes.run(hook("/bin/ps -o comm= -p $PPID"), {})  # a shell: $PPID
    assert ps.exit_code == 0
    missing = await processes.run(hook("/no/such/program"), {})
    assert missing.exit_code == 127 and "/no/such/program" in missing.stderr


def test_only_commands_the_shell_would_just_split_skip_the_shell() -> None:
    from skillkit.hooks.process import _plain_argv

    env = {"CLAUDE_PLUGIN_ROOT": "/p/a b", "CLAUDE_PROJECT_DIR": "/w"}
    assert _plain_argv('"${CLAUDE_PLUGIN_ROOT}/x.sh" --fix', env) == ["/p/a b/x.sh", "--fix"]
    assert _plain_argv("$CLAUDE_PROJECT_DIR/h.py a=1", env) == ["/w/h.py", "a=1"]
    for command in (
        "a; b",
        "a | b",
        "a > f",
        "a $(b)",
        "a `b`",
        "echo $HOME",
        "a *.py",
        "a 'b'",
        "a\nb",
        "a && b",
        'a "b',
        "",
        "~/x",
    ):
        assert _plain_argv(command, env) is None, command


async def test_an_unconfined_hook_has_a_launcher_of_its_own_outside_the_sandbox(
    processes: HookProcesses, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    confined = await processes.run(hook(f"touch {outside}/a"), {})
    free = await processes.run(hook(f"touch {outside}/b", sandbox="off"), {})
    assert confined.exit_code != 0 and free.exit_code == 0
    assert not (outside / "a").exists() and (outside / "b").exists()
    assert len(launcher_pids(processes)) == 2


async def test_an_abort_ends_a_running_hook_at_once(processes: HookProcesses) -> None:
    from skillkit.abort import AbortSignal

    signal = AbortSignal()
    marker = "4713.25"
    asyncio.get_running_loop().call_later(0.5, signal.abort)
    # the hook's own timeout lies far past the test's: only the abort can end it here
    slow = hook(f"sleep {marker}", timeout=3600)
    run = await asyncio.wait_for(processes.run(slow, {}, signal), 30)
    assert run.status == "aborted"
    assert running(marker) == []


async def test_prepare_starts_the_launcher_before_the_first_hook(
    processes: HookProcesses,
) -> None:
    await processes.prepare([hook("true"), hook("true", sandbox="read_only")])
    pids = launcher_pids(processes)
    assert len(pids) == 2
    await processes.run(hook("true"), {})
    assert launcher_pids(processes) == pids


async def test_an_unconfined_hook_keeps_the_users_tmpdir(
    processes: HookProcesses, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    run = await processes.run(hook('echo "$TMPDIR"', sandbox="off"), {})
    assert run.stdout.strip() == str(tmp_path)
