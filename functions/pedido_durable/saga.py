"""``mercadofresco-procesar-pedido`` as code: the order saga on Lambda durable functions.

The same path as ``statemachines/procesar_pedido.asl.json``, state for state (the ASL's names in the
comments), the same outcomes (``{"estado", "motivo"}`` in the claim), the same ends (a failed
execution raises the class :mod:`mercadofresco.dominio.errores` names like the ASL's ``Fail`` state):

    reclamar --duplicate--> Duplicado            --unreadable--> enviar-a-fallidos, EventoInvalido
    cobrar --declined--> RECHAZADO   --circuit open--> NO_CONFIRMADO pasarela-no-disponible
           --key released--> reintentar-cobro (2 retries)
           --unknown--> [esperar-fin-bloqueo, reconsultar] x <= 2 --still unknown--> reembolsar
    reservar-stock, confirmar --fails--> reembolsar --> REEMBOLSADO
    cerrar-reclamo (every outcome), then the customer's notice (every outcome but CONFIRMADO)

Each ``Retry`` of the ASL is a step's retry strategy here (:mod:`reintentos`), with its error names,
its count and its full-jitter backoff. What the state machine does and this does not, and why:

- No capacity wait (``QuedaEsperaCapacidad``): the charge is not another function with its own
  reserved concurrency but code in this one; a throttled invocation of this function is retried by
  the durable service, and replay resumes where it stopped.
- Platform faults (``Sandbox.Timedout``, ``Lambda.Unknown``) kill the invocation, not a step: the
  service invokes the function again and replay reaches the step that had not checkpointed. The
  steps that call the gateway (charge, refund, their re-asks) are ``AT_MOST_ONCE_PER_RETRY``: such an
  interrupted attempt is not run again blindly, it fails as ``StepInterruptedError``, an unknown
  outcome the re-ask loop resolves past the lease, exactly as the state machine's ``Catch`` does with
  its task's ``Sandbox.Timedout``. (``AT_LEAST_ONCE_PER_RETRY``, the SDK's default, would run it again;
  the record and the gateway's ``Idempotency-Key`` would keep that to one charge, but a charge whose
  every attempt dies would be run again until the service gave up on the invocations, never
  compensated.) Every other step is ``AT_LEAST_ONCE_PER_RETRY``: its effect is idempotent and
  running it again is how it completes.
- The control flow depends only on what the steps returned or raised (checkpointed): a replay
  takes the same path. Nothing here reads a clock or a random number outside a step.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from aws_durable_execution_sdk_python.config import Duration
from aws_durable_execution_sdk_python.exceptions import StepError
from mercadofresco.dominio.errores import (
    AvisoNoPublicado,
    CobroNoCompletado,
    LoteNoAdmitido,
    PedidoCancelado,
    ReclamoSinCerrar,
    ReembolsoNoCompletado,
)
from mercadofresco.errors import CircuitoAbierto, EventoInvalido
from reintentos import CLAVE_LIBERADA, REGLAS

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_durable_execution_sdk_python.context import DurableContext
    from pasos import Pasos

RECONSULTAS_MAX = 2  # QuedaReconsulta: at most two re-asks per operation, then compensate (or an operator)

CONFIRMADO = {"estado": "CONFIRMADO", "motivo": None}
RECHAZADO = {"estado": "RECHAZADO", "motivo": "tarjeta_rechazada"}
PASARELA_CAIDA = {"estado": "NO_CONFIRMADO", "motivo": "pasarela-no-disponible"}
COBRO_NO_CONFIRMADO = {"estado": "NO_CONFIRMADO", "motivo": "cobro-no-confirmado"}
REEMBOLSO_PENDIENTE = {"estado": "NO_CONFIRMADO", "motivo": "reembolso-pendiente"}

# How a failed execution ends: the class (the ASL Fail state's Error) and its cause, for the on-call.
CAUSAS = {
    EventoInvalido: "unreadable PedidoCreado: sent to mercadofresco-pedidos-fallidos with its reason (mf-motivo);"
    " nothing was charged",
    CircuitoAbierto: "payment provider unavailable, ask the customer to retry in a few minutes (the circuit"
    " 'pasarela' was open at the first attempt: this execution never called the gateway; the claim was closed and"
    " PedidoNoConfirmado published)",
    CobroNoCompletado: "the charge's outcome stayed unknown after asking again with Idempotency-Key"
    " cobro:{pedido_id} past its lease, so it was compensated: the refund reembolso:{pedido_id} was made, or the"
    " gateway had no charge to refund (404). No charge remains; PedidoNoConfirmado was published; the order stays"
    " claimed (a replay ends in Duplicado)",
    ReembolsoNoCompletado: "a charge may exist and the refund could not be made after its retries: refund by hand"
    " (reembolso:{pedido_id}) and see runbooks/; PedidoNoConfirmado was published and the order stays claimed",
    PedidoCancelado: "a step after the charge failed; the charge was refunded once (reembolso:{pedido_id}),"
    " PedidoCancelado was published and the stock reservations were released",
    ReclamoSinCerrar: "the order has its outcome (the cerrar-reclamo step's input in the execution's history) but its"
    " claim pedido:{pedido_id} could not be closed after its retries and stays EN_CURSO until its lease lapses; a"
    " redelivery after that would run the order again. Close it by hand before the lease lapses"
    " (runbooks/reclamo-sin-cerrar.md); the customer was not told yet unless the outcome is CONFIRMADO",
    AvisoNoPublicado: "the order has its outcome and its claim is closed (any refund was already made) but the"
    " customer's notice (PedidoRechazado or PedidoNoConfirmado) could not be published after its retries: tell the"
    " customer by hand",
}
# FinNoConfirmado: the end that names why the order was not confirmed.
FIN_NO_CONFIRMADO = {
    "pasarela-no-disponible": CircuitoAbierto,
    "reembolso-pendiente": ReembolsoNoCompletado,
    "cobro-no-confirmado": CobroNoCompletado,
}


def nombre_del_error(error: StepError) -> str:
    """The class name of what the step raised (the SDK records its qualified name)."""
    return (error.error_type or "").rsplit(".", 1)[-1]


def procesar(registros: Any, ctx: DurableContext, pasos: Pasos) -> dict[str, Any]:
    """Run the order in ``registros`` (the pipe's batch) to its outcome; a failed end raises its error."""
    ejecucion = ctx.execution_context.durable_execution_arn
    try:
        estado = ctx.step(lambda _: pasos.reclamar(registros, ejecucion), name="reclamar", config=REGLAS["reclamo"])
    except StepError as exc:  # ReclamarPedido's Catch
        error = nombre_del_error(exc)
        if error == "PedidoDuplicado":
            return {"fin": "Duplicado"}  # another execution owns it, or it has its outcome: nothing to compensate
        if error == "EventoInvalido":
            mensaje = exc.message or ""
            ctx.step(
                lambda _: pasos.enviar_a_fallidos(registros, mensaje), name="enviar-a-fallidos", config=REGLAS["aws"]
            )
            raise EventoInvalido(CAUSAS[EventoInvalido]) from None
        if error == "LoteNoAdmitido":  # the pipe misconfigured: the execution fails loudly, nothing claimed
            raise LoteNoAdmitido(exc.message) from None
        raise  # the claim's store down past its retries
    return Saga(ctx, pasos, ejecucion, estado).procesar()


class Saga:
    """One order after its claim: charge, reserve, confirm, or compensate; then close and tell the customer."""

    def __init__(self, ctx: DurableContext, pasos: Pasos, ejecucion: str, estado: dict[str, Any]) -> None:
        self.ctx, self.pasos, self.ejecucion = ctx, pasos, ejecucion
        self.pedido: dict[str, Any] = estado["pedido"]
        self.confirmacion: dict[str, Any] = estado["confirmacion"]

    def procesar(self) -> dict[str, Any]:
        cobro, desenlace = self._cobrar()
        reembolso = None
        if cobro is not None:
            try:
                self._paso("reservar-stock", "aws", self.pasos.reservar_stock, self.pedido)
                self._paso("confirmar", "aws", self.pasos.confirmar, self.confirmacion, cobro)
            except StepError as exc:  # ReservarStock's and Confirmar's Catch: compensate
                desenlace, reembolso = self._reembolsar(cobro["referencia_cobro"], motivo=nombre_del_error(exc))
            else:
                self._cerrar(CONFIRMADO)  # Confirmado: the close ends the confirmed order
                return {"fin": "Confirmado", "desenlace": CONFIRMADO}
        assert desenlace is not None
        self._cerrar(desenlace)
        return self._avisar(desenlace, cobro, reembolso)

    # ---------------------------------------------------------------- the charge
    def _cobrar(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The charge, or the outcome that replaces it (Cobrar, ReintentarCobro, the re-ask loop, the refund)."""
        try:
            return self._paso("cobrar", "cobro", self.pasos.cobrar, self.pedido), None
        except StepError as exc:
            error = nombre_del_error(exc)
        if error == "CobroRechazado":
            return None, RECHAZADO
        if error == "CircuitoAbierto":  # the first attempt: this execution never called the gateway
            return None, PASARELA_CAIDA
        if error in CLAVE_LIBERADA:
            try:
                return self._paso("reintentar-cobro", "reintentar-cobro", self.pasos.cobrar, self.pedido), None
            except StepError as exc:
                if nombre_del_error(exc) == "CobroRechazado":
                    return None, RECHAZADO
        respuesta, rechazado = self._reconsultar("cobro", None)
        if respuesta is not None:
            return respuesta, None
        if rechazado:
            return None, RECHAZADO
        desenlace, _ = self._reembolsar(None, motivo=None)  # still unknown: compensate whatever may exist
        return None, desenlace

    def _reconsultar(self, operacion: str, referencia_cobro: str | None) -> tuple[dict[str, Any] | None, bool]:
        """QuedaReconsulta/EsperarFinBloqueo/Reconsultar: ``(answer, False)``, ``(None, refused)`` or unknown."""
        espera = Duration.from_seconds(self.pasos.config.reconsulta_wait_s)
        for n in range(1, RECONSULTAS_MAX + 1):
            self.ctx.wait(espera, name=f"esperar-fin-bloqueo-{operacion}-{n}")  # past the lease: a dead claim lapsed
            try:
                if operacion == "cobro":
                    return self._paso(f"reconsultar-cobro-{n}", "reconsulta", self.pasos.cobrar, self.pedido), False
                return self._paso(
                    f"reconsultar-reembolso-{n}", "reconsulta", self.pasos.reembolsar, self.pedido, referencia_cobro
                ), False
            except StepError as exc:
                if nombre_del_error(exc) in ("CobroRechazado", "ReembolsoRechazado"):
                    return None, True
        return None, False

    def _reembolsar(
        self, referencia_cobro: str | None, motivo: str | None
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Reembolsar (then ComprobarSinCobro or TrasRespuesta): the outcome and the refund, if one was made."""
        sin_cobro = COBRO_NO_CONFIRMADO if referencia_cobro is None else REEMBOLSO_PENDIENTE  # ComprobarSinCobro
        try:
            reembolso = self._paso("reembolsar", "reembolso", self.pasos.reembolsar, self.pedido, referencia_cobro)
        except StepError as exc:
            if nombre_del_error(exc) == "ReembolsoRechazado":  # 404 nothing to refund, 409 refunded elsewhere
                return sin_cobro, None
            reembolso, rechazado = self._reconsultar("reembolso", referencia_cobro)
            if reembolso is None:
                return (sin_cobro if rechazado else REEMBOLSO_PENDIENTE), None
        if referencia_cobro is None:  # TrasRespuesta: an unknown charge refunded, or none existed
            return COBRO_NO_CONFIRMADO, reembolso
        return {"estado": "REEMBOLSADO", "motivo": motivo}, reembolso

    # ------------------------------------------------------ the close and the notices
    def _cerrar(self, desenlace: dict[str, Any]) -> None:
        try:
            self._paso(
                "cerrar-reclamo",
                "cierre",
                self.pasos.cerrar_reclamo,
                self.pedido["pedido_id"],
                self.ejecucion,
                desenlace,
            )
        except StepError:
            raise ReclamoSinCerrar(CAUSAS[ReclamoSinCerrar]) from None

    def _avisar(
        self, desenlace: dict[str, Any], cobro: dict[str, Any] | None, reembolso: dict[str, Any] | None
    ) -> dict[str, Any]:
        """AvisarCliente: every outcome but the confirmation is told on the bus; a failed one ends with its error."""
        pedido_id, email, motivo = self.pedido["pedido_id"], self.pedido["email"], desenlace["motivo"]
        if desenlace["estado"] == "REEMBOLSADO":
            detalle = {
                "pedido_id": pedido_id,
                "referencia_cobro": (cobro or {}).get("referencia_cobro"),
                "referencia_reembolso": (reembolso or {}).get("referencia_reembolso"),
                "error": motivo,
                "email": email,
            }
            for nombre, funcion, argumentos in (
                ("avisar-cancelacion", self.pasos.avisar, ("PedidoCancelado", detalle)),
                ("liberar-stock", self.pasos.liberar_stock, (self.pedido,)),
            ):
                # As the state machine: a notice that failed does not stop the releases, nor the end PedidoCancelado.
                with contextlib.suppress(StepError):
                    self._paso(nombre, "aws", funcion, *argumentos)
            raise PedidoCancelado(CAUSAS[PedidoCancelado])
        rechazado = desenlace["estado"] == "RECHAZADO"
        tipo = "PedidoRechazado" if rechazado else "PedidoNoConfirmado"
        try:
            self._paso(
                f"avisar-{tipo}",
                "aws",
                self.pasos.avisar,
                tipo,
                {"pedido_id": pedido_id, "motivo": motivo, "email": email},
            )
        except StepError:
            raise AvisoNoPublicado(CAUSAS[AvisoNoPublicado]) from None
        if rechazado:
            return {"fin": "Rechazado", "desenlace": desenlace}
        fin = FIN_NO_CONFIRMADO[motivo]
        raise fin(CAUSAS[fin])

    def _paso(self, nombre: str, reglas: str, funcion: Callable[..., Any], *argumentos: Any) -> Any:
        """One durable step running ``funcion(*argumentos)`` (bound now: a loop cannot change them later)."""
        return self.ctx.step(lambda _: funcion(*argumentos), name=nombre, config=REGLAS[reglas])
