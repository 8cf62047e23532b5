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

_CREAR_TABLA = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     text        PRIMARY KEY,
    aplicada_en timestamptz NOT NULL DEFAULT now()
)
"""


def migration_files() -> list[tuple[str, str]]:
    """``(version, sql)`` for every ``migrations/NNN_*.sql``, in order."""
    carpeta = resources.files("mercadofresco.outbox") / "migrations"
    nombres = sorted(f.name for f in carpeta.iterdir() if f.name.endswith(".sql"))
    return [(nombre.removesuffix(".sql"), (carpeta / nombre).read_text(encoding="utf-8")) for nombre in nombres]


def pending_migrations(conn: Connection) -> list[str]:
    """Versions of ``migrations/`` not yet applied to the connection's schema (read only)."""
    existe = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    hechas = set()
    if existe and existe[0]:
        hechas = {fila[0] for fila in conn.execute("SELECT version FROM schema_migrations")}
    return [version for version, _ in migration_files() if version not in hechas]


def verify_migrations(conn: Connection) -> None:
    """Refuse to run on a schema behind this layer's migrations (deployed functions do not migrate).

    Raises
    ------
    MigrationError
        Naming the pending versions and who applies them.
    """
    pendientes = pending_migrations(conn)
    if pendientes:
        raise MigrationError(
            f"database schema is behind this code: {pendientes} not applied; the deploy applies them "
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

    aplicadas_ahora: list[str] = []
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('mercadofresco.migraciones:' || current_schema()))")
            conn.execute(_CREAR_TABLA)
            hechas = {fila[0] for fila in conn.execute("SELECT version FROM schema_migrations")}
            for version, sql in migration_files():
                if version in hechas:
                    continue
                conn.execute(sql)  # no parameters: several statements in one call are fine
                conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
                aplicadas_ahora.append(version)
    except psycopg.Error as exc:
        raise MigrationError(f"migration failed, schema unchanged: {exc}") from exc
    return aplicadas_ahora
