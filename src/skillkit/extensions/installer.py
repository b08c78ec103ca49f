"""Installing Claude Code plugins: from a git repository, a local folder, a marketplace,
a PyPI or an npm package.

A SOURCE is:

- a local folder (``./my-plugin``, ``/abs/path``);
- a git URL (``https://…``, ``ssh://…``, ``git@host:…``, ``file://…``, ``….git``),
  optionally ``URL#PATH@REF``;
- ``OWNER/REPO[/PATH][@REF]`` — a GitHub repository;
- ``PLUGIN@MARKETPLACE`` — an entry of a marketplace added before
  (``.claude-plugin/marketplace.json``);
- ``pypi:REQUIREMENT`` (``pypi:review-kit==1.2``) — a wheel fetched with the user's
  ``pip download --no-deps --only-binary=:all:`` (never an sdist: building one runs its
  code), unpacked into the staging folder;
- ``npm:SPEC`` (``npm:@acme/review-kit@1.2.0``, a tarball path) — fetched with the
  user's ``npm pack --ignore-scripts``, unpacked with tarfile's ``data`` filter.

In a package the plugin is the shallowest folder holding ``.claude-plugin/plugin.json``
(else ``skills/*/SKILL.md``); the lock file's ``commit`` is then the resolved version.

Git runs as the user's ``git``, with ``-c safe.bareRepository=explicit -c
core.hooksPath=/dev/null -c core.fsmonitor=false`` so that nothing in the fetched
repository runs; the install is pinned to the commit it resolved. A plugin is installed
into ``<root>/<name>`` (``~/.skillkit/plugins`` or a trusted project's
``.skillkit/plugins``) and recorded in ``<root>/plugins.lock.json`` with its source,
commit and a content hash. `Staged` is a fetched plugin not yet installed: what it adds
(`describe`) is shown before anything is written; nothing of it runs until the user
accepts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillkit.extensions.claude_plugins import (
    LOCK_FILE,
    MANIFEST,
    ClaudePlugin,
    content_hash,
    read_plugin,
)

__all__ = [
    "GIT_SAFETY",
    "LOCK_FILE",
    "InstallError",
    "LockEntry",
    "Marketplaces",
    "Source",
    "Staged",
    "changes",
    "content_hash",
    "disabled_names",
    "git",
    "install",
    "parse_source",
    "read_lock",
    "remove",
    "set_enabled",
    "stage",
]

GIT_SAFETY = (
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
)
MARKETPLACE_FILE = Path(".claude-plugin") / "marketplace.json"
_OWNER_REPO = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)((?:/[^@\s]+)?)(?:@(\S+))?")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class InstallError(Exception):
    """An install cannot go on; the message is one line."""


@dataclass(frozen=True)
class Source:
    """Where a plugin comes from: a ``git`` URL (``path`` inside it, ``ref``) or a local
    ``folder``; ``text`` is what the user wrote; ``marketplace`` the entry's market."""

    kind: str  # "git" | "folder" | "pypi" | "npm" (location: the package as written)
    location: str
    path: str = ""
    ref: str = ""
    text: str = ""
    marketplace: str = ""


def _is_git_url(text: str) -> bool:
    return text.startswith(
        ("https://", "http://", "ssh://", "git://", "file://", "git@")
    ) or text.endswith(".git")


def parse_source(text: str, marketplaces: Marketplaces | None = None) -> Source:
    """The `Source` of ``text`` (see the module docs). Raises `InstallError`."""
    text = text.strip()
    if not text:
        raise InstallError("no source given")
    kind, colon, spec = text.partition(":")
    if colon and kind in ("npm", "pypi", "pip"):
        if not spec.strip():
            raise InstallError(f"{text}: no package named")
        return Source("npm" if kind == "npm" else "pypi", spec.strip(), text=text)
    if os.path.isdir(os.path.expanduser(text)):
        return Source("folder", str(Path(os.path.expanduser(text)).resolve()), text=text)
    if _is_git_url(text):
        url, _, rest = text.partition("#")
        path, _, ref = rest.partition("@")
        return Source("git", url, path.strip("/"), ref, text=text)
    name, at, market = text.rpartition("@")
    if at and name and "/" not in name and marketplaces is not None and market in marketplaces:
        return marketplaces.source_of(market, name)
    match = _OWNER_REPO.fullmatch(text)
    if match:
        owner, repo, path, ref = match.groups()
        url = f"https://github.com/{owner}/{repo.removesuffix('.git')}.git"
        return Source("git", url, (path or "").strip("/"), ref or "", text=text)
    raise InstallError(
        f"{text}: not a folder, a git URL, OWNER/REPO[/PATH][@REF] or PLUGIN@MARKETPLACE"
    )


def git(*args: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """Run the user's git with `GIT_SAFETY`; its stdout. Raises `InstallError`."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    try:
        done = subprocess.run(
            ["git", *GIT_SAFETY, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise InstallError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise InstallError(f"git {args[0]} took longer than 300s") from None
    if done.returncode != 0:
        line = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise InstallError(f"git {args[0]}: {line}")
    return done.stdout


def _files(folder: Path) -> dict[str, str]:
    out = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if ".git" in relative.parts or not path.is_file():
            continue
        out[str(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@dataclass
class Staged:
    """A fetched plugin, not installed yet: its files in ``folder`` (a temporary copy),
    the plugin as read, the source and the commit it is pinned to. `cleanup` removes
    the temporary files."""

    source: Source
    folder: Path
    plugin: ClaudePlugin
    commit: str = ""
    checkout: Path | None = None
    _temp: list[Path] = field(default_factory=list)

    def describe(self) -> list[str]:
        """What installing it adds, one line each; hooks and MCP servers with their
        commands."""
        plugin = self.plugin
        lines = [f"plugin {plugin.name} {plugin.version}".rstrip() + f" from {self.source.text}"]
        if self.commit:
            label = "version" if self.source.kind in ("pypi", "npm") else "commit "
            lines.append(f"  {label}  {self.commit}")
        if plugin.skills is not None:
            names = sorted(p.parent.name for p in plugin.skills.glob("*/SKILL.md"))
            lines.append(f"  skills   {', '.join(names) or '(none)'}")
        if plugin.agents:
            lines.append(f"  agents   {', '.join(a.name for a in plugin.agents)}")
        if plugin.commands:
            lines.append(f"  commands {', '.join('/' + c.name for c in plugin.commands)}")
        for hook in plugin.hooks.hooks:
            matcher = f" [{hook.matcher}]" if hook.matcher else ""
            lines.append(f"  hook     {hook.event}{matcher}: {hook.command}")
        for name, server in plugin.mcp_servers.items():
            command = (
                server.get("command") or server.get("url") if isinstance(server, Mapping) else ""
            )
            args = (
                " ".join(str(a) for a in server.get("args", ()))
                if isinstance(server, Mapping)
                else ""
            )
            lines.append(f"  MCP      {name}: {command} {args}".rstrip())
        lines.extend(f"  note     {note}" for note in plugin.notes)
        return lines

    def cleanup(self) -> None:
        for path in self._temp:
            shutil.rmtree(path, ignore_errors=True)
        self._temp.clear()


def stage(source: Source, *, ref: str | None = None) -> Staged:
    """Fetch ``source`` into a temporary folder and read it (``ref`` overrides the
    source's). Raises `InstallError` when it cannot be fetched or is not a plugin."""
    temp = Path(tempfile.mkdtemp(prefix="skillkit-install-"))
    staged_commit = ""
    try:
        if source.kind == "git":
            checkout = temp / "repo"
            git("clone", "--quiet", "--no-checkout", "--", source.location, str(checkout))
            wanted = ref if ref is not None else source.ref
            target = wanted or "HEAD"
            try:
                staged_commit = git(
                    "rev-parse", "--verify", f"{target}^{{commit}}", cwd=checkout
                ).strip()
            except InstallError:
                staged_commit = git(
                    "rev-parse", "--verify", f"origin/{target}^{{commit}}", cwd=checkout
                ).strip()
            git(
                "-c",
                "advice.detachedHead=false",
                "checkout",
                "--quiet",
                staged_commit,
                cwd=checkout,
            )
            base = checkout / source.path if source.path else checkout
        elif source.kind in ("pypi", "npm"):
            checkout = None
            from skillkit.extensions.package_fetch import FetchError, fetch_npm, fetch_pypi

            fetch = fetch_pypi if source.kind == "pypi" else fetch_npm
            try:
                unpacked, staged_commit = fetch(source.location, temp)
            except FetchError as exc:
                raise InstallError(str(exc)) from None
            base = _plugin_in(unpacked, source.text)
        else:
            checkout = None
            base = Path(source.location) / source.path if source.path else Path(source.location)
            if source.marketplace:  # a folder of the marketplace: pinned to its commit
                staged_commit = source.ref
        if not base.is_dir():
            raise InstallError(f"{source.text}: no folder {source.path or '.'} in it")
        if not (base / MANIFEST).is_file() and not (base / "skills").is_dir():
            if (base / MARKETPLACE_FILE).is_file():
                raise InstallError(
                    f"{source.text} is a marketplace: add it with `skillkit plugin marketplace add`"
                )
            raise InstallError(f"{source.text}: no .claude-plugin/plugin.json nor skills/ in it")
        folder = temp / "plugin"
        shutil.copytree(base, folder, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        plugin = read_plugin(folder)
        if not _NAME.fullmatch(plugin.name):
            raise InstallError(f"plugin name {plugin.name!r} cannot be a folder name")
        return Staged(source, folder, plugin, staged_commit, checkout, [temp])
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


# --------------------------------------------------------------------------- packages


def _plugin_in(folder: Path, text: str) -> Path:
    """The plugin in an unpacked package: the shallowest folder with
    ``.claude-plugin/plugin.json``, else the shallowest holding ``skills/*/SKILL.md``."""
    manifests = [
        p.parent.parent for p in folder.rglob("plugin.json") if p.parent.name == ".claude-plugin"
    ]
    if not manifests:
        manifests = [p.parent.parent.parent for p in folder.rglob("SKILL.md")]
        manifests = [p for p in manifests if p.name and (p / "skills").is_dir()]
    if not manifests:
        raise InstallError(f"{text}: the package holds no .claude-plugin/plugin.json nor skills/")
    return min(manifests, key=lambda p: (len(p.parts), str(p)))


@dataclass(frozen=True)
class LockEntry:
    """One installed plugin as the lock file records it."""

    name: str
    source: str
    kind: str
    location: str
    path: str = ""
    ref: str = ""
    commit: str = ""
    hash: str = ""
    enabled: bool = True
    marketplace: str = ""

    def as_source(self) -> Source:
        return Source(self.kind, self.location, self.path, self.ref, self.source, self.marketplace)


def read_lock(root: Path) -> dict[str, LockEntry]:
    """The lock file of an install root (empty when there is none or it is unreadable)."""
    try:
        data = json.loads((root / LOCK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("plugins", {}) if isinstance(data, dict) else {}
    out = {}
    for name, raw in entries.items() if isinstance(entries, dict) else ():
        try:
            out[name] = LockEntry(name=name, **{k: v for k, v in raw.items() if k != "name"})
        except TypeError:
            continue
    return out


def _write_lock(root: Path, entries: Mapping[str, LockEntry]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    data = {
        "version": 1,
        "plugins": {
            name: {k: v for k, v in entry.__dict__.items() if k != "name"}
            for name, entry in sorted(entries.items())
        },
    }
    temp = root / (LOCK_FILE + ".tmp")
    temp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temp, root / LOCK_FILE)


def install(staged: Staged, root: Path) -> LockEntry:
    """Put ``staged`` into ``root/<name>`` (replacing an earlier version) and record it.
    Call only after the user accepted what it adds."""
    name = staged.plugin.name
    target = root / name
    root.mkdir(parents=True, exist_ok=True)
    fresh = root / f".{name}.installing"
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(staged.folder, fresh, symlinks=True)
    if target.exists():
        old = root / f".{name}.old"
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
        os.replace(fresh, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(fresh, target)
    source = staged.source
    entries = read_lock(root)
    previous = entries.get(name)
    entry = LockEntry(
        name=name,
        source=source.text,
        kind=source.kind,
        location=source.location,
        path=source.path,
        ref=source.ref,
        commit=staged.commit,
        hash=content_hash(target),
        enabled=previous.enabled if previous is not None else True,
        marketplace=source.marketplace,
    )
    entries[name] = entry
    _write_lock(root, entries)
    return entry


def changes(staged: Staged, root: Path, entry: LockEntry) -> list[str]:
    """What an update would change: the commits between the pinned one and the new one
    (git sources) and the files added, changed and removed."""
    lines: list[str] = []
    if staged.commit and entry.commit and staged.commit != entry.commit:
        if staged.source.kind in ("pypi", "npm"):
            lines.append(f"  version {entry.commit} → {staged.commit}")
        elif staged.checkout is None:  # a marketplace's folder: the marketplace moved
            lines.append(f"  commits {entry.commit[:12]} → {staged.commit[:12]}")
        else:
            try:
                log = git(
                    "log", "--oneline", f"{entry.commit}..{staged.commit}", cwd=staged.checkout
                )
                lines.extend(f"  commit  {line}" for line in log.splitlines())
            except InstallError:
                lines.append(f"  commits {entry.commit[:12]} → {staged.commit[:12]}")
    before = _files(root / entry.name) if (root / entry.name).is_dir() else {}
    after = _files(staged.folder)
    for path in sorted(set(before) | set(after)):
        if path not in before:
            lines.append(f"  added   {path}")
        elif path not in after:
            lines.append(f"  removed {path}")
        elif before[path] != after[path]:
            lines.append(f"  changed {path}")
    return lines


def remove(root: Path, name: str) -> bool:
    """Delete the plugin ``name`` from ``root`` and its lock entry; whether it was there."""
    entries = read_lock(root)
    found = entries.pop(name, None) is not None
    target = root / name
    if target.is_dir():
        shutil.rmtree(target)
        found = True
    if found:
        if entries:
            _write_lock(root, entries)
        else:
            (root / LOCK_FILE).unlink(missing_ok=True)
    return found


def set_enabled(root: Path, name: str, enabled: bool) -> bool:
    """Enable or disable an installed plugin (kept installed); whether it is known."""
    entries = read_lock(root)
    entry = entries.get(name)
    if entry is None:
        return False
    entries[name] = LockEntry(**{**entry.__dict__, "enabled": enabled})
    _write_lock(root, entries)
    return True


def disabled_names(root: Path) -> set[str]:
    """The plugins of ``root`` its lock file marks disabled."""
    return {name for name, entry in read_lock(root).items() if not entry.enabled}


# --------------------------------------------------------------------------- marketplaces


class Marketplaces:
    """The marketplaces the user added: ``<home>/.skillkit/marketplaces/<name>`` (a
    fetched copy) and ``<home>/.skillkit/marketplaces.json`` (their sources)."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        base = Path(home) if home is not None else Path.home()
        self.folder = base / ".skillkit" / "marketplaces"
        self.index = base / ".skillkit" / "marketplaces.json"

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.index.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: Mapping[str, Any]) -> None:
        self.index.parent.mkdir(parents=True, exist_ok=True)
        self.index.write_text(json.dumps(dict(data), indent=2) + "\n", encoding="utf-8")

    def __contains__(self, name: object) -> bool:
        return name in self._read()

    def names(self) -> list[str]:
        return sorted(self._read())

    def manifest(self, name: str) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / name / MARKETPLACE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InstallError(f"marketplace {name}: cannot read marketplace.json: {exc}") from None
        if not isinstance(data, dict):
            raise InstallError(f"marketplace {name}: marketplace.json is not an object")
        return data

    def add(self, text: str) -> tuple[str, list[str]]:
        """Fetch the marketplace at ``text`` (a folder, git URL or OWNER/REPO); its name
        and its plugins. Raises `InstallError`."""
        source = parse_source(text)
        temp = Path(tempfile.mkdtemp(prefix="skillkit-market-"))
        try:
            commit = ""
            if source.kind == "git":
                checkout = temp / "repo"
                git("clone", "--quiet", "--", source.location, str(checkout))
                if source.ref:
                    git(
                        "-c",
                        "advice.detachedHead=false",
                        "checkout",
                        "--quiet",
                        source.ref,
                        cwd=checkout,
                    )
                commit = git("rev-parse", "HEAD", cwd=checkout).strip()
                base = checkout / source.path if source.path else checkout
            else:
                base = Path(source.location) / source.path if source.path else Path(source.location)
            try:
                data = json.loads((base / MARKETPLACE_FILE).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                raise InstallError(f"{text}: no readable .claude-plugin/marketplace.json") from None
            name = data.get("name") if isinstance(data, dict) else None
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise InstallError(f"{text}: marketplace.json needs a plain 'name'")
            target = self.folder / name
            shutil.rmtree(target, ignore_errors=True)
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copytree(base, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            index = self._read()
            index[name] = {"source": text, "commit": commit}
            self._write(index)
            return name, self.plugins(name)
        finally:
            shutil.rmtree(temp, ignore_errors=True)

    def plugins(self, name: str) -> list[str]:
        entries = self.manifest(name).get("plugins", [])
        return [str(e.get("name")) for e in entries if isinstance(e, dict) and e.get("name")]

    def remove(self, name: str) -> bool:
        index = self._read()
        found = index.pop(name, None) is not None
        shutil.rmtree(self.folder / name, ignore_errors=True)
        if found:
            self._write(index)
        return found

    def update(self, name: str) -> list[str]:
        index = self._read()
        if name not in index:
            raise InstallError(f"no marketplace named {name}")
        _, plugins = self.add(str(index[name]["source"]))
        return plugins

    def source_of(self, market: str, plugin: str) -> Source:
        """The `Source` of ``plugin`` in marketplace ``market``: a git source pinned to
        the entry's ``sha`` (else its ``ref``), a folder of the marketplace pinned to the
        marketplace's commit (its ``ref``). Raises `InstallError`."""
        data = self.manifest(market)
        for entry in data.get("plugins", []):
            if not isinstance(entry, dict) or entry.get("name") != plugin:
                continue
            raw = entry.get("source")
            text = f"{plugin}@{market}"
            if isinstance(raw, str):
                if _is_git_url(raw):
                    return Source("git", raw, text=text, marketplace=market)
                root = (self.folder / market).resolve()
                folder = (root / raw).resolve()
                if root != folder and root not in folder.parents:
                    raise InstallError(f"{text}: its source leaves the marketplace")
                pinned = str(self._read().get(market, {}).get("commit", ""))
                return Source("folder", str(folder), ref=pinned, text=text, marketplace=market)
            if isinstance(raw, dict):
                kind = raw.get("source")
                if kind == "github" and isinstance(raw.get("repo"), str):
                    url = f"https://github.com/{raw['repo']}.git"
                elif kind in ("url", "git") and isinstance(raw.get("url"), str):
                    url = raw["url"]
                else:
                    raise InstallError(f"{text}: source kind {kind!r} is not supported")
                return Source(
                    "git",
                    url,
                    str(raw.get("path", "")).strip("/"),
                    str(raw.get("sha") or raw.get("ref") or ""),  # a sha pins the entry
                    text=text,
                    marketplace=market,
                )
            raise InstallError(f"{text}: the entry has no source")
        raise InstallError(f"no plugin {plugin} in marketplace {market}")
