"""A redis-server of one run only, on a free loopback port, that can be frozen and thawed.

The chaos scenario freezes Valkey (``SIGSTOP``: connections stay open, every command hangs
until the client's socket timeout; ``SIGCONT`` resumes it with its data). That must never
happen to the shared server other runs use, so the scenario (and the platform-fault tests)
start their own: no persistence, bound to 127.0.0.1, stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass

from sam_emulator.private_server import ServidorPrivado


@dataclass
class RedisPrivado(ServidorPrivado):
    """``with RedisPrivado() as r: r.url``; ``r.congelar()`` / ``r.descongelar()``; ``r.matar()``."""

    congelado: bool = False

    nombre = "redis-server"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.puerto}/0"

    def _argumentos(self) -> list[str]:
        """redis-server's arguments (a subclass may add to them)."""
        return ["--port", str(self.puerto), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]

    def _lanzar(self) -> subprocess.Popen[bytes]:
        binario = shutil.which("redis-server")
        if binario is None:
            raise OSError("redis-server is not on PATH: install it to run the chaos scenario")
        return subprocess.Popen(
            [binario, *self._argumentos()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _responde(self) -> bool:
        import redis

        cliente = redis.Redis.from_url(self.url, socket_timeout=1)
        try:
            return bool(cliente.ping())
        except redis.ConnectionError:
            return False
        finally:
            cliente.close()

    def congelar(self) -> None:
        """Freeze the server (SIGSTOP): it keeps its sockets and data but answers nothing."""
        if self._proceso is not None and not self.congelado:
            os.kill(self._proceso.pid, signal.SIGSTOP)
            self.congelado = True

    def descongelar(self) -> None:
        if self._proceso is not None and self.congelado:
            os.kill(self._proceso.pid, signal.SIGCONT)
            self.congelado = False

    def _detener(self) -> None:
        super()._detener()
        self.congelado = False
