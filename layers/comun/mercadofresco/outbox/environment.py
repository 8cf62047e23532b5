"""What the outbox's two Lambdas (relay, clean-up) share: pool, schema, config, deadline.

The pool is created once per execution environment and reused by every warm invocation.
Deployed, the schema was migrated at deploy time (custom resource ``MigracionesAurora``, as the
admin user; the runtime user cannot change it): a cold start only checks it is not behind. The
local run and the tests have no deploy step: with ``DATABASE_URL`` set the environment applies
the same idempotent migrations itself.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mercadofresco.db import shared_pool
from mercadofresco.outbox.config import OutboxConfig
from mercadofresco.outbox.schema import apply_migrations, verify_migrations
from mercadofresco.process_cache import per_environment

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool


__all__ = ["OutboxEnvironment", "deadline", "environment"]


@dataclass(frozen=True, slots=True)
class OutboxEnvironment:
    pool: ConnectionPool
    config: OutboxConfig


@per_environment
def environment() -> OutboxEnvironment:
    """The environment's pool (schema migrated) and config; built on first use."""
    pool = shared_pool()
    with pool.connection() as conn:
        if os.environ.get("DATABASE_URL"):
            apply_migrations(conn)
        else:
            verify_migrations(conn)
    return OutboxEnvironment(pool, OutboxConfig.from_env())


def deadline(remaining_ms: int, margin_s: float, max_s: float = float("inf")) -> float:
    """Monotonic deadline: at most ``max_s`` from now, and ``margin_s`` before the Lambda times out."""
    return time.monotonic() + max(0.0, min(max_s, remaining_ms / 1000 - margin_s))
