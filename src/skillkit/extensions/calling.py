"""Calling hook implementations one by one: LIFO order, async support, isolation.

pluggy's own hook calls cannot await ``async def`` implementations, so SkillKit calls
the lifecycle hooks itself, with pluggy's order (LIFO, ``tryfirst``/``trylast``
respected) and pluggy's argument passing (each implementation gets only the arguments it
names). A failing implementation is reported through ``on_failure`` and treated as
having answered None — except where it guards something (``fail_closed``: the tool-call,
context and conversion hooks), where the exception is raised again so the agent refuses
the call, or the model call, it was asked about.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pluggy import HookCaller, HookImpl

__all__ = [
    "DELEGATES_TO_REGISTRY",
    "FailureCallback",
    "call_first",
    "invoke",
    "invoke_sync",
    "is_async",
    "ordered",
]


DELEGATES_TO_REGISTRY = "_skillkit_delegates_to_registry"
"""Marks a ``skillkit_render_custom_message`` implementation that only renders with the
agent's own `RendererRegistry` — what the core's default conversion does anyway — so an
agent needs no conversion seam for it."""

FailureCallback = Callable[[HookImpl, str, BaseException], None]
"""``on_failure(impl, hook_name, exception)``."""


def ordered(hook: HookCaller) -> list[HookImpl]:
    """The implementations of ``hook`` in the order pluggy calls them (LIFO), wrappers
    left out."""
    return [
        impl for impl in reversed(hook.get_hookimpls()) if not (impl.wrapper or impl.hookwrapper)
    ]


def _arguments(impl: HookImpl, kwargs: Mapping[str, Any]) -> list[Any]:
    return [kwargs[name] for name in impl.argnames]


async def invoke(
    impl: HookImpl,
    hook_name: str,
    kwargs: Mapping[str, Any],
    on_failure: FailureCallback,
    *,
    fail_closed: bool = False,
) -> Any:
    """Call one implementation (awaiting it if async); None if it raised — or, with
    ``fail_closed`` (a hook that guards something), the exception is raised again after
    it was reported, so the caller refuses what the hook was asked about."""
    try:
        result = impl.function(*_arguments(impl, kwargs))
        if inspect.isawaitable(result):
            result = await result
        return result
    except Exception as exc:
        on_failure(impl, hook_name, exc)
        if fail_closed:
            raise
        return None


def invoke_sync(
    impl: HookImpl, hook_name: str, kwargs: Mapping[str, Any], on_failure: FailureCallback
) -> Any:
    """Call one implementation from synchronous code. An async implementation cannot be
    awaited here: it is reported (and its coroutine closed) and counts as None."""
    try:
        result = impl.function(*_arguments(impl, kwargs))
    except Exception as exc:
        on_failure(impl, hook_name, exc)
        return None
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if close is not None:
            close()
        on_failure(impl, hook_name, TypeError("async implementation called where none can wait"))
        return None
    return result


async def call_first(
    impls: list[HookImpl],
    hook_name: str,
    kwargs: Mapping[str, Any],
    on_failure: FailureCallback,
    accept: Callable[[Any], bool] | None = None,
    *,
    fail_closed: bool = False,
) -> Any:
    """The first non-None answer, in the given order (the rest are not asked).

    An answer ``accept`` rejects is reported as a wrong return type and skipped.
    ``fail_closed``: as for `invoke`.
    """
    for impl in impls:
        result = await invoke(impl, hook_name, kwargs, on_failure, fail_closed=fail_closed)
        if result is None:
            continue
        if accept is not None and not accept(result):
            on_failure(impl, hook_name, TypeError(f"returned {type(result).__name__}"))
            continue
        return result
    return None


def is_async(impl: HookImpl) -> bool:
    return inspect.iscoroutinefunction(impl.function)
