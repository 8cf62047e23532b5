"""DynamoDB's TTL expiry, which moto does not do, emulated where a stream can see it.

DynamoDB deletes an expired item some time after its TTL attribute passes, and the
stream record of that deletion carries ``userIdentity`` ``{type: Service, principalId:
dynamodb.amazonaws.com}`` — which is what the carts pipe filters on to tell an abandoned
cart from one the customer emptied. moto neither expires items nor marks deletions, so
this sweeper deletes expired items of the tables that have both a TTL and a stream, and
remembers their keys so the stream reader (:mod:`sam_emulator.pipes`) can mark
those REMOVE records as the service's. Tables without a stream are left alone: nothing
could observe the difference.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sam_emulator.aws import client
from sam_emulator.background import BackgroundPart, BackgroundThread

INTERVALO_S = 1.0


@dataclass
class BarredorTtl(BackgroundPart):
    """Deletes expired items (TTL attribute < now) and remembers which deletions were TTL's."""

    tablas: dict[str, str] = field(default_factory=dict)  # table name -> TTL attribute
    reloj: Any = time.time
    borrados: int = 0
    errores: list[str] = field(default_factory=list)  # sweeps lost to an API error (the next one retries)
    _claves: set[str] = field(default_factory=set)
    _cerrojo: threading.Lock = field(default_factory=threading.Lock)
    _hilo: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._hilo = BackgroundThread.every(
            "ttl", INTERVALO_S, self.barrer, on_error=lambda exc: self.errores.append(f"{type(exc).__name__}: {exc}")
        )

    @classmethod
    def de_tablas_con_stream(cls) -> BarredorTtl:
        dynamodb = client("dynamodb")
        tablas = {}
        for nombre in dynamodb.list_tables()["TableNames"]:
            tabla = dynamodb.describe_table(TableName=nombre)["Table"]
            ttl = dynamodb.describe_time_to_live(TableName=nombre)["TimeToLiveDescription"]
            if tabla.get("StreamSpecification", {}).get("StreamEnabled") and ttl.get("TimeToLiveStatus") == "ENABLED":
                tablas[nombre] = ttl["AttributeName"]
        return cls(tablas=tablas)

    def barrer(self) -> int:
        """One sweep: delete every expired item; return how many."""
        dynamodb = client("dynamodb")
        ahora = int(self.reloj())
        total = 0
        for tabla, atributo in self.tablas.items():
            clave_esquema = [k["AttributeName"] for k in dynamodb.describe_table(TableName=tabla)["Table"]["KeySchema"]]
            for pagina in dynamodb.get_paginator("scan").paginate(
                TableName=tabla,
                FilterExpression="#t < :ahora",
                ExpressionAttributeNames={"#t": atributo},
                ExpressionAttributeValues={":ahora": {"N": str(ahora)}},
            ):
                for item in pagina["Items"]:
                    clave = {k: item[k] for k in clave_esquema}
                    with self._cerrojo:
                        self._claves.add(_huella(clave))
                    dynamodb.delete_item(TableName=tabla, Key=clave)
                    total += 1
        self.borrados += total
        return total

    def fue_ttl(self, registro: dict[str, Any]) -> bool:
        """Whether a stream record is the deletion of an item this sweeper expired."""
        if registro.get("eventName") != "REMOVE":
            return False
        with self._cerrojo:
            return _huella(registro["dynamodb"]["Keys"]) in self._claves


def _huella(clave: dict[str, Any]) -> str:
    return json.dumps(clave, sort_keys=True)
