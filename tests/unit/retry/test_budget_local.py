"""The retry budget's arithmetic, in process (no Valkey client)."""

from __future__ import annotations

import pytest
from mercadofresco.retry import RetryBudget


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
