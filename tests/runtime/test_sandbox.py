"""The OS sandbox: escapes tried from inside bash under bubblewrap, the modes and their
failure, settings that a project cannot loosen, and processes that never outlive a call.

Tests that need bubblewrap skip (with the reason) where it is missing or unusable.
"""

# ruff: noqa: ASYNC240 - tests touch small files directly

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skillkit.abort import AbortSignal
from skillkit.runtime import BackgroundTasks, BashRuntime, OutputLimits
from skillkit.runtime.sandbox import (
    Bubblewrap,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
    find_bubblewrap,
    load_sandbox_settings,
    sandbox_settings,
)
from tests.conftest import host_folder_outside_tmp
from tests.runtime.escapes import (
    escaping_command,
    processes_running,
    reaping,
    unique_seconds,
    wait_until_gone,
    wait_until_running,
)

FOUND = find_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    not isinstance(FOUND, Bubblewrap), reason=f"no usable bubblewrap: {FOUND}"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def no_bwrap_path(tmp_path: Path) -> str:
    """A search path with a shell and the basics but no bwrap."""
    folder = tmp_path / "bin-without-bwrap"
    folder.mkdir()
    return str(folder)


# --------------------------------------------------------------------------- escapes


@needs_bwrap
async def test_writes_inside_the_workspace_work_and_outside_fail(workspace: Path) -> None:
    outside = host_folder_outside_tmp() / f".skillkit-sandbox-probe-{secrets.token_hex(4)}"
    runtime = BashRuntime(sandbox=Sandbox(workspace=workspace))
    try:
        inside = await runtime.execute("echo kept > inside.txt", cwd=workspace, timeout=30)
        escaped = await runtime.execute(f"echo leaked > {outside}", cwd=workspace, timeout=30)
    finally:
        leaked = outside.exists()
        outside.unlink(missing_ok=True)
        await runtime.aclose()
    assert inside.ok and (workspace / "inside.txt").read_text() == "kept\n"
    assert escaped.status == "failed" and "Read-only file system" in escaped.output
    assert not leaked


@needs_bwrap
async def test_tmp_is_private_to_the_sandbox_and_removed_on_close(
    workspace: Path, tmp_path: Path
) -> None:
    host_file = tmp_path / "host-only"
    host_file.write_text("secret")
    sandbox = Sandbox(workspace=workspace)
    runtime = BashRuntime(sandbox=sandbox)
    name = f"skillkit-sandbox-{secrets.token_hex(4)}"
    wrote = await runtime.execute(f"echo note > /tmp/{name}", cwd=workspace, timeout=30)
    again = await runtime.execute(f"cat /tmp/{name}; cat {host_file}", cwd=workspace, timeout=30)
    assert wrote.ok
    assert again.stdout == "note\n"  # shared by the sandbox's calls...
    assert "No such file" in again.stderr  # ...but the host's /tmp is not there
    assert not Path("/tmp", name).exists()
    private = sandbox._tmp
    assert private is not None and Path(private, name).exists()
    sandbox.close()
    assert not Path(private).exists()


@needs_bwrap
async def test_the_network_is_gone_unless_allowed(workspace: Path) -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -n1 <&3 || echo refused"
    try:
        async with server:
            closed = await BashRuntime(sandbox=Sandbox(workspace=workspace)).execute(
                command, cwd=workspace, timeout=30
            )
            opened = await BashRuntime(sandbox=Sandbox(workspace=workspace, network=True)).execute(
                command, cwd=workspace, timeout=30
            )
    finally:
        server.close()
    assert closed.stdout == "refused\n"
    assert opened.stdout == "hello from the host\n"


@needs_bwrap
async def test_root_in_the_sandbox_cannot_remount_the_file_system(workspace: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only meaningful when SkillKit runs as root")
    result = await BashRuntime(sandbox=Sandbox(workspace=workspace)).execute(
        "mount -o remount,rw / && echo remounted; grep CapEff /proc/self/status",
        cwd=workspace,
        timeout=30,
    )
    assert "remounted" not in result.stdout
    assert result.stdout.split() == ["CapEff:", "0000000000000000"]


@needs_bwrap
async def test_extra_writable_paths_are_writable(workspace: Path, tmp_path: Path) -> None:
    cache = Path.cwd() / f".skillkit-sandbox-cache-{secrets.token_hex(4)}"
    cache.mkdir()
    try:
        sandbox = Sandbox(workspace=workspace, writable_paths=(cache,))
        result = await BashRuntime(sandbox=sandbox).execute(
            f"echo cached > {cache}/entry", cwd=workspace, timeout=30
        )
        assert result.ok and (cache / "entry").read_text() == "cached\n"
    finally:
        for child in cache.iterdir():
            child.unlink()
        cache.rmdir()


# --------------------------------------------------------------------------- no survivors

SANDBOXES = [
    pytest.param("off", id="unconfined"),
    pytest.param("bwrap", id="bubblewrap", marks=needs_bwrap),
]


def make_sandbox(kind: str, workspace: Path) -> Sandbox:
    return Sandbox.disabled() if kind == "off" else Sandbox(mode="on", workspace=workspace)


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_double_forked_setsid_child_is_gone_when_the_command_ends(
    kind: str, workspace: Path
) -> None:
    seconds = unique_seconds()
    runtime = BashRuntime(sandbox=make_sandbox(kind, workspace), drain_timeout=0.2)
    with reaping(seconds):
        result = await asyncio.wait_for(
            runtime.execute(escaping_command(seconds), cwd=workspace, timeout=30), 30
        )
        assert result.ok and result.stdout.endswith("spawned\n")
        assert processes_running(seconds) == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_double_forked_setsid_child_is_gone_after_abort(kind: str, workspace: Path) -> None:
    seconds = unique_seconds()
    runtime = BashRuntime(sandbox=make_sandbox(kind, workspace))
    abort = AbortSignal()
    with reaping(seconds):
        call = asyncio.create_task(
            runtime.execute(escaping_command(seconds) + "; sleep 300", cwd=workspace, abort=abort)
        )
        await wait_until_running(seconds)
        abort.abort()
        result = await asyncio.wait_for(call, 30)
        assert result.aborted
        assert await wait_until_gone(seconds) == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_double_forked_setsid_child_is_gone_after_timeout(
    kind: str, workspace: Path
) -> None:
    seconds = unique_seconds()
    runtime = BashRuntime(sandbox=make_sandbox(kind, workspace), kill_grace=0.2)
    with reaping(seconds):
        result = await asyncio.wait_for(
            runtime.execute(escaping_command(seconds) + "; sleep 300", cwd=workspace, timeout=1),
            30,
        )
        assert result.timed_out
        assert await wait_until_gone(seconds) == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_a_double_forked_setsid_child_is_gone_after_cancellation(
    kind: str, workspace: Path
) -> None:
    seconds = unique_seconds()
    runtime = BashRuntime(sandbox=make_sandbox(kind, workspace))
    with reaping(seconds):
        call = asyncio.create_task(
            runtime.execute(escaping_command(seconds) + "; sleep 300", cwd=workspace)
        )
        await wait_until_running(seconds)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await wait_until_gone(seconds) == []


@pytest.fixture
async def closing() -> AsyncIterator[list[BackgroundTasks]]:
    managers: list[BackgroundTasks] = []
    yield managers
    for manager in managers:
        await manager.aclose()


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_background_aclose_leaves_no_double_forked_child(
    kind: str, workspace: Path, closing: list[BackgroundTasks]
) -> None:
    seconds, monitored = unique_seconds(), unique_seconds()
    manager = BackgroundTasks(cwd=workspace, sandbox=make_sandbox(kind, workspace))
    closing.append(manager)
    with reaping(seconds), reaping(monitored):
        task = manager.start(escaping_command(seconds) + "; sleep 300")
        monitor = manager.start_monitor(escaping_command(monitored) + "; sleep 300")
        await wait_until_running(seconds)
        await wait_until_running(monitored)
        await asyncio.wait_for(manager.aclose(), 30)
        assert task.status == "killed" and monitor.status == "killed"
        assert await wait_until_gone(seconds) == []
        assert await wait_until_gone(monitored) == []


@pytest.mark.parametrize("kind", SANDBOXES)
async def test_kill_task_leaves_no_double_forked_child(
    kind: str, workspace: Path, closing: list[BackgroundTasks]
) -> None:
    seconds = unique_seconds()
    manager = BackgroundTasks(cwd=workspace, sandbox=make_sandbox(kind, workspace))
    closing.append(manager)
    with reaping(seconds):
        task = manager.start(escaping_command(seconds) + "; sleep 300")
        await wait_until_running(seconds)
        await asyncio.wait_for(manager.kill(task.id), 30)
        assert task.status == "killed"
        assert await wait_until_gone(seconds) == []


# --------------------------------------------------------------------------- modes


async def test_on_without_bubblewrap_fails_closed_with_one_line(
    workspace: Path, no_bwrap_path: str
) -> None:
    marker = workspace / "ran"
    sandbox = Sandbox(mode="on", workspace=workspace, bwrap_path=no_bwrap_path)
    with pytest.raises(SandboxUnavailable) as caught:
        sandbox.check()
    message = str(caught.value)
    assert (
        message == "sandbox is on but unavailable: bwrap not found; install the bubblewrap package"
    )
    with pytest.raises(SandboxUnavailable):
        await BashRuntime(sandbox=sandbox).execute(f"touch {marker}", cwd=workspace, timeout=30)
    assert not marker.exists()


async def test_a_bwrap_that_cannot_run_counts_as_missing(tmp_path: Path, workspace: Path) -> None:
    folder = tmp_path / "broken-bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    found = find_bubblewrap(str(folder))
    assert isinstance(found, str) and "No permissions to create new namespace" in found
    assert find_bubblewrap(str(folder)) == found  # probed once, then cached
    auto = Sandbox(workspace=workspace, bwrap_path=str(folder))
    assert not auto.active and auto.describe().startswith("none — bwrap at ")
    with pytest.raises(SandboxUnavailable, match="does not work here"):
        Sandbox(mode="on", bwrap_path=str(folder)).check()


async def test_auto_without_bubblewrap_runs_unconfined_and_says_why(
    workspace: Path, no_bwrap_path: str
) -> None:
    sandbox = Sandbox(workspace=workspace, bwrap_path=no_bwrap_path)
    result = await BashRuntime(sandbox=sandbox).execute("echo ran", cwd=workspace, timeout=30)
    assert result.ok and result.stdout == "ran\n"
    assert not sandbox.active
    assert sandbox.describe() == "none — bwrap not found; install the bubblewrap package"
    assert Sandbox.disabled().describe() == "none (off)"


@needs_bwrap
def test_describe_names_bubblewrap_and_the_mode(workspace: Path) -> None:
    assert isinstance(FOUND, Bubblewrap)
    assert Sandbox(workspace=workspace).describe() == f"bubblewrap {FOUND.version} (auto)"
    allowed = Sandbox(mode="on", network=True).describe()
    assert allowed == f"bubblewrap {FOUND.version} (on, network allowed)"


# --------------------------------------------------------------------------- settings


def test_user_settings_choose_mode_network_and_paths(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    layers = [
        ("user", {"sandbox": {"mode": "on", "network": True, "writable_paths": ["~/.cache"]}}),
        ("user", {"sandbox": {"writable_paths": ["/opt/data"]}}),
    ]
    settings = sandbox_settings(layers, trusted=False, workspace=workspace, home=home)
    assert settings.mode == "on" and settings.network
    assert settings.writable_paths[1] == Path("/opt/data")
    assert settings.ignored == () and settings.problems == ()


@pytest.mark.parametrize("source", ["project", "local"])
def test_untrusted_project_settings_can_only_tighten(tmp_path: Path, source: str) -> None:
    loosen = {"sandbox": {"mode": "off", "network": True, "writable_paths": ["/"]}}
    settings = sandbox_settings(
        [("user", {"sandbox": {"mode": "auto"}}), (source, loosen)],
        trusted=False,
        workspace=tmp_path,
    )
    assert settings == SandboxSettings(mode="auto", ignored=settings.ignored)
    assert len(settings.ignored) == 3
    assert all("not trusted" in line and "\n" not in line for line in settings.ignored)
    tighten = {"sandbox": {"mode": "on", "network": False}}
    stricter = sandbox_settings(
        [("user", {"sandbox": {"network": True}}), (source, tighten)],
        trusted=False,
        workspace=tmp_path,
    )
    assert stricter.mode == "on" and not stricter.network and stricter.ignored == ()


def test_trusted_project_settings_apply_like_the_users(tmp_path: Path) -> None:
    settings = sandbox_settings(
        [("project", {"sandbox": {"mode": "off", "network": True, "writable_paths": ["out"]}})],
        trusted=True,
        workspace=tmp_path,
    )
    assert settings.mode == "off" and settings.network
    assert settings.writable_paths == (tmp_path / "out",)


def test_malformed_values_are_problems_and_skipped(tmp_path: Path) -> None:
    settings = sandbox_settings(
        [
            ("user", {"sandbox": {"mode": "sometimes", "network": "yes", "paths": []}}),
            ("user", {"sandbox": {"writable_paths": "/"}}),
            ("user", {"sandbox": []}),
        ],
        trusted=False,
        workspace=tmp_path,
    )
    assert (settings.mode, settings.network, settings.writable_paths) == ("auto", False, ())
    assert len(settings.problems) == 5


def test_settings_files_are_read_and_the_project_cannot_loosen(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (home / ".skillkit").mkdir(parents=True)
    (workspace / ".skillkit").mkdir(parents=True)
    (home / ".skillkit" / "settings.json").write_text(json.dumps({"sandbox": {"mode": "on"}}))
    (workspace / ".skillkit" / "settings.json").write_text(
        json.dumps({"sandbox": {"mode": "off", "network": True}})
    )
    (workspace / ".skillkit" / "settings.local.json").write_text("[" * 100_000)
    settings = load_sandbox_settings(workspace, trusted=False, home=home)
    assert settings.mode == "on" and not settings.network
    assert len(settings.ignored) == 2
    assert len(settings.problems) == 1 and "settings.local.json" in settings.problems[0]
    trusted = load_sandbox_settings(workspace, trusted=True, home=home)
    assert trusted.mode == "off" and trusted.network


def test_the_flag_sets_the_mode_explicitly() -> None:
    assert SandboxSettings(mode="on").with_mode("off").mode == "off"
    with pytest.raises(ValueError, match="sandbox mode"):
        SandboxSettings().with_mode("maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sandbox mode"):
        Sandbox(mode="maybe")  # type: ignore[arg-type]


def test_sandbox_from_settings_carries_the_policy(tmp_path: Path) -> None:
    settings = SandboxSettings(mode="on", network=True, writable_paths=(tmp_path,))
    sandbox = Sandbox.from_settings(settings, workspace=tmp_path / "ws")
    assert (sandbox.mode, sandbox.network, sandbox.writable_paths) == ("on", True, (tmp_path,))
    assert sandbox.workspace == tmp_path / "ws"


@needs_bwrap
async def test_a_sandboxed_command_can_read_but_not_change_a_spill_file(
    workspace: Path,
) -> None:
    sandbox = Sandbox(workspace=workspace)
    tool = BashRuntime(limits=OutputLimits(max_lines=10), sandbox=sandbox)
    background = BackgroundTasks(cwd=workspace, limits=OutputLimits(max_lines=10), sandbox=sandbox)
    try:
        cut = await tool.execute("seq 1 100", cwd=workspace, timeout=30)
        task = background.start("seq 1 200")
        await background.wait(task.id, timeout=30)
        task_spill = background.read_output(task.id).full_output_path
        assert cut.full_output_path is not None and task_spill is not None
        shown = await tool.execute(
            f"tail -n1 {cut.full_output_path}; tail -n1 {task_spill}; "
            f"echo changed >> {cut.full_output_path}",
            cwd=workspace,
            timeout=30,
        )
        assert shown.stdout == "100\n200\n"
        assert "Read-only file system" in shown.stderr
    finally:
        await background.aclose()
        await tool.aclose()
        sandbox.close()


@needs_bwrap
async def test_a_working_directory_outside_the_workspace_is_readable_only(
    workspace: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "skill-folder"
    elsewhere.mkdir()
    (elsewhere / "data.txt").write_text("from the skill\n")
    result = await BashRuntime(sandbox=Sandbox(workspace=workspace)).execute(
        "cat data.txt; echo x > new.txt", cwd=elsewhere, timeout=30
    )
    assert result.stdout == "from the skill\n"
    assert "Read-only file system" in result.stderr and not (elsewhere / "new.txt").exists()
