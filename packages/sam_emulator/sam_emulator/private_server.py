"""What a server of one run only has in common, whatever it serves: a free loopback port, a
start that retries on another port, a wait until it answers, a bounded stop.

Subclasses (:mod:`redis_privado`, :mod:`postgres_privado`) say how to start their child on
``self.puerto`` and how to ask it whether it answers; this class owns the child's lifecycle.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Self

from sam_emulator.moto_server import puerto_libre

if TYPE_CHECKING:
    from collections.abc import Callable

INTENTOS_PUERTO = 3  # another process (a parallel campaign's sibling) may take the free port first
PARADA_MAX_S = 30  # a hang guard: past it the child is killed


@dataclass
class ServidorPrivado:
    """A child server on ``puerto``; ``with Subclase() as s:`` starts it and always stops it."""

    puerto: int = field(default_factory=puerto_libre)
    _proceso: subprocess.Popen[bytes] | None = None

    # What a subclass provides.
    nombre = "server"
    senal_parada = signal.SIGTERM
    arranque_max_s = 30.0  # a loaded 2-core machine can take a while to fork a server

    def _lanzar(self) -> subprocess.Popen[bytes]:
        """Start the child on ``self.puerto`` (not waiting for it)."""
        raise NotImplementedError

    def _responde(self) -> bool:
        """Whether the server answers now (False while it is still starting)."""
        raise NotImplementedError

    def start(self) -> Self:
        """Start it and wait until it answers; on a port someone else took, try another."""
        for intento in range(INTENTOS_PUERTO):
            try:
                self._iniciar()
                return self
            except OSError:
                if intento == INTENTOS_PUERTO - 1:
                    raise
                self.puerto = puerto_libre()
        return self

    def stop(self) -> None:
        self._detener()

    def matar(self) -> None:
        """A crash: SIGKILL, no shutdown; clients find the port closed."""
        if self._proceso is not None and self._proceso.poll() is None:
            self._proceso.send_signal(signal.SIGCONT)  # a frozen child dies as well, but say it anyway
            self._proceso.kill()
        self._detener()

    def _iniciar(self) -> None:
        self._proceso = self._lanzar()
        self._esperar(self._responde)

    def _esperar(self, responde: Callable[[], bool]) -> None:
        limite = time.monotonic() + self.arranque_max_s
        while not responde():
            if self._proceso is None or self._proceso.poll() is not None or time.monotonic() > limite:
                self._detener()
                raise OSError(f"private {self.nombre} on port {self.puerto} did not start")
            time.sleep(0.05)

    def _detener(self) -> None:
        if self._proceso is None:
            return
        if self._proceso.poll() is None:
            self._proceso.send_signal(signal.SIGCONT)  # a frozen child cannot handle its stop signal
            self._proceso.send_signal(self.senal_parada)
        try:
            self._proceso.wait(timeout=PARADA_MAX_S)
        except subprocess.TimeoutExpired:
            self._proceso.kill()
            self._proceso.wait()
        self._proceso = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
