"""``mf-dlq reprocesar`` (receive–send–delete) on moto: filter, transform, rate, FIFO, refusals."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from dlq_colas import crear_par, drenar, llenar, total
from mercadofresco_ops.dlq import cli, reproceso
from mercadofresco_ops.dlq.conexion import resolver_cola
from mercadofresco_ops.dlq.mensajes import unwrap
from mercadofresco_ops.dlq.tasa import TokenBucket

from tests.conftest import RelojPrueba

pytestmark = pytest.mark.integration

DLQ = "mercadofresco-pedidos-fallidos"
MOTIVO = {
    "mf-motivo": {"DataType": "String", "StringValue": "version-desconocida"},
    "mf-cola-origen": {"DataType": "String", "StringValue": "x"},
    "traza": {"DataType": "String", "StringValue": "t-1"},
}


def _v2(n: int) -> dict:
    return {"version": 2, "pedido_id": f"p-{n}", "cliente_id": f"c-{n}", "importe": {"centimos": 4820, "moneda": "EUR"}}


def test_reprocesar_with_filter_and_transform_moves_exactly_the_filtered_messages(sqs, colas, capsys) -> None:
    # GIVEN 8 version-2 orders (half inside an SNS envelope) and 4 version-1 orders in the DLQ
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [_v2(n) for n in range(4)], MessageAttributes=MOTIVO)
    llenar(sqs, dlq, [{"Type": "Notification", "Message": json.dumps(_v2(n))} for n in range(4, 8)])
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{n}", "importe_centimos": 1} for n in range(8, 12)])

    # WHEN reprocessed with a filter on version 2 and the v2→v1 adapter
    codigo = cli.main(
        [
            "reprocesar",
            "--cola",
            DLQ,
            "--tasa",
            "100",
            "--json",
            "--filtro",
            "version == `2`",
            "--transformar",
            "mercadofresco_ops.dlq.adaptadores:v2_a_v1",
        ]
    )

    # THEN exactly the 8 version-2 orders reach the source, as version 1, in their envelopes
    informe = json.loads(capsys.readouterr().out)
    movidos = drenar(sqs, origen)
    eventos = {unwrap(m["Body"])[0]["pedido_id"]: m for m in movidos}
    assert codigo == cli.OK
    assert (informe["movidos"], informe["omitidos"]) == (8, 4)
    assert sorted(eventos) == sorted(f"p-{n}" for n in range(8))
    assert all(unwrap(m["Body"])[0]["version"] == 1 for m in movidos)
    assert unwrap(eventos["p-0"]["Body"])[0]["importe_centimos"] == 4820
    assert sum(unwrap(m["Body"])[1].tipo == "sns" for m in movidos) == 4
    # the consumer's DLQ reason is stripped, the message's own attributes travel
    assert set(eventos["p-0"]["MessageAttributes"]) == {"traza"}
    # and the 4 version-1 orders are still in the DLQ, visible again at once
    quedan = drenar(sqs, dlq)
    assert sorted(json.loads(m["Body"])["pedido_id"] for m in quedan) == sorted(f"p-{n}" for n in range(8, 12))


def test_reprocesar_keeps_the_rate_measured_on_the_sends(sqs, colas) -> None:
    # GIVEN 30 messages in the DLQ and a client that timestamps every SendMessage as it leaves, on the
    # bucket's clock (an injected one: the bucket's sleeps move it, a busy machine does not)
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{n}"} for n in range(30)])
    reloj = RelojPrueba()
    envios: list[float] = []
    # The first event of the API call: right after the bucket let the send go, before serialising.
    sqs.meta.events.register("before-parameter-build.sqs.SendMessage", lambda **_: envios.append(reloj.t))
    plan = reproceso.Plan(resolver_cola(sqs, DLQ), resolver_cola(sqs, origen))

    # WHEN reprocessed at 10/s
    resultado = reproceso.reprocesar(sqs, plan, TokenBucket(10, reloj=reloj, dormir=reloj.avanzar))

    # THEN all 30 moved; no one-second window holds more than 10 sends; 30 sends take 3 s ± 10 %
    assert resultado.movidos == 30 == len(envios) == total(sqs, origen)
    por_segundo = max(sum(1 for u in envios if t <= u < t + 1) for t in envios)
    duracion_s = (envios[-1] - envios[0]) + 1 / 10  # 30 sends = 29 gaps + the one interval after the last
    assert por_segundo <= 10, [round(u - envios[0], 4) for u in envios]
    assert duracion_s == pytest.approx(30 / 10, rel=0.10)
    assert total(sqs, dlq) == 0


def test_reprocesar_fifo_keeps_group_and_order(sqs, colas, capsys) -> None:
    # GIVEN the stock FIFO DLQ with two skus' reservations, in order within each group
    origen, dlq = colas["stock"]
    for n in range(6):
        for sku in ("sku-A", "sku-B"):
            llenar(
                sqs,
                dlq,
                [{"version": 1, "sku": sku, "n": n}],
                MessageGroupId=sku,
                MessageDeduplicationId=f"reserva:{sku}:{n}",
            )

    # WHEN reprocessed (source found through the FIFO source's RedrivePolicy)
    codigo = cli.main(["reprocesar", "--cola", "mercadofresco-stock-fallidos.fifo", "--tasa", "100"])

    # THEN every message is in the source FIFO, in its group, in its order
    movidos = drenar(sqs, origen)
    por_grupo: dict[str, list[int]] = {}
    for m in movidos:
        cuerpo = json.loads(m["Body"])
        assert m["Attributes"]["MessageGroupId"] == cuerpo["sku"]
        por_grupo.setdefault(cuerpo["sku"], []).append(cuerpo["n"])
    assert codigo == cli.OK
    assert por_grupo == {"sku-A": list(range(6)), "sku-B": list(range(6))}
    assert total(sqs, dlq) == 0


def test_reprocesar_dry_run_moves_nothing(sqs, colas, capsys) -> None:
    # GIVEN 5 messages in the DLQ
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [_v2(n) for n in range(5)])

    # WHEN a dry run with the adapter
    codigo = cli.main(
        [
            "reprocesar",
            "--cola",
            DLQ,
            "--simulacro",
            "--json",
            "--transformar",
            "mercadofresco_ops.dlq.adaptadores:v2_a_v1",
        ]
    )

    # THEN it reports 5 and shows transformed examples, but nothing left the DLQ
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.OK
    assert informe["movidos"] == 5 and informe["simulacro"] is True
    assert json.loads(informe["ejemplos"][0])["version"] == 1
    assert (total(sqs, dlq), total(sqs, origen)) == (5, 0)


def test_reprocesar_failing_transform_leaves_the_message_and_exits_1(sqs, colas, capsys) -> None:
    # GIVEN a version-1 order (the v2→v1 adapter refuses it) and an unreadable body
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": "p-1"}, "{roto"])

    # WHEN reprocessed with the adapter
    codigo = cli.main(
        ["reprocesar", "--cola", DLQ, "--json", "--transformar", "mercadofresco_ops.dlq.adaptadores:v2_a_v1"]
    )

    # THEN both stay in the DLQ with their errors, and the exit code says so
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.FALLO
    assert sorted(informe["fallidos"].values()) == [
        "cuerpo ilegible: no se puede transformar",
        "la transformación falló: ValueError: se esperaba version 2, no 1",
    ]
    assert (total(sqs, dlq), total(sqs, origen)) == (2, 0)


def test_reprocesar_refuses_while_a_source_queue_alarm_is_in_alarm(sqs, colas, capsys) -> None:
    # GIVEN the source queue's age alarm in ALARM (its consumer is not consuming)
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": "p-1"}])
    cloudwatch = boto3.client("cloudwatch", region_name="eu-south-2")
    cloudwatch.put_metric_alarm(
        AlarmName="mf-pedidos-antiguedad",
        Namespace="AWS/SQS",
        MetricName="ApproximateAgeOfOldestMessage",
        Dimensions=[{"Name": "QueueName", "Value": "cola-mercadofresco-pedidos"}],
        Statistic="Maximum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=300,
        ComparisonOperator="GreaterThanThreshold",
    )
    cloudwatch.set_alarm_state(AlarmName="mf-pedidos-antiguedad", StateValue="ALARM", StateReason="prueba")

    # WHEN reprocessed without --forzar
    codigo = cli.main(["reprocesar", "--cola", DLQ, "--json"])

    # THEN refused with the reason, nothing moved
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.FALLO
    assert informe["rechazado"] is True
    assert "mf-pedidos-antiguedad" in informe["comprobaciones"][0]["detalle"]
    assert (total(sqs, dlq), total(sqs, origen)) == (1, 0)

    # AND WHEN forced, it moves
    assert cli.main(["reprocesar", "--cola", DLQ, "--forzar", "--json"]) == cli.OK
    assert (total(sqs, dlq), total(sqs, origen)) == (0, 1)


def test_reprocesar_refuses_when_the_oldest_source_message_is_old(sqs, colas, capsys) -> None:
    # GIVEN CloudWatch showing the source's oldest message at 20 minutes
    _, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": "p-1"}])
    boto3.client("cloudwatch", region_name="eu-south-2").put_metric_data(
        Namespace="AWS/SQS",
        MetricData=[
            {
                "MetricName": "ApproximateAgeOfOldestMessage",
                "Value": 1200,
                "Unit": "Seconds",
                "Dimensions": [{"Name": "QueueName", "Value": "cola-mercadofresco-pedidos"}],
            }
        ],
    )

    # WHEN reprocessed
    codigo = cli.main(["reprocesar", "--cola", DLQ, "--json"])

    # THEN refused on that check
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.FALLO
    edad = informe["comprobaciones"][1]
    assert (edad["correcta"], edad["detalle"]) == (False, "1200 s (máximo tolerado 300 s)")
    assert total(sqs, dlq) == 1


def test_reprocesar_dlq_of_several_queues_without_destination_exits_2(sqs, colas, capsys) -> None:
    # GIVEN a second queue that also uses the orders DLQ
    _, dlq = colas["pedidos"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sqs.create_queue(
        QueueName="otra", Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 4})}
    )
    llenar(sqs, dlq, [{"version": 1}])

    # WHEN reprocessed without --destino
    codigo = cli.main(["reprocesar", "--cola", DLQ])

    # THEN exit 2 naming the ambiguity, nothing moved
    assert codigo == cli.USO
    assert "varias colas" in capsys.readouterr().err
    assert total(sqs, dlq) == 1


def test_reprocesar_without_redrive_uses_the_mf_cola_origen_attribute(sqs, capsys) -> None:
    # GIVEN a DLQ no RedrivePolicy points at, whose messages name their source queue
    origen, dlq = crear_par(sqs, "mercadofresco-correo", "mercadofresco-correo-fallidos")
    sqs.set_queue_attributes(QueueUrl=origen, Attributes={"RedrivePolicy": ""})
    llenar(
        sqs,
        dlq,
        [{"version": 1, "n": n} for n in range(3)],
        MessageAttributes={"mf-cola-origen": {"DataType": "String", "StringValue": origen}},
    )

    # WHEN reprocessed
    codigo = cli.main(["reprocesar", "--cola", "mercadofresco-correo-fallidos", "--json"])

    # THEN they went back to the queue the attribute names
    assert codigo == cli.OK
    assert json.loads(capsys.readouterr().out)["destino"] == "mercadofresco-correo"
    assert (total(sqs, dlq), total(sqs, origen)) == (0, 3)


def _alarma_en_alarm(nombre: str, metrica: str, dimensiones: list[dict]) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="eu-south-2")
    cloudwatch.put_metric_alarm(
        AlarmName=nombre,
        Namespace="MercadoFresco/Tienda",
        MetricName=metrica,
        Dimensions=dimensiones,
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=0,
        ComparisonOperator="GreaterThanThreshold",
    )
    cloudwatch.set_alarm_state(AlarmName=nombre, StateValue="ALARM", StateReason="prueba")


def test_reprocesar_refuses_while_the_source_pipe_workflow_is_failing(sqs, colas, capsys) -> None:
    # GIVEN the orders queue read by a Pipe into the workflow, whose failed-executions alarm is in ALARM
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": "p-1"}])
    arn_origen = sqs.get_queue_attributes(QueueUrl=origen, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    flujo = "arn:aws:states:eu-south-2:123456789012:stateMachine:mercadofresco-procesar-pedido"
    boto3.client("pipes", region_name="eu-south-2").create_pipe(
        Name="pipe-mf-pedidos", RoleArn="arn:aws:iam::123456789012:role/pipe", Source=arn_origen, Target=flujo
    )
    _alarma_en_alarm(
        "mercadofresco-procesar-pedido-fallidas", "ExecutionsFailed", [{"Name": "StateMachineArn", "Value": flujo}]
    )

    # WHEN reprocessed
    codigo = cli.main(["reprocesar", "--cola", DLQ, "--json"])

    # THEN refused, naming the workflow's alarm; nothing moved
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.FALLO
    assert "mercadofresco-procesar-pedido-fallidas" in informe["comprobaciones"][0]["detalle"]
    assert (total(sqs, dlq), total(sqs, origen)) == (1, 0)


def test_reprocesar_refuses_while_its_dependency_circuit_is_open(sqs, colas, capsys) -> None:
    # GIVEN the ERP breaker's open alarm in ALARM, and dead letters of the stock queue (consumed by the ERP function)
    origen, dlq = colas["stock"]
    llenar(sqs, dlq, [{"version": 1, "sku": "sku-A"}], MessageGroupId="sku-A", MessageDeduplicationId="d-1")
    _alarma_en_alarm("mercadofresco-circuito-abierto-erp", "CircuitoAbierto", [{"Name": "dependencia", "Value": "erp"}])

    # WHEN reprocessed
    codigo = cli.main(["reprocesar", "--cola", "mercadofresco-stock-fallidos.fifo", "--json"])

    # THEN refused: the ERP is still down, the reservations would only be deferred again
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.FALLO
    assert "mercadofresco-circuito-abierto-erp" in informe["comprobaciones"][0]["detalle"]
    assert (total(sqs, dlq), total(sqs, origen)) == (1, 0)


def test_reprocesar_aws_failure_midway_stops_reports_and_loses_nothing(reloj_sqs, sqs, colas) -> None:
    # GIVEN 10 messages, and SQS refusing the 4th SendMessage (e.g. KMS throttling on the source)
    origen, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{n}"} for n in range(10)])
    envios = []

    def cuarto_falla(**_):
        envios.append(1)
        if len(envios) == 4:
            return AWSResponse("https://sqs", 400, {}, None), {
                "ResponseMetadata": {"HTTPStatusCode": 400},
                "Error": {"Code": "KMS.ThrottlingException", "Message": "Rate exceeded"},
            }
        return None

    sqs.meta.events.register("before-call.sqs.SendMessage", cuarto_falla)
    plan = reproceso.Plan(resolver_cola(sqs, DLQ), resolver_cola(sqs, origen), visibilidad_s=1)

    # WHEN reprocessed
    resultado = reproceso.reprocesar(sqs, plan, TokenBucket(100))

    # THEN it stops saying why, after moving 3; the other 7 are still in the DLQ: none lost
    reloj_sqs.avanzar(1.2)  # the batch that was in flight becomes visible again (moto's clock)
    assert resultado.movidos == 3
    assert "KMS.ThrottlingException" in resultado.detenido
    assert (total(sqs, origen), total(sqs, dlq)) == (3, 7)
