"""The idempotency records a seed's orders left ``EN_CURSO``, read the same way by both runners.

The local runner (:mod:`.local`) and the stack runner (:mod:`.pila`) give the judge (:mod:`.juicio`)
this list for invariant 6 (no ``EN_CURSO`` past its lease).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mercadofresco.aws import client

if TYPE_CHECKING:
    from collections.abc import Callable


def en_curso(tabla: str, es_nuestra: Callable[[str], bool]) -> list[tuple[str, float | None]]:
    """Idempotency records of the run's orders (``es_nuestra(clave)``) still ``EN_CURSO``: (key, lease end)."""
    encontrados = []
    for pagina in client("dynamodb").get_paginator("scan").paginate(TableName=tabla, ConsistentRead=True):
        for item in pagina["Items"]:
            clave = item["clave"]["S"]
            if es_nuestra(clave) and item.get("estado", {}).get("S") == "EN_CURSO":
                caduca = item.get("caduca_bloqueo", {}).get("N")
                encontrados.append((clave, float(caduca) if caduca else None))
    return encontrados
