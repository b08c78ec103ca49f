"""Loading the inference runtime (``xllamacpp``) and sizing it for this machine.

``xllamacpp`` embeds llama.cpp's HTTP server. It is imported only when a local server
starts, and every way that import can fail becomes a `RuntimeUnavailableError` whose
message says what to install.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import import_module
from types import ModuleType

from skillkit.local.errors import RuntimeUnavailableError

__all__ = [
    "RUNTIME_REQUIREMENT",
    "default_threads",
    "load_runtime",
    "prebuilt_wheel_expected",
    "usable_cpus",
]

RUNTIME_REQUIREMENT = "xllamacpp==2026.10.11549"
"""The runtime SkillKit is tested with (llama.cpp b11549)."""

THREADS_ENV = "SKILLKIT_LOCAL_THREADS"

_HOSTED_HINT = "or use a hosted model instead (set OPENAI_API_KEY or ANTHROPIC_API_KEY)"


def load_runtime() -> ModuleType:
    """Import ``xllamacpp``; `RuntimeUnavailableError` with a one-line fix when it can't be."""
    try:
        return import_module("xllamacpp")
    except ImportError as exc:
        raise runtime_error(exc) from None
    except OSError as exc:  # a broken shared library can surface as OSError
        raise runtime_error(exc) from None


def runtime_error(exc: BaseException) -> RuntimeUnavailableError:
    """The `RuntimeUnavailableError` that explains why importing ``xllamacpp`` failed."""
    text = " ".join(str(exc).split())
    if "libgomp" in text:
        return RuntimeUnavailableError(
            "the local model runtime needs the GNU OpenMP library libgomp.so.1: install it "
            "(Debian/Ubuntu: apt-get install libgomp1; Fedora/RHEL: dnf install libgomp; "
            f"Alpine: apk add libgomp) {_HOSTED_HINT}"
        )
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == "xllamacpp":
        if prebuilt_wheel_expected():
            return RuntimeUnavailableError(
                f"the local model runtime is not installed: run `pip install "
                f"{RUNTIME_REQUIREMENT}` {_HOSTED_HINT}"
            )
        return RuntimeUnavailableError(
            f"xllamacpp has no prebuilt wheel for {_platform_name()}: build it from source "
            f"(`pip install {RUNTIME_REQUIREMENT}` with CMake and a C++17 compiler) "
            f"{_HOSTED_HINT}"
        )
    return RuntimeUnavailableError(
        f"the local model runtime (xllamacpp) failed to load: {text} -- reinstall it with "
        f"`pip install --force-reinstall {RUNTIME_REQUIREMENT}` {_HOSTED_HINT}"
    )


def prebuilt_wheel_expected() -> bool:
    """Whether PyPI has a prebuilt ``xllamacpp`` wheel for this platform: glibc Linux on
    x86-64 or ARM64, macOS on Intel or Apple silicon, Windows on x86-64."""
    machine = platform.machine().lower()
    if sys.platform.startswith("linux"):
        libc, _ = platform.libc_ver()
        return libc == "glibc" and machine in ("x86_64", "amd64", "aarch64", "arm64")
    if sys.platform == "darwin":
        return machine in ("x86_64", "arm64")
    if sys.platform == "win32":
        return machine in ("amd64", "x86_64")
    return False


def _platform_name() -> str:
    libc = platform.libc_ver()[0] if sys.platform.startswith("linux") else ""
    parts = [sys.platform, platform.machine()]
    if sys.platform.startswith("linux"):
        parts.append(libc or "non-glibc libc")
    return " ".join(part for part in parts if part)


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads(cpus: int | None = None) -> int:
    """Generation threads for a small model: ``SKILLKIT_LOCAL_THREADS`` when set, else one
    thread on machines with up to two CPUs (the agent and its tools keep the other; a
    second thread collapses when that core is busy), else half the CPUs, at most eight.

    Raises `ValueError` for a ``SKILLKIT_LOCAL_THREADS`` that is not a positive integer.
    """
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{THREADS_ENV} must be a positive integer, got {text!r}") from None
        if value < 1:
            raise ValueError(f"{THREADS_ENV} must be a positive integer, got {text!r}")
        return value
    count = usable_cpus() if cpus is None else max(1, cpus)
    if count <= 2:
        return 1
    return min(count // 2, 8)
