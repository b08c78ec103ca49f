"""The kernel holds the permission gate's verdict: a read-only call changes nothing but
its private /tmp, the paths that run code later stay read-only even for approved
commands, credential stores and deny-read paths are masked, and credentials are not in
any command's environment.

The workspace and HOME live outside the host's /tmp (the sandbox's private /tmp would
hide them, and the tests would prove nothing)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillkit.confinement import READ_ONLY, Confinement
from skillkit.protected import ProtectedFinder
from skillkit.runtime import BackgroundTasks, BashRuntime
from skillkit.runtime.base import ExecutionResult
from skillkit.runtime.sandbox import (
    DEFAULT_MASKED_PATHS,
    Bubblewrap,
    Sandbox,
    default_masked_paths,
    find_bubblewrap,
    load_sandbox_settings,
    sandbox_settings,
)
from skillkit.runtime.spawn import command_environment
from tests.conftest import host_folder_outside_tmp

FOUND = find_bubblewrap()
needs_bwrap = pytest.mark.skipif(
    not isinstance(FOUND, Bubblewrap), reason=f"no usable bubblewrap: {FOUND}"
)

CANARY = "canary-7f3a9c-private-key"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A scratch folder outside the host's /tmp, removed afterwards."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        base = host_folder_outside_tmp()
    folder = Path(tempfile.mkdtemp(prefix="skillkit-confinement-", dir=base))
    yield folder
    subprocess.run(["chmod", "-R", "u+rwX", str(folder)], check=False)
    shutil.rmtree(folder, ignore_errors=True)


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(folder), *args],
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    )


@pytest.fixture
def workspace(outside: Path) -> Path:
    """A repository with a nested repository, agent and editor folders, and notes."""
    folder = outside / "ws"
    folder.mkdir()
    (folder / "notes.txt").write_text("notes\n")
    _git(folder, "init", "-q")
    nested = folder / "vendor" / "lib"
    nested.mkdir(parents=True)
    _git(nested, "init", "-q")
    (folder / ".skillkit" / "plugins").mkdir(parents=True)
    (folder / ".skillkit" / "settings.json").write_text("{}")
    (folder / ".mcp.json").write_text("{}")
    (folder / ".vscode").mkdir()
    return folder


@pytest.fixture
def home(outside: Path) -> Path:
    folder = outside / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text(CANARY + "\n")
    (folder / ".netrc").write_text(f"machine x password {CANARY}\n")
    return folder


def runtime_for(workspace: Path, home: Path | None = None, **kwargs: object) -> BashRuntime:
    masks = default_masked_paths(home) if home is not None else ()
    return BashRuntime(sandbox=Sandbox(workspace=workspace, masked_paths=masks, **kwargs))  # type: ignore[arg-type]


async def run(
    runtime: BashRuntime,
    workspace: Path,
    command: str,
    confinement: Confinement | None,
    env: dict[str, str] | None = None,
) -> ExecutionResult:
    return await runtime.execute(command, workspace, env, 20, confinement=confinement)


# --------------------------------------------------------------------------- read-only


@needs_bwrap
async def test_a_read_only_call_cannot_write_the_workspace_and_reads_the_kernels_error(
    workspace: Path,
) -> None:
    runtime = runtime_for(workspace)
    result = await run(
        runtime,
        workspace,
        "env time --output=.git/config cat notes.txt; echo x > new.txt; "
        "echo y > /tmp/scratch && cat /tmp/scratch",
        READ_ONLY,
    )
    assert "Read-only file system" in result.output
    assert "y\n" in result.output  # the private /tmp is writable
    assert not (workspace / "new.txt").exists()
    assert "[core]" in (workspace / ".git" / "config").read_text()
    await runtime.aclose()


@needs_bwrap
async def test_a_read_only_call_cannot_write_the_extra_writable_paths(
    workspace: Path, outside: Path
) -> None:
    cache = outside / "cache"
    cache.mkdir()
    runtime = runtime_for(workspace, writable_paths=(cache,))
    result = await run(runtime, workspace, f"touch {cache}/x", READ_ONLY)
    assert "Read-only file system" in result.output
    assert not (cache / "x").exists()
    approved = await run(runtime, workspace, f"touch {cache}/x", Confinement())
    assert approved.ok, approved.output
    await runtime.aclose()


@needs_bwrap
async def test_a_read_only_background_task_and_monitor_cannot_write(workspace: Path) -> None:
    tasks = BackgroundTasks(sandbox=Sandbox(workspace=workspace), cwd=workspace)
    task = tasks.start("touch from-task", confinement=READ_ONLY)
    monitor = tasks.start_monitor("touch from-monitor; echo done", confinement=READ_ONLY)
    await tasks.wait(task.id, 20)
    await tasks.wait(monitor.id, 20)
    assert task.status == "failed"
    assert task.result is not None and "Read-only file system" in task.result.output
    assert not (workspace / "from-task").exists()
    assert not (workspace / "from-monitor").exists()
    writable = tasks.start("touch from-task", confinement=Confinement())
    await tasks.wait(writable.id, 20)
    assert writable.status == "completed"
    await tasks.aclose()


async def test_a_read_only_call_without_any_sandbox_object_is_refused(workspace: Path) -> None:
    from skillkit.runtime.spawn import run_process

    with pytest.raises(PermissionError, match="needs a sandbox"):
        await run_process(["true"], lambda fd, data: None, cwd=workspace, confinement=READ_ONLY)


# --------------------------------------------------------------------------- protected paths


@needs_bwrap
@pytest.mark.parametrize("confinement", [Confinement(), None], ids=["approved", "unconfined"])
async def test_an_approved_command_writes_the_workspace_but_not_what_runs_code_later(
    workspace: Path, confinement: Confinement | None
) -> None:
    runtime = runtime_for(workspace)
    before = {
        p: p.read_bytes()
        for p in (
            workspace / ".git" / "config",
            workspace / "vendor" / "lib" / ".git" / "config",
            workspace / ".mcp.json",
        )
    }
    result = await run(
        runtime,
        workspace,
        "echo ok > built.txt; "
        "echo '[core] fsmonitor = evil' >> .git/config; "
        "echo evil > .git/hooks/pre-commit; "
        "echo evil > .git/info/attributes; "
        "echo evil >> vendor/lib/.git/config; "
        "echo evil > .skillkit/plugins/x.py; "
        "echo '{}' > .mcp.json; "
        "echo evil > .vscode/tasks.json; "
        "mv .git .git-old; mv vendor vendor-old; rm -rf .skillkit; "
        "echo objects > .git/objects/probe; true",
        confinement,
    )
    assert (workspace / "built.txt").read_text() == "ok\n"
    assert (workspace / ".git" / "objects" / "probe").exists()  # the rest of .git is writable
    for path, data in before.items():
        assert path.read_bytes() == data, path
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".skillkit" / "plugins" / "x.py").exists()
    assert not (workspace / ".vscode" / "tasks.json").exists()
    assert not (workspace / ".git-old").exists()
    assert not (workspace / "vendor-old").exists()
    assert (workspace / ".skillkit" / "settings.json").exists()
    assert "Read-only file system" in result.output
    await runtime.aclose()


@needs_bwrap
async def test_an_additional_workspace_folder_is_writable_and_guarded_as_the_workspace(
    workspace: Path, outside: Path
) -> None:
    shared = outside / "shared"
    shared.mkdir()
    _git(shared, "init", "-q")
    (shared / ".env").write_text(CANARY)
    config = (shared / ".git" / "config").read_bytes()
    runtime = runtime_for(workspace, additional_workspaces=(shared,), masked_names=(".env",))
    approved = await run(
        runtime,
        workspace,
        f"echo ok > {shared}/built.txt; echo evil > {shared}/.git/hooks/pre-commit; "
        f"echo '[core] fsmonitor = evil' >> {shared}/.git/config; cat {shared}/.env; true",
        Confinement(),
    )
    assert (shared / "built.txt").read_text() == "ok\n"
    assert not (shared / ".git" / "hooks" / "pre-commit").exists()
    assert (shared / ".git" / "config").read_bytes() == config
    assert CANARY not in approved.output  # masked as in the workspace
    read_only = await run(runtime, workspace, f"touch {shared}/x", READ_ONLY)
    assert "Read-only file system" in read_only.output and not (shared / "x").exists()
    await runtime.aclose()


@needs_bwrap
async def test_an_approved_git_commit_works(workspace: Path) -> None:
    runtime = runtime_for(workspace)
    env = {
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@example.com",
    }
    result = await run(
        runtime,
        workspace,
        "git add notes.txt && git commit -qm first && git log --oneline",
        Confinement(),
        env,
    )
    assert result.ok, result.output
    assert "first" in result.output
    await runtime.aclose()


@needs_bwrap
async def test_a_path_approved_by_name_is_writable(workspace: Path) -> None:
    runtime = runtime_for(workspace)
    approved = Confinement(approved_paths=(str(workspace / ".mcp.json"),))
    result = await run(runtime, workspace, "echo '{\"a\": 1}' > .mcp.json", approved)
    assert result.ok, result.output
    assert (workspace / ".mcp.json").read_text() == '{"a": 1}\n'
    # a file inside a protected folder, approved by name, is writable too
    hook = workspace / ".git" / "hooks" / "pre-commit.sample"
    inside = Confinement(approved_paths=(str(hook),))
    result = await run(runtime, workspace, f"echo ok > {hook}; echo no > .git/config", inside)
    assert hook.read_text() == "ok\n"
    assert "[core]" in (workspace / ".git" / "config").read_text()
    await runtime.aclose()


@needs_bwrap
async def test_settings_protected_paths_and_bare_repositories_stay_read_only(
    workspace: Path,
) -> None:
    (workspace / "deploy").mkdir()
    (workspace / "deploy" / "run.sh").write_text("safe\n")
    bare = workspace / "mirror.git"
    _git(workspace, "init", "-q", "--bare", str(bare))
    runtime = runtime_for(workspace, protected_paths=(workspace / "deploy",))
    result = await run(
        runtime,
        workspace,
        "echo evil > deploy/run.sh; echo evil >> mirror.git/config; echo ok > mirror.git/probe",
        Confinement(),
    )
    assert (workspace / "deploy" / "run.sh").read_text() == "safe\n"
    assert "evil" not in (bare / "config").read_text()
    assert (bare / "probe").read_text() == "ok\n"
    assert "Read-only file system" in result.output
    await runtime.aclose()


# --------------------------------------------------------------------------- the scan's bound


def test_the_finder_finds_repositories_at_any_depth_and_in_modules(workspace: Path) -> None:
    deep = workspace / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    _git(deep, "init", "-q")
    module = workspace / ".git" / "modules" / "sub"
    subprocess.run(["git", "init", "-q", "--bare", str(module)], check=True)
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    tree = ProtectedFinder().find(workspace, masked_names=[".env"])
    found = set(tree.protected)
    for path in (
        workspace / ".git" / "config",
        workspace / ".git" / "hooks",
        deep / ".git" / "config",
        module / "config",
        module / "hooks",
        workspace / "sub" / ".git",
        workspace / ".skillkit",
        workspace / ".mcp.json",
        workspace / ".vscode",
        workspace / "vendor" / "lib" / ".git" / "info",
    ):
        assert str(path) in found, path
    assert str(workspace / ".git" / "objects") not in found
    assert tree.unscanned == ()


def test_a_folder_made_after_a_scan_is_found_by_the_next(workspace: Path) -> None:
    finder = ProtectedFinder()
    finder.find(workspace)
    later = workspace / "later"
    later.mkdir()
    _git(later, "init", "-q")
    assert str(later / ".git" / "config") in finder.find(workspace).protected


def test_a_cached_listing_is_used_only_while_the_folder_is_unchanged(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skillkit.protected as protected

    finder = ProtectedFinder(racy_seconds=0.0)
    first = finder.find(workspace)
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(protected.os, "scandir", scandir)
    assert finder.find(workspace) == first
    assert listed == []  # an unchanged tree is not listed again
    time.sleep(0.01)
    (workspace / "vendor" / ".envrc").write_text("evil")
    old = time.time() - 3600
    os.utime(workspace / "vendor", (old, old))  # the mtime set back: the ctime moved on
    assert str(workspace / "vendor" / ".envrc") in finder.find(workspace).protected
    assert listed == [str(workspace / "vendor")]


def test_the_scan_stops_at_its_bound_and_names_what_it_left(workspace: Path) -> None:
    for index in range(30):
        (workspace / "flood" / f"d{index:02}").mkdir(parents=True)
    hidden = workspace / "flood" / "d29" / "repo"
    hidden.mkdir()
    _git(hidden, "init", "-q")
    tree = ProtectedFinder(max_directories=12).find(workspace)
    assert tree.scanned <= 13
    assert tree.unscanned
    assert str(hidden / ".git" / "config") not in tree.protected
    assert any(hidden == Path(p) or Path(p) in hidden.parents for p in tree.unscanned), (
        tree.unscanned
    )


@needs_bwrap
async def test_what_the_bound_leaves_unscanned_stays_read_only(workspace: Path) -> None:
    """Flooding the tree with folders (the attack on the bound) makes the deep part of
    it read-only, never writable with a repository's config unprotected."""
    for index in range(30):
        (workspace / "flood" / f"d{index:02}").mkdir(parents=True)
    hidden = workspace / "flood" / "d29" / "repo"
    hidden.mkdir()
    _git(hidden, "init", "-q")
    sandbox = Sandbox(workspace=workspace, finder=ProtectedFinder(max_directories=12))
    runtime = BashRuntime(sandbox=sandbox)
    result = await run(
        runtime,
        workspace,
        f"echo evil >> {hidden}/.git/config; echo x > {hidden}/file; echo ok > top.txt",
        Confinement(),
    )
    assert "evil" not in (hidden / ".git" / "config").read_text()
    assert not (hidden / "file").exists()
    assert (workspace / "top.txt").read_text() == "ok\n"
    assert "Read-only file system" in result.output
    await runtime.aclose()


# --------------------------------------------------------------------------- masks


@needs_bwrap
@pytest.mark.parametrize("confinement", [READ_ONLY, Confinement()], ids=["read-only", "approved"])
async def test_credential_stores_are_empty_in_every_sandbox(
    workspace: Path, home: Path, confinement: Confinement
) -> None:
    runtime = runtime_for(workspace, home)
    result = await run(
        runtime,
        workspace,
        f'cat "{home}/.ssh/id_rsa"; ls -a "{home}/.ssh"; cat "{home}/.netrc"; '
        f'grep -r {CANARY[:12]} "{home}"; '
        f"python3 -c 'print(open(\"{home}/.ssh/id_rsa\").read())'; true",
        confinement,
        {"HOME": str(home)},
    )
    assert CANARY not in result.output
    assert (home / ".ssh" / "id_rsa").read_text() == CANARY + "\n"
    await runtime.aclose()


@needs_bwrap
async def test_deny_read_paths_and_names_are_masked(workspace: Path, outside: Path) -> None:
    (workspace / ".env").write_text(f"TOKEN={CANARY}\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".env").write_text(f"TOKEN={CANARY}\n")
    secrets_dir = outside / "secrets"
    secrets_dir.mkdir()
    (secrets_dir / "key").write_text(CANARY)
    sandbox = Sandbox(workspace=workspace, masked_paths=())
    sandbox.mask([secrets_dir], names=[".env"])
    runtime = BashRuntime(sandbox=sandbox)
    for confinement in (READ_ONLY, Confinement()):
        result = await run(
            runtime,
            workspace,
            f"cat .env sub/.env {secrets_dir}/key; grep -r {CANARY[:12]} . {secrets_dir}; true",
            confinement,
        )
        assert CANARY not in result.output
    await runtime.aclose()


def test_the_default_masks_name_the_usual_credential_stores(tmp_path: Path) -> None:
    for entry in ("~/.ssh", "~/.aws", "~/.config/gcloud", "~/.netrc", "~/.docker/config.json"):
        assert entry in DEFAULT_MASKED_PATHS
    masks = default_masked_paths(tmp_path)
    assert tmp_path / ".ssh" in masks and tmp_path / ".kube" in masks


def test_masks_and_protected_paths_from_settings_the_project_only_adds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    settings = sandbox_settings(
        [
            (
                "user",
                {"sandbox": {"masked_paths": ["~/.config/op"], "unmasked_paths": ["~/.npmrc"]}},
            ),
            (
                "project",
                {
                    "sandbox": {
                        "protected_paths": ["deploy"],
                        "masked_paths": ["secrets"],
                        "unmasked_paths": ["~/.ssh"],
                    }
                },
            ),
        ],
        trusted=True,
        workspace=workspace,
        home=home,
    )
    assert settings.protected_paths == (workspace / "deploy",)
    assert home / ".config" / "op" in settings.masked_paths
    assert workspace / "secrets" in settings.masked_paths
    assert home / ".npmrc" not in settings.masked_paths  # the user took it off
    assert home / ".ssh" in settings.masked_paths  # the project cannot
    assert any("unmasked_paths" in line for line in settings.ignored)
    sandbox = Sandbox.from_settings(settings, workspace=workspace)
    assert sandbox.protected_paths == settings.protected_paths
    assert sandbox.masked_paths == settings.masked_paths


def test_malformed_mask_and_protected_settings_are_problems(tmp_path: Path) -> None:
    (tmp_path / ".skillkit").mkdir()
    (tmp_path / ".skillkit" / "settings.json").write_text(
        '{"sandbox": {"protected_paths": "x", "masked_paths": [1]}}'
    )
    settings = load_sandbox_settings(tmp_path, trusted=False, home=tmp_path / "home")
    assert len(settings.problems) == 2


# --------------------------------------------------------------------------- environment


def test_the_command_environment_drops_provider_keys_and_secret_names() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-1234567890",
        "GITHUB_TOKEN": "ghp_1234567890",
        "DB_PASSWORD": "hunter2hunter2",
        "MY_SECRET_THING": "x" * 10,
        "PATH": "/usr/bin",
        "TOKENIZERS_PARALLELISM": "false",
        "SSH_AUTH_SOCK": "/run/agent",
    }
    assert command_environment(environ) == {
        "PATH": "/usr/bin",
        "TOKENIZERS_PARALLELISM": "false",
        "SSH_AUTH_SOCK": "/run/agent",
    }


@pytest.mark.parametrize("mode", ["auto", "off"])
async def test_printenv_never_shows_a_key_sandboxed_or_not(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + CANARY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-" + CANARY)
    runtime = BashRuntime(sandbox=Sandbox(mode=mode, workspace=workspace))  # type: ignore[arg-type]
    for env in (None, {"EXTRA": "1"}):
        result = await runtime.execute("printenv", workspace, env, 20, confinement=Confinement())
        assert result.ok
        assert CANARY not in result.output
        assert "OPENAI_API_KEY" not in result.output
    await runtime.aclose()


@needs_bwrap
@pytest.mark.parametrize("confinement", [READ_ONLY, Confinement()], ids=["read-only", "approved"])
async def test_no_namespace_or_mount_trick_undoes_the_protection(
    workspace: Path, confinement: Confinement
) -> None:
    """A new user and mount namespace, unmounting or remounting the binds, renaming the
    protected file: none reaches ``.git/config``."""
    runtime = runtime_for(workspace)
    config = workspace / ".git" / "config"
    before = config.read_bytes()
    await run(
        runtime,
        workspace,
        f"unshare -Urm sh -c 'umount -l {config}; umount -l {workspace}; "
        f"mount -o remount,bind,rw {workspace}; echo evil >> {config}'; "
        f"umount -l {config}; mount -o remount,rw {config}; "
        "mv .git/config .git/config.old; ln .git/config linked; "
        "echo evil > .git/config.new && mv .git/config.new .git/config; true",
        confinement,
    )
    assert config.read_bytes() == before
    assert not (workspace / "linked").exists()
    assert not (workspace / ".git" / "config.old").exists()
    await runtime.aclose()


@needs_bwrap
async def test_too_many_protected_paths_make_the_call_read_only(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skillkit.runtime.sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "MAX_PROTECTED_MOUNTS", 3)
    runtime = runtime_for(workspace)
    result = await run(runtime, workspace, "echo x > out.txt", Confinement())
    assert "Read-only file system" in result.output
    assert not (workspace / "out.txt").exists()
    await runtime.aclose()


def test_many_unscanned_folders_collapse_into_a_few_read_only_parents(tmp_path: Path) -> None:
    from skillkit.runtime.sandbox import _collapse

    root = tmp_path
    folders = [root / "flood" / f"d{i}" / "x" for i in range(50)] + [root / "src" / "deep"]
    collapsed = _collapse(folders, root, 4)
    assert len(collapsed) <= 4
    for folder in folders:  # every folder stays covered
        assert any(folder == c or c in folder.parents for c in collapsed), folder
    assert _collapse(folders, root, 1) == [root]
    assert _collapse(folders[:3], root, 4) == sorted(folders[:3], key=str)


@needs_bwrap
async def test_a_flood_past_the_bound_costs_a_few_mounts_and_stays_read_only(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skillkit.runtime.sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "MAX_UNSCANNED_MOUNTS", 2)
    for index in range(30):
        (workspace / "flood" / f"d{index:02}" / "inner").mkdir(parents=True)
    sandbox = Sandbox(workspace=workspace, finder=ProtectedFinder(max_directories=12))
    argv = sandbox.wrap(["true"], cwd=workspace, confinement=Confinement())
    assert argv.count("--ro-bind") < 20
    runtime = BashRuntime(sandbox=sandbox)
    result = await run(
        runtime, workspace, "echo x > flood/d29/inner/f; echo ok > top.txt", Confinement()
    )
    assert not (workspace / "flood" / "d29" / "inner" / "f").exists()
    assert (workspace / "top.txt").read_text() == "ok\n"
    assert "Read-only file system" in result.output
    await runtime.aclose()


@needs_bwrap
async def test_an_approval_holds_when_the_workspace_is_reached_through_a_symlink(
    workspace: Path, outside: Path
) -> None:
    link = outside / "link-to-ws"
    link.symlink_to(workspace)
    runtime = BashRuntime(sandbox=Sandbox(workspace=link, masked_paths=()))
    approved = Confinement(approved_paths=(str(workspace / ".mcp.json"),))  # real paths
    result = await run(runtime, link, "echo '{}' > .mcp.json; echo x >> .git/config", approved)
    assert (workspace / ".mcp.json").read_text() == "{}\n"
    assert "x" not in (workspace / ".git" / "config").read_text().split()
    assert "Read-only file system" in result.output
    await runtime.aclose()
