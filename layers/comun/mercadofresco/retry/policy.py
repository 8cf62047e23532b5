"""How many attempts one layer makes, and how long it waits between them.

The lesson's discipline (section 7): one layer governs. For the order workflow the governing
layer is Step Functions' ``Retry``; the HTTP layer inside a Lambda only absorbs a blip, so its
default is :data:`MAX_ATTEMPTS_HTTP` = 2 attempts in total (one retry). The worst-case table
(attempts per dependency across SDK x queue x workflow <= 15) cites that constant.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mercadofresco.retry.backoff import Backoff, FullJitterBackoff
from mercadofresco.retry.classification import Classification

if TYPE_CHECKING:
    import random

MAX_ATTEMPTS_HTTP = 2  # total attempts per provider call in the HTTP layer, the first one included
RETRY_AFTER_MAX_S = 5.0  # never sleep longer than this inside an invocation, whatever the provider asks
MIN_429_WAIT_S = 1.0  # a 429 without Retry-After waits this much more than the backoff: "later" means later


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Attempts and waits for one caller.

    Parameters
    ----------
    max_attempts:
        Total attempts including the first (``1`` disables retrying in this layer).
    backoff:
        Wait policy between attempts.
    retry_after_max_s:
        Upper bound on a provider's ``Retry-After`` (a provider asking for 10 minutes gets the
        error instead: the queue or workflow waits, not a billed Lambda).
    min_429_wait_s:
        Added to the jittered backoff after a 429 without ``Retry-After`` (added, not max'ed,
        so the waits of many callers stay spread out).
    """

    max_attempts: int = MAX_ATTEMPTS_HTTP
    backoff: Backoff = field(default_factory=FullJitterBackoff)
    retry_after_max_s: float = RETRY_AFTER_MAX_S
    min_429_wait_s: float = MIN_429_WAIT_S

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")

    @classmethod
    def from_env(cls) -> RetryPolicy:
        """The policy with ``HTTP_MAX_ATTEMPTS`` from the function's environment.

        The template declares that variable per function, and the rule pack's worst-case
        check (E9111) multiplies the same number, so what is linted is what runs.
        """
        value = os.environ.get("HTTP_MAX_ATTEMPTS", "").strip()
        try:
            return cls(max_attempts=int(value)) if value else cls()
        except ValueError:
            raise ValueError(f"HTTP_MAX_ATTEMPTS must be a whole number >= 1, got {value!r}") from None

    def has_attempt_left(self, attempt: int) -> bool:
        """Whether attempt ``attempt`` (0-based, just failed) may be followed by another."""
        return attempt + 1 < self.max_attempts

    def delay_s(
        self, retry: int, classification: Classification, retry_after: float | None, rng: random.Random
    ) -> float | None:
        """Seconds to wait before retry number ``retry`` (0-based), or ``None`` to give up now.

        ``Retry-After`` wins when the provider sent one (429/503), bounded by ``retry_after_max_s``:
        a longer request means the retry would not fit, so the caller fails now.
        """
        if retry_after is not None:
            return retry_after if retry_after <= self.retry_after_max_s else None
        wait_s = self.backoff.compute(retry, rng)
        if classification is Classification.TRANSIENT_LONG_WAIT:
            wait_s += self.min_429_wait_s
        return wait_s
