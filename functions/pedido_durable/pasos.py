"""The order saga's steps: each one effect, the one the state machine's task or integration makes.

Every method here is the body of one durable step (:mod:`saga` names it and sets its retries). A
step may run its body more than once: after a crash before its checkpoint (``AT_LEAST_ONCE_PER_RETRY``,
the SDK's default) or on a retry. So each effect is idempotent by the same keys as in the state machine:

- the claim ``pedido:{pedido_id}`` is owned by the durable execution's ARN (the store's ``claim`` verb, as
  the reclamo function claims for the state machine's execution id), and a second run of the same
  execution finds its own claim and goes on;
- the charge and the refund are ``cobro.operaciones.Operaciones`` (shipped next to this module), with
  ``cobro:``/``reembolso:{pedido_id}`` in the idempotency table and as the gateway's ``Idempotency-Key``;
- reservations and releases are FIFO messages deduplicated by ``reserva:``/``liberacion:{pedido_id}:{sku}``;
- the claim's close is conditional on its owner; a confirmation or a notice sent twice is absorbed by
  its consumers' keys (``aviso-erp:``, ``correo-confirmacion:``, ``correo-no-confirmado:{pedido_id}``).

The messages, events and records are byte for byte the state machine's (its ASL's ``Parameters``): the
consumers, the projection and the DLQ tools cannot tell which engine processed an order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import lectura
from mercadofresco import dlq
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import PedidoDuplicado, ReclamoSinCerrar
from mercadofresco.errors import TransientError
from mercadofresco.idempotency import IdempotencyStatus
from solicitud import Solicitud

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient
    from configuracion import Configuracion
    from mercadofresco.idempotency import IdempotencyStore
    from operaciones import Operaciones

ORIGEN_EVENTOS = "mercadofresco.pedidos"
VERSION = 1


class EventoNoAceptado(TransientError):
    """EventBridge answered ``PutEvents`` with a failed entry (the state machine's ``EventBridge.FailedEntry``)."""


@dataclass
class Pasos:
    """The effects, with what they act on: the claim's store, the charge's operations, three AWS clients."""

    config: Configuracion
    reclamos: IdempotencyStore  # its lease is RECLAMO_LEASE_S's: the claim outlives the execution
    operaciones: Operaciones  # its store's lease is IDEMPOTENCY_LEASE_S: the charge's
    sqs: BaseClient
    sns: BaseClient
    events: BaseClient
    reloj_s: Callable[[], float]

    # ------------------------------------------------------------------ the claim
    def reclamar(self, registros: Any, ejecucion: str) -> dict[str, Any]:
        """Read the pipe's batch and claim ``pedido:{pedido_id}`` for this execution (``ReclamarPedido``).

        Raises :class:`LoteNoAdmitido` / :class:`EventoInvalido` (``lectura``) or :class:`PedidoDuplicado`.
        """
        pedido = lectura.pedido_creado(registros)
        reclamo = self.reclamos.claim(claves.pedido(pedido["pedido_id"]), owner=ejecucion)
        if not reclamo.won:
            raise PedidoDuplicado(f"order claimed by another execution or already answered ({reclamo.record.estado})")
        return {"pedido": pedido, "confirmacion": lectura.confirmacion(pedido)}

    def cerrar_reclamo(self, pedido_id: str, ejecucion: str, desenlace: dict[str, Any]) -> None:
        """The claim becomes ``COMPLETADO`` with the outcome and loses its lease (``Confirmado``/``CerrarReclamo``).

        The claim is this execution's own (its owner): claimed again, it is found to be ours and completed.
        Already completed by this execution, it is this step run again after its checkpoint was lost: done.
        Held by anybody else it cannot be closed here (the state machine's close fails its condition alike).
        """
        reclamo = self.reclamos.claim(claves.pedido(pedido_id), owner=ejecucion)
        if not reclamo.won:
            if reclamo.owner == ejecucion and reclamo.record.estado is IdempotencyStatus.COMPLETADO:
                return
            raise ReclamoSinCerrar(f"the claim {reclamo.key} is no longer this execution's")
        self.reclamos.complete(reclamo, desenlace)

    # -------------------------------------------------------- the charge and the refund
    def cobrar(self, pedido: dict[str, Any]) -> dict[str, Any]:
        """Charge once (``Cobrar``, ``ReintentarCobro``, ``Reconsultar``): the reference and the charge's time."""
        resultado = self.operaciones.cobro(Solicitud.desde_evento({"operacion": "cobro", "pedido": pedido}))
        return {"referencia_cobro": resultado["referencia_cobro"], "confirmado_en": resultado["cobrado_en_utc"]}

    def reembolsar(self, pedido: dict[str, Any], referencia_cobro: str | None) -> dict[str, Any]:
        """Refund once (``Reembolsar``, ``Reconsultar``); without a reference the gateway finds the charge by order."""
        peticion = {"operacion": "reembolso", "pedido": pedido, "referencia_cobro": referencia_cobro}
        resultado = self.operaciones.reembolso(Solicitud.desde_evento(peticion))
        return {"referencia_reembolso": resultado["referencia_reembolso"]}

    # ------------------------------------------------------ stock, confirmation, notices
    def reservar_stock(self, pedido: dict[str, Any]) -> None:
        """One ``ReservaStock`` per line, grouped by sku (``ReservarStock``)."""
        self._stock(pedido, "ReservaStock", claves.reserva)

    def liberar_stock(self, pedido: dict[str, Any]) -> None:
        """One ``LiberacionStock`` per line in the same FIFO group, after its reservation (``LiberarStock``)."""
        self._stock(pedido, "LiberacionStock", claves.liberacion)

    def _stock(self, pedido: dict[str, Any], tipo: str, clave: Callable[[str, str], str]) -> None:
        pedido_id = pedido["pedido_id"]
        for linea in pedido["lineas"]:
            sku = linea["sku"]
            cuerpo = {
                "tipo": tipo,
                "version": VERSION,
                "pedido_id": pedido_id,
                "sku": sku,
                "cantidad": linea["cantidad"],
            }
            self.sqs.send_message(
                QueueUrl=self.config.cola_stock_url,
                MessageGroupId=sku,
                MessageDeduplicationId=clave(pedido_id, sku),
                MessageBody=json.dumps(cuerpo),
            )

    def confirmar(self, confirmacion: dict[str, Any], cobro: dict[str, Any]) -> None:
        """``PedidoConfirmado``: the explicit payload plus the charge's reference and time (``Confirmar``)."""
        self.sns.publish(
            TopicArn=self.config.tema_pedido_confirmado_arn,
            Message=json.dumps({**confirmacion, **cobro}),
            MessageAttributes={"tipo": {"DataType": "String", "StringValue": "PedidoConfirmado"}},
        )

    def avisar(self, tipo: str, detalle: dict[str, Any]) -> None:
        """One event of the order's outcome on the bus (``NotificarRechazo``/``Cancelacion``/``NoConfirmado``)."""
        respuesta = self.events.put_events(
            Entries=[
                {
                    "EventBusName": self.config.bus,
                    "Source": ORIGEN_EVENTOS,
                    "DetailType": tipo,
                    "Detail": json.dumps({"version": VERSION, **detalle}),
                }
            ]
        )
        if respuesta.get("FailedEntryCount"):
            (entrada,) = respuesta["Entries"]
            raise EventoNoAceptado(f"EventBridge refused {tipo}: {entrada.get('ErrorCode')}")

    def enviar_a_fallidos(self, registros: list[dict[str, Any]], mensaje: str) -> None:
        """The untouched body to the order DLQ with its reason, ``"<mf-motivo>: <detail>"`` (``EnviarAFallidos``)."""
        atributos = {
            dlq.REASON_ATTRIBUTE: mensaje.split(":", 1)[0],
            dlq.DETAIL_ATTRIBUTE: mensaje,
            dlq.SOURCE_QUEUE_ATTRIBUTE: self.config.cola_pedidos_url,
            dlq.FUNCTION_ATTRIBUTE: self.config.nombre_funcion,
        }
        self.sqs.send_message(
            QueueUrl=self.config.cola_pedidos_fallidos_url,
            MessageBody=registros[0]["body"],
            MessageAttributes={k: {"DataType": "String", "StringValue": v} for k, v in atributos.items()},
        )
