"""The retry budget shared in the real Redis: bounded under total failure, refilled after recovery."""

from __future__ import annotations

import threading

import pytest
import redis
from mercadofresco.retry import RetryBudget
from mercadofresco.valkey import valkey_client

pytestmark = pytest.mark.integration

LAMBDAS = 8
LLAMADAS_POR_LAMBDA = 250


class Reloj:
    def __init__(self) -> None:
        self.ahora = 100.0

    def __call__(self) -> float:
        return self.ahora


def _presupuesto(redis_url: str, prefijo: str, **kwargs) -> RetryBudget:
    return RetryBudget("pasarela", redis.Redis.from_url(redis_url), prefix=prefijo, **kwargs)


def _fallar_a_la_vez(presupuestos: list[RetryBudget]) -> list[int]:
    """Each budget in its own thread ("Lambda"): every call fails and asks for its one retry; retries granted."""
    concedidos = [0] * len(presupuestos)

    def lambda_que_falla(i: int) -> None:
        for _ in range(LLAMADAS_POR_LAMBDA):
            presupuestos[i].record_call()
            concedidos[i] += presupuestos[i].allow_retry()

    hilos = [threading.Thread(target=lambda_que_falla, args=(i,)) for i in range(len(presupuestos))]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join()
    return concedidos


def test_budget_under_total_failure_retries_stay_within_ten_percent(redis_url, redis_prefix):
    # GIVEN 8 concurrent "Lambdas", each with its own budget object on the same key
    presupuestos = [_presupuesto(redis_url, redis_prefix) for _ in range(LAMBDAS)]
    # WHEN 2000 calls fail at once
    concedidos = _fallar_a_la_vez(presupuestos)
    llamadas = LAMBDAS * LLAMADAS_POR_LAMBDA
    # THEN retries granted <= 10 % of calls + the bucket's capacity, not one per call
    assert sum(concedidos) <= 0.1 * llamadas + 10
    assert sum(concedidos) >= 0.1 * llamadas - 1
    # AND Redis agrees with what the processes saw
    registro = redis.Redis.from_url(redis_url).hgetall(f"{redis_prefix}presupuesto:pasarela")
    assert int(registro[b"concedidos"]) == sum(concedidos)
    assert int(registro[b"llamadas"]) == llamadas


def test_budget_spent_refills_after_recovery_and_is_shared(redis_url, redis_prefix):
    # GIVEN a budget spent by one Lambda
    a, b = _presupuesto(redis_url, redis_prefix), _presupuesto(redis_url, redis_prefix)
    while a.allow_retry():
        pass
    assert not b.allow_retry()
    # WHEN the provider recovers and Lambda B makes 50 successful calls, then needs one retry
    for _ in range(50):
        b.record_call()
    assert b.allow_retry()
    # THEN B's deposits (50 x 0.1 = 5 tokens) are shared: A gets the remaining 4, then no more
    assert [a.allow_retry() for _ in range(5)] == [True, True, True, True, False]


def test_budget_stale_deposits_do_not_travel(redis_url, redis_prefix):
    # GIVEN a Lambda that made 100 calls an hour ago while the bucket was spent
    reloj = Reloj()
    a = _presupuesto(redis_url, redis_prefix, clock=reloj)
    while a.allow_retry():
        pass
    for _ in range(100):
        a.record_call()
    reloj.ahora += 3600
    # WHEN it wants to retry now
    # THEN the hour-old deposits do not refill the shared bucket
    assert not a.allow_retry()


def test_budget_valkey_unreachable_falls_back_to_an_empty_local_bucket():
    # GIVEN a budget whose Valkey refuses connections
    budget = RetryBudget("erp", valkey_client("redis://127.0.0.1:1/0"), capacity=3)
    # WHEN it is asked for retries before it made any call
    # THEN none is granted: the fallback has no capacity of its own to add to the fleet's
    assert [budget.allow_retry() for _ in range(3)] == [False, False, False]
    # AND 30 calls made while degraded earn 3 retries (10 %), then it refuses again
    for _ in range(30):
        budget.record_call()
    assert [budget.allow_retry() for _ in range(5)] == [True, True, True, False, False]


def test_budget_fleet_with_valkey_lost_by_most_stays_within_ten_percent_plus_ten(redis_url, redis_prefix):
    # GIVEN 8 concurrent "Lambdas" on one dependency: 2 reach Valkey, 6 have lost it (socket timeouts
    # under load do exactly this to a few instances at a time)
    sanos = [_presupuesto(redis_url, redis_prefix) for _ in range(2)]
    degradados = [RetryBudget("pasarela", valkey_client("redis://127.0.0.1:1/0")) for _ in range(LAMBDAS - 2)]
    # WHEN 2000 calls fail at once
    concedidos = _fallar_a_la_vez(sanos + degradados)
    # THEN the fleet's retries stay within the lesson's 10 % of calls + the shared capacity
    assert sum(concedidos) <= 0.1 * LAMBDAS * LLAMADAS_POR_LAMBDA + 10
    # AND the degraded instances still retry (bounded, not all refused)
    assert all(concedidos[i] > 0 for i in range(2, LAMBDAS))
