"""The breaker's state in Valkey: one Lua script, one ``EVALSHA`` per guarded call.

redis-py's :class:`~redis.commands.core.Script` sends ``EVALSHA`` and, on ``NOSCRIPT`` (a
failover, a ``SCRIPT FLUSH``), loads the script and sends it again: no ``SCRIPT LOAD`` round
trip up front, and a restarted node costs one extra round trip once.

Time: by default the script reads the server's ``TIME``, so every Lambda judges "has the open
period ended?" and "which bucket is now?" by one clock, immune to skew between hosts. Tests
pass ``now`` from an injected clock instead, to jump past a cool-down without sleeping.
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from mercadofresco.circuit_breaker.state import BreakerState, Decision, SharedStateUnavailableError

if TYPE_CHECKING:
    import redis

    from mercadofresco.circuit_breaker.config import BreakerConfig

_LUA = files("mercadofresco.circuit_breaker").joinpath("circuito.lua").read_text()


class SharedBreakerState:
    """The script's caller for one dependency's key."""

    def __init__(self, key: str, redis_client: redis.Redis, config: BreakerConfig) -> None:
        self.key = key
        self._script = redis_client.register_script(_LUA)
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

    def execute(
        self, op: str, *, now_ms: int | None, pending: str = "", token: str = "", outcome: str = ""
    ) -> Decision:
        """Run ``op`` in one round trip; Valkey errors become :class:`SharedStateUnavailableError`."""
        args = [op, "" if now_ms is None else now_ms, pending, token, outcome, self._config]
        try:
            r = self._script(keys=[self.key], args=args)
        except RedisError as exc:
            raise SharedStateUnavailableError(f"{type(exc).__name__}: {exc}") from exc
        admitted, estado, hasta, aperturas, sonda, motivo, ahora, ok, ko, seguidos = _texto(r).split("|")
        return Decision(
            admitted=admitted == "1",
            state=BreakerState(estado),
            open_until_ms=int(hasta),
            openings=int(aperturas),
            is_probe=sonda == "1",
            open_reason=motivo,
            now_ms=int(ahora),
            window_successes=int(ok),
            window_failures=int(ko),
            consecutive_failures=int(seguidos),
        )


def _texto(valor: bytes | str) -> str:
    return valor.decode() if isinstance(valor, bytes) else valor
