"""The outbox's daily clean-up: delete rows published more than ``retention_days`` ago.

Without it the table grows forever (the lesson's "zombie carts"). Deletes go in bounded
batches, one short transaction each, so the relay's claims never wait behind a huge DELETE,
and the run stops at its deadline; the next day's run continues where it left off.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mercadofresco.outbox import postgres

if TYPE_CHECKING:
    from collections.abc import Callable

    from psycopg_pool import ConnectionPool

    from mercadofresco.outbox.config import OutboxConfig


__all__ = ["purge_published"]


def purge_published(
    pool: ConnectionPool,
    config: OutboxConfig,
    until: float,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Delete old published rows in batches of ``purge_batch`` until none is left or ``until``; return the count."""
    deleted = 0
    while clock() < until:
        with pool.connection() as conn, conn.transaction():
            n = postgres.delete_published(conn, config.retention_days, config.purge_batch)
        deleted += n
        if n < config.purge_batch:
            break
    return deleted
