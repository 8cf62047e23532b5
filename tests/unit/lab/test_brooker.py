"""Brooker's backoff-and-jitter experiment: deterministic, and the essay's published shape."""

from __future__ import annotations

import pytest
from mercadofresco_lab import brooker

CLIENTES = (10, 50, 90)


@pytest.fixture(scope="module")
def resultados():
    # 2 runs per point: small enough to stay fast, enough to smooth one unlucky seed
    por = {}
    for r in brooker.experimento(seed=3, clientes=CLIENTES, repeticiones=2):
        por[r.estrategia, r.clientes] = r
    return por


def test_simular_same_seed_same_numbers():
    # GIVEN the same seed WHEN run twice THEN identical calls and times; another seed differs
    assert brooker.simular("full", 50, seed=11) == brooker.simular("full", 50, seed=11)
    assert brooker.simular("full", 50, seed=11) != brooker.simular("full", 50, seed=12)


def test_experiment_without_backoff_work_grows_with_n_squared(resultados):
    # GIVEN no backoff WHEN clients go from 10 to 90 (x9) THEN work grows far faster than linearly (~x81)
    assert resultados["none", 90].llamadas > 40 * resultados["none", 10].llamadas


def test_experiment_full_jitter_does_much_less_work_than_no_jitter(resultados):
    # GIVEN 90 contending clients THEN full jitter needs under 60 % of the calls of no backoff and of
    # plain exponential backoff (the essay: "far less work")
    full = resultados["full", 90].llamadas
    assert full < 0.6 * resultados["none", 90].llamadas
    assert full < 0.6 * resultados["exponential", 90].llamadas


def test_experiment_equal_jitter_is_the_worst_jitter(resultados):
    # GIVEN 90 clients THEN equal jitter does more work than full jitter and takes the longest of the
    # jittered strategies (the essay: "Equal Jitter is the loser")
    equal = resultados["equal", 90]
    assert equal.llamadas > resultados["full", 90].llamadas
    assert equal.tiempo_s > max(resultados["full", 90].tiempo_s, resultados["decorrelated", 90].tiempo_s)


def test_experiment_exponential_without_jitter_is_the_slowest(resultados):
    # GIVEN 90 clients THEN plain exponential backoff finishes last: colliding clients keep colliding
    exponential = resultados["exponential", 90].tiempo_s
    assert all(exponential > resultados[e, 90].tiempo_s for e in ("none", "equal", "full", "decorrelated"))


def test_experiment_full_and_decorrelated_do_similar_work(resultados):
    # GIVEN 90 clients THEN full and decorrelated jitter do about the same work (the essay: "less clear")
    full, decorrelated = resultados["full", 90].llamadas, resultados["decorrelated", 90].llamadas
    assert abs(full - decorrelated) < 0.25 * full
