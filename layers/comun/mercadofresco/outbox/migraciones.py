"""A small, idempotent migration step: the SQL files in ``migrations/``, in name order, once each.

The tests, the relay Lambda and the local run all call :func:`aplicar_migraciones`, so the
schema they use is the one these files define. Applied versions are recorded in
``schema_migrations`` in the connection's ``search_path``; an advisory lock keyed on the
schema serialises concurrent callers (two cold starts at once apply each file once).
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import psycopg

from mercadofresco.outbox.exceptions import MigracionError

if TYPE_CHECKING:
    from psycopg import Connection

_CREAR_TABLA = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     text        PRIMARY KEY,
    aplicada_en timestamptz NOT NULL DEFAULT now()
)
"""


def ficheros_migracion() -> list[tuple[str, str]]:
    """``(version, sql)`` for every ``migrations/NNN_*.sql``, in order."""
    carpeta = resources.files("mercadofresco.outbox") / "migrations"
    nombres = sorted(f.name for f in carpeta.iterdir() if f.name.endswith(".sql"))
    return [(nombre.removesuffix(".sql"), (carpeta / nombre).read_text(encoding="utf-8")) for nombre in nombres]


def aplicar_migraciones(conn: Connection) -> list[str]:
    """Apply the pending migrations in one transaction; return the versions applied now.

    Raises
    ------
    MigracionError
        A file failed; nothing of this call was kept.
    """
    aplicadas_ahora: list[str] = []
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('mercadofresco.migraciones:' || current_schema()))")
            conn.execute(_CREAR_TABLA)
            hechas = {fila[0] for fila in conn.execute("SELECT version FROM schema_migrations")}
            for version, sql in ficheros_migracion():
                if version in hechas:
                    continue
                conn.execute(sql)  # no parameters: several statements in one call are fine
                conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
                aplicadas_ahora.append(version)
    except psycopg.Error as exc:
        raise MigracionError(f"migration failed, schema unchanged: {exc}") from exc
    return aplicadas_ahora
