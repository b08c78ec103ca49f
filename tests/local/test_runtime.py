"""Loading the runtime: what each import failure tells the user; thread count."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillkit.local import runtime
from skillkit.local.runtime import default_threads, runtime_error


def test_missing_libgomp_says_what_to_install() -> None:
    error = runtime_error(
        ImportError("libgomp.so.1: cannot open shared object file: No such file or directory")
    )
    message = str(error)
    assert "libgomp" in message and "apt-get install libgomp1" in message
    assert "OPENAI_API_KEY" in message and "\n" not in message


def test_runtime_not_installed_on_a_supported_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "prebuilt_wheel_expected", lambda: True)
    message = str(runtime_error(ModuleNotFoundError("No module", name="xllamacpp")))
    assert "pip install xllamacpp==2026.10.11549" in message


def test_a_platform_without_a_wheel_is_told_to_build_or_go_hosted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runtime, "prebuilt_wheel_expected", lambda: False)
    message = str(runtime_error(ModuleNotFoundError("No module", name="xllamacpp")))
    assert "no prebuilt wheel" in message
    assert "C++17 compiler" in message and "ANTHROPIC_API_KEY" in message


def test_another_load_failure_suggests_a_reinstall() -> None:
    message = str(runtime_error(OSError("undefined symbol: ggml_init")))
    assert "undefined symbol: ggml_init" in message and "--force-reinstall" in message


def test_this_machine_expects_a_wheel() -> None:
    assert runtime.prebuilt_wheel_expected()  # CI and development run on glibc x86-64


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (3, 1), (4, 2), (8, 4), (64, 8)])
def test_threads_leave_room_for_the_agent(
    cpus: int, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SKILLKIT_LOCAL_THREADS", raising=False)
    assert default_threads(cpus) == threads


def test_threads_environment_variable_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLKIT_LOCAL_THREADS", "3")
    assert default_threads(64) == 3
    monkeypatch.setenv("SKILLKIT_LOCAL_THREADS", "zero")
    with pytest.raises(ValueError, match="SKILLKIT_LOCAL_THREADS must be a positive integer"):
        default_threads()


def test_a_broken_runtime_gives_one_line_not_a_traceback(tmp_path: Path) -> None:
    fake = tmp_path / "xllamacpp"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        'raise ImportError("libgomp.so.1: cannot open shared object file: No such file")\n'
    )
    script = textwrap.dedent(
        """
        import sys
        from skillkit.cli import build_parser
        from skillkit.local.cli import register
        args = build_parser([register]).parse_args(["local", "serve", "--port", "0"])
        sys.exit(args.handler(args))
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("skillkit: error: local serve:") and "libgomp" in lines[0]
