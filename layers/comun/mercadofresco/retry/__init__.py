"""Retries that do not turn an outage into a storm (lesson, sections 5-8).

- :class:`FullJitterBackoff` and friends: how long to wait (policy, no loop).
- :func:`classify` / :class:`Classification`: which outcomes deserve a retry, in one table.
- :class:`RetryPolicy`: how many attempts one layer makes (:data:`MAX_ATTEMPTS_HTTP` = 2).
- :class:`RetryBudget`: retries at most ~10 % of calls per dependency, shared in Valkey.

``RetryBudget`` is loaded on first use, so importing this package never imports ``redis``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mercadofresco.retry.backoff import Backoff, EqualJitterBackoff, FullJitterBackoff, NoBackoff, retry_after_s
from mercadofresco.retry.classification import Classification, classify
from mercadofresco.retry.policy import MAX_ATTEMPTS_HTTP, RetryPolicy

if TYPE_CHECKING:
    from mercadofresco.retry.budget import RetryBudget

__all__ = [
    "MAX_ATTEMPTS_HTTP",
    "Backoff",
    "Classification",
    "EqualJitterBackoff",
    "FullJitterBackoff",
    "NoBackoff",
    "RetryBudget",
    "RetryPolicy",
    "classify",
    "retry_after_s",
]


def __getattr__(name: str) -> Any:
    if name == "RetryBudget":
        from mercadofresco.retry.budget import RetryBudget

        return RetryBudget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
