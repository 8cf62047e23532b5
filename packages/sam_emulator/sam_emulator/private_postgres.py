"""A PostgreSQL server of one run only, on a free loopback port, that can be really restarted.

The chaos scenario restarts PostgreSQL: a fast shutdown (``SIGINT``: open transactions are
rolled back, every client connection is closed) and a start on the same port and data
directory, so for a moment clients get "connection refused", as in a real restart or an
Aurora failover. That must never happen to the shared server at 127.0.0.1:5432 other runs use,
so the scenario starts its own: ``initdb`` into a temporary directory, durability off (the data
is thrown away at the end), stopped and deleted at the end.

The server binaries come from whatever PostgreSQL is installed (:func:`directorio_binarios`);
without them :func:`disponible` is false and the caller falls back (and says so). PostgreSQL
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

from sam_emulator.private_server import ServidorPrivado

ARRANQUE_MAX_S = 60  # a loaded 2-core machine can take a while to initdb and start a server


def directorio_binarios() -> Path | None:
    """Where ``initdb`` and ``postgres`` live: ``pg_config --bindir``, PATH, or the newest /usr/lib/postgresql."""
    candidatos: list[Path] = []
    if pg_config := shutil.which("pg_config"):
        salida = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False).stdout.strip()
        if salida:
            candidatos.append(Path(salida))
    if initdb := shutil.which("initdb"):
        candidatos.append(Path(initdb).resolve().parent)
    versiones = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    candidatos += [Path(p) for p in versiones]
    for directorio in candidatos:
        if (directorio / "initdb").is_file() and (directorio / "postgres").is_file():
            return directorio
    return None


def disponible() -> bool:
    return directorio_binarios() is not None


def _usuario_servidor() -> pwd.struct_passwd | None:
    """The non-root user the server runs as when this process is root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError as exc:
        raise OSError("running as root and there is no 'postgres' user to run a private server as") from exc


@dataclass
class PostgresPrivado(ServidorPrivado):
    """``with PostgresPrivado() as pg: pg.url``; ``pg.reiniciar()`` stops (fast) and starts it again."""

    reinicios: int = 0
    _dir: Path | None = None
    _bin: Path | None = None
    _usuario: pwd.struct_passwd | None = None

    nombre = "PostgreSQL"
    senal_parada = signal.SIGINT  # fast shutdown: roll back, disconnect everyone
    arranque_max_s = ARRANQUE_MAX_S

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.puerto}/postgres"

    def start(self) -> PostgresPrivado:
        self._bin = directorio_binarios()
        if self._bin is None:
            raise OSError("no PostgreSQL server binaries (initdb, postgres) found")
        self._usuario = _usuario_servidor()
        self._dir = Path(tempfile.mkdtemp(prefix="mf-pg-"))
        self._como_servidor(self._dir)
        initdb = [str(self._bin / "initdb"), "-D", str(self._dir / "datos"), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*initdb, "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            **self._identidad(),
        )
        return super().start()

    def reiniciar(self, caido_s: float = 0.0) -> None:
        """A real restart: fast shutdown, ``caido_s`` down, then the same server on the same port and data."""
        self._detener()
        time.sleep(caido_s)  # the outage a restart is: connections refused meanwhile
        self._iniciar()
        self.reinicios += 1

    def stop(self) -> None:
        super().stop()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _opciones(self) -> dict[str, str]:
        """The server's ``-c`` settings (a subclass may add to them)."""
        assert self._dir is not None
        return {
            "listen_addresses": "127.0.0.1",
            "port": str(self.puerto),
            "unix_socket_directories": str(self._dir),
            "fsync": "off",  # thrown away at the end: durability only costs time here
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "200",
        }

    def _lanzar(self) -> subprocess.Popen[bytes]:
        assert self._bin is not None and self._dir is not None
        argumentos = [arg for clave, valor in self._opciones().items() for arg in ("-c", f"{clave}={valor}")]
        return subprocess.Popen(
            [str(self._bin / "postgres"), "-D", str(self._dir / "datos"), *argumentos],
            stdout=subprocess.DEVNULL,
            stderr=open(self._dir / "servidor.log", "ab"),  # the child keeps it open
            **self._identidad(),
        )

    def _responde(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url, connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def _identidad(self) -> dict[str, int]:
        if self._usuario is None:
            return {}
        return {"user": self._usuario.pw_uid, "group": self._usuario.pw_gid}

    def _como_servidor(self, directorio: Path) -> None:
        if self._usuario is not None:
            os.chown(directorio, self._usuario.pw_uid, self._usuario.pw_gid)
