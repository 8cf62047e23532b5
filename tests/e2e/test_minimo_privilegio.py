"""Least privilege proven by execution: every AWS request of a local run is allowed by its principal's role.

A small ``normal`` run (orders through the store, the relay, the pipe, the state machine, the
consumers), plus the sample events of the paths a healthy run does not take (a stock
release, the "not confirmed" e-mail, a refund, a cancelled order's projection), with the
request recorder installed. Each request (action, ARN, ``dynamodb:LeadingKeys``...) is then
evaluated against the role the *transformed* template gives its function or the state
machine, and against the resource's own policy: moto checks no IAM, so this is where a
condition that denies what the code does shows up before an account does. The requests AWS
makes because of the run are checked too (issue 35): the KMS requests SQS, SNS, DynamoDB and
CloudWatch Logs make for a caller on the data key, the deliveries SNS and EventBridge make to
queues as themselves (queue policies, key policy), Lambda's log writes for each invocation.
"""

from __future__ import annotations

import pytest

from tests.conftest import load_event
from tests.unit.iam.plantillas import sin_accion, sin_sentencia

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

# The paths a healthy run does not take, each through its function's own sample event.
_CAMINOS_SIN_PEDIDO = {
    "Consumidores/ErpFunction": "erp-liberacion-stock.json",
    "Consumidores/CorreoFunction": "correo-pedido-no-confirmado.json",
    "CobroFunction": "cobro-reembolso.json",
    "Tienda/ProyeccionFunction": "proyeccion-pedido-cancelado.json",
}


def test_every_request_of_a_local_run_is_allowed_by_its_role() -> None:
    from least_privilege.comprobacion import Cuenta, comprobar
    from least_privilege.local import comprobar_ejecucion, destino, registro_local
    from least_privilege.roles import plantilla_transformada, resolver
    from mercadofresco_local.demo import ESCENARIOS
    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion
    from sam_emulator.template import Template

    # GIVEN the recorder installed before the run builds any client
    esc = ESCENARIOS["normal"]
    with registro_local(Template()) as registro, Sesion("normal", compresion=esc.compresion) as sesion:
        # WHEN a few orders go through the whole flow, and the other paths get their sample events
        esc.correr(sesion, 3, esc.ritmo_por_s, Informe("normal"), lambda *_: None)
        assert sesion.runtime is not None
        errores = {}
        for logical_id, evento in _CAMINOS_SIN_PEDIDO.items():
            try:
                sesion.runtime.functions.by_id[logical_id].invoke(load_event(evento))
            except Exception as exc:  # an outcome (e.g. an open circuit) is not what is checked here: the calls are
                errores[logical_id] = repr(exc)
        plantilla = sesion.runtime.template
        informe = comprobar_ejecucion(registro, plantilla)
        solicitudes = registro.solicitudes(destino(plantilla))
        claves = {dict(s.contexto).get("dynamodb:LeadingKeys", ("",))[0].split(":", 1)[0] for _, s in solicitudes}
        transformada = plantilla_transformada(plantilla.path, plantilla.region)
        # the same requests against the template without one grant each of them needs
        sin_descifrar = comprobar(
            solicitudes,
            Cuenta.de_resuelta(
                resolver(
                    plantilla,
                    sin_accion(transformada, "CobroFunctionRole", "EncryptedRecordsAndSecrets", "kms:Decrypt"),
                )
            ),
        )
        # (the ERP queue's policy is the consumers' unit's)
        sin_politica = resolver(plantilla, transformada)
        consumidores = sin_politica.unidades["Consumidores"]
        consumidores.__dict__["doc"] = sin_sentencia(
            consumidores.doc, "PoliticaColaErp", "PolicyDocument", "SoloElTemaPedidoConfirmado"
        )
        sin_sns = comprobar(solicitudes, Cuenta.de_resuelta(sin_politica))
    print(informe.texto())  # the unused grants, shown with -s or when the test fails

    # THEN every function that ran and the state machine made recorded requests (the hook saw them)
    principales = {llamada.principal for llamada in registro.llamadas()}
    assert {
        "ProcesarPedido",
        "PipePedidos",
        "ReclamoFunction",
        "CobroFunction",
        "Consumidores/ErpFunction",
        "Consumidores/CorreoFunction",
    } <= principales
    # AND the consumers' own polling (Lambda's event source mappings use the function's role) was seen
    acciones = {(p, s.accion) for p, s in solicitudes}
    assert {
        ("Consumidores/ErpFunction", "sqs:ReceiveMessage"),
        ("Consumidores/CorreoFunction", "sqs:DeleteMessage"),
    } <= acciones
    # AND the idempotency keys of the paths that used to be denied were really written
    assert {"liberacion", "correo-no-confirmado", "pedido", "cobro"} <= claves, (sorted(claves), errores)
    # AND each caller's signed calls to its sandbox provider (the stand-ins verified every signature)
    # were lambda:InvokeFunctionUrl and lambda:InvokeFunction on that simulator (a URL created since October
    # 2025 authorises both), through its grants, which are therefore not unused
    simuladores = {
        (p, s.accion, s.recurso.rsplit(":", 1)[-1])
        for p, s in solicitudes
        if s.accion in {"lambda:InvokeFunctionUrl", "lambda:InvokeFunction"} and ":function:simulador-" in s.recurso
    }
    assert simuladores == {
        (p, accion, simulador)
        for p, simulador in (
            ("CobroFunction", "simulador-pasarela"),
            ("Consumidores/ErpFunction", "simulador-erp"),
            ("Consumidores/CorreoFunction", "simulador-correo"),
        )
        for accion in ("lambda:InvokeFunctionUrl", "lambda:InvokeFunction")
    }
    assert not [(p.nombre, p.rechazadas) for p in sesion.proveedores.todos if p.rechazadas or p.verificador is None]
    assert not [u for u in informe.sin_uso if u.sid.startswith("SandboxProvider")], informe.texto()
    # AND what AWS did because of the run was checked: SNS's fan-out to the ERP queue and the order rule's
    # delivery as those services, the data key asked for a caller by SQS and DynamoDB (with its role and the
    # key policy), by SNS for its delivery, by CloudWatch Logs for a function's encrypted log group
    assert {
        ("sns.amazonaws.com", "sqs:SendMessage"),
        ("events.amazonaws.com", "sqs:SendMessage"),
        ("sns.amazonaws.com", "kms:GenerateDataKey"),
        ("Consumidores/ErpFunction", "kms:Decrypt"),
        ("CobroFunction", "kms:Decrypt"),
        ("ProcesarPedido", "kms:GenerateDataKey"),
        ("logs.eu-south-2.amazonaws.com", "kms:GenerateDataKey"),
        ("CobroFunction", "logs:PutLogEvents"),
    } <= acciones, sorted(acciones)
    # AND the KMS grants and the resource-policy statements those requests needed are used, not listed as unused
    sin_uso = {(u.principal, u.sid) for u in informe.sin_uso}
    assert (
        not {
            ("CobroFunction", "EncryptedRecordsAndSecrets"),
            ("Consumidores/ErpFunction", "EncryptedQueues"),
            ("Consumidores/CorreoFunction", "EncryptedQueues"),
            ("ProcesarPedido", "EncryptedQueuesAndTopic"),
            ("PipePedidos", "DecryptTheOrderQueue"),
            ("DatosKey", "SnsTopicDeliversToEncryptedQueues"),
            ("DatosKey", "EventBridgeRulesDeliverToEncryptedQueues"),
            ("DatosKey", "CloudWatchLogsEncryptsLogGroups"),
            ("Consumidores/PoliticaColaErp", "SoloElTemaPedidoConfirmado"),
            ("PoliticaColaPedidos", "SoloLaReglaPedidoCreado"),
        }
        & sin_uso
    ), informe.texto()
    # AND no request is one its role or its resource would deny
    assert not informe.sin_rol, informe.texto()
    assert not informe.denegadas, informe.texto()
    # AND without the cobro role's kms:Decrypt, or the ERP queue policy's SNS statement, the same run fails
    assert {(d.principal, d.solicitud.accion) for d in sin_descifrar.denegadas} == {("CobroFunction", "kms:Decrypt")}
    assert {(d.principal, d.solicitud.accion) for d in sin_sns.denegadas} == {("sns.amazonaws.com", "sqs:SendMessage")}
