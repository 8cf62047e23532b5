"""Least privilege of the durable saga, proven by execution (issue 37; decision 0110).

The contract suite's durable engine (``functions/pedido_durable`` on the SDK's local runner, against the
provisioned moto world) runs with the request recorder installed and every invocation made as
``PedidoDurableFunction`` of its unit (``PedidoDurable``). Each request it makes (the claim, charge and refund
records with their ``dynamodb:LeadingKeys``, the signed calls to the sandbox gateway, the reservations and the
dead letter, the confirmation, the outcome events, the secrets) and what AWS requests because of it (the data
key, asked by SQS, SNS and DynamoDB for the caller) is decided against ``PedidoDurableFunctionRole`` as the
transformed unit gives it, nested with ``WorkflowEngine=DurableFunction``. The runner keeps its checkpoints in
memory: the role's ``OwnDurableExecutions`` grant (``lambda:CheckpointDurableExecution``) is not exercised here.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import boto3
import pytest

from tests.conftest import load_event
from tests.contract.motores import SIN_METRICAS
from tests.unit.iam.plantillas import sin_accion, sin_sentencia_de_rol

if TYPE_CHECKING:
    from collections.abc import Iterator

    from least_privilege.registro import Registro

    from tests.contract.motores import MotorDurable

pytestmark = [pytest.mark.integration, SIN_METRICAS]

UNIDAD = "PedidoDurable"
FUNCION = f"{UNIDAD}/PedidoDurableFunction"  # the principal, as the stack path names it
ROL = "PedidoDurableFunctionRole"


@pytest.fixture
def registro(aws: None, fresh_environment: None) -> Iterator[Registro]:
    """The recorder, installed before the durable function builds its clients (ask for it before the engine):
    a client cached by an earlier test belongs to another session, whose calls this one would not see."""
    from least_privilege.registro import Registro

    with Registro() as grabadora:
        yield grabadora


def _como_la_funcion(motor: MotorDurable) -> None:
    """Every run of the saga's code is the durable function's (its role signs what it calls).

    The SDK runs the handler's body in a worker thread of its own: the saga is wrapped there, not the handler.
    """
    from sam_emulator.principal import acting_as

    real = motor.app.procesar

    def procesar(evento: Any, contexto: Any, pasos: Any) -> Any:
        with acting_as(FUNCION):
            return real(evento, contexto, pasos)

    motor.app.procesar = procesar


def _comprobar(registro: Registro, motor: MotorDurable, transformar: Any = None) -> tuple[Any, set[tuple[str, str]]]:
    """The recorded requests against the durable template's account (``transformar`` takes a grant out)."""
    from least_privilege.comprobacion import Cuenta, comprobar
    from least_privilege.local import destino
    from least_privilege.roles import plantilla_transformada, resolver
    from mercadofresco_local.firma import urls_firmadas
    from sam_emulator.template import Template

    # The world was provisioned with the state machine: each unit it created is handed what this engine's root
    # passes it (the sandbox grants the saga's role), and the saga's unit is created as a run with this engine
    # creates it, its role named as the unit outputs it.
    plantilla = Template(parameters={"WorkflowEngine": "DurableFunction"}, physical_ids=dict(motor.flujo.fisicos))
    plantilla.physical_ids[UNIDAD] = {"Outputs.FunctionRole": ROL}
    pasados = {lid: unidad.parameters for lid, unidad in plantilla.units().items()}
    plantilla.created_units.update(
        {lid: replace(unidad, parameters=pasados[lid]) for lid, unidad in motor.flujo.unidades.items()}
    )
    saga = plantilla.units()[UNIDAD]
    saga.physical_ids[ROL] = {"Ref": ROL, "Arn": f"arn:aws:iam::123456789012:role/{ROL}"}
    plantilla.created_units[UNIDAD] = saga
    # The gateway stand-in plays the sandbox gateway's function URL (in the sandbox unit), as in the local run.
    unidad, url = plantilla.locate(urls_firmadas(plantilla)["PASARELA_URL"])
    unidad.physical_ids[url].setdefault("UrlsLocales", []).append(motor.pasarela.url)
    resuelta = resolver(plantilla, plantilla_transformada(plantilla.path, plantilla.region))
    if transformar:  # the grant taken out of the saga's unit, as SAM transformed it
        anidada = resuelta.unidades[UNIDAD]
        anidada.__dict__["doc"] = transformar(anidada.doc)
    solicitudes = registro.solicitudes(destino(plantilla, resuelta))
    return comprobar(solicitudes, Cuenta.de_resuelta(resuelta)), {(p, s.accion) for p, s in solicitudes}


def test_every_request_of_the_durable_saga_is_allowed_by_its_role(registro: Registro, motor_durable: MotorDurable):
    # GIVEN the durable saga's invocations recorded as its function's
    _como_la_funcion(motor_durable)
    motor_durable.pasarela.fallos.rechazar_tarjeta("tok_rechazada_fondos")
    # WHEN it confirms an order, tells a customer their card was declined and parks an unreadable order
    finales = [
        motor_durable.ejecutar(load_event(evento)).final
        for evento in ("flujo/pedido-creado.json", "flujo/pedido-rechazado.json", "flujo/pedido-version-2.json")
    ]
    informe, acciones = _comprobar(registro, motor_durable)
    # THEN the paths ran as the contract says
    assert finales == ["Confirmado", "Rechazado", "EventoInvalido"]
    # AND every request was the function's and none is denied by its role or the resource's policy
    assert {p for p, _ in acciones} <= {FUNCION, "sqs.amazonaws.com", "sns.amazonaws.com", "dynamodb.amazonaws.com"}
    assert not informe.denegadas and not informe.sin_rol, informe.texto()
    # AND each kind of call the role grants for was made: the records, the signed gateway calls, the queues,
    # the topic, the bus, the secrets, and the data key for the encrypted table and queues
    assert {
        (FUNCION, "dynamodb:PutItem"),
        (FUNCION, "dynamodb:UpdateItem"),
        (FUNCION, "lambda:InvokeFunctionUrl"),
        (FUNCION, "lambda:InvokeFunction"),
        (FUNCION, "sqs:SendMessage"),
        (FUNCION, "sns:Publish"),
        (FUNCION, "events:PutEvents"),
        (FUNCION, "secretsmanager:GetSecretValue"),
        (FUNCION, "kms:GenerateDataKey"),
    } <= acciones, sorted(acciones)
    # AND the grants those requests needed are used, not listed as unused
    sin_uso = {u.sid for u in informe.sin_uso if u.principal == FUNCION}
    assert not sin_uso & {
        "ClaimChargeAndRefundRecords",
        "GatewayApiKeyAndBreakerState",
        "SandboxProviderUrl",
        "SandboxProviderInvoke",
        "ReservationsAndParkedOrders",
        "Confirmation",
        "OutcomeEvents",
        "EncryptedRecordsQueuesAndSecrets",
    }, informe.texto()


def test_a_refund_is_allowed_and_a_missing_grant_is_denied(registro: Registro, motor_durable: MotorDurable):
    # GIVEN the confirmation topic gone, so the saga compensates after charging
    _como_la_funcion(motor_durable)
    boto3.client("sns").delete_topic(TopicArn=motor_durable.flujo.fisicos["TopicPedidoConfirmado"]["Ref"])
    # WHEN an order runs
    resultado = motor_durable.ejecutar(load_event("flujo/pedido-creado.json"))
    informe, _ = _comprobar(registro, motor_durable)
    # THEN it refunded, and the refund's record (reembolso:*) and release messages were allowed
    assert (resultado.final, motor_durable.pasarela.reembolsos_de("PED-2026-084417")) == ("Cancelado", 1)
    assert not informe.denegadas, informe.texto()
    # AND the same requests against the role without one of the grants they need are denied, so the check
    # can fail: the refund's key prefix in the records' condition, the queues' statement, the data key
    sin_reembolsos, _ = _comprobar(registro, motor_durable, _sin_prefijo("reembolso:*"))
    sin_colas, _ = _comprobar(
        registro, motor_durable, lambda t: sin_sentencia_de_rol(t, ROL, "ReservationsAndParkedOrders")
    )
    sin_clave, _ = _comprobar(
        registro, motor_durable, lambda t: sin_accion(t, ROL, "EncryptedRecordsQueuesAndSecrets", "kms:GenerateDataKey")
    )
    assert {
        (d.solicitud.accion, dict(d.solicitud.contexto)["dynamodb:LeadingKeys"][0].split(":")[0])
        for d in sin_reembolsos.denegadas
    } == {("dynamodb:PutItem", "reembolso"), ("dynamodb:UpdateItem", "reembolso")}
    assert {d.solicitud.accion for d in sin_colas.denegadas} == {"sqs:SendMessage"}
    assert {d.solicitud.accion for d in sin_clave.denegadas} == {"kms:GenerateDataKey"}


def _sin_prefijo(prefijo: str) -> Any:
    """The transformed template whose records' statement no longer allows keys starting with ``prefijo``."""

    def transformar(transformada: dict[str, Any]) -> dict[str, Any]:
        copia = copy.deepcopy(transformada)
        for politica in copia["Resources"][ROL]["Properties"]["Policies"]:
            for sentencia in politica["PolicyDocument"]["Statement"]:
                if isinstance(sentencia, dict) and sentencia.get("Sid") == "ClaimChargeAndRefundRecords":
                    claves = sentencia["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
                    claves.remove(prefijo)
        return copia

    return transformar
