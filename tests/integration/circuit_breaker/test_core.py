"""What a process's view of the shared state costs and how stale it may be; the degraded mode when Valkey is gone.

Every bound is driven by an injected clock (``reloj``): the view's age is the clock's, so "just before"
and "at" ``cache_max_age_s`` are exact instants, not timing luck. Several ``CircuitBreaker`` instances on
one key stand for several Lambdas; ``test_core_processes.py`` repeats the bounds with 8 real processes.
"""

from __future__ import annotations

import uuid

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.circuit_breaker import BreakerConfig, BreakerState, CircuitBreaker
from mercadofresco.errors import CircuitoAbierto
from mercadofresco.valkey import valkey_client

from tests.integration.circuit_breaker.conftest import Reloj

pytestmark = pytest.mark.integration

CONFIG = BreakerConfig(local_consecutive_failures=5, shared_retry_s=0.3)
CACHE_S = BreakerConfig().cache_max_age_s
JUST_BEFORE_S = CACHE_S - 0.001


class _Metrics:
    def __init__(self) -> None:
        self.events: list[str] = []

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        self.events.append(nombre)


class _Dependency:
    """The provider call, counting how often it is really reached."""

    def __init__(self) -> None:
        self.calls = 0

    def ok(self) -> str:
        self.calls += 1
        return "ok"

    def fail(self) -> None:
        self.calls += 1
        raise TimeoutError("read timed out")


def _breaker(cliente, prefix, reloj, **config) -> CircuitBreaker:
    return CircuitBreaker("pasarela", cliente, config=BreakerConfig(**config), prefix=prefix, clock=reloj)


def _outcome(breaker: CircuitBreaker, fn) -> str:
    try:
        breaker.call(fn)
    except CircuitoAbierto:
        return "refused"
    except TimeoutError:
        return "failed"
    return "ok"


def _trip(breaker: CircuitBreaker, n: int) -> None:
    for _ in range(n):
        _outcome(breaker, _Dependency().fail)


# ---------------------------------------------------------------- the view: cost and staleness


def test_breaker_healthy_calls_cost_one_round_trip_per_cache_age(cliente, redis_prefix, reloj, round_trips):
    # GIVEN a breaker on a closed circuit
    trips = round_trips(cliente)
    breaker, dep = _breaker(cliente, redis_prefix, reloj), _Dependency()
    # WHEN it makes 200 healthy calls, then the cache age passes and it makes 200 more
    first = [_outcome(breaker, dep.ok) for _ in range(200)]
    reloj.avanzar(CACHE_S)
    second = [_outcome(breaker, dep.ok) for _ in range(200)]
    # THEN all 400 went through on two round trips (0.005 per call), and no success was written on its own...
    assert first == second == ["ok"] * 200
    assert trips == [2]
    # AND every success reaches the shared count with the next round trip
    assert breaker.state().window_successes == 400


def test_breaker_open_refusals_cost_one_round_trip_per_cache_age(cliente, redis_prefix, reloj, round_trips):
    # GIVEN an open circuit (30 s)
    breaker, dep = _breaker(cliente, redis_prefix, reloj, consecutive_failures=3), _Dependency()
    _trip(breaker, 3)
    trips = round_trips(cliente)
    # WHEN 100 calls meet it, then the cache age passes and 100 more do
    refused = [_outcome(breaker, dep.ok) for _ in range(100)]
    reloj.avanzar(CACHE_S)
    refused += [_outcome(breaker, dep.ok) for _ in range(100)]
    # THEN none reached the dependency, and it asked Valkey once (the view from the tripping failure served
    # the first 100, one read the next 100)
    assert refused == ["refused"] * 200 and dep.calls == 0
    assert trips == [1]


def test_breaker_view_from_before_another_opened_it_admits_until_cache_age_then_refuses(cliente, redis_prefix, reloj):
    # GIVEN Lambda A that read "closed" (a healthy call), then Lambda B that trips the breaker at that instant
    breaker_a, breaker_b, dep = (
        _breaker(cliente, redis_prefix, reloj),
        _breaker(cliente, redis_prefix, reloj),
        _Dependency(),
    )
    assert _outcome(breaker_a, dep.ok) == "ok"
    _trip(breaker_b, BreakerConfig().consecutive_failures)
    # WHEN A calls a dependency that answers, just before its view is cache_max_age_s old, and then at that age
    reloj.avanzar(JUST_BEFORE_S)
    stale = _outcome(breaker_a, dep.ok)
    reloj.avanzar(CACHE_S - JUST_BEFORE_S)
    fresh = _outcome(breaker_a, dep.ok)
    # THEN the stale view admitted A's call, and from cache_max_age_s on A sees the open circuit
    assert (stale, fresh) == ("ok", "refused")
    assert dep.calls == 2


def test_breaker_stale_view_lets_through_one_failed_call_at_most(cliente, redis_prefix, reloj):
    # GIVEN Lambda A with a fresh "closed" view, and Lambda B that trips the breaker
    breaker_a, breaker_b, dep = (
        _breaker(cliente, redis_prefix, reloj),
        _breaker(cliente, redis_prefix, reloj),
        _Dependency(),
    )
    _outcome(breaker_a, dep.ok)
    _trip(breaker_b, BreakerConfig().consecutive_failures)
    # WHEN A calls the dead dependency 10 times at the same instant (its view still fresh)
    results = [_outcome(breaker_a, dep.fail) for _ in range(10)]
    # THEN one call went out: its failure was written, and the answer told A the circuit is open
    assert results == ["failed"] + ["refused"] * 9
    assert dep.calls == 2


def test_breaker_operator_override_reaches_a_process_within_cache_age(cliente, redis_prefix, reloj):
    # GIVEN Lambda A with a fresh "closed" view
    breaker_a, dep = _breaker(cliente, redis_prefix, reloj), _Dependency()
    operator = _breaker(cliente, redis_prefix, reloj)
    _outcome(breaker_a, dep.ok)
    # WHEN the operator forces it open (mf-circuito abrir)
    operator.force("abierto")
    reloj.avanzar(JUST_BEFORE_S)
    before = _outcome(breaker_a, dep.ok)
    reloj.avanzar(CACHE_S - JUST_BEFORE_S)
    after = _outcome(breaker_a, dep.ok)
    # AND closes it again (mf-circuito cerrar)
    operator.force("")
    reloj.avanzar(JUST_BEFORE_S)
    before_close = _outcome(breaker_a, dep.ok)
    reloj.avanzar(CACHE_S - JUST_BEFORE_S)
    after_close = _outcome(breaker_a, dep.ok)
    # THEN each override reached A no later than cache_max_age_s after it was made
    assert (before, after, before_close, after_close) == ("ok", "refused", "refused", "ok")


def test_breaker_refused_in_half_open_is_admitted_as_soon_as_the_probe_closes(
    cliente, redis_prefix, reloj, round_trips
):
    # GIVEN an open breaker whose open period has ended, and Lambda P holding the half-open probe
    breaker_p, breaker_a, dep = (
        _breaker(cliente, redis_prefix, reloj),
        _breaker(cliente, redis_prefix, reloj),
        _Dependency(),
    )
    _trip(breaker_p, BreakerConfig().consecutive_failures)
    reloj.avanzar(BreakerConfig().open_base_s)
    probe = breaker_p.acquire()
    trips = round_trips(cliente)
    # WHEN Lambda A calls while the probe is out, the probe succeeds, and A calls again at that same instant
    while_out = _outcome(breaker_a, dep.ok)
    probe.success()
    after = _outcome(breaker_a, dep.ok)
    # THEN A was refused while the probe was out, and admitted right after it closed the breaker: a
    # half-open answer is never cached, so no process goes on refusing from a stale view (3 round trips:
    # A's refusal, the probe's report, A's admission)
    assert probe.is_probe
    assert (while_out, after) == ("refused", "ok")
    assert trips == [3]


def test_breaker_transition_hook_hears_each_change_once_after_the_metric(cliente, redis_prefix, reloj):
    # GIVEN two Lambdas, each with a transition hook and a metrics sink that share one record
    heard: list[tuple[str, str, str, str]] = []

    class _Sink:
        def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
            heard.append(("metric", nombre, "", ""))

    def hook(lambda_name: str):
        def on_transition(t) -> None:
            heard.append((lambda_name, t.from_state.value, t.to_state.value, t.reason))

        return on_transition

    a, b = (
        CircuitBreaker(
            "pasarela",
            cliente,
            config=BreakerConfig(consecutive_failures=2),
            prefix=redis_prefix,
            clock=reloj,
            metrics=_Sink(),
            on_transition=hook(name),
        )
        for name in ("a", "b")
    )
    dep = _Dependency()
    # WHEN A and B trip it together, B probes after the open period and fails, then A probes and succeeds
    _outcome(a, dep.fail)
    _outcome(b, dep.fail)
    reloj.avanzar(30)
    _outcome(b, dep.fail)
    reloj.avanzar(60)
    _outcome(a, dep.ok)
    # THEN each change was heard once, by the Lambda that made it, the metric of each opening first
    assert heard == [
        ("metric", "CircuitoAbierto", "", ""),
        ("b", "cerrado", "abierto", "fallos_seguidos"),
        ("b", "abierto", "semiabierto", ""),
        ("metric", "CircuitoAbierto", "", ""),
        ("b", "semiabierto", "abierto", "sonda_fallida"),
        ("a", "abierto", "semiabierto", ""),
        ("a", "semiabierto", "cerrado", ""),
    ]


def test_breaker_transition_hook_that_raises_breaks_nothing(cliente, redis_prefix, reloj, caplog):
    # GIVEN a hook that raises
    def broken(_transition) -> None:
        raise RuntimeError("dashboard down")

    breaker = CircuitBreaker(
        "pasarela", cliente, config=BreakerConfig(consecutive_failures=1), prefix=redis_prefix, clock=reloj,
        on_transition=broken,
    )  # fmt: skip
    # WHEN its failure trips the breaker
    result = _outcome(breaker, _Dependency().fail)
    # THEN the caller sees its own failure, the breaker is open, and the hook's error is logged
    assert result == "failed"
    assert breaker.state().state is BreakerState.ABIERTO
    assert any(r.getMessage() == "on_transition hook raised: ignored" for r in caplog.records)


# ---------------------------------------------------------------- degraded mode


def test_breaker_closed_port_degrades_to_local_after_one_attempt(redis_privado, reloj, round_trips):
    # GIVEN a breaker whose Valkey is a port nobody listens on (its degraded mode on the test's clock)
    url = redis_privado.url
    redis_privado.kill()
    metricas = _Metrics()
    cliente = valkey_client(url)
    trips = round_trips(cliente)
    breaker = CircuitBreaker("erp", cliente, config=CONFIG, metrics=metricas, clock=reloj)
    # WHEN calls are made
    resultados = [breaker.call(lambda: "ok") for _ in range(20)]
    # THEN they all went through, Valkey was tried once (not once per call: a dead Valkey costs one
    # timeout per shared_retry_s), and the metric says the shared state is unavailable
    assert resultados == ["ok"] * 20
    assert trips == [1]
    assert metricas.events == ["EstadoCompartidoNoDisponible"]
    # AND the local breaker still protects the dependency: 5 failures open it
    for _ in range(5):
        with pytest.raises(TimeoutError):
            breaker.call(_Dependency().fail)
    with pytest.raises(CircuitoAbierto):
        breaker.call(lambda: "no llega")
    assert metricas.events == ["EstadoCompartidoNoDisponible", "CircuitoAbierto"]


def test_breaker_frozen_valkey_degrades_and_recovers_shared_state(redis_privado, reloj, round_trips):
    # GIVEN a breaker on a private Valkey that works, whose view has just expired
    metricas = _Metrics()
    cliente = valkey_client(redis_privado.url)
    breaker = CircuitBreaker("correo-principal", cliente, config=CONFIG, metrics=metricas, clock=reloj)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state().state is BreakerState.CERRADO
    reloj.avanzar(CONFIG.cache_max_age_s)
    trips = round_trips(cliente)
    # WHEN the server freezes (SIGSTOP: connections stay open, nothing answers)
    redis_privado.freeze()
    try:
        primera = breaker.call(lambda: "ok")
        siguientes = [breaker.call(lambda: "ok") for _ in range(10)]
    finally:
        redis_privado.thaw()
    # THEN the first call tried Valkey once (one socket timeout), the next ones not at all
    assert primera == "ok" and siguientes == ["ok"] * 10
    assert trips == [1]
    assert metricas.events == ["EstadoCompartidoNoDisponible"]
    # WHEN Valkey answers again and shared_retry_s has passed
    reloj.avanzar(CONFIG.shared_retry_s)
    for _ in range(3):
        breaker.call(lambda: "ok")
    # THEN the outcomes land in the shared state again
    assert breaker.state().window_successes >= 3


def test_breaker_reloads_script_after_noscript(redis_privado, reloj):
    # GIVEN a breaker that has already loaded its script
    cliente = redis.Redis.from_url(redis_privado.url)
    breaker = CircuitBreaker("pasarela", cliente, config=CONFIG, metrics=_Metrics(), clock=reloj)
    breaker.call(lambda: "ok")
    # WHEN the server forgets every script (failover, SCRIPT FLUSH) and the view has expired
    cliente.script_flush()
    reloj.avanzar(CONFIG.cache_max_age_s)
    # THEN the next call reloads it and the state is intact (shared, not degraded)
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state().window_successes == 2


# ---------------------------------------------------------------- the bounds, for any interleaving

STEPS = st.lists(st.tuples(st.integers(0, 2), st.booleans()), min_size=1, max_size=40)


@given(steps=STEPS)
def test_fuzz_breaker_any_interleaving_opens_on_a_real_run_and_stops_each_lambda_after_one_failure(
    cliente, redis_prefix, steps
):
    # GIVEN three Lambdas on one breaker (threshold 3), time passing 1 ms a call (far less than the cache
    # age and the open period: every view stays fresh, the breaker never reaches half-open)
    reloj, dependency = Reloj(), f"pasarela-{uuid.uuid4().hex[:8]}"
    lambdas = [
        CircuitBreaker(dependency, cliente, config=BreakerConfig(consecutive_failures=3), prefix=redis_prefix,
                       clock=reloj, metrics=_Metrics())
        for _ in range(3)
    ]  # fmt: skip
    observer = CircuitBreaker(dependency, cliente, prefix=redis_prefix, clock=reloj, metrics=_Metrics())
    run, opened, failed_after_opening = 0, False, [0, 0, 0]
    # WHEN they call in any order, the dependency answering or failing as drawn
    for who, answers in steps:
        reloj.avanzar(0.001)
        dep = _Dependency()
        outcome = _outcome(lambdas[who], dep.ok if answers else dep.fail)
        if outcome == "refused":
            continue
        run = 0 if outcome == "ok" else run + 1
        failed_after_opening[who] += opened and outcome == "failed"
        opened = opened or observer.state().state is BreakerState.ABIERTO
        # THEN a run of 3 failures in a row, whoever made them and however late their successes are
        # reported, has opened it...
        assert opened or run < 3
    # ...and after it opened, each Lambda made at most one more failed call (its failure's answer said "open")
    assert max(failed_after_opening) <= 1
