"""``BreakerConfig``: every bad value a clear ``ValueError``, fuzzed; the cache's age bounded by the open period."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco.circuit_breaker import BreakerConfig, CircuitBreaker
from mercadofresco.circuit_breaker.config import PERIODS, env_variable


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="failure_rate"):
        BreakerConfig(failure_rate=1.5)
    with pytest.raises(ValueError, match="open_base_s"):
        BreakerConfig(open_base_s=600, open_max_s=300)


def test_config_cache_older_than_the_open_period_is_refused() -> None:
    # GIVEN an open period of 2 s
    # WHEN the cache may be 2 s old, or 2.5 s
    fits = BreakerConfig(open_base_s=2, open_max_s=2, cache_max_age_s=2)
    # THEN 2 s is accepted (a view read before an opening has expired when half-open starts) and 2.5 s is
    # refused: a process could then call during the half-open period beside the probe
    assert fits.cache_max_age_s == 2
    with pytest.raises(ValueError, match="second probe"):
        BreakerConfig(open_base_s=2, open_max_s=2, cache_max_age_s=2.5)


numbers = st.one_of(st.integers(-5, 10**6), st.floats(allow_nan=True, allow_infinity=True))


@given(
    st.fixed_dictionaries(
        {},
        optional={name: numbers for name in BreakerConfig.__dataclass_fields__},
    )
)
def test_fuzz_config_is_valid_or_a_clear_value_error(values: dict) -> None:
    # GIVEN any numbers for any of the knobs
    # WHEN a config is built from them
    try:
        config = BreakerConfig(**values)
    except ValueError as exc:
        # THEN a refusal names what is wrong...
        assert any(name in str(exc) for name in values)
        return
    # ...and an accepted config keeps the breaker's invariants and builds a breaker
    assert 0 <= config.cache_max_age_s <= config.open_base_s <= config.open_max_s
    assert config.bucket_ms >= 1
    assert CircuitBreaker("erp", None, config=config).call(lambda: "ok") == "ok"


def test_force_without_valkey_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="Valkey"):
        CircuitBreaker("erp", None).force("abierto")


def test_from_env_sets_the_periods_it_names_and_keeps_the_rest() -> None:
    # GIVEN an environment that shortens the open period and leaves the cache's age empty
    environ = {"BREAKER_OPEN_BASE_S": "1.5", "BREAKER_OPEN_MAX_S": " 15 ", "BREAKER_CACHE_MAX_AGE_S": ""}
    # WHEN the config is read from it
    config = BreakerConfig.from_env(environ)
    # THEN the two periods are the environment's and every other knob is the default
    assert (config.open_base_s, config.open_max_s) == (1.5, 15.0)
    assert config.cache_max_age_s == BreakerConfig().cache_max_age_s
    assert config.consecutive_failures == BreakerConfig().consecutive_failures


def test_from_env_names_the_variable_that_is_not_a_number() -> None:
    with pytest.raises(ValueError, match="BREAKER_OPEN_BASE_S must be a number of seconds, got 'treinta'"):
        BreakerConfig.from_env({"BREAKER_OPEN_BASE_S": "treinta"})


@given(st.dictionaries(st.sampled_from([env_variable(p) for p in PERIODS]), st.text(max_size=12)))
def test_fuzz_from_env_is_a_config_or_a_clear_value_error(environ: dict[str, str]) -> None:
    # GIVEN any text in any of the period variables
    try:
        config = BreakerConfig.from_env(environ)
    except ValueError as exc:
        # THEN a refusal names a variable or the period whose rule it breaks
        assert any(name in str(exc) for name in (*environ, *PERIODS))
        return
    # ...and an accepted config holds the breaker's invariants
    assert 0 <= config.cache_max_age_s <= config.open_base_s <= config.open_max_s
