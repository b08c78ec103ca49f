"""What the command asks for (`AgentOptions`) and the model it leads to: which one
(`choose_model_for`), the configuration and key it is sent with (`agent_config`), the
adapter that serves it (`make_adapter`); and what every part of the assembly shares —
`SetupError`, the one-line form of a message, the trust store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.adapters.factory import Providers
    from skillkit.config import AgentConfig, ReasoningLevel
    from skillkit.extensions.manager import PluginManager
    from skillkit.model_registry.choice import ModelChoice, ModelSettings
    from skillkit.runtime.sandbox import SandboxMode
    from skillkit.session import Session
    from skillkit.trust import TrustStore

__all__ = [
    "AgentOptions",
    "SetupError",
    "agent_config",
    "api_key",
    "choose_model_for",
    "make_adapter",
    "one_line",
    "trust_store",
]


class SetupError(ValueError):
    """The agent cannot be made (unknown model, unreadable script, malformed rule flag);
    the message is one line, ready to show after ``skillkit: error:``."""


@dataclass(frozen=True)
class AgentOptions:
    """What the command line asks for.

    ``workspace`` is where file tools are confined, ``bash`` runs and project settings,
    skills and plugins are found. ``tools=False`` offers no built-in tools (skills and
    ``ask_user`` stay). ``permission_mode`` overrides the settings files' default mode;
    ``bypass`` starts in bypass mode (an explicit flag; never read from a file).
    ``allow`` / ``deny`` are rule flags (``bash(npm test:*)``). ``home`` is where user
    settings, skills and the trust store live (the user's home when None).
    ``trust_project`` decides about the project's own plugin files (None: the
    environment variable, the trust store, then the prompt, if any). ``sandbox`` is the
    ``--sandbox`` mode (None: the settings files', else ``auto``). ``model`` is the
    ``--model`` flag (None: chosen as `build_agent` says); ``base_url`` and
    ``api_key_env`` the ``--base-url`` / ``--api-key-env`` flags (the name of the
    variable holding the key); ``max_turns`` bounds the model calls of one run
    (None: `AgentConfig`'s default), ``max_cost`` its cost in US dollars (None: no
    limit; `AgentConfig.max_cost_usd`); ``fallback_models`` go on with a run whose model
    failed (`AgentConfig.fallback_models`); ``approvals`` is what a run does at an
    approval nobody answers (``--approvals``; None: `AgentConfig`'s ``ask``). ``session`` says
    what is recorded (`skillkit.session`): nothing (``off``), a new session of the
    workspace, the latest one (``continue``, a new one if none) or ``session_ref``
    (``open``: an id, id prefix or path), kept in the store ``session_store`` names
    (a URL, `skillkit.session.open_store`; None: the JSONL files under ``home``).
    ``reasoning`` is the ``--reasoning`` level
    (None: the provider's default). ``system_prompt`` replaces SkillKit's default system
    prompt (``--system-prompt``); ``append_system_prompt`` is added after the project
    instructions (``--append-system-prompt``); ``instructions=False`` reads no
    ``AGENTS.md`` / ``CLAUDE.md`` files (the environment lines stay).
    ``additional_directories`` (absolute) count as workspace too: the file tools reach
    them, the permission gate judges them as the workspace, and commands may write
    there in the sandbox (an editor's extra workspace folders, over ACP).
    """

    model: str | None = None
    workspace: Path = field(default_factory=Path.cwd)
    tools: bool = True
    permission_mode: str | None = None
    bypass: bool = False
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    home: Path | None = None
    trust_project: bool | None = None
    sandbox: SandboxMode | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_turns: int | None = None
    max_cost: float | None = None
    fallback_models: Sequence[str] = ()
    approvals: Literal["ask", "defer"] | None = None
    session: Literal["off", "new", "continue", "open"] = "off"
    session_ref: str | None = None
    session_store: str | None = None
    reasoning: ReasoningLevel | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    instructions: bool = True
    additional_directories: Sequence[Path] = ()


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def trust_store(home: Path | None) -> TrustStore | None:
    """The trust store under ``home`` (None: the default one, under the user's home)."""
    if home is None:
        return None
    from skillkit.trust import TrustStore

    return TrustStore(Path(home) / ".skillkit" / "trusted-projects.json")


def choose_model_for(
    options: AgentOptions, workspace: Path, *, environ: Mapping[str, str] | None = None
) -> tuple[ModelChoice, ModelSettings]:
    """The model ``options`` lead to in ``workspace`` (see `choose_model`), and the
    settings entry read on the way (its ``ignored`` / ``problems`` lines). The project's
    ``model`` entry counts only when the project is trusted: ``options.trust_project``,
    else ``SKILLKIT_TRUST_PROJECT`` or the trust store — never a prompt."""
    from skillkit.model_registry.choice import choose_model, load_model_settings
    from skillkit.trust import TrustStore, settled_trust

    store = trust_store(options.home) or TrustStore()
    try:
        trusted, _ = settled_trust(
            workspace, trusted=options.trust_project, store=store, environ=environ
        )
    except Exception:  # fail closed: an unreadable trust decision is no trust
        trusted = False
    settings = load_model_settings(workspace, trusted=trusted is True, home=options.home)
    choice = choose_model(
        model=options.model,
        base_url=options.base_url,
        api_key_env=options.api_key_env,
        settings=settings,
        environ=environ,
        local_notice=_local_notice,
    )
    return choice, settings


def agent_config(
    options: AgentOptions, choice: ModelChoice, session: Session | None
) -> AgentConfig:
    """The runner's configuration: the chosen model, the flags' prompt, reasoning and
    limits (``--max-turns``, ``--max-cost``, ``--fallback-model``), ``--approvals``, the
    session's id as the prompt cache key."""
    from skillkit.config import AgentConfig

    config = AgentConfig(
        model=choice.model,
        base_url=choice.base_url,
        api_key=api_key(choice.api_key_env),
        options=choice.options,
        system_prompt=options.system_prompt or "",
        reasoning=options.reasoning,
        prompt_cache_key=session.id if session is not None else None,
        max_cost_usd=options.max_cost,
        fallback_models=list(options.fallback_models),
    )
    if options.max_turns is not None:
        config = msgspec.structs.replace(config, max_iterations=options.max_turns)
    if options.approvals is not None:
        config = msgspec.structs.replace(config, approvals=options.approvals)
    return config


def _local_notice() -> str:
    """The line about the embedded local model (imported only when it is the choice)."""
    from skillkit.local import default_notice

    return default_notice()


def api_key(variable: str | None) -> str | None:
    """The key in the environment variable ``variable`` (None: no variable named); a
    `SetupError` when it is not set."""
    if variable is None:
        return None
    value = os.environ.get(variable, "").strip()
    if not value:
        raise SetupError(f"--api-key-env {variable}: the variable {variable} is not set")
    return value


def make_adapter(
    config: AgentConfig,
    manager: PluginManager,
    providers: Providers,
    capabilities: frozenset[str] | None = None,
) -> LLMAdapter:
    """The adapter a plugin registered as ``config.model``, else a new one for it, made
    by ``providers``; ``capabilities`` (a settings entry's) say whether it is sent
    images."""
    from skillkit.adapters.factory import UnknownModelError
    from skillkit.adapters.reasoning import ReasoningNotSupportedError
    from skillkit.adapters.scripted import ScriptError
    from skillkit.local.errors import LocalModelError
    from skillkit.model_registry import MissingApiKeyError

    adapters = manager.registries.adapters
    if config.model is not None and config.model in adapters:
        return adapters.get(config.model)
    try:
        adapter = providers.create_adapter(config)
    except (
        UnknownModelError,
        ScriptError,
        LocalModelError,
        MissingApiKeyError,
        ReasoningNotSupportedError,
    ) as exc:
        raise SetupError(one_line(exc)) from None
    if capabilities is not None and hasattr(adapter, "images"):
        adapter.images = "image" in capabilities
    return adapter
