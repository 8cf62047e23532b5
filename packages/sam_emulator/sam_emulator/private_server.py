"""What a server of one run only has in common, whatever it serves: a free loopback port, a
start that retries on another port, a wait until it answers, a bounded stop.

Subclasses (:mod:`sam_emulator.private_redis`, :mod:`sam_emulator.private_postgres`) say how to start their child on
``self.port`` and how to ask it whether it answers; this class owns the child's lifecycle.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Self

from sam_emulator.moto_server import free_port

if TYPE_CHECKING:
    from collections.abc import Callable

PORT_ATTEMPTS = 3  # another process (a parallel campaign's sibling) may take the free port first
STOP_LIMIT_S = 30  # a hang guard: past it the child is killed


@dataclass
class PrivateServer:
    """A child server on ``port``; ``with Subclase() as s:`` starts it and always stops it."""

    port: int = field(default_factory=free_port)
    _process: subprocess.Popen[bytes] | None = None

    # What a subclass provides.
    name = "server"
    stop_signal = signal.SIGTERM
    start_limit_s = 30.0  # a loaded 2-core machine can take a while to fork a server

    def _launch(self) -> subprocess.Popen[bytes]:
        """Start the child on ``self.port`` (not waiting for it)."""
        raise NotImplementedError

    def _answers(self) -> bool:
        """Whether the server answers now (False while it is still starting)."""
        raise NotImplementedError

    def start(self) -> Self:
        """Start it and wait until it answers; on a port someone else took, try another."""
        for attempt in range(PORT_ATTEMPTS):
            try:
                self._begin()
                return self
            except OSError:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
                self.port = free_port()
        return self

    def stop(self) -> None:
        self._halt()

    def kill(self) -> None:
        """A crash: SIGKILL, no shutdown; clients find the port closed."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGCONT)  # a frozen child dies as well, but say it anyway
            self._process.kill()
        self._halt()

    def _begin(self) -> None:
        self._process = self._launch()
        self._wait(self._answers)

    def _wait(self, answers: Callable[[], bool]) -> None:
        limit = time.monotonic() + self.start_limit_s
        while not answers():
            if self._process is None or self._process.poll() is not None or time.monotonic() > limit:
                self._halt()
                raise OSError(f"private {self.name} on port {self.port} did not start")
            time.sleep(0.05)

    def _halt(self) -> None:
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGCONT)  # a frozen child cannot handle its stop signal
            self._process.send_signal(self.stop_signal)
        try:
            self._process.wait(timeout=STOP_LIMIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
