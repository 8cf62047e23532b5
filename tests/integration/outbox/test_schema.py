"""The outbox's migration step: each file once, all or nothing, and one winner when cold starts race."""

from __future__ import annotations

import threading

import psycopg
import pytest
from mercadofresco.outbox.exceptions import MigrationError
from mercadofresco.outbox.schema import apply_migrations, migration_files

from tests.conftest import HANG_GUARD_S

pytestmark = pytest.mark.integration


def test_apply_migrations_when_run_twice_applies_each_file_once(outbox_dsn: str) -> None:
    # GIVEN a schema the fixture already migrated
    # WHEN the migration step runs again
    with psycopg.connect(outbox_dsn) as conn:
        aplicadas = apply_migrations(conn)
        versiones = [v for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    # THEN nothing is applied twice and every file is recorded
    assert aplicadas == []
    assert versiones == [v for v, _ in migration_files()]


def test_apply_migrations_when_schema_conflicts_raises_and_keeps_nothing(pg_dsn: str) -> None:
    # GIVEN a schema where a table the migration creates already exists
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE outbox (x int)")
    # WHEN the migration step runs
    with psycopg.connect(pg_dsn) as conn, pytest.raises(MigrationError, match="schema unchanged"):
        apply_migrations(conn)
    # THEN no partial migration was kept
    with psycopg.connect(pg_dsn) as conn:
        existe = conn.execute("SELECT to_regclass('pedidos') IS NOT NULL").fetchone()[0]
    assert existe is False


def test_apply_migrations_when_two_cold_starts_race_applies_each_file_once(pg_dsn: str) -> None:
    # GIVEN a fresh schema and four environments starting at the same moment
    barrera = threading.Barrier(4, timeout=HANG_GUARD_S)
    aplicadas: list[list[str]] = []
    errores: list[BaseException] = []

    def arrancar() -> None:
        try:
            with psycopg.connect(pg_dsn) as conn:
                barrera.wait()
                aplicadas.append(apply_migrations(conn))
        except BaseException as exc:
            errores.append(exc)

    # WHEN they all run the migration step
    hilos = [threading.Thread(target=arrancar) for _ in range(4)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(300)  # a hang guard only
    assert not any(h.is_alive() for h in hilos), "a migration hung"
    # THEN exactly one applied the files, the others found them done, nobody failed
    assert errores == []
    assert sorted(aplicadas, key=len) == [[], [], [], [v for v, _ in migration_files()]]
