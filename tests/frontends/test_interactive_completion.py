"""Tab completion at the prompt (slash commands, a model id, ``@`` file mentions) in a
real terminal, and the pieces behind it: fuzzy file search and attached mentions."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from skillkit.frontends.interactive import attach_mentions, fuzzy_files, workspace_files
from tests.frontends.tmux_terminal import Terminal


def project(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "project"
    work.mkdir()
    (work / "README.md").write_text("# Demo\nthe readme says hello\n")
    (work / "src").mkdir()
    (work / "src" / "reader.py").write_text("x = 1\n")
    script = tmp_path / "model.yaml"
    script.write_text(json.dumps({"replies": [{"text": "Read it."}], "cycle": True}))
    return work, f"scripted:{script}"


def _input_line(screen: str) -> str:
    return next(line for line in reversed(screen.splitlines()) if line.startswith("›"))


def test_tab_completes_a_command_a_model_id_and_a_file_mention(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, model = project(tmp_path)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)

    terminal.press("-l", "/mode")
    terminal.press("Tab")
    screen = terminal.wait_for("/model")  # the menu offers /mode and /model
    terminal.press("C-u")

    terminal.press("-l", "/model anthropic:claude-sonnet-4-")
    terminal.press("Tab")
    terminal.wait_for("  anthropic:claude-sonnet-4-5")  # the ids offered
    terminal.press("Tab")  # the first one taken: the typed prefix grows into an id
    terminal.wait_for(
        lambda s: (
            "/model anthropic:claude-sonnet-4-" in _input_line(s)
            and _input_line(s).split()[-1] != "anthropic:claude-sonnet-4-"
        )
    )
    terminal.press("Escape")
    terminal.press("C-u")

    terminal.press("-l", "look at @REA")
    terminal.press("Tab")
    terminal.wait_for("  @README.md")  # offered first, before src/reader.py
    terminal.press("Tab")
    terminal.wait_for(lambda s: _input_line(s).rstrip().endswith("look at @README.md"))
    terminal.press("Enter")
    screen = terminal.wait_for("● done")
    assert "↳ attached README.md" in screen
    assert "Read it." in screen


def test_fuzzy_search_ranks_names_that_start_with_the_query_first(tmp_path: Path) -> None:
    files = ["docs/guide/readme-old.txt", "src/reader.py", "README.md", "tests/r_e_a.py"]
    assert fuzzy_files("REA", files) == [
        "README.md",
        "src/reader.py",
        "docs/guide/readme-old.txt",
        "tests/r_e_a.py",
    ]
    assert fuzzy_files("zzz", files) == []


def test_the_workspace_files_respect_gitignore(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.txt").write_text("x")
    (tmp_path / "app.py").write_text("x")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert workspace_files(tmp_path) == [".gitignore", "app.py"]


def test_a_mention_attaches_a_bounded_text_file_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "big.txt").write_text("y" * 30_000)
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2")
    text, attached = attach_mentions(
        "see @notes.txt, @big.txt @blob.bin @../etc/passwd @missing.md", tmp_path
    )
    assert attached == ["notes.txt", "big.txt"]
    assert '<file path="notes.txt">\nhello\n\n</file>' in text
    assert "[… cut at 20,000 bytes]" in text and "y" * 20_001 not in text
    assert text.startswith("see @notes.txt, @big.txt")


def test_tab_completes_the_sessions_labels_and_entry_ids_for_tree(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, model = project(tmp_path)
    terminal.start("--model", model, cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("hello there")
    terminal.wait_for("● done")
    terminal.wait_for_prompt()
    terminal.type("/label before-the-fix")
    terminal.wait_for_prompt_count(3)

    terminal.press("-l", "/tree ")
    terminal.press("Tab")
    screen = terminal.wait_for("label of ")
    assert "before-the-fix" in screen
    assert "assistant: Read it." in screen  # an entry id, shown with what it is
    assert "user: hello there" in screen
    terminal.press("Tab")  # the first one (the label) taken
    terminal.wait_for(lambda s: _input_line(s).rstrip().endswith("/tree before-the-fix"))
    terminal.press("Escape")
    terminal.press("C-u")
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def test_an_image_mention_is_refused_in_one_line_for_a_model_without_images(
    terminal: Terminal, tmp_path: Path
) -> None:
    work, _ = project(tmp_path)
    (work / "shot.png").write_bytes(PNG)
    model = "ollama:gpt-oss:20b"  # a catalog model that takes text only
    terminal.start("--model", model, "--base-url", "http://127.0.0.1:9/v1", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("what is in @shot.png?")
    screen = terminal.wait_for("(@shot.png)")
    said = " ".join(screen[screen.index("✗ not sent:") :].split())  # the line may wrap
    assert said.startswith(f"✗ not sent: {model} does not take images (@shot.png)")
    terminal.wait_for_prompt_count(2)
    assert "●" not in terminal.screen()  # no run started: nothing reached the model
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


class _ChatServer(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible server that keeps each request's body and answers in text."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        type(self).bodies.append(json.loads(self.rfile.read(length)))
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "A red dot."}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = (
            b"".join(
                b"data: "
                + json.dumps(
                    {
                        "id": "c1",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "m",
                        **chunk,
                    }
                ).encode()
                + b"\n\n"
                for chunk in chunks
            )
            + b"data: [DONE]\n\n"
        )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def chat_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []
    handler = type("Handler", (_ChatServer,), {"bodies": bodies})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", bodies
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_an_image_mention_reaches_a_model_that_takes_images(
    terminal: Terminal,
    tmp_path: Path,
    chat_server: tuple[str, list[dict[str, Any]]],
) -> None:
    url, bodies = chat_server
    work, _ = project(tmp_path)
    (work / "shot.png").write_bytes(PNG)
    terminal.start("--model", "openai-compatible:vision", "--base-url", url, "--no-tools", cwd=work)
    terminal.wait_for_prompt_count(1)
    terminal.type("what is in @shot.png?")
    screen = terminal.wait_for("● done")
    assert "↳ with shot.png" in screen and "A red dot." in screen
    (request,) = bodies
    (user,) = [m for m in request["messages"] if m["role"] == "user"]
    kinds = [part["type"] for part in user["content"]]
    assert kinds == ["text", "image_url"]
    image = user["content"][1]["image_url"]["url"]
    assert image == "data:image/png;base64," + base64.b64encode(PNG).decode()
    terminal.press("C-d")
    assert terminal.wait_exit() == 0


def test_an_outgoing_prompt_carries_images_and_refuses_what_it_cannot_send(
    tmp_path: Path,
) -> None:
    from skillkit.frontends.prompt_completion import outgoing_prompt
    from skillkit.model_registry import ModelDefinition
    from skillkit.models import ImagePart, TextPart

    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "fake.png").write_text("not an image at all")
    (tmp_path / "huge.png").write_bytes(PNG + b"\0" * (5 * 1024 * 1024))
    unknown: dict[str, ModelDefinition] = {}

    prompt, shown = outgoing_prompt("see @shot.png and @notes.txt", tmp_path, "m", unknown.get)
    assert isinstance(prompt, list)
    text, image = prompt
    assert isinstance(text, TextPart) and '<file path="notes.txt">' in text.text
    assert image == ImagePart(base64.b64encode(PNG).decode(), "image/png")
    assert shown == "↳ with notes.txt, shot.png"

    assert outgoing_prompt("plain words", tmp_path, "m", unknown.get) == ("plain words", "")
    for local in ("local", "local:qwen2.5-0.5b"):  # the embedded model reads text only
        with pytest.raises(ValueError, match=rf"^✗ not sent: {local} does not take images"):
            outgoing_prompt("see @shot.png", tmp_path, local, unknown.get)
    with pytest.raises(ValueError, match=r"^✗ not sent: @fake.png: not a PNG, JPEG, GIF"):
        outgoing_prompt("see @fake.png", tmp_path, "m", unknown.get)
    with pytest.raises(ValueError, match=r"^✗ not sent: @huge.png: larger than"):
        outgoing_prompt("see @huge.png", tmp_path, "m", unknown.get)


def test_images_are_found_by_mention_or_pasted_path_but_not_by_a_name_in_a_sentence(
    tmp_path: Path,
) -> None:
    from skillkit.frontends.prompt_completion import mentioned_images

    work = tmp_path / "work"
    (work / "art").mkdir(parents=True)
    (work / "art" / "logo.PNG").write_bytes(b"\x89PNG")
    (work / "notes.md").write_text("not an image")
    pasted = tmp_path / "Screen Shot.jpg"
    pasted.write_bytes(b"\xff\xd8")

    text = f'compare @art/logo.PNG with "{pasted}", then @notes.md and @gone.png'
    assert mentioned_images(text, work) == ["art/logo.PNG", str(pasted)]
    assert mentioned_images("rename logo.png to icon.png", work) == []
    assert mentioned_images(f"{tmp_path}/missing.png please", work) == []
