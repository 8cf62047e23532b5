"""A small, idempotent migration step: the SQL files in ``migrations/``, in name order, once each.

The deploy (custom resource ``MigracionesAurora``, :mod:`mercadofresco.outbox.deployment`), the
tests and the local run call :func:`apply_migrations`, so the schema they use is the one these
files define; deployed functions only check it (:func:`verify_migrations`). Applied versions are recorded in
``schema_migrations`` in the connection's ``search_path``; an advisory lock keyed on the
schema serialises concurrent callers (two cold starts at once apply each file once).
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

from mercadofresco.outbox.exceptions import MigrationError

if TYPE_CHECKING:
    from psycopg import Connection

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     text        PRIMARY KEY,
    aplicada_en timestamptz NOT NULL DEFAULT now()
)
"""


def migration_files() -> list[tuple[str, str]]:
    """``(version, sql)`` for every ``migrations/NNN_*.sql``, in order."""
    folder = resources.files("mercadofresco.outbox") / "migrations"
    names = sorted(f.name for f in folder.iterdir() if f.name.endswith(".sql"))
    return [(name.removesuffix(".sql"), (folder / name).read_text(encoding="utf-8")) for name in names]


def pending_migrations(conn: Connection) -> list[str]:
    """Versions of ``migrations/`` not yet applied to the connection's schema (read only)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    applied = set()
    if exists and exists[0]:
        applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    return [version for version, _ in migration_files() if version not in applied]


def verify_migrations(conn: Connection) -> None:
    """Refuse to run on a schema behind this layer's migrations (deployed functions do not migrate).

    Raises
    ------
    MigrationError
        Naming the pending versions and who applies them.
    """
    pending = pending_migrations(conn)
    if pending:
        raise MigrationError(
            f"database schema is behind this code: {pending} not applied; the deploy applies them "
            "(custom resource MigracionesAurora, functions/migraciones) - redeploy or check its log"
        )


def apply_migrations(conn: Connection) -> list[str]:
    """Apply the pending migrations in one transaction; return the versions applied now.

    Raises
    ------
    MigrationError
        A file failed; nothing of this call was kept.
    """
    import psycopg  # already loaded by ``conn``'s pool: importing this module does not load the driver

    applied_now: list[str] = []
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('mercadofresco.migraciones:' || current_schema()))")
            conn.execute(_CREATE_TABLE)
            applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
            for version, sql in migration_files():
                if version in applied:
                    continue
                conn.execute(sql)  # no parameters: several statements in one call are fine
                conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
                applied_now.append(version)
    except psycopg.Error as exc:
        raise MigrationError(f"migration failed, schema unchanged: {exc}") from exc
    return applied_now
