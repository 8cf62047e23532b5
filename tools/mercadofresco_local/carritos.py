"""Abandoned carts for the local run: expired items in the template's carts table.

The carts table is found, not named: the template's DynamoDB table that has both a stream
and a TTL (``mercadofresco-carritos``). Its items get the key attributes its ``KeySchema``
declares, the customer's e-mail and skus, and a TTL already in the past, so the TTL
emulation (:mod:`sam_emulator.ttl`) deletes them as DynamoDB would, the carts pipe
turns those deletions into ``CarritoAbandonado`` and the e-mail consumer sends the reminder.
One more cart is emptied by its customer (a plain delete): it must not produce a reminder.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mercadofresco.aws import client

if TYPE_CHECKING:
    from template_model import Template


@dataclass(frozen=True)
class Carritos:
    tabla: str
    caducados: list[str]
    vaciado: str


def tabla_de_carritos(plantilla: Template) -> str | None:
    """The path of the table with a stream and a TTL (``TablaCarritos``, ``Unidad/TablaCarritos`` in a created
    unit, as :meth:`Template.walk` names it), if any."""
    return next(iter(plantilla.paths(_tablas_con_flujo_y_ttl)), None)


def _tablas_con_flujo_y_ttl(t: Template) -> list[str]:
    tablas = []
    for lid in t.of_type("AWS::DynamoDB::Table"):
        props = t.resources[lid].get("Properties") or {}  # only these two: the rest needs the run's ids
        flujo, ttl = (t.resolve(props.get(p) or {}) for p in ("StreamSpecification", "TimeToLiveSpecification"))
        if flujo and ttl.get("Enabled"):
            tablas.append(lid)
    return tablas


def sembrar(plantilla: Template, n: int) -> Carritos | None:
    """Write ``n`` expired carts and one the customer empties; None when the template has no carts table."""
    ruta = tabla_de_carritos(plantilla)
    if ruta is None:
        return None
    unidad, lid = plantilla.locate(ruta)
    props = unidad.properties(lid)
    atributo_ttl = props["TimeToLiveSpecification"]["AttributeName"]
    tabla = unidad.ref(lid)
    dynamodb = client("dynamodb")
    caducado = int(time.time()) - 60
    ids = [f"CAR-{i:05d}" for i in range(1, n + 2)]
    for carrito_id in ids:
        dynamodb.put_item(
            TableName=tabla, Item={**_clave(props, carrito_id), **_cuerpo(carrito_id, atributo_ttl, caducado)}
        )
    vaciado = ids.pop()
    dynamodb.delete_item(TableName=tabla, Key=_clave(props, vaciado))
    return Carritos(tabla, ids, vaciado)


def _clave(props: dict[str, Any], carrito_id: str) -> dict[str, Any]:
    tipos = {a["AttributeName"]: a["AttributeType"] for a in props["AttributeDefinitions"]}
    clave = {}
    for elemento in props["KeySchema"]:
        nombre = elemento["AttributeName"]
        valor = carrito_id if elemento["KeyType"] == "HASH" else "CARRITO"
        clave[nombre] = {tipos[nombre]: valor if tipos[nombre] == "S" else "1"}
    return clave


def _cuerpo(carrito_id: str, atributo_ttl: str, caducado_epoch_s: int) -> dict[str, Any]:
    cliente = f"cli-{carrito_id[-4:]}"
    return {
        "carrito_id": {"S": carrito_id},
        "cliente_id": {"S": cliente},
        "email": {"S": f"{cliente}@example.com"},
        "skus": {"L": [{"S": "FRU-MAN-001"}, {"S": "LAC-LEC-003"}]},
        atributo_ttl: {"N": str(caducado_epoch_s)},
    }


def recordatorios(efectos: list[dict[str, Any]]) -> set[str]:
    """Carts a provider sent a reminder e-mail for (from the stand-ins' own record of effects)."""
    return {
        e["cuerpo"].get("datos", {}).get("carrito_id")
        for e in efectos
        if e["cuerpo"].get("plantilla") == "recordatorio-carrito"
    }
