"""A cheap "is anything pending?" for the outbox relay, in Valkey: an idle relay never wakes Aurora.

Aurora Serverless v2 at 0 ACU pauses after 5 idle minutes, and a relay that connects every
minute keeps it awake (≈ 1.44 USD/day at 0.5 ACU). With ``OUTBOX_PENDING_SIGNAL=valkey`` (the template
sets it when ``AuroraMinCapacity`` is 0) the relay first asks Valkey, which the functions
already reach for the breaker, and connects only when there is work. The invariant kept:

    rows pending in the outbox  =>  the flag is set, or a full check is due

- the store sets the flag *before* it commits an order (a commit that then fails leaves a
  spurious flag: one drain for nothing; a flag that cannot be set fails the order, 503,
  before anything is committed);
- the relay takes the flag (``GETDEL``) *before* draining, and sets it again when rows are
  still pending after the drain (refused entries, the deadline, a database error);
- at most every ``full_check_s`` a full check runs anyway (``SET NX EX``), covering a flag
  Valkey lost (a restart) and any writer that bypasses the store.

    store:  SET flag ── COMMIT order+outbox row
    relay:        ... GETDEL flag ─ drain ─ rows left? SET flag
    relay (idle):     GETDEL → nil, full-check key present → return, no connection

Cost when idle: two Valkey commands a minute. Trade-off: an order placed while the relay is
idle waits for the next schedule (up to a minute) instead of the draining relay's ~1 s.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mercadofresco.valkey import KEY_PREFIX

if TYPE_CHECKING:
    import redis

__all__ = ["ENV_PENDING_SIGNAL", "PendingSignal", "pending_signal_from_env"]

ENV_PENDING_SIGNAL = (
    "OUTBOX_PENDING_SIGNAL"  # "valkey" turns the signal on; anything else (the default) leaves the relay as it was
)
FULL_CHECK_S = 3600  # a full check at least hourly: one Aurora wake-up an hour at worst when idle


class PendingSignal:
    """The pending flag and the periodic full check, as two Valkey keys under ``prefix``."""

    def __init__(self, client: redis.Redis, *, prefix: str = KEY_PREFIX, full_check_s: int = FULL_CHECK_S):
        if full_check_s < 1:
            raise ValueError(f"full_check_s must be >= 1, got {full_check_s}")
        self._redis = client
        self._pending_key = f"{prefix}outbox:pendiente"
        self._full_check_key = f"{prefix}outbox:comprobacion"
        self._full_check_s = full_check_s

    def mark(self) -> None:
        """Say there is (or may be) work; raises the driver's error when Valkey does not answer."""
        self._redis.set(self._pending_key, "1")

    def has_work(self) -> bool:
        """Take the flag: True when it was set or a full check is due; True too when Valkey does not answer."""
        import redis

        try:
            if self._redis.getdel(self._pending_key) is not None:
                return True
            return bool(self._redis.set(self._full_check_key, "1", nx=True, ex=self._full_check_s))
        except redis.RedisError:
            return True  # fail open: a drain costs an Aurora wake-up, a skipped one could delay orders


def pending_signal_from_env() -> PendingSignal | None:
    """The signal when ``OUTBOX_PENDING_SIGNAL=valkey``, on the layer's Valkey client; ``None`` otherwise."""
    if os.environ.get(ENV_PENDING_SIGNAL, "").strip().lower() != "valkey":
        return None
    from mercadofresco.valkey import valkey_client

    return PendingSignal(valkey_client())
