"""GGUF files registered by name: ``skillkit local add NAME PATH`` and ``local:NAME``."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillkit.cli import main
from skillkit.local import ModelFileError, model_path_from_string
from skillkit.local.named import add_model, named_models, remove_model, resolve_name
from tests.local.gguf_files import write_gguf

TEMPLATES = Path(__file__).parent / "templates"


def _gguf(folder: Path, template: str = "qwen2.5-tags.jinja") -> Path:
    chat = (TEMPLATES / template).read_text(encoding="utf-8")
    return write_gguf(
        folder / "tiny-qwen.gguf",
        {"general.architecture": "qwen2", "tokenizer.chat_template": chat},
    )


def test_a_registered_name_resolves_to_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLKIT_HOME", str(tmp_path / "home"))
    path = add_model("qwen-tiny", _gguf(tmp_path))
    assert named_models() == {"qwen-tiny": str(path)}
    assert resolve_name("qwen-tiny") == path
    assert model_path_from_string("local:qwen-tiny") == path
    assert model_path_from_string("local:other.gguf") == Path("other.gguf")
    assert remove_model("qwen-tiny") and not remove_model("qwen-tiny")
    assert resolve_name("qwen-tiny") is None


def test_a_file_that_is_not_gguf_or_a_bad_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLKIT_HOME", str(tmp_path / "home"))
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ModelFileError):
        add_model("notes", text)
    with pytest.raises(ModelFileError):
        add_model("bad name", _gguf(tmp_path))
    assert named_models() == {}


def test_the_command_line_adds_lists_and_removes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLKIT_HOME", str(tmp_path / "home"))
    path = _gguf(tmp_path)
    assert main(["local", "add", "qwen-tiny", str(path)]) == 0
    assert "local:qwen-tiny" in capsys.readouterr().out
    assert main(["local", "list"]) == 0
    assert f"local:qwen-tiny\t{path}" in capsys.readouterr().out
    assert main(["local", "remove", "qwen-tiny"]) == 0
    assert main(["local", "remove", "qwen-tiny"]) == 1
    assert "no model registered" in capsys.readouterr().err
