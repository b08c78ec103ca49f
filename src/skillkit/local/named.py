"""GGUF files registered by name: ``skillkit local add NAME PATH`` makes ``local:NAME`` work.

The names live in ``~/.skillkit/local-models.json`` (``SKILLKIT_HOME`` or ``home``
overrides the folder), a JSON object of name -> absolute path. A name is letters,
digits, ``.``, ``_`` and ``-``, and may not end in ``.gguf`` (that is a path).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from skillkit.local.errors import ModelFileError

__all__ = ["add_model", "named_models", "registry_file", "remove_model", "resolve_name"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def registry_file(home: Path | None = None) -> Path:
    """Where the names are kept."""
    base = home or Path(os.environ.get("SKILLKIT_HOME") or Path.home() / ".skillkit")
    return base / "local-models.json"


def named_models(home: Path | None = None) -> dict[str, str]:
    """Every registered name and its path ({} when none; a broken file is an error)."""
    path = registry_file(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{path} is not a JSON object of name -> GGUF path")
    return {str(k): str(v) for k, v in data.items()}


def resolve_name(name: str, home: Path | None = None) -> Path | None:
    """The path registered as ``name`` (None when it is not a registered name)."""
    if not _NAME.match(name) or name.endswith(".gguf"):
        return None
    found = named_models(home).get(name)
    return Path(found) if found is not None else None


def add_model(name: str, path: Path, home: Path | None = None) -> Path:
    """Register ``path`` (an existing GGUF file) as ``name``; returns its absolute path.
    Raises `ModelFileError` for a bad name or a file that is not GGUF."""
    from skillkit.local.gguf import read_gguf_info

    if not _NAME.match(name) or name.endswith(".gguf"):
        raise ModelFileError(
            f"bad model name {name!r}: use letters, digits, '.', '_' and '-' (not ending .gguf)"
        )
    target = Path(os.path.expanduser(str(path))).resolve()
    read_gguf_info(target)  # a one-line ModelFileError when it is not a readable GGUF
    models = named_models(home)
    models[name] = str(target)
    _write(models, home)
    return target


def remove_model(name: str, home: Path | None = None) -> bool:
    """Forget ``name``; returns whether it was registered."""
    models = named_models(home)
    if models.pop(name, None) is None:
        return False
    _write(models, home)
    return True


def _write(models: dict[str, str], home: Path | None) -> None:
    path = registry_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(models, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(path)
