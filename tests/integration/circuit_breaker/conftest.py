"""Fixtures for the shared breaker: a client on the real Redis, a steerable clock, a private Redis to break."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
from typing import TYPE_CHECKING

import pytest
import redis

from tests.conftest import wait_until

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class Reloj:
    """An injected clock (epoch seconds) the test moves forward instead of sleeping."""

    def __init__(self, inicio: float = 1_800_000_000.0) -> None:
        self.ahora = inicio

    def __call__(self) -> float:
        return self.ahora

    def avanzar(self, segundos: float) -> None:
        self.ahora += segundos


@pytest.fixture
def cliente(redis_url: str) -> Iterator[redis.Redis]:
    c = redis.Redis.from_url(redis_url, socket_timeout=1)
    yield c
    c.close()


@pytest.fixture
def reloj() -> Reloj:
    return Reloj()


def puerto_libre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisPrivado:
    """A redis-server of this test's own, on a free port, that the test may stop, freeze or kill."""

    def __init__(self) -> None:
        self.puerto = puerto_libre()
        self.url = f"redis://127.0.0.1:{self.puerto}/0"
        self.proceso = subprocess.Popen(
            ["redis-server", "--port", str(self.puerto), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self._responde, "the private redis-server to answer")

    def _responde(self) -> bool:
        try:
            return redis.Redis(port=self.puerto, socket_timeout=1).ping()
        except redis.ConnectionError:
            return False

    def congelar(self) -> None:
        self.proceso.send_signal(signal.SIGSTOP)

    def descongelar(self) -> None:
        self.proceso.send_signal(signal.SIGCONT)

    def matar(self) -> None:
        if self.proceso.poll() is None:
            self.proceso.send_signal(signal.SIGCONT)
            self.proceso.kill()
            self.proceso.wait(60)  # a hang guard: SIGKILL ends it at once


@pytest.fixture
def redis_privado() -> Iterator[RedisPrivado]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server binary not installed")
    servidor = RedisPrivado()
    yield servidor
    servidor.matar()


def _lineas_emf(salida: str, metrica: str) -> list[dict]:
    lineas = []
    for linea in salida.splitlines():
        if linea.startswith("{") and f'"{metrica}"' in linea:
            lineas.append(json.loads(linea))
    return lineas


@pytest.fixture
def lineas_emf() -> Callable[[str, str], list[dict]]:
    """``lineas_emf(stdout, "CircuitoAbierto")``: the Powertools EMF lines that carry that metric."""
    return _lineas_emf
