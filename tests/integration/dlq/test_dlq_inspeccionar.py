"""``mf-dlq inspeccionar`` on moto: shows the messages, deletes none, hides them only 5 s."""

from __future__ import annotations

import json

import pytest
from dlq_colas import llenar, total
from mercadofresco_ops.dlq import cli

pytestmark = pytest.mark.integration


def test_inspeccionar_shows_the_messages_and_deletes_none(sqs, colas, capsys) -> None:
    # GIVEN a DLQ with 6 version-2 orders (one with the consumer's reason) and a malformed body
    _, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 2, "pedido_id": f"p-{i}"} for i in range(5)])
    llenar(
        sqs,
        dlq,
        [{"version": 2, "pedido_id": "p-5"}],
        MessageAttributes={
            "mf-motivo": {"DataType": "String", "StringValue": "version-desconocida"},
            "mf-detalle": {"DataType": "String", "StringValue": "version 2 no soportada"},
        },
    )
    llenar(sqs, dlq, ["{roto"])
    antes = total(sqs, dlq)

    # WHEN the on-call inspects up to 10
    codigo = cli.main(["inspeccionar", "--cola", "mercadofresco-pedidos-fallidos", "--json"])

    # THEN all 7 are shown with version, reason and receive count, and all 7 are still in the queue
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.OK
    assert total(sqs, dlq) == antes == 7
    assert len(informe["mensajes"]) == 7
    assert sorted(str(m["version"]) for m in informe["mensajes"]) == ["2"] * 6 + ["None"]
    assert [m["motivo"] for m in informe["mensajes"] if m["motivo"]] == ["version-desconocida"]
    assert [m["cuerpo_invalido"] for m in informe["mensajes"]].count(True) == 1
    assert {m["recepciones"] for m in informe["mensajes"]} == {1}


def test_inspeccionar_leaves_the_messages_visible_for_the_next_command(reloj_sqs, sqs, colas, capsys) -> None:
    # GIVEN a DLQ with 3 messages
    _, dlq = colas["pedidos"]
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{i}"} for i in range(3)])

    # WHEN inspected (each hidden 5 s while sampling) and, with no time passing, classified (runbook step 2)
    assert cli.main(["inspeccionar", "--cola", dlq, "--json"]) == cli.OK
    visibles = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    capsys.readouterr()
    assert cli.main(["clasificar", "--cola", dlq, "--json"]) == cli.OK

    # THEN the inspection released all 3 at once, and the classification saw all 3
    assert visibles["ApproximateNumberOfMessages"] == "3"
    assert json.loads(capsys.readouterr().out)["muestra"] == 3


def test_inspeccionar_unknown_queue_exits_2_with_one_line(sqs, capsys) -> None:
    # GIVEN / WHEN a queue name that does not exist
    codigo = cli.main(["inspeccionar", "--cola", "mercadofresco-no-existe"])

    # THEN exit 2, one line, no traceback
    err = capsys.readouterr().err
    assert codigo == cli.USO
    assert err == "mf-dlq: cola mercadofresco-no-existe: la cola no existe\n"


def test_inspeccionar_and_clasificar_table_survive_a_hostile_body(sqs, colas, capsys) -> None:
    # GIVEN two DLQs whose bodies and reasons contain console markup ("[/red]" would break a naive table)
    for clave in ("erp", "pedidos"):
        llenar(
            sqs,
            colas[clave][1],
            ['[/red] {"version": [bold'] * 3,
            MessageAttributes={
                "mf-motivo": {"DataType": "String", "StringValue": "json-invalido"},
                "mf-detalle": {"DataType": "String", "StringValue": "[/x] Expecting value"},
            },
        )

    # WHEN shown as tables for a person (one DLQ inspected, the other classified)
    inspeccion = cli.main(["inspeccionar", "--cola", "mercadofresco-erp-fallidos"])
    clasificacion = cli.main(["clasificar", "--cola", "mercadofresco-pedidos-fallidos"])

    # THEN both succeed and print the text literally
    salida = capsys.readouterr().out
    assert (inspeccion, clasificacion) == (cli.OK, cli.OK)
    assert "[/red]" in salida and "[/x] Expecting value" in salida
    assert "ENVENENADO" in salida
