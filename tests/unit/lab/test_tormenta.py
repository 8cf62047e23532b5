"""The storm lab: deterministic, and each defense reduces what it claims to."""

from __future__ import annotations

import pytest
from mercadofresco_lab import tormenta
from mercadofresco_lab.tormenta import Defensas, Escenario


@pytest.fixture(scope="module")
def por_defensa():
    return {r.defensas.nombre(): r for r in tormenta.comparativa(seed=5)}


def _huella(r: tormenta.Resultado) -> tuple:
    return (r.llamadas, r.reintentos, r.llamadas_en_caida, r.en_dlq, r.recaidas, r.fin_s, sorted(r.por_segundo.items()))


def test_simular_same_seed_same_numbers():
    # GIVEN the same seed and defenses WHEN run twice THEN every figure and the load curve are identical
    a = tormenta.simular(Defensas(jitter=True, breaker=True), seed=9)
    b = tormenta.simular(Defensas(jitter=True, breaker=True), seed=9)
    assert _huella(a) == _huella(b)
    assert _huella(a) != _huella(tormenta.simular(Defensas(jitter=True, breaker=True), seed=10))


def test_without_defences_storm_stays_within_worst_case_and_reaches_the_dlq(por_defensa):
    # GIVEN no defense THEN the storm is real: thousands of calls (bounded by 5 x 4 x 4 x 450 = 36,000),
    # the gateway relapses after recovering, and legitimate orders end in the DLQ
    r = por_defensa["ninguna"]
    assert 5_000 < r.llamadas <= Escenario().peor_caso_llamadas
    assert r.recaidas > 0
    assert r.en_dlq > 0
    assert r.completados + r.en_dlq == Escenario().pedidos


def test_breaker_cuts_calls_during_the_outage(por_defensa):
    # GIVEN the shared breaker alone THEN calls during the outage drop by over 95 % and no order is lost
    assert por_defensa["breaker"].llamadas_en_caida < 0.05 * por_defensa["ninguna"].llamadas_en_caida
    assert por_defensa["breaker"].en_dlq == 0


def test_budget_limits_retries_to_ten_percent(por_defensa):
    # GIVEN the 10 % retry budget alone THEN retries stay near 10 % of calls (bucket of 10 tokens on top)
    assert por_defensa["presupuesto"].cuota_reintentos <= 0.12
    assert por_defensa["ninguna"].cuota_reintentos > 0.8


def test_concurrency_cap_reduces_load_in_outage_and_peak(por_defensa):
    # GIVEN MaximumConcurrency 20 instead of scaling to 60 THEN less pressure in the outage and at recovery
    tope, ninguna = por_defensa["tope"], por_defensa["ninguna"]
    assert tope.llamadas_en_caida < 0.5 * ninguna.llamadas_en_caida
    assert tope.pico_recuperacion_rps < 0.5 * ninguna.pico_recuperacion_rps


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_jitter_reduces_relapses_during_recovery(seed):
    # GIVEN jitter alone (same IntervalSeconds/BackoffRate/MaxDelay) THEN the recovering gateway is knocked
    # over fewer times. (It does NOT reduce calls here: full jitter halves the mean wait; see the README.)
    sin = tormenta.simular(Defensas(), seed)
    con = tormenta.simular(Defensas(jitter=True), seed)
    assert con.recaidas < sin.recaidas


def test_all_four_defences_leave_no_dlq_and_one_call_per_pedido(por_defensa):
    # GIVEN all four defenses THEN no order in the DLQ, no relapse, and about one call per order
    r = por_defensa["jitter+tope+presupuesto+breaker"]
    assert r.en_dlq == 0
    assert r.recaidas == 0
    assert r.llamadas < 1.2 * Escenario().pedidos
