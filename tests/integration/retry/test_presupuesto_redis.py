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
    return RetryBudget("pasarela", redis.Redis.from_url(redis_url), prefijo=prefijo, **kwargs)


def test_budget_under_total_failure_retries_stay_within_ten_percent(redis_url, redis_prefix):
    # GIVEN 8 concurrent "Lambdas", each with its own budget object on the same key
    presupuestos = [_presupuesto(redis_url, redis_prefix) for _ in range(LAMBDAS)]
    concedidos = [0] * LAMBDAS

    def lambda_que_falla(i: int) -> None:
        # every call fails and asks for its one retry
        for _ in range(LLAMADAS_POR_LAMBDA):
            presupuestos[i].record_call()
            concedidos[i] += presupuestos[i].allow_retry()

    hilos = [threading.Thread(target=lambda_que_falla, args=(i,)) for i in range(LAMBDAS)]
    # WHEN 2000 calls fail at once
    for h in hilos:
        h.start()
    for h in hilos:
        h.join()
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


def test_budget_valkey_unreachable_falls_back_to_local_bucket():
    # GIVEN a budget whose Valkey refuses connections
    budget = RetryBudget("erp", valkey_client("redis://127.0.0.1:1/0"), capacidad=3)
    # WHEN it is asked for retries
    concedidos = [budget.allow_retry() for _ in range(5)]
    # THEN retries stay bounded by the process's own bucket (neither unbounded nor all refused)
    assert concedidos == [True, True, True, False, False]
