"""Fixtures for the integration fuzz tests: a migrated private PostgreSQL schema and a pool on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import psycopg
import pytest
from mercadofresco.outbox.schema import apply_migrations
from psycopg_pool import ConnectionPool

# The consumers' world (template queues in moto, loopback providers, a clock the test moves), reused as it is.
from tests.integration.consumidores.conftest import (  # noqa: F401
    cargar_consumidor,
    proveedores,
    recursos,
    reloj,
    seccion_plantilla,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def pool(pg_dsn: str) -> Iterator[ConnectionPool]:
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    with ConnectionPool(pg_dsn, min_size=1, max_size=2, open=True) as p:
        yield p
