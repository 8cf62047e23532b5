"""RetryPolicy: attempts counted explicitly, Retry-After preferred and bounded, 429 waits longer."""

from __future__ import annotations

import random

import pytest
from mercadofresco.retry import MAX_ATTEMPTS_HTTP, Classification, FullJitterBackoff, RetryPolicy


def test_policy_default_is_two_attempts() -> None:
    # GIVEN the default (the workflow's Retry governs; this layer absorbs one blip)
    politica = RetryPolicy()
    # THEN attempt 0 may be followed by one more, attempt 1 by none
    assert MAX_ATTEMPTS_HTTP == 2
    assert [politica.has_attempt_left(i) for i in range(3)] == [True, False, False]


def test_policy_retry_after_honoured_within_bound() -> None:
    politica, rng = RetryPolicy(retry_after_max_s=5), random.Random(0)
    assert politica.delay_s(0, Classification.TRANSIENT_LONG_WAIT, 3.0, rng) == 3.0
    # a provider asking for more than the bound gets a "give up now"
    assert politica.delay_s(0, Classification.TRANSIENT_LONG_WAIT, 60.0, rng) is None


def test_policy_429_without_retry_after_waits_longer_but_still_jittered() -> None:
    # GIVEN the same rng state for a 503 and a 429
    politica = RetryPolicy(backoff=FullJitterBackoff(base_s=0.2, cap_s=2.0), min_429_wait_s=1.0)
    esperas_503 = [politica.delay_s(0, Classification.TRANSIENT, None, random.Random(s)) for s in range(200)]
    esperas_429 = [politica.delay_s(0, Classification.TRANSIENT_LONG_WAIT, None, random.Random(s)) for s in range(200)]
    # THEN the 429 waits exactly 1 s more than the 503, and keeps the spread
    assert all(b - a == pytest.approx(1.0) for a, b in zip(esperas_503, esperas_429, strict=True))
    assert all(0 <= e <= 0.2 for e in esperas_503)
    assert len({round(e, 6) for e in esperas_429}) > 150


def test_policy_zero_attempts_rejected() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)
