"""Config: frozen, unit-suffixed, checked, lease derived from the function timeout."""

from __future__ import annotations

import dataclasses

import pytest
from mercadofresco.errors import PermanentError
from mercadofresco.idempotency import IdempotencyConfig
from mercadofresco.idempotency.config import lease_for_timeout


def test_defaults_are_24h_record_and_timeout_plus_margin_lease() -> None:
    # GIVEN nothing configured
    # WHEN a config is built
    config = IdempotencyConfig()
    # THEN records live 24 h, the lease is the layer's default 30 s timeout + 60 s, permanent = PermanentError
    assert config.expires_after_s == 86_400
    assert config.lease_s == 90
    assert config.permanent_errors == (PermanentError,)
    assert config.local_cache is False and config.wait_for_completion_s == 0


def test_config_is_frozen_and_slotted() -> None:
    # GIVEN a config
    config = IdempotencyConfig()
    # WHEN a field is assigned
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.lease_s = 1  # type: ignore[misc]
    # THEN it refused, and the instance has no __dict__
    assert not hasattr(config, "__dict__")
    assert config.with_changes(lease_s=10).lease_s == 10


@pytest.mark.parametrize(
    "campos",
    [
        {"lease_s": 0},
        {"lease_s": 86_400},
        {"local_cache_max_items": 0},
        {"wait_for_completion_s": -1},
        {"poll_interval_s": 0},
        {"permanent_errors": ()},
        {"permanent_errors": ("CobroRechazado",)},
    ],
)
def test_invalid_config_raises_value_error(campos: dict[str, object]) -> None:
    # GIVEN an impossible setting
    # WHEN the config is built
    with pytest.raises(ValueError):
        IdempotencyConfig(**campos)  # type: ignore[arg-type]
    # THEN it was refused (asserted by the raise)


def test_from_env_derives_lease_from_function_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a function whose timeout is 120 s
    monkeypatch.delenv("IDEMPOTENCY_LEASE_S", raising=False)
    monkeypatch.setenv("FUNCTION_TIMEOUT_S", "120")
    # WHEN the config is read from the environment
    config = IdempotencyConfig.from_env()
    # THEN the lease outlives the function by the margin
    assert config.lease_s == 180 == lease_for_timeout(120)


def test_from_env_explicit_lease_and_overrides_win(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an explicit lease and record life in the environment
    monkeypatch.setenv("IDEMPOTENCY_LEASE_S", "600")
    monkeypatch.setenv("IDEMPOTENCY_EXPIRES_AFTER_S", "7200")
    monkeypatch.setenv("FUNCTION_TIMEOUT_S", "30")
    # WHEN read, with one keyword override
    config = IdempotencyConfig.from_env(local_cache=True)
    # THEN the environment and the override are both applied
    assert (config.lease_s, config.expires_after_s, config.local_cache) == (600, 7200, True)


def test_from_env_non_numeric_value_raises_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a typo in the environment
    monkeypatch.setenv("IDEMPOTENCY_LEASE_S", "90s")
    # WHEN read
    with pytest.raises(ValueError) as info:
        IdempotencyConfig.from_env()
    # THEN the error names the variable
    assert "IDEMPOTENCY_LEASE_S" in str(info.value)
