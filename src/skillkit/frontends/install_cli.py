"""``skillkit install SOURCE`` and ``skillkit plugin …``: install, list, update, remove,
enable and disable Claude Code plugins; add and manage marketplaces.

Every install and update first prints what it adds (skills, agents, commands, hooks and
MCP servers with their commands) and changes; nothing is written until the user accepts
— at the prompt, or with ``--yes`` when there is no terminal. ``--project`` installs into
the project's ``.skillkit/plugins`` (a trusted project only); the default is
``~/.skillkit/plugins``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``install`` and ``plugin`` subcommands."""
    install = subparsers.add_parser(
        "install",
        help="install a Claude Code plugin (git URL, OWNER/REPO[/PATH][@REF], folder, "
        "PLUGIN@MARKETPLACE, pypi:NAME[==VERSION], npm:NAME[@VERSION])",
        description="Install a plugin; shows what it adds and asks first.",
    )
    _install_options(install)
    install.set_defaults(handler=run_install)

    plugin = subparsers.add_parser(
        "plugin",
        help="install, list, update, remove, enable or disable plugins; marketplaces",
        description="Manage installed Claude Code plugins and marketplaces.",
    )
    actions = plugin.add_subparsers(dest="action", metavar="ACTION", required=True)
    plugin_install = actions.add_parser("install", help="install a plugin")
    _install_options(plugin_install)
    plugin_install.set_defaults(handler=run_install)
    listing = actions.add_parser("list", help="the installed plugins")
    listing.set_defaults(handler=run_list)
    for name, help_text in (
        ("update", "fetch the plugin again; show what changed; apply when accepted"),
        ("remove", "uninstall the plugin (nothing is left behind)"),
        ("enable", "let an installed plugin load again"),
        ("disable", "keep a plugin installed but do not load it"),
    ):
        sub = actions.add_parser(name, help=help_text)
        sub.add_argument("name")
        sub.add_argument("--project", action="store_true", help="the project's plugins")
        if name == "update":
            sub.add_argument("--yes", action="store_true", help="accept without asking")
        sub.set_defaults(handler=run_manage)
    _register_skills_install(subparsers)
    market = actions.add_parser("marketplace", help="add, list, remove or update marketplaces")
    market.add_argument("verb", choices=("add", "list", "remove", "update"))
    market.add_argument("target", nargs="?", default="", help="SOURCE (add) or NAME")
    market.set_defaults(handler=run_marketplace)


def _register_skills_install(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Add ``install`` to the ``skills`` command (registered by `skillkit.skills.cli`,
    which sits below the plugin layer this code needs)."""
    skills = subparsers.choices.get("skills")
    if skills is None:
        return
    for action in skills._actions:
        if isinstance(action, argparse._SubParsersAction):
            parser = action.add_parser(
                "install",
                help="install skills where other agents see them too (.agents/skills, "
                ".claude/skills)",
                description="Install the skills of SOURCE (a folder, git URL or "
                "OWNER/REPO[/PATH][@REF]) into the project's (or, with --user, your) "
                ".agents/skills (default), .claude/skills or .skillkit/skills.",
            )
            parser.add_argument("source")
            parser.add_argument("--to", choices=("agents", "claude", "skillkit"), default="agents")
            parser.add_argument("--user", action="store_true", help="under your home folder")
            parser.add_argument("--yes", action="store_true", help="accept without asking")
            parser.set_defaults(handler=run_skills_install)


def run_skills_install(args: argparse.Namespace) -> int:
    import shutil

    from skillkit.extensions.installer import InstallError, parse_source
    from skillkit.extensions.skill_install import SKILL_FOLDERS, install_skills, stage_skills

    base = Path.home() if args.user else Path.cwd()
    target = base / SKILL_FOLDERS[args.to]
    try:
        source = parse_source(args.source)
        _, found, commit, temporary = stage_skills(source)
    except InstallError as exc:
        return _error(f"skills install: {exc}")
    try:
        lines = [f"skills from {source.text}" + (f" at {commit[:12]}" if commit else "")]
        lines.extend(f"  skill    {folder.name} -> {target / folder.name}" for folder in found)
        if not _accept(lines, args.yes, "install them"):
            return 1
        placed = install_skills(found, target)
    except InstallError as exc:
        return _error(f"skills install: {exc}")
    finally:
        for path in temporary:
            shutil.rmtree(path, ignore_errors=True)
    print(f"installed {len(placed)} skill(s) into {target}")
    return 0


def _install_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="git URL, OWNER/REPO[/PATH][@REF], folder, PLUGIN@MARKET")
    parser.add_argument("--project", action="store_true", help="install into the project")
    parser.add_argument("--yes", action="store_true", help="accept without asking")


def _error(message: str) -> int:
    print(f"skillkit: error: {message}", file=sys.stderr)
    return 1


def _root(project: bool) -> Path | str:
    """The install root, or why it cannot be used (an untrusted project)."""
    if not project:
        return Path.home() / ".skillkit" / "plugins"
    from skillkit.trust import settled_trust

    folder = Path.cwd().resolve()
    try:
        trusted, _ = settled_trust(folder)
    except Exception:
        trusted = False
    if trusted is not True:
        return (
            f"{folder} is not a trusted project: its plugins would not load "
            "(run `skillkit plugins trust` first)"
        )
    return folder / ".skillkit" / "plugins"


def _accept(lines: list[str], yes: bool, question: str) -> bool:
    print("\n".join(lines))
    if yes:
        return True
    if not sys.stdin.isatty():
        print(
            f"skillkit: not done: no terminal to ask; run again with --yes to {question}",
            file=sys.stderr,
        )
        return False
    answer = input(f"{question.capitalize()}? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def run_install(args: argparse.Namespace) -> int:
    from skillkit.extensions.installer import (
        InstallError,
        Marketplaces,
        install,
        parse_source,
        stage,
    )

    root = _root(args.project)
    if isinstance(root, str):
        return _error(root)
    try:
        staged = stage(parse_source(args.source, Marketplaces()))
    except InstallError as exc:
        return _error(f"install: {exc}")
    try:
        if not _accept(staged.describe(), args.yes, "install it"):
            return 1
        entry = install(staged, root)
    finally:
        staged.cleanup()
    pinned = f" at {entry.commit[:12]}" if entry.commit else ""
    print(f"installed {entry.name}{pinned} into {root / entry.name}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from skillkit.extensions.claude_plugins import is_plugin, plugin_roots
    from skillkit.extensions.installer import read_lock

    shown = 0
    for root, scope in plugin_roots(Path.cwd(), None):
        if not root.is_dir():
            continue
        lock = read_lock(root)
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and is_plugin(p)):
            entry = lock.get(folder.name)
            state = "" if entry is None or entry.enabled else " (disabled)"
            where = (
                f" {entry.source} @ {entry.commit[:12]}"
                if entry and entry.commit
                else (f" {entry.source}" if entry else " (not installed by skillkit)")
            )
            print(f"{folder.name} [{scope}]{where}{state}")
            shown += 1
    if not shown:
        print("no plugins installed")
    return 0


def run_manage(args: argparse.Namespace) -> int:
    from skillkit.extensions.installer import (
        InstallError,
        Marketplaces,
        changes,
        install,
        read_lock,
        remove,
        set_enabled,
        stage,
    )

    root = _root(args.project)
    if isinstance(root, str):
        return _error(root)
    if args.action == "remove":
        if not remove(root, args.name):
            return _error(f"remove: no plugin {args.name} in {root}")
        print(f"removed {args.name}")
        return 0
    if args.action in ("enable", "disable"):
        if not set_enabled(root, args.name, args.action == "enable"):
            return _error(f"{args.action}: no plugin {args.name} installed by skillkit in {root}")
        print(f"{args.name} {args.action}d")
        return 0
    entry = read_lock(root).get(args.name)
    if entry is None:
        return _error(f"update: no plugin {args.name} installed by skillkit in {root}")
    try:
        source = entry.as_source()
        if entry.marketplace:  # the entry as the marketplace lists it now
            source = Marketplaces().source_of(entry.marketplace, entry.name)
        staged = stage(source)
    except InstallError as exc:
        return _error(f"update: {exc}")
    try:
        changed = changes(staged, root, entry)
        if not changed:
            print(f"{args.name} is up to date")
            return 0
        lines = [f"update {args.name}:", *changed, *staged.describe()]
        if not _accept(lines, args.yes, "update it"):
            return 1
        new = install(staged, root)
    finally:
        staged.cleanup()
    print(f"updated {args.name} to {new.commit[:12] or new.hash[:19]}")
    return 0


def run_marketplace(args: argparse.Namespace) -> int:
    from skillkit.extensions.installer import InstallError, Marketplaces

    markets = Marketplaces()
    try:
        if args.verb == "list":
            for name in markets.names():
                print(f"{name}: {', '.join(markets.plugins(name))}")
            if not markets.names():
                print("no marketplaces")
            return 0
        if not args.target:
            return _error(f"plugin marketplace {args.verb}: missing SOURCE or NAME")
        if args.verb == "add":
            name, plugins = markets.add(args.target)
            print(f"added marketplace {name}: {', '.join(plugins) or 'no plugins'}")
        elif args.verb == "update":
            plugins = markets.update(args.target)
            print(f"updated marketplace {args.target}: {', '.join(plugins) or 'no plugins'}")
        elif not markets.remove(args.target):
            return _error(f"plugin marketplace remove: no marketplace {args.target}")
        else:
            print(f"removed marketplace {args.target}")
    except InstallError as exc:
        return _error(f"plugin marketplace {args.verb}: {exc}")
    return 0
