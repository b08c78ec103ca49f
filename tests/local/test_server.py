"""`LocalServer`: starting, stopping, and the one-line errors a user can act on."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from skillkit.local import (
    LocalServer,
    ModelFileError,
    PortInUseError,
    ServerStartError,
    default_notice,
    start_default,
)
from tests.local.gguf_files import write_gguf


def _get(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as response:
        result: dict[str, object] = json.loads(response.read())
        return result


def _refused(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=5).close()
    except urllib.error.URLError:
        return True
    return False


def test_serves_on_loopback_with_a_free_port_and_stops(default_gguf: Path) -> None:
    with LocalServer(threads=1, context_window=512, reproducible=True) as server:
        assert server.running
        assert server.url.startswith("http://127.0.0.1:") and server.port > 0
        assert server.base_url == server.url + "/v1"
        assert server.anthropic_base_url == server.url
        assert _get(server.url + "/health") == {"status": "ok"}
        models = _get(server.base_url + "/models")
        assert [m["id"] for m in models["data"]] == ["smollm2-135m-instruct"]  # type: ignore[index,union-attr]
        url = server.url
    assert not server.running
    assert _refused(url + "/health")
    with pytest.raises(ServerStartError, match="not running"):
        _ = server.base_url


def test_start_and_stop_are_idempotent(default_gguf: Path) -> None:
    server = LocalServer(threads=1, context_window=256)
    assert server.start() is server
    url = server.url
    assert server.start().url == url
    server.stop()
    server.stop()
    assert not server.running


async def test_async_context_manager_starts_and_stops(default_gguf: Path) -> None:
    async with LocalServer(threads=1, context_window=256) as server:
        assert _get(server.url + "/health") == {"status": "ok"}
        url = server.url
    assert _refused(url + "/health")


def test_settings_reach_the_server(default_gguf: Path) -> None:
    with LocalServer(threads=1, context_window=768, alias="tiny") as server:
        props = _get(server.url + "/props")
        assert props["default_generation_settings"]["n_ctx"] == 768  # type: ignore[index]
        assert server.threads == 1 and server.context_window == 768
        assert server.model_id == "tiny" and server.template == "tools"
        assert "<tool_call>" in str(props["chat_template"])


def test_the_models_own_template_can_be_chosen(default_gguf: Path) -> None:
    with LocalServer(threads=1, context_window=256, chat_template="model") as server:
        props = _get(server.url + "/props")
        assert "<tool_call>" not in str(props["chat_template"])
        assert props["chat_template_caps"]["supports_tools"] is False  # type: ignore[index]


def test_start_default_and_its_notice(default_gguf: Path) -> None:
    server = start_default(threads=1, context_window=256)
    try:
        notice = default_notice(server)
        assert "SmolLM2 135M" in notice and server.base_url in notice
        assert "OPENAI_API_KEY" in notice and "--model" in notice
        assert "\n" not in notice
    finally:
        server.stop()


def test_missing_gguf_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"^model file not found: .*absent\.gguf$"):
        LocalServer(tmp_path / "absent.gguf").start()


def test_a_file_that_is_not_gguf_is_refused_before_loading(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_text("<html>404 Not Found</html>")
    with pytest.raises(ModelFileError, match="not a GGUF model file"):
        LocalServer(path).start()


def test_a_gguf_without_weights_fails_with_one_line(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "empty.gguf", {"general.architecture": "llama"}, tensors=3)
    with pytest.raises(ServerStartError) as caught:
        LocalServer(path, threads=1).start()
    assert "llama.cpp could not load" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_port_in_use_is_reported(default_gguf: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"port {port} on 127.0.0.1 is already in use"):
            LocalServer(port=port).start()


def test_a_fixed_port_is_used(default_gguf: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with LocalServer(port=port, threads=1, context_window=256) as server:
        assert server.port == port


def test_bad_arguments_raise_at_once() -> None:
    with pytest.raises(ValueError, match="threads"):
        LocalServer(threads=0)
    with pytest.raises(ValueError, match="port"):
        LocalServer(port=70000)


def test_a_running_server_never_outlives_the_process(default_gguf: Path) -> None:
    script = textwrap.dedent(
        """
        from skillkit.local import start_default
        server = start_default(threads=1, context_window=256)
        print(server.url, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert _refused(done.stdout.strip() + "/health")
