"""Full jitter: within bounds, capped, spread out; Retry-After parsed both ways."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from mercadofresco.retry import FullJitterBackoff, NoBackoff, retry_after_s


@pytest.mark.parametrize("intento", range(8))
def test_full_jitter_wait_within_zero_and_capped_exponential(intento: int) -> None:
    # GIVEN base 0.2 s and cap 2 s
    backoff, rng = FullJitterBackoff(base_s=0.2, cap_s=2.0), random.Random(intento)
    # WHEN 2000 waits are drawn for this attempt
    esperas = [backoff.compute(intento, rng) for _ in range(2000)]
    # THEN every wait is in [0, min(cap, base*2^attempt)] and they cover that range (not a constant)
    techo = min(2.0, 0.2 * 2**intento)
    assert all(0 <= e <= techo for e in esperas)
    assert min(esperas) < techo * 0.05
    assert max(esperas) > techo * 0.95
    assert sum(esperas) / len(esperas) == pytest.approx(techo / 2, rel=0.08)


def test_full_jitter_huge_attempt_stays_at_cap() -> None:
    # GIVEN an absurd attempt number
    rng = random.Random(1)
    # THEN no overflow, and the cap holds
    assert 0 <= FullJitterBackoff(base_s=0.2, cap_s=2.0).compute(10_000, rng) <= 2.0


def test_full_jitter_exact_value_with_pinned_rng() -> None:
    # GIVEN a seeded rng: uniform(0, 0.8) == 0.8 * random()
    rng_a, rng_b = random.Random(42), random.Random(42)
    # THEN attempt 2 with base 0.2 draws uniform(0, 0.8)
    assert FullJitterBackoff(base_s=0.2, cap_s=2.0).compute(2, rng_a) == pytest.approx(0.8 * rng_b.random())


def test_full_jitter_invalid_config_rejected() -> None:
    with pytest.raises(ValueError, match="base_s"):
        FullJitterBackoff(base_s=1.0, cap_s=0.5)


def test_no_backoff_is_zero() -> None:
    assert NoBackoff().compute(5, random.Random()) == 0.0


@pytest.mark.parametrize(
    ("cabecera", "esperado"),
    [
        ("7", 7.0),
        (" 0 ", 0.0),
        ("Sun, 29 Nov 2026 15:00:30 GMT", 30.0),
        ("Sunday, 29-Nov-26 15:00:10 GMT", 10.0),
        ("Sun, 29 Nov 2026 14:59:00 GMT", 0.0),  # a date in the past: retry now, never a negative wait
        (None, None),
        ("", None),
        ("pronto", None),
        ("-5", None),
    ],
)
def test_retry_after_seconds_or_http_date(cabecera: str | None, esperado: float | None) -> None:
    # GIVEN "now" pinned at 15:00:00 UTC
    ahora = datetime(2026, 11, 29, 15, 0, 0, tzinfo=UTC)
    # THEN both forms parse to seconds from now, garbage to None
    assert retry_after_s(cabecera, now=ahora) == esperado
