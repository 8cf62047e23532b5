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
import time
from dataclasses import dataclass, field

from mercadofresco_local.servidor import puerto_libre

ARRANQUE_MAX_S = 30  # a loaded 2-core machine can take a while to fork a server
INTENTOS_PUERTO = 3  # another process (a parallel campaign's sibling) may take the port first


@dataclass
class RedisPrivado:
    """``with RedisPrivado() as r: r.url``; ``r.congelar()`` / ``r.descongelar()``."""

    puerto: int = field(default_factory=puerto_libre)
    congelado: bool = False
    _proceso: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.puerto}/0"

    def arrancar(self) -> RedisPrivado:
        for intento in range(INTENTOS_PUERTO):
            try:
                return self._arrancar()
            except OSError:
                self.parar()
                if intento == INTENTOS_PUERTO - 1:
                    raise
                self.puerto = puerto_libre()
        return self

    def _arrancar(self) -> RedisPrivado:
        import redis

        binario = shutil.which("redis-server")
        if binario is None:
            raise OSError("redis-server is not on PATH: install it to run the chaos scenario")
        self._proceso = subprocess.Popen(
            [binario, "--port", str(self.puerto), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        cliente = redis.Redis.from_url(self.url, socket_timeout=1)
        limite = time.monotonic() + ARRANQUE_MAX_S
        try:
            while True:
                try:
                    cliente.ping()
                    return self
                except redis.ConnectionError:
                    if time.monotonic() > limite or self._proceso.poll() is not None:
                        raise OSError(f"private redis-server on port {self.puerto} did not start") from None
                    time.sleep(0.05)
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

    def parar(self) -> None:
        if self._proceso is None:
            return
        self.descongelar()
        self._proceso.terminate()
        try:
            self._proceso.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proceso.kill()
            self._proceso.wait()
        self._proceso = None

    def __enter__(self) -> RedisPrivado:
        return self.arrancar()

    def __exit__(self, *exc: object) -> None:
        self.parar()
