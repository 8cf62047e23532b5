"""The token bucket, on an injected clock: spacing, no bursts after idling."""

from __future__ import annotations

import pytest
from mercadofresco_ops.dlq.tasa import TokenBucket


class Reloj:
    """A clock that only moves when the bucket sleeps (or the test says so)."""

    def __init__(self) -> None:
        self.ahora = 1000.0

    def __call__(self) -> float:
        return self.ahora

    def dormir(self, segundos: float) -> None:
        self.ahora += segundos


def _ventana_maxima(instantes: list[float]) -> int:
    """Most events inside any half-open one-second window (1 µs below a second absorbs float rounding)."""
    return max(sum(1 for u in instantes if t <= u < t + 1 - 1e-6) for t in instantes)


def test_token_bucket_100_at_10_per_s_takes_9_9_s_and_no_second_exceeds_10() -> None:
    # GIVEN a bucket at 10/s on a fake clock
    reloj = Reloj()
    cubo = TokenBucket(10, reloj=reloj, dormir=reloj.dormir)

    # WHEN 100 operations go through
    instantes = []
    for _ in range(100):
        cubo.adquirir()
        instantes.append(reloj())

    # THEN they are 0.1 s apart: 9.9 s from first to last, never 11 in a second
    assert instantes[-1] - instantes[0] == pytest.approx(9.9)
    assert _ventana_maxima(instantes) == 10


def test_token_bucket_after_a_pause_releases_no_burst() -> None:
    # GIVEN a bucket that has been idle for a minute
    reloj = Reloj()
    cubo = TokenBucket(10, reloj=reloj, dormir=reloj.dormir)
    cubo.adquirir()
    reloj.ahora += 60

    # WHEN 20 operations go through
    instantes = []
    for _ in range(20):
        cubo.adquirir()
        instantes.append(reloj())

    # THEN only one token had accumulated: still 10 per second at most
    assert _ventana_maxima(instantes) == 10


def test_token_bucket_non_positive_rate_fails() -> None:
    # GIVEN / WHEN / THEN
    with pytest.raises(ValueError, match="positiva") as error:
        TokenBucket(0)
    assert error.type is ValueError
