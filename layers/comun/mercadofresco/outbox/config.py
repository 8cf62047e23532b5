"""The relay's and the clean-up's knobs, with the lesson's numbers as defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mercadofresco.payload_limits import STEP_FUNCTIONS_INPUT_MAX_BYTES

PUT_EVENTS_MAX_ENTRIES = 10  # EventBridge PutEvents hard limit per call
# Bytes per call (and so per entry). EventBridge takes 1 MiB a call since 2026-01-29
# (payload_limits.EVENTBRIDGE_PUT_EVENTS_MAX_BYTES); the relay keeps 256 KiB: a PedidoCreado starts a
# workflow, whose input takes 256 KiB, so a bigger entry is parked here with its reason instead of
# failing downstream, and ten orders of a few KB fill a call's 10 entries long before 256 KiB.
PUT_EVENTS_MAX_BYTES = STEP_FUNCTIONS_INPUT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class OutboxConfig:
    """How the relay claims, sends and gives up, and how the clean-up deletes.

    ``drain_s`` is how long one invocation keeps draining (most of the scheduled
    minute); ``poll_s`` the pause when there is nothing to send. A row rejected
    ``max_attempts`` times in total is parked with its reason instead of blocking the rest.
    """

    bus_name: str
    source: str = "mercadofresco.tienda"
    batch_max: int = 100
    entries_per_call: int = PUT_EVENTS_MAX_ENTRIES
    bytes_per_call: int = PUT_EVENTS_MAX_BYTES
    resends_per_batch: int = 2
    max_attempts: int = 8
    drain_s: float = 50.0
    margin_s: float = 5.0
    poll_s: float = 1.0
    lock_wait_s: float = 0.02
    resend_wait_s: float = 0.05
    error_wait_s: float = 1.0
    retention_days: int = 7
    purge_batch: int = 1000

    def __post_init__(self) -> None:
        if not self.bus_name:
            raise ValueError("bus_name is required (EVENT_BUS_NAME)")
        if not 1 <= self.entries_per_call <= PUT_EVENTS_MAX_ENTRIES:
            raise ValueError(f"entries_per_call must be 1..{PUT_EVENTS_MAX_ENTRIES}")
        if not 1 <= self.bytes_per_call <= PUT_EVENTS_MAX_BYTES:
            raise ValueError(f"bytes_per_call must be 1..{PUT_EVENTS_MAX_BYTES}")
        if self.batch_max < 1 or self.purge_batch < 1 or self.max_attempts < 1 or self.resends_per_batch < 0:
            raise ValueError("batch_max, purge_batch and max_attempts must be >= 1, resends_per_batch >= 0")
        if self.retention_days < 1:
            raise ValueError("retention_days must be >= 1")

    @classmethod
    def from_env(cls) -> OutboxConfig:
        """Read ``EVENT_BUS_NAME`` (required) and the optional ``OUTBOX_*`` overrides."""
        extra: dict[str, float | int] = {}
        for name, parse in (("drain_s", float), ("batch_max", int), ("max_attempts", int), ("retention_days", int)):
            value = os.environ.get(f"OUTBOX_{name.upper()}")
            if value:
                extra[name] = parse(value)
        return cls(bus_name=os.environ.get("EVENT_BUS_NAME", ""), **extra)  # type: ignore[arg-type]
