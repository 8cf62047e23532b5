"""A PostgreSQL server of one run only, on a free loopback port, that can be really restarted.

The chaos scenario restarts PostgreSQL: a fast shutdown (``SIGINT``: open transactions are
rolled back, every client connection is closed) and a start on the same port and data
directory, so for a moment clients get "connection refused", as in a real restart or an
Aurora failover. That must never happen to the shared server at 127.0.0.1:5432 other runs use,
so the scenario starts its own: ``initdb`` into a temporary directory, durability off (the data
is thrown away at the end), stopped and deleted at the end.

The server binaries come from whatever PostgreSQL is installed (:func:`binaries_directory`);
without them :func:`available` is false and the caller falls back (and says so). PostgreSQL
refuses to run as root: when this process is root, the server runs as the ``postgres`` user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sam_emulator.private_server import PrivateServer

START_LIMIT_S = 60  # a loaded 2-core machine can take a while to initdb and start a server


def binaries_directory() -> Path | None:
    """Where ``initdb`` and ``postgres`` live: ``pg_config --bindir``, PATH, or the newest /usr/lib/postgresql."""
    candidates: list[Path] = []
    if pg_config := shutil.which("pg_config"):
        output = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False).stdout.strip()
        if output:
            candidates.append(Path(output))
    if initdb := shutil.which("initdb"):
        candidates.append(Path(initdb).resolve().parent)
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    candidates += [Path(p) for p in versions]
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "postgres").is_file():
            return directory
    return None


def available() -> bool:
    return binaries_directory() is not None


def _server_user() -> pwd.struct_passwd | None:
    """The non-root user the server runs as when this process is root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError as exc:
        raise OSError("running as root and there is no 'postgres' user to run a private server as") from exc


@dataclass
class PrivatePostgres(PrivateServer):
    """``with PrivatePostgres() as pg: pg.url``; ``pg.reset()`` stops (fast) and starts it again."""

    restarts: int = 0
    _dir: Path | None = None
    _bin: Path | None = None
    _user: pwd.struct_passwd | None = None

    name = "PostgreSQL"
    stop_signal = signal.SIGINT  # fast shutdown: roll back, disconnect everyone
    start_limit_s = START_LIMIT_S

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PrivatePostgres:
        self._bin = binaries_directory()
        if self._bin is None:
            raise OSError("no PostgreSQL server binaries (initdb, postgres) found")
        self._user = _server_user()
        self._dir = Path(tempfile.mkdtemp(prefix="mf-pg-"))
        self._as_server(self._dir)
        initdb = [str(self._bin / "initdb"), "-D", str(self._dir / "datos"), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*initdb, "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            **self._identity(),
        )
        return super().start()

    def reset(self, down_s: float = 0.0) -> None:
        """A real restart: fast shutdown, ``down_s`` down, then the same server on the same port and data."""
        self._halt()
        time.sleep(down_s)  # the outage a restart is: connections refused meanwhile
        self._begin()
        self.restarts += 1

    def stop(self) -> None:
        super().stop()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _options(self) -> dict[str, str]:
        """The server's ``-c`` settings (a subclass may add to them)."""
        assert self._dir is not None
        return {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self._dir),
            "fsync": "off",  # thrown away at the end: durability only costs time here
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "200",
        }

    def _launch(self) -> subprocess.Popen[bytes]:
        assert self._bin is not None and self._dir is not None
        arguments = [arg for key, value in self._options().items() for arg in ("-c", f"{key}={value}")]
        return subprocess.Popen(
            [str(self._bin / "postgres"), "-D", str(self._dir / "datos"), *arguments],
            stdout=subprocess.DEVNULL,
            stderr=open(self._dir / "servidor.log", "ab"),  # the child keeps it open
            **self._identity(),
        )

    def _answers(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url, connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def _identity(self) -> dict[str, int]:
        if self._user is None:
            return {}
        return {"user": self._user.pw_uid, "group": self._user.pw_gid}

    def _as_server(self, directory: Path) -> None:
        if self._user is not None:
            os.chown(directory, self._user.pw_uid, self._user.pw_gid)
