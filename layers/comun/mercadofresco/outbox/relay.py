"""``OutboxRelay``: publish pending outbox rows to EventBridge, mark only what was accepted.

One batch = one transaction: claim ≤ ``batch_max`` rows (``FOR UPDATE SKIP LOCKED``, oldest
first), send them with ``PutEvents`` in calls of ≤ 10 entries and ≤ 256 KB, re-send only the
entries EventBridge rejected (``FailedEntryCount`` / per-entry ``ErrorCode``), then mark the
accepted rows and count the rejections, and commit. Order per aggregate is kept: a row whose
earlier event is still pending, or whose earlier event was rejected in this batch, waits.

A batch's calls go one after another, not concurrently: a rejected entry holds back the later
events of its aggregate in the following calls, and concurrent calls would also not lower the
CPU per event (the same calls, plus threads). Throughput scales with more relays instead
(``SKIP LOCKED`` keeps them apart), at no extra CPU per event.
"""

from __future__ import annotations

import logging
import platform
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import botocore
import psycopg
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from psycopg_pool import PoolTimeout

from mercadofresco.aws import client
from mercadofresco.outbox import postgres
from mercadofresco.outbox.events import entry, entry_size, split_entries
from mercadofresco.process_cache import per_environment

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable

    from botocore.client import BaseClient
    from psycopg_pool import ConnectionPool

    from mercadofresco.outbox.config import OutboxConfig
    from mercadofresco.outbox.events import OutboxRow

__all__ = ["DB_ERRORS", "EVENTS_CLIENT_CONFIG", "LOG_FIELDS", "OutboxRelay", "RelayResult", "events_client"]

logger = logging.getLogger(__name__)

DB_ERRORS = (psycopg.OperationalError, PoolTimeout)

# The relay's hot client (one PutEvents per 10 events, all day): botocore's own per-call work is
# most of the relay's CPU (~2 ms per call of 10 entries with the default client, measured by
# bench/bench_outbox.py). On top of the project's retry and timeout policy (merged by ``client``):
# - no client-side parameter validation: every entry is built by ``events.entry`` (fixed shape
#   and types), EventBridge validates it again anyway, and a call it refuses as a whole leaves
#   the rows pending, as a failed validation here would; walking each call's parameters cost
#   ~7-25 % of the call's CPU (measured, noisy on this shared machine);
# - a fixed User-Agent: botocore otherwise rebuilds and sanitises the whole string twice per call
#   (~20-25 %); the SDK, Python and the caller stay in it, only botocore's per-call feature codes go.
EVENTS_CLIENT_CONFIG = Config(
    parameter_validation=False,
    user_agent=f"Botocore/{botocore.__version__} Python/{platform.python_version()} md/mercadofresco-outbox-relay",
)


# The "outbox drained" log line's field names, which runbooks/outbox-retrasado.md queries: Spanish, never renamed.
LOG_FIELDS = {
    "batches": "lotes",
    "claimed": "reclamadas",
    "published": "publicadas",
    "rejections": "rechazos",
    "parked": "aparcadas",
    "held": "retenidas",
    "calls": "llamadas",
    "db_errors": "errores_bd",
    "service_errors": "errores_servicio",
}


@per_environment
def events_client() -> BaseClient:
    """The relay's EventBridge client, one per execution environment (``EVENTS_CLIENT_CONFIG``)."""
    return client("events", config=EVENTS_CLIENT_CONFIG)


@dataclass(slots=True)
class RelayResult:
    """Counters of one batch or of a whole drain."""

    batches: int = 0
    claimed: int = 0
    published: int = 0
    rejections: int = 0
    parked: int = 0
    held: int = 0
    calls: int = 0
    db_errors: int = 0
    service_errors: int = 0

    def add(self, other: RelayResult) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        """The counters under their log field names (``LOG_FIELDS``): the relay's log line and its answer."""
        return {LOG_FIELDS[name]: value for name, value in asdict(self).items()}


class OutboxRelay:
    """Drains the outbox to the bus; safe to run several at once (different connections).

    Parameters
    ----------
    pool
        A psycopg ``ConnectionPool`` (its ``check`` replaces connections a restart broke).
    events
        A boto3 ``events`` client (:func:`events_client` in Lambda).
    clock, sleep
        Injectable monotonic clock and sleep, so tests compress time.
    """

    def __init__(
        self,
        pool: ConnectionPool,
        events: BaseClient,
        config: OutboxConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._pool = pool
        self._events = events
        self._config = config
        self._clock = clock
        self._sleep = sleep

    def process_batch(self) -> RelayResult:
        """Claim, publish, mark and commit one batch; return its counters."""
        counters = RelayResult(batches=1)
        with self._pool.connection() as conn, conn.transaction():
            rows = postgres.claim(conn, self._config.batch_max)
            counters.claimed = len(rows)
            if not rows:
                return counters
            sendable = self._plan(conn, rows, counters)
            accepted, failures = self._publish(sendable, counters)
            postgres.mark_published(conn, accepted)
            parked = postgres.record_failures(conn, failures, self._config.max_attempts)
            for id_ in parked:
                logger.error("outbox row parked", extra={"outbox_id": str(id_), "motivo": failures[id_][1]})
            counters.published = len(accepted)
            counters.parked += len(parked)
        return counters

    def drain(self, until: float) -> RelayResult:
        """Process batches until the clock reaches ``until``; poll every ``poll_s`` when idle.

        A database outage (restart, failover) or an unavailable EventBridge pauses and retries
        instead of ending the drain: nothing is lost, the rows wait in the table.
        """
        total = RelayResult()
        while (now := self._clock()) < until:
            try:
                batch = self.process_batch()
            except DB_ERRORS as exc:
                total.db_errors += 1
                logger.warning("outbox database unavailable, retrying", extra={"error": str(exc)})
                self._sleep(min(self._config.error_wait_s, max(until - now, 0)))
                continue
            total.add(batch)
            self._sleep(min(self._pause(batch), max(until - self._clock(), 0)))
        return total

    def status(self) -> postgres.OutboxStatus:
        """Pending count, oldest pending age and parked count (for the metrics)."""
        with self._pool.connection() as conn:
            return postgres.status(conn)

    def _pause(self, batch: RelayResult) -> float:
        if batch.service_errors:
            return self._config.error_wait_s
        if batch.claimed == 0:
            return self._config.poll_s
        if batch.published == 0 and batch.rejections == 0:
            return self._config.lock_wait_s  # everything waits on another relay's commit
        return 0.0

    def _plan(self, conn: Any, rows: list[OutboxRow], counters: RelayResult) -> list[tuple[OutboxRow, dict, int]]:
        """Entries to send, in order; park the ones that can never fit, hold the ones that must wait."""
        sendable: list[tuple[OutboxRow, dict, int]] = []
        waiting: set[tuple[str, str]] = set()
        for row in rows:
            if row.bloqueada or row.agregado in waiting:
                waiting.add(row.agregado)
                counters.held += 1
                continue
            event_entry = entry(row, self._config)
            size = entry_size(event_entry)
            if size > self._config.bytes_per_call:
                reason = f"entry of {size} bytes exceeds PutEvents' {self._config.bytes_per_call}-byte limit"
                postgres.park(conn, row.id, reason)
                logger.error("outbox row parked", extra={"outbox_id": str(row.id), "motivo": reason})
                counters.parked += 1
                continue
            sendable.append((row, event_entry, size))
        return sendable

    def _publish(
        self, sendable: list[tuple[OutboxRow, dict, int]], counters: RelayResult
    ) -> tuple[list[uuid.UUID], dict[uuid.UUID, tuple[int, str]]]:
        """Send in calls, re-sending only rejected entries; a rejected row holds back its aggregate."""
        accepted: list[uuid.UUID] = []
        failures: dict[uuid.UUID, tuple[int, str]] = {}
        pending = sendable
        for attempt in range(1 + self._config.resends_per_batch):
            if attempt:
                self._sleep(self._config.resend_wait_s * attempt)  # rejections are often throttling
            rejected: list[tuple[OutboxRow, dict, int]] = []
            stopped: set[tuple[str, str]] = set()
            for call in split_entries(pending, self._config):
                to_send = [item for item in call if item[0].agregado not in stopped]
                counters.held += len(call) - len(to_send)
                if not to_send:
                    continue
                response = self._put_events([event_entry for _, event_entry, _ in to_send], counters)
                if response is None:  # the call itself failed: stop this batch, keep the rest pending
                    return accepted, failures
                for item, result in zip(to_send, response, strict=True):
                    row = item[0]
                    if "ErrorCode" in result:
                        n, _ = failures.get(row.id, (0, ""))
                        failures[row.id] = (n + 1, f"{result['ErrorCode']}: {result.get('ErrorMessage', '')}")
                        rejected.append(item)
                        stopped.add(row.agregado)
                        counters.rejections += 1
                    else:
                        accepted.append(row.id)
            if not rejected:
                break
            # Only the rejected entries go again; later events of their aggregates wait for the next batch.
            pending = rejected
        return accepted, failures

    def _put_events(self, entries: list[dict], counters: RelayResult) -> list[dict] | None:
        counters.calls += 1
        try:
            response = self._events.put_events(Entries=entries)
        except (ClientError, BotoCoreError) as exc:
            counters.service_errors += 1
            logger.warning("PutEvents failed as a whole, rows stay pending", extra={"error": str(exc)})
            return None
        return response["Entries"]
