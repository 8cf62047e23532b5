"""The HTTP layer's attempts come from the function's environment, the number the linter multiplies."""

from __future__ import annotations

import pytest
from mercadofresco.retry import RetryPolicy
from mercadofresco.retry.policy import MAX_ATTEMPTS_HTTP


def test_retry_policy_from_env_reads_http_max_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_MAX_ATTEMPTS", "3")
    assert RetryPolicy.from_env().max_attempts == 3


def test_retry_policy_from_env_without_variable_uses_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HTTP_MAX_ATTEMPTS", raising=False)
    assert RetryPolicy.from_env().max_attempts == MAX_ATTEMPTS_HTTP == 2


@pytest.mark.parametrize("valor", ["dos", "0", "-1"])
def test_retry_policy_from_env_bad_value_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, valor: str) -> None:
    monkeypatch.setenv("HTTP_MAX_ATTEMPTS", valor)
    with pytest.raises(ValueError, match=r"max_attempts|HTTP_MAX_ATTEMPTS"):
        RetryPolicy.from_env()
