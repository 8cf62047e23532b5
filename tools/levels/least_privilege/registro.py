"""The request recorder: every AWS call made on behalf of a principal (a function, the state machine).

A botocore event hook on boto3's default session (every client of the layer comes from it,
:func:`mercadofresco.aws.client`) sees each API call once, before it is signed and sent
(retries are not new calls). The principal is whoever the current thread works for:

- a function: the emulator runs each invocation, and each event source's poller, under
  :func:`sam_emulator.principal.acting_as` with the function's logical id; an invocation run in
  the function's worker process (:mod:`sam_emulator.workers`) is recorded there and reported here
  through :func:`sam_emulator.principal.add_call_listener`, already attributed;
- a caller that identifies itself by its access key (the state machine's service
  integrations in moto run with their own fixed credentials): ``por_clave_acceso``;
- what AWS does with no code calling, reported by the emulator (``add_service_listener``): an
  invocation starting (Lambda then writes the function's logs with its role), a schedule invoking its
  target (the schedule's role), a delivery SNS or EventBridge makes to a queue as itself (a service
  principal, ``origen`` the topic or rule).

A SigV4-signed call to a function URL is no botocore API call: the layer signs it with botocore's
own signer on the same session (:class:`mercadofresco.http.auth.FunctionUrlSigV4`), which announces
``before-sign.lambda.InvokeFunctionUrl``; it is kept as ``lambda InvokeFunctionUrl {"FunctionUrl": url}``.

Calls outside any principal (the test harness, provisioning, pollers) are not recorded.
The raw call is kept (service, operation, parameters); :meth:`Registro.solicitudes` turns the
calls into IAM requests once the run's names are known (:class:`~least_privilege.acciones.Destino`).
The chaos campaign and an emulated deploy feed the same :class:`Registro`: whatever makes the
calls, that list is what :func:`least_privilege.comprobacion.comprobar` evaluates.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3
from sam_emulator.principal import (
    add_call_listener,
    add_service_listener,
    current_principal,
    remove_call_listener,
    remove_service_listener,
)

from least_privilege.acciones import OPERACION_URL, peticiones

if TYPE_CHECKING:
    from sam_emulator.principal import AwsCall

    from least_privilege.acciones import Destino
    from least_privilege.evaluador import Solicitud

__all__ = ["Llamada", "Registro"]

_CLAVE_CONTEXTO = "least_privilege.parametros"
EVENTO_FIRMA_URL = f"before-sign.lambda.{OPERACION_URL}"


@dataclass(frozen=True, slots=True)
class Llamada:
    """One API call as botocore saw it: ``servicio`` is its signing name (``dynamodb``, ``monitoring``).

    ``principal`` is a logical id with a role, or a service principal (``sns.amazonaws.com``) acting for
    ``origen`` (the topic or rule: the request's ``aws:SourceArn``).
    """

    principal: str
    servicio: str
    operacion: str
    parametros: dict[str, Any]
    origen: str | None = None

    def peticiones(self, destino: Destino) -> list[tuple[str, Solicitud]]:
        return peticiones(self.principal, self.servicio, self.operacion, self.parametros, destino, self.origen)


@dataclass
class Registro:
    """Records every API call made on a principal's behalf while installed."""

    por_clave_acceso: dict[str, str] = field(default_factory=dict)
    _llamadas: list[Llamada] = field(default_factory=list)
    _cerrojo: threading.Lock = field(default_factory=threading.Lock)
    _sesion: Any = None

    def llamadas(self) -> list[Llamada]:
        with self._cerrojo:
            return list(self._llamadas)

    def tomar(self) -> list[Llamada]:
        """The calls recorded so far, forgotten here: a long run (a chaos campaign) checks them in slices."""
        with self._cerrojo:
            llamadas, self._llamadas = self._llamadas, []
            return llamadas

    def anotar(self, llamada: Llamada) -> None:
        with self._cerrojo:
            self._llamadas.append(llamada)

    def solicitudes(self, destino: Destino) -> list[tuple[str, Solicitud]]:
        """``(principal, IAM request)`` for every recorded call and what AWS requests because of it
        (:func:`~least_privilege.acciones.peticiones`); a batch call gives several."""
        return [peticion for llamada in self.llamadas() for peticion in llamada.peticiones(destino)]

    def instalar(self) -> Registro:
        """Hook boto3's default session; clients created from now on are recorded (create them after).

        Install it after anything that replaces that session (moto's in-process ``mock_aws`` does on
        entry); the local run's threaded moto server does not.
        """
        if boto3.DEFAULT_SESSION is None:
            boto3.setup_default_session()
        self._sesion = boto3.DEFAULT_SESSION
        self._sesion.events.register("before-parameter-build", self._parametros, unique_id=f"mf-iam-p-{id(self)}")
        self._sesion.events.register("before-call", self._llamada, unique_id=f"mf-iam-c-{id(self)}")
        self._sesion.events.register(EVENTO_FIRMA_URL, self._firma_url, unique_id=f"mf-iam-u-{id(self)}")
        add_call_listener(self._reportada)
        add_service_listener(self._reportada)
        return self

    def desinstalar(self) -> None:
        remove_call_listener(self._reportada)
        remove_service_listener(self._reportada)
        if self._sesion is not None:
            self._sesion.events.unregister("before-parameter-build", unique_id=f"mf-iam-p-{id(self)}")
            self._sesion.events.unregister("before-call", unique_id=f"mf-iam-c-{id(self)}")
            self._sesion.events.unregister(EVENTO_FIRMA_URL, unique_id=f"mf-iam-u-{id(self)}")
            self._sesion = None

    def __enter__(self) -> Registro:
        return self.instalar()

    def __exit__(self, *exc: object) -> None:
        self.desinstalar()

    def _reportada(self, llamada: AwsCall) -> None:
        if llamada.principal is not None:
            self.anotar(
                Llamada(llamada.principal, llamada.signing_name, llamada.operation, llamada.params, llamada.source_arn)
            )

    # botocore handlers: the API parameters as the caller gave them, then who signs the call.
    def _parametros(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context[_CLAVE_CONTEXTO] = dict(params)

    def _llamada(self, model: Any, context: dict[str, Any], request_signer: Any = None, **_: Any) -> None:
        principal = current_principal()
        if principal is None and request_signer is not None:
            credenciales = getattr(request_signer, "_credentials", None)
            principal = self.por_clave_acceso.get(getattr(credenciales, "access_key", None) or "")
        if principal is None:
            return
        servicio = model.service_model.signing_name
        self.anotar(Llamada(principal, servicio, model.name, context.get(_CLAVE_CONTEXTO, {})))

    def _firma_url(self, request: Any, **_: Any) -> None:
        principal = current_principal()
        if principal is not None:
            self.anotar(Llamada(principal, "lambda", OPERACION_URL, {"FunctionUrl": request.url}))
