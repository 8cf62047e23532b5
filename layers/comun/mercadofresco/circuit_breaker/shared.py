"""The breaker's state in Valkey: one Lua script (``shared.lua``), one command per round trip.

A breaker's first call sends the script's body (``EVAL``, which also leaves it in the server's
script cache); every later one sends its digest through redis-py's
:class:`~redis.commands.core.Script` (``EVALSHA``), which on ``NOSCRIPT`` (a failover, a
``SCRIPT FLUSH``) loads the script and sends it again. A cold process therefore pays one round
trip for its first call, not three (``EVALSHA``, ``NOSCRIPT``, ``SCRIPT LOAD``, ``EVALSHA``).

Time: by default the script reads the server's ``TIME``, so every Lambda judges "has the open
period ended?", "which bucket is now?" and "did that success end before this failure?" by one
clock, immune to skew between hosts. Tests pass ``now`` from an injected clock instead, to jump
past a cool-down without sleeping.
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from mercadofresco.circuit_breaker.state import BreakerState, Decision, SharedStateUnavailableError

if TYPE_CHECKING:
    import redis

    from mercadofresco.circuit_breaker.config import BreakerConfig

_LUA = files("mercadofresco.circuit_breaker").joinpath("shared.lua").read_text()


class SharedBreakerState:
    """The script's caller for one dependency's key."""

    def __init__(self, key: str, redis_client: redis.Redis, config: BreakerConfig) -> None:
        self.key = key
        self._client = redis_client
        self._script = redis_client.register_script(_LUA)
        self._sent = False  # whether this breaker has sent the script's body yet
        self._config = " ".join(
            str(v)
            for v in (
                config.bucket_ms,
                config.buckets,
                config.min_calls,
                config.failure_rate,
                config.consecutive_failures,
                int(config.open_base_s * 1000),
                int(config.open_max_s * 1000),
                int(config.probe_reservation_s * 1000),
            )
        )

    def execute(self, op: str, *, now_s: float | None, successes: str = "", value: str = "") -> Decision:
        """Run ``op`` in one round trip; Valkey errors become :class:`SharedStateUnavailableError`.

        ``now_s`` is an injected clock's time (``None``: the server's); ``successes`` is ``"epoch count
        age_us"`` (or empty), ``value`` the op's own argument (see ``shared.lua``).
        """
        # repr() keeps every digit of the float: the script needs microseconds.
        args = [op, "" if now_s is None else repr(now_s), successes, value, self._config]
        try:
            if self._sent:
                reply = self._script(keys=[self.key], args=args)
            else:
                reply = self._client.eval(_LUA, 1, self.key, *args)
                self._sent = True
        except RedisError as exc:
            raise SharedStateUnavailableError(f"{type(exc).__name__}: {exc}") from exc
        return _decision(reply.decode() if isinstance(reply, bytes) else reply)


def _decision(reply: str) -> Decision:
    admitted, state, open_until, openings, probe, reason, now, oks, kos, streak, epoch, transition = reply.split("|")
    return Decision(
        admitted=admitted == "1",
        state=BreakerState(state),
        open_until_ms=int(open_until),
        openings=int(openings),
        is_probe=probe == "1",
        open_reason=reason,
        now_ms=int(now),
        window_successes=int(oks),
        window_failures=int(kos),
        consecutive_failures=int(streak),
        epoch=int(epoch),
        transition=BreakerState(transition) if transition else None,
    )
