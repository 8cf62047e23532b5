"""Fixtures for the shared breaker: a client on the real Redis, a steerable clock, a private Redis to break,
and a count of the round trips a breaker makes."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest
import redis
from sam_emulator.private_redis import PrivateRedis

from tests.integration.circuit_breaker.worker import count_round_trips

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


@pytest.fixture
def redis_privado() -> Iterator[PrivateRedis]:
    """A redis-server of this test's own, that the test may stop, freeze or kill."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server binary not installed")
    with PrivateRedis() as servidor:
        yield servidor


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


@pytest.fixture
def round_trips() -> Callable[[redis.Redis], list[int]]:
    """``trips = round_trips(client)``: ``trips[0]`` is how many round trips breakers on ``client`` made since."""
    return count_round_trips
