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

from sam_emulator.private_server import PrivateServer


@dataclass
class PrivateRedis(PrivateServer):
    """``with PrivateRedis() as r: r.url``; ``r.freeze()`` / ``r.thaw()``; ``r.kill()``."""

    frozen_since: bool = False

    name = "redis-server"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _arguments(self) -> list[str]:
        """redis-server's arguments (a subclass may add to them)."""
        return ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]

    def _launch(self) -> subprocess.Popen[bytes]:
        binary = shutil.which("redis-server")
        if binary is None:
            raise OSError("redis-server is not on PATH: install it to run the chaos scenario")
        return subprocess.Popen(
            [binary, *self._arguments()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _answers(self) -> bool:
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=1)
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False
        finally:
            client.close()

    def freeze(self) -> None:
        """Freeze the server (SIGSTOP): it keeps its sockets and data but answers nothing."""
        if self._process is not None and not self.frozen_since:
            os.kill(self._process.pid, signal.SIGSTOP)
            self.frozen_since = True

    def thaw(self) -> None:
        if self._process is not None and self.frozen_since:
            os.kill(self._process.pid, signal.SIGCONT)
            self.frozen_since = False

    def _halt(self) -> None:
        super()._halt()
        self.frozen_since = False
