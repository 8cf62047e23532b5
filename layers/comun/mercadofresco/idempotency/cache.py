"""In-process LRU of ``COMPLETADO`` records: a warm function answers a duplicate with no call.

Only finished successes are cached. An ``EN_CURSO`` record changes under our feet
(its owner completes, fails or dies), and a ``FALLIDO`` one is cheap to ask for again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from mercadofresco.idempotency.record import IdempotencyStatus

if TYPE_CHECKING:
    from mercadofresco.idempotency.record import IdempotencyRecord

__all__ = ["CompletedCache"]


class CompletedCache:
    """A bounded, thread-safe map key → ``COMPLETADO`` record, evicting at ``expira_en``."""

    def __init__(self, max_items: int) -> None:
        self.max_items = max_items
        self._records: OrderedDict[str, IdempotencyRecord] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def get(self, key: str, now_s: float) -> IdempotencyRecord | None:
        """The cached record, or ``None``; an expired one is evicted on the way."""
        with self._lock:
            record = self._records.get(key)
            if record is None:
                return None
            if record.expired(now_s):
                del self._records[key]
                return None
            self._records.move_to_end(key)
            return record

    def put(self, record: IdempotencyRecord) -> None:
        """Cache a ``COMPLETADO`` record; any other state is refused (never cached)."""
        if record.estado is not IdempotencyStatus.COMPLETADO:
            raise ValueError(f"only COMPLETADO records are cached, got {record.estado} for {record.clave!r}")
        with self._lock:
            self._records[record.clave] = record
            self._records.move_to_end(record.clave)
            while len(self._records) > self.max_items:
                self._records.popitem(last=False)
