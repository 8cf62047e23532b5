"""The retry budget's arithmetic, in process (no Valkey client)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from mercadofresco.retry import RetryBudget
from mercadofresco.retry.budget import MAX_INSTANCES_ENV


def test_budget_local_allows_ten_percent_plus_capacity_under_total_failure() -> None:
    # GIVEN a budget of 10 % with capacity 10 and 1000 calls that all want to retry
    budget = RetryBudget("pasarela", None, ratio=0.1, capacity=10)
    concedidos = 0
    for _ in range(1000):
        budget.record_call()
        concedidos += budget.allow_retry()
    # THEN retries stay within 10 % of the calls plus the initial capacity
    assert concedidos <= 0.1 * 1000 + 10
    assert concedidos >= 0.1 * 1000


def test_budget_local_spent_then_refilled_by_successful_calls() -> None:
    budget = RetryBudget("erp", None, ratio=0.1, capacity=10)
    while budget.allow_retry():
        pass
    # WHEN 50 calls succeed (no retries)
    for _ in range(50):
        budget.record_call()
    # THEN 5 retries are available again
    assert budget.tokens() == pytest.approx(5)


def test_budget_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="ratio"):
        RetryBudget("erp", None, ratio=0)


@pytest.mark.parametrize("valor", ["0", "-3", "diez", "1.5", "True"])
def test_budget_from_env_refuses_what_is_not_a_whole_number_of_instances(
    monkeypatch: pytest.MonkeyPatch, valor: str
) -> None:
    monkeypatch.setenv(MAX_INSTANCES_ENV, valor)
    with pytest.raises(ValueError, match=MAX_INSTANCES_ENV):
        RetryBudget.from_env("erp", None)


@pytest.mark.parametrize("max_instancias", [0, -1, True])
def test_budget_refuses_a_fleet_of_no_instances(max_instancias: int) -> None:
    with pytest.raises(ValueError, match="max_instances"):
        RetryBudget("erp", None, max_instances=max_instancias)


@given(valor=st.text(max_size=12))
def test_budget_from_env_any_value_is_a_budget_or_a_clear_error(valor: str) -> None:
    # GIVEN any text in RETRY_BUDGET_MAX_INSTANCES (NUL excluded: no environment can hold it)
    assume("\x00" not in valor)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(MAX_INSTANCES_ENV, valor)
        try:
            budget = RetryBudget.from_env("erp", None)
        except ValueError as exc:
            # THEN a refusal names the variable
            assert MAX_INSTANCES_ENV in str(exc)
        else:
            # OR the budget works (no Valkey client: this process's own, full)
            assert budget.allow_retry() is True
