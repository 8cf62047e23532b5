"""What each sandbox provider answers, given a route, a JSON body and the ``Idempotency-Key``.

Routes (JSON in, JSON out), as the real providers answer them:

- ``pasarela``: ``POST /cobros`` ``{pedido_id, importe_centimos, moneda, token_tarjeta | cliente_id}``
  -> 201 ``{referencia_cobro, ..., estado: cobrado}``, 402 ``{error: tarjeta_rechazada}``, 400
  without a key or a field; ``POST /reembolsos`` ``{pedido_id | referencia_cobro}`` -> 201
  ``{referencia_reembolso, referencia_cobro, pedido_id, estado: reembolsado}``, 404 when there
  is nothing to refund, 409 when another key already refunded that charge.
- ``erp``: ``POST /avisos``, ``/reservas``, ``/liberaciones`` -> 200 ``{aceptado, ruta}``.
- ``correo-*``: ``POST /correos`` ``{destinatario, ...}`` -> 202 ``{aceptado, proveedor}``.

A new consumer's provider is one more entry of :data:`RUTAS` (its name is its breaker's, its routes what its
handler posts to): it answers like the ERP's.

The ``Idempotency-Key`` replay (same key -> the stored answer, ``Idempotent-Replayed: true``)
is the host's job, because it is where the state lives; :func:`guardable` says which answers
are stored (everything but a 5xx, which the client may retry with the same key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

Respuesta = tuple[int, dict[str, Any]]

RUTAS: dict[str, tuple[str, ...]] = {
    "pasarela": ("/cobros", "/reembolsos"),
    "erp": ("/avisos", "/reservas", "/liberaciones"),
    "correo": ("/correos",),
}
CABECERA_REPETIDA = "Idempotent-Replayed"


class Almacen(Protocol):
    """Where a host keeps the gateway's charges and refunds (memory locally, DynamoDB deployed)."""

    def nueva_referencia(self, prefijo: str) -> str: ...

    def cobro(self, referencia_cobro: str | None, pedido_id: str | None) -> dict[str, Any] | None:
        """The charge by its reference, else the order's charge; ``None`` when there is none."""
        ...

    def guardar_cobro(self, cobro: dict[str, Any]) -> None: ...

    def guardar_reembolso(self, reembolso: dict[str, Any]) -> bool:
        """Record the refund unless its charge already has one; ``False`` when it had."""
        ...


def guardable(estado: int) -> bool:
    """Whether an answer is replayed to the same key: a 5xx is not (the client retries it)."""
    return estado < 500


def repetida(respuesta: Respuesta) -> Respuesta:
    """A stored answer as a replay sends it (the body says so too, for clients that drop headers)."""
    estado, cuerpo = respuesta
    return estado, {**cuerpo, "repetida": True}


@dataclass
class Simulador:
    """One provider's request -> answer logic. ``atender`` returns the answer and whether it had an effect."""

    proveedor: str  # "pasarela", "erp" or a correo name ("correo-principal", "correo-secundario")
    almacen: Almacen | None = None  # the gateway's state; the ERP and e-mail keep none
    rechaza: Callable[[str | None, int | None], bool] = lambda _medio, _importe: False

    @property
    def familia(self) -> str:
        return "correo" if self.proveedor.startswith("correo") else self.proveedor

    def atender(self, ruta: str, cuerpo: dict[str, Any], clave: str | None) -> tuple[Respuesta, bool]:
        if ruta not in RUTAS.get(self.familia, ()):
            return (404, {"error": "ruta_desconocida", "ruta": ruta}), False
        if self.familia == "pasarela":
            return self._cobrar(cuerpo, clave) if ruta == "/cobros" else self._reembolsar(cuerpo, clave)
        if self.familia == "correo":
            if "destinatario" not in cuerpo:
                return (400, {"error": "peticion_invalida", "faltan": ["destinatario"]}), False
            return (202, {"aceptado": True, "proveedor": self.proveedor}), True
        # The ERP, and any provider a new consumer adds with its routes above: it accepts what it is sent.
        return (200, {"aceptado": True, "ruta": ruta}), True

    def _necesita_almacen(self) -> Almacen:
        if self.almacen is None:
            raise ValueError("the payment gateway sandbox needs an Almacen for its charges and refunds")
        return self.almacen

    def _cobrar(self, cuerpo: dict[str, Any], clave: str | None) -> tuple[Respuesta, bool]:
        faltan = [c for c in ("pedido_id", "importe_centimos") if c not in cuerpo]
        if "token_tarjeta" not in cuerpo and "cliente_id" not in cuerpo:
            faltan.append("token_tarjeta|cliente_id")  # a card token, or the customer's card on file
        if faltan or clave is None:
            return (400, {"error": "peticion_invalida", "faltan": faltan or ["Idempotency-Key"]}), False
        medio = cuerpo.get("token_tarjeta") or cuerpo.get("cliente_id")
        if self.rechaza(medio, cuerpo["importe_centimos"]):
            return (402, {"error": "tarjeta_rechazada", "pedido_id": cuerpo["pedido_id"]}), False
        almacen = self._necesita_almacen()
        cobro = {
            "referencia_cobro": almacen.nueva_referencia("ch"),
            "pedido_id": cuerpo["pedido_id"],
            "importe_centimos": cuerpo["importe_centimos"],
            "moneda": cuerpo.get("moneda", "EUR"),
        }
        almacen.guardar_cobro(cobro)
        return (201, {**cobro, "estado": "cobrado"}), True

    def _reembolsar(self, cuerpo: dict[str, Any], clave: str | None) -> tuple[Respuesta, bool]:
        if clave is None:
            return (400, {"error": "peticion_invalida", "faltan": ["Idempotency-Key"]}), False
        almacen = self._necesita_almacen()
        cobro = almacen.cobro(cuerpo.get("referencia_cobro"), cuerpo.get("pedido_id"))
        if cobro is None:
            return (404, {"error": "cobro_inexistente", "pedido_id": cuerpo.get("pedido_id")}), False
        reembolso = {
            "referencia_reembolso": almacen.nueva_referencia("re"),
            "referencia_cobro": cobro["referencia_cobro"],
            "pedido_id": cobro["pedido_id"],
        }
        if not almacen.guardar_reembolso(reembolso):
            return (409, {"error": "ya_reembolsado", "referencia_cobro": cobro["referencia_cobro"]}), False
        return (201, {**reembolso, "estado": "reembolsado"}), True
