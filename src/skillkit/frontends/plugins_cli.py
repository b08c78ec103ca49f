"""``skillkit plugins [list|trust|untrust] [DIR]``: see the plugins, trust a project.

``list`` (the default) loads every plugin as a session in DIR would and prints what each
registered, what failed and why project plugins were not loaded. ``trust`` lets DIR's
``.skillkit/plugins/*.py`` run and its ``.skillkit/settings*.json`` grant permissions
from now on; ``untrust`` takes that back.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["register", "run_plugins"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``plugins`` subcommand."""
    parser = subparsers.add_parser(
        "plugins",
        help="list the plugins; trust or untrust a project's own plugin files",
        description="List the loaded plugins and what each registered, or decide whether "
        "a project's own plugin files (.skillkit/plugins/*.py) may run.",
    )
    parser.add_argument("action", nargs="?", default="list", choices=("list", "trust", "untrust"))
    parser.add_argument("dir", nargs="?", default=".", help="the project folder (default: .)")
    parser.set_defaults(handler=run_plugins)


def run_plugins(args: argparse.Namespace) -> int:
    """Exit 0; 1 when a plugin failed to load (``list``); 2 when DIR is not a folder
    (one ``skillkit: error:`` line on stderr)."""
    from skillkit.extensions.manager import PROJECT_PLUGIN_DIR, PluginManager
    from skillkit.extensions.trust import TrustStore

    folder = Path(args.dir).resolve()
    if not folder.is_dir():
        print(f"skillkit: error: plugins: not a folder: {args.dir}", file=sys.stderr)
        return 2
    store = TrustStore()
    files = sorted(p.name for p in (folder / PROJECT_PLUGIN_DIR).glob("*.py"))
    if args.action == "trust":
        store.trust(folder)
        listed = ", ".join(files) if files else "none yet"
        print(f"trusted {folder}: its plugin files may run ({listed})")
        return 0
    if args.action == "untrust":
        was = store.untrust(folder)
        print(f"{folder} {'is no longer trusted' if was else 'was not trusted'}")
        return 0
    from skillkit.extensions.commands import format_plugins
    from skillkit.frontends.builtin import builtin_frontends

    manager = PluginManager.for_project(folder, store=store, frontends=builtin_frontends())
    print(format_plugins(manager))
    return 1 if manager.failures else 0
