"""A private PostgreSQL server for the session tests: Debian's binaries, a cluster made by
``initdb`` in a temporary folder, listening only on a unix socket there (and a private
port number, which names the socket). Run as the ``postgres`` user when the tests run as
root (the server refuses root)."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

INITDB = ["--auth=trust", "-E", "UTF8", "--no-sync"]


@dataclass
class PostgresServer:
    socket_dir: Path
    port: int
    user: str

    def url(self, database: str = "postgres") -> str:
        return f"postgresql:///{database}?host={self.socket_dir}&port={self.port}&user={self.user}"

    _names = itertools.count()

    def new_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"test_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Remove a database `new_database` made (its connections are ended), so the
        cluster stays small and is removed quickly at the end."""
        import psycopg

        name = url.split("///", 1)[1].split("?", 1)[0]
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: ``pg_config --bindir``, else the newest
    /usr/lib/postgresql/*/bin."""
    config = shutil.which("pg_config")
    if config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([config, "--bindir"], capture_output=True, text=True, check=True)
            folder = Path(out.stdout.strip())
            if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
                return folder
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def why_not() -> str | None:
    """Why no server can be started here (None: it can)."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'skillkit-agent[postgres]')"
    if binaries() is None:
        return "no PostgreSQL server binaries (Debian: apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running_server(*, fsync: bool = False) -> Iterator[PostgresServer]:
    """Start a server for the block; stop it and remove its files afterwards. Tests run
    it without ``fsync`` (what they check does not depend on the disk); benchmarks
    with it."""
    folder = binaries()
    assert folder is not None
    root = Path(tempfile.mkdtemp(prefix="skillkit-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:
        import pwd

        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    os.chmod(root, 0o755)  # the tests (another user) reach the socket in it
    data = root / "data"
    port = _free_port()
    subprocess.run(
        [*prefix, str(folder / "initdb"), "-D", str(data), "-U", "postgres", *INITDB],
        check=True,
        capture_output=True,
    )
    start_args = ["-l", str(root / "server.log"), "-w", "-t", "60", "start"]
    durable = "on" if fsync else "off"
    options = (
        f"-c listen_addresses='' -k {root} -p {port} -c fsync={durable} -c max_connections=200"
    )
    started = subprocess.run(
        [*prefix, str(folder / "pg_ctl"), "-D", str(data), "-o", options, *start_args],
        capture_output=True,
        text=True,
    )
    if started.returncode != 0:
        log = (
            (root / "server.log").read_text(errors="replace")
            if (root / "server.log").exists()
            else ""
        )
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr}\n{log}")
    try:
        yield PostgresServer(socket_dir=root, port=port, user="postgres")
    finally:
        subprocess.run(
            [*prefix, str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)
