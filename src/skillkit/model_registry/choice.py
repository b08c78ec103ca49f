"""Which model a session uses, and why: `choose_model` and the settings files' ``model``.

The model is taken from the first of these that names one (`ModelChoice.source` says
which it was):

1. ``--model`` (the command line);
2. the ``SKILLKIT_MODEL`` environment variable;
3. the ``model`` entry of the settings files (`load_model_settings`): the project's
   ``.skillkit/settings.local.json`` and ``.skillkit/settings.json`` — only when the
   project is trusted — then the user's ``~/.skillkit/settings.json``;
4. the default model of the first provider whose API key is set
   (`PROVIDER_DEFAULT_MODELS`: ``ANTHROPIC_API_KEY`` gives ``anthropic:claude-sonnet-4-5``,
   ``OPENAI_API_KEY`` gives ``openai:gpt-4o``, ...);
5. the embedded local model (``local``).

``base_url``, ``api_key_env`` and ``options`` come from the flags, else from the same
settings entry that named the model (a settings entry never lends its endpoint to a
model chosen elsewhere). An untrusted project's ``model`` entry is ignored as a whole —
it could otherwise send the user's API key to a server of the project's choosing, or
name another secret variable as the key — and the reason is in
`ModelSettings.ignored`.

A settings entry is either a model string or an object::

    {"model": "anthropic:claude-sonnet-4-5"}
    {"model": {"name": "qwen3:8b", "provider": "ollama", "options": {"temperature": 0.2}}}
    {"model": {"name": "my-model", "base_url": "http://gpu:8000/v1",
               "api_key_env": "MY_SERVER_KEY", "capabilities": ["text", "tool_use"]}}

``capabilities`` declares what a model the catalog does not know takes (the catalog's
names: ``text``, ``image``, ``pdf``, ``audio``, ``video``, ``tool_use``, ``reasoning``,
``structured_output``); without ``image`` an image in the conversation is sent to it
as a one-line note. A key SkillKit does not know is a problem line, and the rest of the
entry is still used — an entry is never dropped for it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillkit import safejson

__all__ = [
    "PROVIDER_DEFAULT_MODELS",
    "ModelChoice",
    "ModelSettings",
    "choose_model",
    "load_model_settings",
    "read_model_entry",
]

PROVIDER_DEFAULT_MODELS: tuple[tuple[str, str], ...] = (
    ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
    ("OPENAI_API_KEY", "openai:gpt-4o"),
    ("GEMINI_API_KEY", "google:gemini-2.5-flash"),
    ("GOOGLE_API_KEY", "google:gemini-2.5-flash"),
    ("DEEPSEEK_API_KEY", "deepseek:deepseek-v4-flash"),
    ("MINIMAX_API_KEY", "minimax:MiniMax-M2.1"),
)
"""The model used when no model is named and a provider's key is set, in order of
preference: (environment variable, model string)."""

_KEYS = ("name", "provider", "base_url", "api_key_env", "options", "capabilities")
CAPABILITY_NAMES = frozenset(
    {"text", "image", "pdf", "audio", "video", "tool_use", "reasoning", "structured_output"}
)
"""The names a settings entry's ``capabilities`` may use (the catalog's)."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """The ``model`` entry the settings files give (all None when none does).

    ``source`` is the file it came from; ``ignored`` lists entries not honoured (an
    untrusted project's) and ``problems`` malformed ones, one line each."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    capabilities: frozenset[str] | None = None
    source: str | None = None
    ignored: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model a session will use. ``source`` says where the choice came from
    (``--model``, ``SKILLKIT_MODEL``, a settings file's path, ``ANTHROPIC_API_KEY is
    set``, ``default: ...``); ``notice`` is a line worth showing the user (None: nothing to
    say; it has no ``skillkit:`` prefix). ``base_url``, ``api_key_env`` and ``options``
    go with the model; ``capabilities`` too (None: the catalog's, or all for a model it
    does not know)."""

    model: str
    source: str
    base_url: str | None = None
    api_key_env: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    notice: str | None = None
    capabilities: frozenset[str] | None = None


def read_model_entry(value: object, where: str) -> tuple[ModelSettings | None, str | None]:
    """One settings file's ``model`` value as `ModelSettings` (None when it names no
    model), and a one-line problem (None: none). An unknown key or a bad
    ``capabilities`` is a problem but the entry is still returned. Never raises."""
    if isinstance(value, str):
        text = value.strip()
        return (ModelSettings(model=text, source=where) if text else None), None
    if not isinstance(value, Mapping):
        return None, f"{where}: 'model' must be a model string or an object"
    notes: list[str] = []
    unknown = sorted(str(k) for k in value if k not in _KEYS)
    if unknown:
        notes.append(f"unknown key(s) in 'model' not used: {', '.join(unknown)}")
    capabilities, note = _capabilities(value.get("capabilities"))
    if note:
        notes.append(note)
    texts: dict[str, str | None] = {}
    for key in ("name", "provider", "base_url", "api_key_env"):
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            return None, f"{where}: 'model.{key}' must be a string"
        texts[key] = (item.strip() or None) if isinstance(item, str) else None
    options = value.get("options", {})
    if not isinstance(options, Mapping):
        return None, f"{where}: 'model.options' must be an object"
    name, provider = texts["name"], texts["provider"]
    if name is None:
        return None, f"{where}: 'model' needs a 'name'"
    model = f"{provider}:{name}" if provider else name
    entry = ModelSettings(
        model=model,
        base_url=texts["base_url"],
        api_key_env=texts["api_key_env"],
        options=dict(options),
        capabilities=capabilities,
        source=where,
    )
    return entry, (f"{where}: {'; '.join(notes)}" if notes else None)


def _capabilities(value: object) -> tuple[frozenset[str] | None, str | None]:
    """A ``capabilities`` value as a set of known names, and a problem line (names
    SkillKit does not know are left out and named)."""
    if value is None:
        return None, None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None, "'model.capabilities' must be a list of strings (not used)"
    names = {v.strip() for v in value}
    unknown = sorted(names - CAPABILITY_NAMES)
    known = frozenset(names & CAPABILITY_NAMES)
    if unknown:
        choices = ", ".join(sorted(CAPABILITY_NAMES))
        return known, f"unknown capabilities {', '.join(unknown)} not used (known: {choices})"
    return known, None


def load_model_settings(
    workspace: str | os.PathLike[str],
    *,
    trusted: bool,
    home: str | os.PathLike[str] | None = None,
) -> ModelSettings:
    """The ``model`` entry of the settings files for ``workspace``: the project's own
    (``settings.local.json`` over ``settings.json``) when ``trusted``, else the user's
    ``~/.skillkit/settings.json`` (``home``: where that file lives). Never raises;
    unreadable files and malformed entries are `ModelSettings.problems`."""
    home_dir = Path(home) if home is not None else Path.home()
    project = Path(workspace) / ".skillkit"
    files = [  # lowest precedence first; a workspace at home reads the user's file once
        (home_dir / ".skillkit" / "settings.json", False),
        (project / "settings.json", True),
        (project / "settings.local.json", True),
    ]
    ignored: list[str] = []
    problems: list[str] = []
    seen: set[str] = set()
    found: ModelSettings | None = None
    for path, in_project in files:
        real = os.path.realpath(path)
        if real in seen or not path.is_file():
            continue
        seen.add(real)
        try:
            data = safejson.loads(path.read_bytes())
        except (OSError, safejson.JSONError) as exc:
            problems.append(f"{path}: cannot read: {' '.join(str(exc).split())[:200]}")
            continue
        if not isinstance(data, Mapping) or "model" not in data:
            continue
        if in_project and not trusted:
            ignored.append(
                f"{path}: ignored 'model': the project is not trusted "
                f"(`skillkit plugins trust` trusts {Path(workspace)})"
            )
            continue
        entry, problem = read_model_entry(data["model"], str(path))
        if problem:
            problems.append(problem)
        if entry is not None:
            found = entry
    base = found or ModelSettings()
    return ModelSettings(
        model=base.model,
        base_url=base.base_url,
        api_key_env=base.api_key_env,
        options=base.options,
        capabilities=base.capabilities,
        source=base.source,
        ignored=tuple(ignored),
        problems=tuple(problems),
    )


def choose_model(
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    settings: ModelSettings | None = None,
    environ: Mapping[str, str] | None = None,
    local_notice: str | Callable[[], str] | None = None,
) -> ModelChoice:
    """The model to use (see the module docs for the order). ``model``, ``base_url``
    and ``api_key_env`` are the command-line flags; ``local_notice`` is the line shown
    when the embedded local model is the fallback (or a function making it, called only
    then). Never raises."""
    env = os.environ if environ is None else environ
    settings = settings or ModelSettings()

    def made(name: str, source: str, notice: str | None = None) -> ModelChoice:
        return ModelChoice(name, source, base_url, api_key_env, notice=notice)

    if model is not None and model.strip():
        return made(model.strip(), "--model")
    named = env.get("SKILLKIT_MODEL", "").strip()
    if named:
        return made(named, "SKILLKIT_MODEL")
    if settings.model:
        return ModelChoice(
            settings.model,
            settings.source or "settings",
            base_url=base_url or settings.base_url,
            api_key_env=api_key_env or settings.api_key_env,
            options=dict(settings.options),
            capabilities=settings.capabilities,
        )
    for variable, default in PROVIDER_DEFAULT_MODELS:
        if env.get(variable, "").strip():
            notice = (
                f"no model chosen; {variable} is set, so using {default} "
                f"(choose another with --model or SKILLKIT_MODEL)"
            )
            return made(default, f"{variable} is set", notice)
    local = local_notice() if callable(local_notice) else local_notice
    return made("local", "default: no model named, no provider key found", local)
