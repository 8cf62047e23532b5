"""The deployed sandbox's host: state, ``Idempotency-Key`` replays and injected faults, on one DynamoDB table.

Items (partition key ``clave``, TTL ``expira_en`` 24 h like the real providers' key memory):

- ``respuesta:{proveedor}:{Idempotency-Key}``: the key's claim (``EN_CURSO`` with a short
  ``caduca_bloqueo``), then its stored answer and the request it acted on (``COMPLETADO``; a chaos
  run reads what each provider did from these, as a local run reads its stand-ins' requests). A
  repeated key gets the stored answer and ``Idempotent-Replayed: true``; a 5xx is not stored, so a
  retry acts.
- ``cobro:{referencia_cobro}`` and ``cobro-pedido:{pedido_id}``: a charge, by reference and by order.
- ``reembolso-de:{referencia_cobro}``: a refund, written only if absent (one refund per charge).

Faults (:class:`Fallos`, from the function's environment): a proportion of requests answered
503 with no effect, and a latency added *before* acting, so a latency above the caller's read
timeout reproduces the lesson's incident: charged, but the answer was lost.
"""

from __future__ import annotations

import json
import os
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from simulador.proveedores import RUTAS, Respuesta, Simulador, guardable, repetida

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient

__all__ = ["AlmacenDynamoDB", "Fallos", "Sandbox", "ruta_y_proveedor"]

TTL_S = 24 * 3600
BLOQUEO_S = 30  # a claim older than this belongs to an invocation that died: the key may be retried


@dataclass(frozen=True, slots=True)
class Fallos:
    """What the sandbox injects: ``SIMULADOR_PROPORCION_FALLOS`` (0..1), ``SIMULADOR_LATENCIA_MS``, declined cards."""

    proporcion: float = 0.0
    latencia_ms: int = 0
    tarjetas_rechazadas: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls) -> Fallos:
        proporcion = float(os.environ.get("SIMULADOR_PROPORCION_FALLOS") or 0)
        latencia_ms = int(os.environ.get("SIMULADOR_LATENCIA_MS") or 0)
        if not 0 <= proporcion <= 1 or latencia_ms < 0:
            raise ValueError(
                f"SIMULADOR_PROPORCION_FALLOS must be 0..1 and SIMULADOR_LATENCIA_MS >= 0 "
                f"(got {proporcion!r}, {latencia_ms!r})"
            )
        tarjetas = os.environ.get("SIMULADOR_TARJETAS_RECHAZADAS", "")
        return cls(proporcion, latencia_ms, frozenset(t.strip() for t in tarjetas.split(",") if t.strip()))

    def rechaza(self, medio: str | None, _importe_centimos: int | None) -> bool:
        return medio in self.tarjetas_rechazadas


class AlmacenDynamoDB:
    """:class:`simulador.Almacen` on the sandbox table."""

    def __init__(self, tabla: str, ddb: BaseClient, ahora_s: Callable[[], float] = time.time) -> None:
        self.tabla = tabla
        self.ddb = ddb
        self.ahora_s = ahora_s

    def _expira(self) -> dict[str, str]:
        return {"N": str(int(self.ahora_s()) + TTL_S)}

    def _poner(self, clave: str, valor: dict[str, Any], **condicion: Any) -> None:
        item = {"clave": {"S": clave}, "datos": {"S": json.dumps(valor)}, "expira_en": self._expira()}
        self.ddb.put_item(TableName=self.tabla, Item=item, **condicion)

    def _leer(self, clave: str) -> dict[str, Any] | None:
        item = self.ddb.get_item(TableName=self.tabla, Key={"clave": {"S": clave}}, ConsistentRead=True).get("Item")
        return json.loads(item["datos"]["S"]) if item else None

    def nueva_referencia(self, prefijo: str) -> str:
        return f"{prefijo}_{uuid.uuid4().hex[:16]}"

    def cobro(self, referencia_cobro: str | None, pedido_id: str | None) -> dict[str, Any] | None:
        if referencia_cobro:
            return self._leer(f"cobro:{referencia_cobro}")
        return self._leer(f"cobro-pedido:{pedido_id}") if pedido_id else None

    def guardar_cobro(self, cobro: dict[str, Any]) -> None:
        self._poner(f"cobro:{cobro['referencia_cobro']}", cobro)
        self._poner(f"cobro-pedido:{cobro['pedido_id']}", cobro)

    def guardar_reembolso(self, reembolso: dict[str, Any]) -> bool:
        try:
            self._poner(
                f"reembolso-de:{reembolso['referencia_cobro']}",
                reembolso,
                ConditionExpression="attribute_not_exists(clave)",
            )
        except self.ddb.exceptions.ConditionalCheckFailedException:
            return False
        return True


@dataclass
class Sandbox:
    """One ``simulador-*`` function: injected faults, ``Idempotency-Key`` replays, then the shared logic."""

    simulador: Simulador
    almacen: AlmacenDynamoDB
    fallos: Fallos = field(default_factory=Fallos)
    rng: random.Random = field(default_factory=random.Random)
    dormir: Callable[[float], None] = time.sleep

    def atender(self, ruta: str, cuerpo: dict[str, Any], clave: str | None) -> tuple[Respuesta, dict[str, str]]:
        """The answer and its extra headers for one request (``Idempotent-Replayed``, ``Retry-After``)."""
        if self.fallos.proporcion and self.rng.random() < self.fallos.proporcion:
            return (503, {"error": "fallo_inyectado", "estado": 503}), {"Retry-After": "1"}
        if self.fallos.latencia_ms:
            self.dormir(self.fallos.latencia_ms / 1000)
        if clave is None:
            return self.simulador.atender(ruta, cuerpo, None)[0], {}
        item = f"respuesta:{self.simulador.proveedor}:{clave}"
        if (guardada := self._reclamar(item)) is not None:
            return guardada
        try:
            respuesta, _efecto = self.simulador.atender(ruta, cuerpo, clave)
        except Exception:
            self._soltar(item)
            raise
        if guardable(respuesta[0]):
            self._completar(item, cuerpo, respuesta)
        else:
            self._soltar(item)
        return respuesta, {}

    def _reclamar(self, item: str) -> tuple[Respuesta, dict[str, str]] | None:
        """Claim the key; ``None`` when claimed, else the answer to give (a replay, or 'in progress')."""
        ddb, ahora = self.almacen.ddb, int(self.almacen.ahora_s())
        try:
            ddb.put_item(
                TableName=self.almacen.tabla,
                Item={
                    "clave": {"S": item},
                    "estado": {"S": "EN_CURSO"},
                    "caduca_bloqueo": {"N": str(ahora + BLOQUEO_S)},
                    "expira_en": {"N": str(ahora + TTL_S)},
                },
                ConditionExpression="attribute_not_exists(clave) OR (estado = :en_curso AND caduca_bloqueo < :ahora)",
                ExpressionAttributeValues={":en_curso": {"S": "EN_CURSO"}, ":ahora": {"N": str(ahora)}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ddb.exceptions.ConditionalCheckFailedException as exc:
            viejo = exc.response.get("Item", {})
            if viejo.get("estado", {}).get("S") == "COMPLETADO":
                guardada = json.loads(viejo["respuesta"]["S"])
                return repetida((guardada["estado"], guardada["cuerpo"])), {"Idempotent-Replayed": "true"}
            # Same key, still being served: retry shortly (never act twice, never invent an answer).
            return (503, {"error": "peticion_en_curso"}), {"Retry-After": "1"}
        return None

    def _completar(self, item: str, peticion: dict[str, Any], respuesta: Respuesta) -> None:
        self.almacen.ddb.update_item(
            TableName=self.almacen.tabla,
            Key={"clave": {"S": item}},
            UpdateExpression="SET estado = :completado, respuesta = :respuesta, peticion = :peticion"
            " REMOVE caduca_bloqueo",
            ExpressionAttributeValues={
                ":completado": {"S": "COMPLETADO"},
                ":respuesta": {"S": json.dumps({"estado": respuesta[0], "cuerpo": respuesta[1]})},
                ":peticion": {"S": json.dumps(peticion)},
            },
        )

    def _soltar(self, item: str) -> None:
        self.almacen.ddb.delete_item(TableName=self.almacen.tabla, Key={"clave": {"S": item}})


def ruta_y_proveedor(familia: str, ruta_http: str) -> tuple[str, str] | None:
    """Split ``[/principal|/secundario]/<ruta>`` into the route and the provider; ``None``: no such route (404).

    Like the local stand-ins, an unknown route is answered before anything is claimed or stored.

    Who may call is not decided here: the function URL is ``AWS_IAM``, and Lambda refuses a request
    not signed by a role granted ``lambda:InvokeFunctionUrl`` on this function before it runs.
    """
    partes = ruta_http.strip("/").split("/")
    if familia == "correo":
        if len(partes) < 2 or partes[0] not in ("principal", "secundario"):
            return None
        ruta, proveedor = "/" + "/".join(partes[1:]), f"correo-{partes[0]}"
    else:
        ruta, proveedor = "/" + "/".join(partes), familia
    return (ruta, proveedor) if ruta in RUTAS.get(familia, ()) else None
