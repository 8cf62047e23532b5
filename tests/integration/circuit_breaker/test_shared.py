"""The shared state's rules (``shared.lua``) on the real Redis, driven by an injected clock (no sleeps).

Several ``CircuitBreaker`` instances on one key stand for several Lambdas; what only real processes can
show (one probe, the fleet-wide trip under concurrency) is in ``test_core_processes.py``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pytest
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.dominio.errores import CobroRechazado
from mercadofresco.errors import CircuitoAbierto

if TYPE_CHECKING:
    import redis

pytestmark = pytest.mark.integration


class Dependencia:
    """A stand-in for the provider call that counts how often it is really reached."""

    def __init__(self) -> None:
        self.llamadas = 0

    def falla(self) -> None:
        self.llamadas += 1
        raise ConnectionResetError("reset by peer")

    def responde(self) -> str:
        self.llamadas += 1
        return "ok"


def _breaker(cliente: redis.Redis, prefijo: str, reloj=None, **config) -> CircuitBreaker:
    return CircuitBreaker("pasarela", cliente, config=BreakerConfig(**config), prefix=prefijo, clock=reloj)


def _llamar(breaker: CircuitBreaker, fn, reloj=None) -> str:
    if reloj is not None:
        reloj.avanzar(0.001)  # time passes between calls: a success and a failure have an order
    try:
        breaker.call(fn)
    except CircuitoAbierto:
        return "rechazada"
    except ConnectionResetError:
        return "fallo"
    return "exito"


def test_breaker_19_consecutive_failures_stays_closed_20th_opens(cliente, redis_prefix, reloj):
    # GIVEN the lesson's threshold of 20 consecutive failures
    breaker, dep = _breaker(cliente, redis_prefix, reloj), Dependencia()
    # WHEN 19 calls fail
    for _ in range(19):
        _llamar(breaker, dep.falla)
    # THEN it is still closed
    assert breaker.state().state is BreakerState.CERRADO
    # WHEN the 20th fails
    _llamar(breaker, dep.falla)
    estado = breaker.state()
    # THEN it is open for open_base_s, and call 21 does not reach the dependency
    assert estado.state is BreakerState.ABIERTO
    assert estado.open_until_ms - estado.now_ms == 30_000
    assert _llamar(breaker, dep.responde) == "rechazada"
    assert dep.llamadas == 20


def test_breaker_failure_rate_below_minimum_calls_does_not_open(cliente, redis_prefix, reloj):
    # GIVEN a rate rule (50 % over >= 20 calls) and a consecutive rule out of reach
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=1000), Dependencia()
    # WHEN 19 calls alternate, 10 failures and 9 successes (53 %)
    for i in range(19):
        _llamar(breaker, dep.falla if i % 2 == 0 else dep.responde)
    # THEN the rate does not count yet
    assert breaker.state().state is BreakerState.CERRADO
    # WHEN the 20th call fails (11/20 = 55 %)
    _llamar(breaker, dep.falla)
    # THEN the rate opens it
    assert breaker.state().state is BreakerState.ABIERTO


def test_breaker_failure_rate_under_threshold_stays_closed(cliente, redis_prefix, reloj):
    # GIVEN 40 calls of which 40 % fail, never 20 in a row
    breaker, dep = _breaker(cliente, redis_prefix, reloj), Dependencia()
    for i in range(40):
        _llamar(breaker, dep.falla if i % 5 < 2 else dep.responde, reloj)
    # THEN it stays closed and every call reached the dependency
    estado = breaker.state()
    assert estado.state is BreakerState.CERRADO
    assert (estado.window_successes, estado.window_failures) == (24, 16)
    assert dep.llamadas == 40
    # AND the successes, reported late, still broke each streak: none is left after the last three
    assert estado.consecutive_failures == 0


def test_breaker_failures_older_than_window_are_forgotten(cliente, redis_prefix, reloj):
    # GIVEN 15 failures, then the 30 s window passes
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=1000), Dependencia()
    for _ in range(15):
        _llamar(breaker, dep.falla)
    breaker.flush()
    reloj.avanzar(31)
    # WHEN 15 more fail (30 failures in all, but only 15 inside any 30 s window)
    for _ in range(15):
        _llamar(breaker, dep.falla)
    estado = breaker.state()
    # THEN the rate rule sees 15 < min_calls and it stays closed
    assert estado.state is BreakerState.CERRADO
    assert estado.window_failures == 15


def test_breaker_open_rejects_fast_without_calling_dependency(cliente, redis_prefix, reloj):
    # GIVEN an open breaker
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=3), Dependencia()
    for _ in range(3):
        _llamar(breaker, dep.falla)
    # WHEN 100 more calls are made during the open period
    resultados = [_llamar(breaker, dep.responde) for _ in range(100)]
    # THEN all are refused with CircuitoAbierto and none reached the dependency
    assert resultados == ["rechazada"] * 100
    assert dep.llamadas == 3
    with pytest.raises(CircuitoAbierto) as info:
        breaker.call(dep.responde)
    assert info.value.dependency == "pasarela"
    assert 0 < info.value.retry_in_s <= 30


def test_breaker_probe_failure_reopens_longer_and_success_closes(cliente, redis_prefix, reloj):
    # GIVEN a breaker opened once (30 s)
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=3), Dependencia()
    for _ in range(3):
        _llamar(breaker, dep.falla)
    assert _llamar(breaker, dep.responde) == "rechazada"
    # WHEN the cool-down ends and the probe fails
    reloj.avanzar(30)
    assert _llamar(breaker, dep.falla) == "fallo"
    estado = breaker.state()
    # THEN it re-opens for twice as long
    assert estado.state is BreakerState.ABIERTO
    assert estado.open_until_ms - estado.now_ms == 60_000
    reloj.avanzar(30)
    assert _llamar(breaker, dep.responde) == "rechazada"
    # WHEN the longer cool-down ends and the probe succeeds
    reloj.avanzar(30)
    assert _llamar(breaker, dep.responde) == "exito"
    # THEN it is closed, and the next trip starts again from 30 s
    assert breaker.state().state is BreakerState.CERRADO
    for _ in range(3):
        _llamar(breaker, dep.falla)
    estado = breaker.state()
    assert estado.open_until_ms - estado.now_ms == 30_000


def test_breaker_open_duration_is_capped(cliente, redis_prefix, reloj):
    # GIVEN base 30 s and cap 300 s
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=1), Dependencia()
    _llamar(breaker, dep.falla)
    duraciones = []
    # WHEN 6 probes in a row fail
    for _ in range(6):
        estado = breaker.state()
        duraciones.append((estado.open_until_ms - estado.now_ms) // 1000)
        reloj.avanzar(duraciones[-1])
        _llamar(breaker, dep.falla)
    # THEN the open time doubles up to the cap
    assert duraciones == [30, 60, 120, 240, 300, 300]


def test_breaker_metric_emitted_once_per_opening_across_instances(
    cliente, redis_prefix, reloj, capsys, caplog, lineas_emf
):
    # GIVEN four breaker instances (four "Lambdas") on the same dependency, failing concurrently
    breakers = [_breaker(cliente, redis_prefix, reloj) for _ in range(4)]
    dep = Dependencia()

    def trabajar(b: CircuitBreaker) -> None:
        for _ in range(15):
            _llamar(b, dep.falla)

    hilos = [threading.Thread(target=trabajar, args=(b,)) for b in breakers]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join()
    # WHEN they keep calling after it opened
    for b in breakers:
        _llamar(b, dep.responde)
    # THEN exactly one CircuitoAbierto metric was published, with its dimension
    [linea] = lineas_emf(capsys.readouterr().out, "CircuitoAbierto")
    assert linea["dependencia"] == "pasarela"
    assert linea["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "MercadoFresco/Tienda"
    # AND one structured log line with the dependency and the reason
    [registro] = [r for r in caplog.records if r.getMessage() == "circuit opened"]
    assert (registro.dependencia, registro.motivo, registro.aperturas) == ("pasarela", "fallos_seguidos", 1)
    # AND the breaker opened after at most one extra failure per other instance: each failure is written
    # at once, and an instance whose write came back "closed" may call once more before it learns
    assert 20 <= dep.llamadas <= 20 + len(breakers) - 1


def test_breaker_business_refusal_counts_as_success(cliente, redis_prefix, reloj):
    # GIVEN a dependency that answers "card declined" 30 times
    breaker = _breaker(cliente, redis_prefix, reloj)

    def rechaza() -> None:
        raise CobroRechazado("fondos insuficientes")

    for _ in range(30):
        with pytest.raises(CobroRechazado):
            breaker.call(rechaza)
    # THEN the breaker stays closed: the provider is up, it just said no
    estado = breaker.state()
    assert estado.state is BreakerState.CERRADO
    assert estado.window_successes == 30


def test_breaker_forced_open_rejects_and_forced_closed_admits(cliente, redis_prefix, reloj):
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=3), Dependencia()
    # GIVEN an operator forcing it open with no failures at all
    breaker.force("abierto")
    # THEN calls are refused
    assert _llamar(breaker, dep.responde) == "rechazada"
    assert breaker.state().state is BreakerState.FORZADO_ABIERTO
    # WHEN forced closed, failures do not open it
    breaker.force("cerrado")
    resultados = [_llamar(breaker, dep.falla) for _ in range(10)]
    assert resultados == ["fallo"] * 10
    assert breaker.state().state is BreakerState.FORZADO_CERRADO
    # WHEN released to automatic
    breaker.force("")
    # THEN it starts closed with clean counters
    estado = breaker.state()
    assert (estado.state, estado.consecutive_failures) == (BreakerState.CERRADO, 0)
    assert dep.llamadas == 10


def test_breaker_late_success_from_before_the_failures_does_not_reset_their_streak(cliente, redis_prefix, reloj):
    # GIVEN two Lambdas, a threshold of 5, and Lambda A's success at t0 that it has not reported yet
    breaker_a = _breaker(cliente, redis_prefix, reloj, consecutive_failures=5)
    breaker_b = _breaker(cliente, redis_prefix, reloj, consecutive_failures=5)
    dep = Dependencia()
    assert _llamar(breaker_a, dep.responde) == "exito"
    # WHEN the dependency dies: B fails 4 times (every outcome B has is published), then A fails once,
    # reporting its old success with that failure
    for _ in range(4):
        assert _llamar(breaker_b, dep.falla, reloj) == "fallo"
    breaker_b.flush()
    assert _llamar(breaker_a, dep.falla, reloj) == "fallo"
    breaker_a.flush()
    # THEN the success, older than every failure, reset nothing: 5 failures in a row opened it
    estado = breaker_b.state()
    assert estado.state is BreakerState.ABIERTO
    assert _llamar(breaker_a, dep.responde, reloj) == _llamar(breaker_b, dep.responde, reloj) == "rechazada"
    assert dep.llamadas == 6


def test_breaker_late_success_erases_only_the_failures_that_ended_before_it(cliente, redis_prefix, reloj):
    # GIVEN two Lambdas, a threshold of 5: B fails twice, A succeeds (and keeps it unreported), B fails twice more
    breaker_a = _breaker(cliente, redis_prefix, reloj, consecutive_failures=5)
    breaker_b = _breaker(cliente, redis_prefix, reloj, consecutive_failures=5)
    dep = Dependencia()
    for _ in range(2):
        _llamar(breaker_b, dep.falla, reloj)
    assert _llamar(breaker_a, dep.responde, reloj) == "exito"
    for _ in range(2):
        _llamar(breaker_b, dep.falla, reloj)
    # WHEN A reports its success after all four failures, and B fails once more
    breaker_a.flush()
    _llamar(breaker_b, dep.falla, reloj)
    # THEN the success broke the streak where it happened: the 3 failures after it count, it stays closed
    estado = breaker_a.state()
    assert (estado.state, estado.consecutive_failures) == (BreakerState.CERRADO, 3)


def test_breaker_failure_of_a_call_admitted_before_a_trip_does_not_count_after_it(cliente, redis_prefix, reloj):
    # GIVEN Lambda A's call admitted while closed, still in flight (a slow provider)
    breaker_a = _breaker(cliente, redis_prefix, reloj, consecutive_failures=2)
    breaker_b = _breaker(cliente, redis_prefix, reloj, consecutive_failures=2)
    dep = Dependencia()
    en_vuelo = breaker_a.acquire()
    # WHEN meanwhile B trips the breaker, and after the open period B's probe closes it again
    for _ in range(2):
        _llamar(breaker_b, dep.falla, reloj)
    reloj.avanzar(30)
    assert _llamar(breaker_b, dep.responde, reloj) == "exito"
    # AND only then does A's old call fail, and B fails once
    en_vuelo.failure()
    _llamar(breaker_b, dep.falla, reloj)
    # THEN A's failure belonged to the closed period before the trip: the new streak holds B's failure alone
    estado = breaker_b.state()
    assert (estado.state, estado.consecutive_failures) == (BreakerState.CERRADO, 1)
