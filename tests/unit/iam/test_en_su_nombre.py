"""Requests AWS makes because of a call, and the resource-based policies that decide them (issue 35, finding 3).

A call on an encrypted queue, topic, secret or table makes the service ask KMS for the caller; SNS and
EventBridge deliver to queues as themselves, under the queue policy and the key policy; an invocation
has Lambda write the function's logs. Each is modelled (:func:`least_privilege.acciones.peticiones`)
and decided against the real template, as a stack resolves it: removing the grant a request needs (the
cobro role's ``kms:Decrypt``, the ERP queue policy's SNS statement, the key policy's) fails the check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from least_privilege.acciones import Destino, peticiones
from least_privilege.comprobacion import Cuenta, comprobar
from least_privilege.evaluador import Decision, Solicitud
from least_privilege.roles import plantilla_transformada, resolver
from sam_emulator.principal import PLATFORM_INVOCATION
from sam_emulator.template import Template

from tests.unit.iam.pila import CLAVE, CUENTA, REGION, arn, creada
from tests.unit.iam.plantillas import sin_accion, sin_sentencia

RAIZ = Path(__file__).resolve().parents[3]
ERP_COLA = "Consumidores/ColaErp"
ERP = "Consumidores/ErpFunction"


@pytest.fixture(scope="module")
def plantilla() -> Template:
    return creada(Template(path=RAIZ / "template.yaml"))


@pytest.fixture(scope="module")
def transformada(plantilla: Template) -> dict[str, Any]:
    return plantilla_transformada(plantilla.path, REGION)


def _cuenta(plantilla: Template, transformada: dict[str, Any], unidad: str = "", quitar: Any = None) -> Cuenta:
    """The account the template makes; with ``quitar`` applied to the transformed template of the root or of
    ``unidad``."""
    resuelta = resolver(plantilla, transformada)
    if quitar is not None:
        donde = resuelta.unidades[unidad] if unidad else resuelta
        donde.__dict__["doc"] = quitar(donde.doc)
    return Cuenta.de_resuelta(resuelta)


@pytest.fixture(scope="module")
def destino(plantilla: Template, transformada: dict[str, Any]) -> Destino:
    tabla = plantilla.physical_ids["TablaIdempotencia"]["Ref"]
    return Destino.de_resuelta(resolver(plantilla, transformada), {tabla: "clave"}, {})


def _cola(plantilla: Template, ruta: str) -> str:
    return plantilla.get_att(ruta, "Arn")


def _decisiones(cuenta: Cuenta, pares: list[tuple[str, Solicitud]]) -> dict[tuple[str, str], Decision]:
    informe = comprobar(pares, cuenta)
    denegadas = {(d.principal, d.solicitud.accion): d.decision for d in informe.denegadas}
    return {(p, s.accion): denegadas.get((p, s.accion), Decision.PERMITIDA) for p, s in pares}


# ------------------------------------------------------------------ what each call makes AWS request
def test_a_send_to_an_encrypted_queue_has_sqs_ask_kms_for_a_data_key_with_the_callers_identity(
    plantilla: Template, destino: Destino
) -> None:
    cola = _cola(plantilla, "ColaErpFallidos")
    pares = peticiones(
        ERP, "sqs", "SendMessage", {"QueueUrl": plantilla.physical_ids["ColaErpFallidos"]["Ref"]}, destino
    )
    assert [(p, s.accion) for p, s in pares] == [
        (ERP, "sqs:SendMessage"),
        (ERP, "kms:GenerateDataKey"),
        (ERP, "kms:Decrypt"),
    ]
    kms = pares[1][1]
    assert kms.recurso == CLAVE
    assert kms.claves["kms:viaservice"] == (f"sqs.{REGION}.amazonaws.com",)
    assert kms.claves["kms:encryptioncontext:aws:sqs:arn"] == (cola,)
    # AND a receive needs only the decrypt
    recibir = peticiones(ERP, "sqs", "ReceiveMessage", {"QueueUrl": plantilla.get_att(ERP_COLA, "Ref")}, destino)
    assert [s.accion for _, s in recibir] == ["sqs:ReceiveMessage", "kms:Decrypt"]


def test_a_publish_a_secret_and_an_item_each_have_their_service_decrypt_for_the_caller(
    plantilla: Template, destino: Destino
) -> None:
    tema = plantilla.physical_ids["TopicPedidoConfirmado"]["Ref"]
    publicar = peticiones("ProcesarPedido", "sns", "Publish", {"TopicArn": tema}, destino)
    assert [(s.accion, s.claves.get("kms:encryptioncontext:aws:sns:topicarn")) for _, s in publicar] == [
        ("sns:Publish", None),
        ("kms:GenerateDataKey", (tema,)),
        ("kms:Decrypt", (tema,)),
    ]
    secreto = plantilla.physical_ids["ValkeySecret"]["Ref"]
    leer = peticiones("CobroFunction", "secretsmanager", "GetSecretValue", {"SecretId": secreto}, destino)
    assert [(s.accion, s.claves.get("kms:encryptioncontext:secretarn")) for _, s in leer][1] == (
        "kms:Decrypt",
        (secreto,),
    )
    tabla = plantilla.physical_ids["TablaIdempotencia"]["Ref"]
    escribir = peticiones(
        "CobroFunction", "dynamodb", "PutItem", {"TableName": tabla, "Item": {"clave": {"S": "cobro:P1"}}}, destino
    )
    (_, decrypt) = escribir[1]
    assert decrypt.accion == "kms:Decrypt"
    assert decrypt.claves["kms:encryptioncontext:aws:dynamodb:tablename"] == (tabla,)
    assert decrypt.claves["kms:viaservice"] == (f"dynamodb.{REGION}.amazonaws.com",)


def test_a_stream_read_is_authorised_on_the_stream_and_decrypts_the_tables_key(
    plantilla: Template, destino: Destino
) -> None:
    flujo = plantilla.physical_ids["TablaCarritos"]["StreamArn"]
    pares = peticiones("Carritos/PipeCarritos", "dynamodb", "GetRecords", {"ShardIterator": f"{flujo}|1|AAAA"}, destino)
    assert [(s.accion, s.recurso) for _, s in pares] == [("dynamodb:GetRecords", flujo), ("kms:Decrypt", CLAVE)]


def test_a_delivery_is_the_services_request_with_its_source_and_the_key_is_asked_as_that_service(
    plantilla: Template, destino: Destino
) -> None:
    cola, tema = _cola(plantilla, ERP_COLA), plantilla.physical_ids["TopicPedidoConfirmado"]["Ref"]
    sns = peticiones("sns.amazonaws.com", "sqs", "SendMessage", {"QueueArn": cola}, destino, origen=tema)
    assert [(p, s.accion, s.claves.get("aws:sourcearn")) for p, s in sns] == [
        ("sns.amazonaws.com", "sqs:SendMessage", (tema,)),
        ("sns.amazonaws.com", "kms:GenerateDataKey", (tema,)),
        ("sns.amazonaws.com", "kms:Decrypt", (tema,)),
    ]
    assert "kms:viaservice" not in sns[1][1].claves  # the service asks as itself, not for a caller
    # AND EventBridge's request for the key names no source (SQS guide): the queue policy's does
    regla = plantilla.physical_ids["ReglaPedidoCreado"]["Arn"]
    eventos = peticiones(
        "events.amazonaws.com", "sqs", "SendMessage", {"QueueArn": _cola(plantilla, "ColaPedidos")}, destino, regla
    )
    assert [s.claves.get("aws:sourcearn") for _, s in eventos] == [(regla,), None, None]


def test_an_invocation_has_lambda_write_its_logs_and_traces_and_logs_ask_for_the_key(destino: Destino) -> None:
    pares = peticiones("CobroFunction", "lambda", PLATFORM_INVOCATION, {"FunctionName": "mercadofresco-cobro"}, destino)
    assert [(p, s.accion) for p, s in pares] == [
        ("CobroFunction", "logs:CreateLogStream"),
        ("CobroFunction", "logs:PutLogEvents"),
        (f"logs.{REGION}.amazonaws.com", "kms:GenerateDataKey"),
        ("CobroFunction", "xray:PutTraceSegments"),
        ("CobroFunction", "xray:PutTelemetryRecords"),
    ]
    grupo = arn("logs", "log-group:/aws/lambda/mercadofresco-cobro")
    assert pares[1][1].recurso.startswith(f"{grupo}:log-stream:")
    assert pares[2][1].claves["kms:encryptioncontext:aws:logs:arn"] == (grupo,)


def test_starting_an_execution_has_step_functions_send_its_trace_with_the_machines_role(
    plantilla: Template, destino: Destino
) -> None:
    maquina = plantilla.physical_ids["ProcesarPedido"]["Ref"]
    pares = peticiones("PipePedidos", "states", "StartExecution", {"stateMachineArn": maquina}, destino)
    assert [(p, s.accion) for p, s in pares] == [
        ("PipePedidos", "states:StartExecution"),
        ("ProcesarPedido", "xray:PutTraceSegments"),
        ("ProcesarPedido", "xray:PutTelemetryRecords"),
    ]


# ---------------------------------------------------- decided by the template's roles and resource policies
def _flujo(plantilla: Template, destino: Destino) -> list[tuple[str, Solicitud]]:
    """The requests of one order's charge and confirmation, as a run records them."""
    tabla = plantilla.physical_ids["TablaIdempotencia"]["Ref"]
    tema = plantilla.physical_ids["TopicPedidoConfirmado"]["Ref"]
    return [
        *peticiones(
            "CobroFunction", "dynamodb", "PutItem", {"TableName": tabla, "Item": {"clave": {"S": "cobro:P1"}}}, destino
        ),
        *peticiones("CobroFunction", "lambda", PLATFORM_INVOCATION, {"FunctionName": "mercadofresco-cobro"}, destino),
        *peticiones("ProcesarPedido", "sns", "Publish", {"TopicArn": tema}, destino),
        *peticiones("sns.amazonaws.com", "sqs", "SendMessage", {"QueueArn": _cola(plantilla, ERP_COLA)}, destino, tema),
        *peticiones(
            "events.amazonaws.com",
            "sqs",
            "SendMessage",
            {"QueueArn": _cola(plantilla, "ColaPedidos")},
            destino,
            plantilla.physical_ids["ReglaPedidoCreado"]["Arn"],
        ),
    ]


def test_the_template_allows_every_request_made_for_an_order_and_uses_the_kms_grants(
    plantilla: Template, transformada: dict[str, Any], destino: Destino
) -> None:
    # GIVEN the requests of a charge and its confirmation, those made on the callers' behalf included
    cuenta = _cuenta(plantilla, transformada)
    # WHEN they are decided against the template's roles and resource policies
    informe = comprobar(_flujo(plantilla, destino), cuenta)
    # THEN nothing is denied
    assert not informe.denegadas, informe.texto()
    # AND the KMS grants those requests needed are no longer "granted, never used"
    sin_uso = {(u.principal, u.sid) for u in informe.sin_uso}
    necesarias = {
        ("CobroFunction", "EncryptedRecordsAndSecrets"),
        ("ProcesarPedido", "EncryptedQueuesAndTopic"),
        ("DatosKey", "AccountAdministers"),
        ("DatosKey", "SnsTopicDeliversToEncryptedQueues"),
        ("DatosKey", "EventBridgeRulesDeliverToEncryptedQueues"),
        ("DatosKey", "CloudWatchLogsEncryptsLogGroups"),
        ("Consumidores/PoliticaColaErp", "SoloElTemaPedidoConfirmado"),
        ("PoliticaColaPedidos", "SoloLaReglaPedidoCreado"),
    }
    assert not necesarias & sin_uso, sorted(necesarias & sin_uso)
    # AND what no request needed is still listed (the alarms' statement: no alarm fired), and within a used
    # statement the action no request asked for (DynamoDB only decrypts the table key for its caller)
    assert ("DatosKey", "CloudWatchAlarmsPublishToEncryptedTopic") in sin_uso
    parciales = {(u.principal, u.sid): u.acciones for u in informe.acciones_sin_uso}
    assert parciales[("CobroFunction", "EncryptedRecordsAndSecrets")] == ("kms:GenerateDataKey",)


_LOGS = f"logs.{REGION}.amazonaws.com"


@pytest.mark.parametrize(
    ("unidad", "quitar", "denegadas"),
    [
        # the cobro role without kms:Decrypt: DynamoDB cannot decrypt the table key for it
        (
            "",
            lambda t: sin_accion(t, "CobroFunctionRole", "EncryptedRecordsAndSecrets", "kms:Decrypt"),
            {("CobroFunction", "kms:Decrypt")},
        ),
        # the ERP queue policy without its SNS statement: the fan-out to the ERP queue is refused
        (
            "Consumidores",
            lambda t: sin_sentencia(t, "PoliticaColaErp", "PolicyDocument", "SoloElTemaPedidoConfirmado"),
            {("sns.amazonaws.com", "sqs:SendMessage")},
        ),
        # the key policy without SNS: the topic cannot get the data key for the encrypted queue
        (
            "",
            lambda t: sin_sentencia(t, "DatosKey", "KeyPolicy", "SnsTopicDeliversToEncryptedQueues"),
            {("sns.amazonaws.com", "kms:GenerateDataKey"), ("sns.amazonaws.com", "kms:Decrypt")},
        ),
        # the key policy without EventBridge: the rule's delivery to the encrypted order queue fails
        (
            "",
            lambda t: sin_sentencia(t, "DatosKey", "KeyPolicy", "EventBridgeRulesDeliverToEncryptedQueues"),
            {("events.amazonaws.com", "kms:GenerateDataKey"), ("events.amazonaws.com", "kms:Decrypt")},
        ),
        # the key policy not trusting the account: no role's kms grant counts any more (KMS's rule)
        (
            "",
            lambda t: sin_sentencia(t, "DatosKey", "KeyPolicy", "AccountAdministers"),
            {
                ("CobroFunction", "kms:Decrypt"),
                ("ProcesarPedido", "kms:GenerateDataKey"),
                ("ProcesarPedido", "kms:Decrypt"),
            },
        ),
        # the key policy without CloudWatch Logs: the function's encrypted log group cannot be written
        (
            "",
            lambda t: sin_sentencia(t, "DatosKey", "KeyPolicy", "CloudWatchLogsEncryptsLogGroups"),
            {(_LOGS, "kms:GenerateDataKey")},
        ),
    ],
    ids=[
        "cobro-kms-decrypt",
        "queue-policy-sns",
        "key-policy-sns",
        "key-policy-events",
        "key-policy-account",
        "key-policy-logs",
    ],
)
def test_removing_a_grant_a_request_made_on_a_callers_behalf_needs_fails_the_check(
    plantilla: Template,
    transformada: dict[str, Any],
    destino: Destino,
    unidad: str,
    quitar: Any,
    denegadas: set[tuple[str, str]],
) -> None:
    # GIVEN the requests of an order, every one allowed by the template as it is
    flujo = _flujo(plantilla, destino)
    assert set(_decisiones(_cuenta(plantilla, transformada), flujo).values()) == {Decision.PERMITIDA}
    # WHEN they are decided against the template without one grant
    decisiones = _decisiones(_cuenta(plantilla, transformada, unidad, quitar), flujo)
    # THEN exactly the requests that grant allowed are denied
    assert {k for k, d in decisiones.items() if d is not Decision.PERMITIDA} == denegadas


def test_api_gateway_invokes_the_store_through_the_functions_permission_for_that_route_only(
    plantilla: Template, transformada: dict[str, Any], destino: Destino
) -> None:
    # GIVEN API Gateway calling the store function for POST /pedidos, and for a route the API does not have
    unidad, funcion = plantilla.locate("Tienda/TiendaFunction")
    tienda = unidad.physical_ids[funcion]["Arn"]
    api = f"arn:aws:execute-api:{REGION}:{CUENTA}:a1b2c3d4e5/$default"

    def invocar(ruta: str) -> list[tuple[str, Solicitud]]:
        return peticiones(
            "apigateway.amazonaws.com", "lambda", "Invoke", {"FunctionName": tienda}, destino, f"{api}/{ruta}"
        )

    # WHEN decided against the function's permissions (AWS::Lambda::Permission, as Lambda keeps them)
    informe = comprobar([*invocar("POST/pedidos"), *invocar("DELETE/pedidos")], _cuenta(plantilla, transformada))
    # THEN the route SAM granted is allowed, the other denied, and the permission it used is not unused
    assert [d.solicitud.claves["aws:sourcearn"] for d in informe.denegadas] == [(f"{api}/DELETE/pedidos",)]
    sin_uso = {u.sid for u in informe.sin_uso if u.principal == "permisos de TiendaFunction"}
    assert sin_uso == {"TiendaFunctionConsultarPedidoPermission"}


def test_a_delivery_to_a_queue_the_stack_does_not_have_is_a_harness_tap_not_a_request(
    plantilla: Template, destino: Destino
) -> None:
    # GIVEN mf-demo's tap on the confirmation topic (a queue of its own, subscribed by the harness)
    tema = plantilla.physical_ids["TopicPedidoConfirmado"]["Ref"]
    grifo = arn("sqs", "mf-demo-grifo-avisos")
    # THEN SNS's delivery to it is nobody's request in the account, while the stack's own is
    assert peticiones("sns.amazonaws.com", "sqs", "SendMessage", {"QueueArn": grifo}, destino, tema) == []
    assert peticiones(
        "sns.amazonaws.com", "sqs", "SendMessage", {"QueueArn": _cola(plantilla, ERP_COLA)}, destino, tema
    )
