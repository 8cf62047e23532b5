"""Charge and refund at the payment gateway, each once per order whatever the retries.

Two nets, as the lesson asks: the idempotency record (``cobro:{pedido_id}`` /
``reembolso:{pedido_id}`` in ``mercadofresco-idempotencia``) returns the stored
``referencia_cobro`` to a duplicate without calling the gateway, and the same key travels as
``Idempotency-Key`` so the gateway itself answers a repeat (the gap between "charged" and
"recorded") with the same charge. Because of that key the HTTP call is ``idempotent``: a
read timeout may be retried.

Gateway answers: 2xx done; 402 -> :class:`CobroRechazado` (business answer, recorded
``FALLIDO``, never retried); 404/409 on a refund -> :class:`ReembolsoRechazado`; any other
4xx -> :class:`RespuestaPasarelaInesperada` (our request or configuration is wrong: not retried).
5xx, 429, timeouts and resets are retried by the HTTP client and then raise
``PasarelaNoDisponible`` for the workflow's ``Retry``; an open circuit raises ``CircuitoAbierto``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import CobroRechazado, ReembolsoRechazado
from mercadofresco.errors import PermanentError
from mercadofresco.idempotency import IdempotencyStatus
from mercadofresco.validation import provider_error_code

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco.http import ProviderClient
    from mercadofresco.idempotency import IdempotencyStore
    from solicitud import Solicitud

RECHAZO_TARJETA = 402
REEMBOLSO_IMPOSIBLE = (404, 409)  # nothing to refund / refunded under another key


class RespuestaPasarelaInesperada(PermanentError):
    """The gateway refused the request itself (400, 401, 422...): a bug or a bad API key, not retried."""


class CobroCompensado(PermanentError):
    """The charge's outcome stayed unknown and was compensated: this order is never charged again."""


@dataclass
class Operaciones:
    """The function's two operations; ``pasarela`` returns the current client (the API key may rotate)."""

    pasarela: Callable[[], ProviderClient]
    store: IdempotencyStore
    reloj_s: Callable[[], float] = field(default=time.time)

    def cobro(self, solicitud: Solicitud) -> dict[str, Any]:
        """Charge the order once; a duplicate gets the first charge's result."""
        clave = claves.cobro(solicitud.pedido_id)
        peticion = {
            "pedido_id": solicitud.pedido_id,
            "importe_centimos": solicitud.importe_centimos,
            "moneda": solicitud.moneda,
        }

        def cobrar() -> dict[str, Any]:
            status, cuerpo = self.pasarela().post(
                "/cobros", json={**peticion, **solicitud.medio_de_pago}, idempotency_key=clave, idempotent=True
            )
            if status == RECHAZO_TARJETA:
                raise CobroRechazado(f"the gateway declined the card for order {solicitud.pedido_id}")
            _exigir_exito(status, cuerpo, "cobro", solicitud.pedido_id)
            return {
                "pedido_id": solicitud.pedido_id,
                "referencia_cobro": cuerpo["referencia_cobro"],
                "importe_centimos": solicitud.importe_centimos,
                "cobrado_en": int(self.reloj_s()),  # epoch s: the workflow derives the claim's 24 h TTL from it
            }

        resultado = self.store.run(clave, cobrar, payload=peticion)
        # PedidoConfirmado's confirmado_en: the charge's time as recorded, so a re-asked charge confirms the same.
        cobrado_en_utc = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(resultado["cobrado_en"]))
        return {**resultado, "cobrado_en_utc": cobrado_en_utc}

    def reembolso(self, solicitud: Solicitud) -> dict[str, Any]:
        """Refund the order's charge once (the workflow's compensation)."""
        clave = claves.reembolso(solicitud.pedido_id)
        peticion = {"pedido_id": solicitud.pedido_id, "referencia_cobro": solicitud.referencia_cobro}

        def reembolsar() -> dict[str, Any]:
            cuerpo_peticion = {k: v for k, v in peticion.items() if v is not None}
            status, cuerpo = self.pasarela().post(
                "/reembolsos", json=cuerpo_peticion, idempotency_key=clave, idempotent=True
            )
            if status in REEMBOLSO_IMPOSIBLE:
                raise ReembolsoRechazado(f"the gateway refused the refund of order {solicitud.pedido_id}: {status}")
            _exigir_exito(status, cuerpo, "reembolso", solicitud.pedido_id)
            return {
                "pedido_id": solicitud.pedido_id,
                "referencia_cobro": cuerpo.get("referencia_cobro", solicitud.referencia_cobro),
                "referencia_reembolso": cuerpo["referencia_reembolso"],
                "reembolsado_en": int(self.reloj_s()),
            }

        try:
            resultado = self.store.run(clave, reembolsar, payload=peticion)
        except ReembolsoRechazado:
            self._cerrar_cobro_abandonado(solicitud.pedido_id)  # 404: there was no charge to refund
            raise
        self._cerrar_cobro_abandonado(solicitud.pedido_id)
        return resultado

    def _cerrar_cobro_abandonado(self, pedido_id: str) -> None:
        """After the compensation, ``cobro:{pedido_id}`` is never left ``EN_CURSO`` (invariant 6, at rest).

        A charge attempt that died mid-call leaves its claim ``EN_CURSO`` (its lease live or lapsed) and
        nobody would ever complete it. The workflow has decided the order's outcome (refunded, or nothing
        to refund), so that claim, or its absence, is recorded ``FALLIDO`` (:class:`CobroCompensado`):
        nothing stays open, and a late charge request for the same order gets that failure instead of a
        charge. A completed charge or a recorded failure is left as it is (the conditional write refuses it).
        """
        reclamo = self.store.claim(claves.cobro(pedido_id))
        if not reclamo.won:
            if reclamo.record.estado is not IdempotencyStatus.EN_CURSO:
                return
            reclamo = reclamo.take_over()  # a live claim of an attempt that will never answer
        compensado = CobroCompensado(f"the charge of order {pedido_id} was compensated (refunded, or there was none)")
        self.store.fail(reclamo, compensado)


def _exigir_exito(status: int, cuerpo: dict[str, Any], operacion: str, pedido_id: str) -> None:
    if not 200 <= status < 300:
        error = provider_error_code(cuerpo)  # a code only: the body's free text must not reach the execution's cause
        raise RespuestaPasarelaInesperada(f"{operacion} of order {pedido_id}: gateway answered {status} {error}")
