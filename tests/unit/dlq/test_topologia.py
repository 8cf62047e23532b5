"""The operator commands read queues, DLQs and consumers from the template, so a new consumer names itself once."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from mercadofresco_local.flujo import reparto
from mercadofresco_ops.dlq.grupos import registros_del_consumidor
from mercadofresco_ops.smoke import Nombres
from mercadofresco_ops.topologia import Topologia, dependencia_de_origen
from template_model import Template
from template_model import messaging as m

if TYPE_CHECKING:
    from pathlib import Path

PLANTILLA = textwrap.dedent(
    """
    AWSTemplateFormatVersion: "2010-09-09"
    Transform: AWS::Serverless-2016-10-31
    Parameters:
      NameSuffix:
        Type: String
        Default: ""
      CorreoPrincipalUrl:
        Type: String
        Default: https://correo.example
    Resources:
      ColaAvisosFallidos:
        Type: AWS::SQS::Queue
        Properties:
          QueueName: !Sub mf-avisos-fallidos${NameSuffix}
      ColaAvisos:
        Type: AWS::SQS::Queue
        Properties:
          QueueName: !Sub mf-avisos${NameSuffix}
          RedrivePolicy:
            deadLetterTargetArn: !GetAtt ColaAvisosFallidos.Arn
            maxReceiveCount: 5
      AvisosFunction:
        Type: AWS::Serverless::Function
        Properties:
          FunctionName: !Sub mf-avisos${NameSuffix}
          CodeUri: functions/avisos/
          Environment:
            Variables:
              CORREO_PRINCIPAL_URL: !Ref CorreoPrincipalUrl
          Handler: app.lambda_handler
          Runtime: python3.13
          Events:
            Cola:
              Type: SQS
              Properties:
                Queue: !GetAtt ColaAvisos.Arn
      Tema:
        Type: AWS::SNS::Topic
      SuscripcionAvisos:
        Type: AWS::SNS::Subscription
        Properties:
          TopicArn: !Ref Tema
          Protocol: sqs
          Endpoint: !GetAtt ColaAvisos.Arn
    """
)


def test_topologia_new_consumer_in_the_template_gives_its_dlq_and_log_group(tmp_path: Path) -> None:
    # GIVEN a template with one new consumer: its queue, its DLQ and its function
    ruta = tmp_path / "template.yaml"
    ruta.write_text(PLANTILLA)

    # WHEN the topology is read for a stage suffix
    topologia = Topologia(sufijo="-pre", ruta=ruta)

    # THEN its DLQ, the DLQ's source and the consumer's log group come from the template alone
    assert topologia.nombres_dlq() == ("mf-avisos-fallidos-pre",)
    assert topologia.origenes("ColaAvisosFallidos") == ["ColaAvisos"]
    assert topologia.registros_del_consumidor("ColaAvisos") == "/aws/lambda/mf-avisos-pre"
    assert topologia.patron("ColaAvisosFallidos", "QueueName").fullmatch("mf-avisos-fallidos-dev")["sufijo"] == "-dev"
    # AND the breaker behind its queue is the one provider its consumer calls
    assert topologia.dependencia_de_cola("ColaAvisos") == "correo-principal"
    # AND, subscribed to the topic, it is a fan-out flow (what the local run's balances and the campaign read)
    assert {cola: c.function for cola, c in reparto(Template(path=ruta)).items()} == {"ColaAvisos": "AvisosFunction"}


def test_topologia_reads_a_consumer_that_lives_in_a_nested_unit_by_its_path(tmp_path: Path) -> None:
    # GIVEN the same consumer as a nested unit (decision 0130), the root passing its suffix and provider
    (tmp_path / "unidades").mkdir()
    (tmp_path / "unidades" / "avisos.yaml").write_text(PLANTILLA.replace('Default: ""', "Default: -nunca"))
    (tmp_path / "template.yaml").write_text(
        textwrap.dedent(
            """
            Parameters:
              NameSuffix: {Type: String, Default: ""}
            Resources:
              Avisos:
                Type: AWS::Serverless::Application
                Properties:
                  Location: unidades/avisos.yaml
                  Parameters:
                    NameSuffix: !Ref NameSuffix
                    CorreoPrincipalUrl: https://correo.example
            """
        )
    )

    # WHEN the topology is read for a stage suffix
    topologia = Topologia(sufijo="-pre", ruta=tmp_path / "template.yaml")

    # THEN the unit's DLQ, its source, the consumer's log group and breaker are found under the unit's path,
    # with the suffix the root passed
    assert topologia.dlqs == ("Avisos/ColaAvisosFallidos",)
    assert topologia.nombres_dlq() == ("mf-avisos-fallidos-pre",)
    assert topologia.origenes("Avisos/ColaAvisosFallidos") == ["Avisos/ColaAvisos"]
    assert topologia.registros_del_consumidor("Avisos/ColaAvisos") == "/aws/lambda/mf-avisos-pre"
    assert topologia.dependencia_de_cola("Avisos/ColaAvisos") == "correo-principal"
    assert topologia.tipo("Avisos/ColaAvisos") == "AWS::SQS::Queue"
    patron = topologia.patron("Avisos/ColaAvisosFallidos", "QueueName")
    assert patron.fullmatch("mf-avisos-fallidos-dev")["sufijo"] == "-dev"


def test_flows_of_the_project_template_come_from_its_wiring() -> None:
    # GIVEN the project's template  WHEN its flows are read
    plantilla = Topologia().plantilla
    # THEN the workflow's input is the queue the pipe reads, and the fan-out the topic's subscribers that call a
    # provider (the projection calls none)
    assert m.workflow_queues(plantilla) == {"ColaPedidos": "ProcesarPedido"}
    assert {cola: c.function for cola, c in reparto(plantilla).items()} == {
        "Consumidores/ColaErp": "Consumidores/ErpFunction",
        "Consumidores/ColaCorreo": "Consumidores/CorreoFunction",
    }
    assert {c: m.dead_letter_queue_path(*plantilla.locate(c)) for c in reparto(plantilla)} == {
        "Consumidores/ColaErp": "ColaErpFallidos",
        "Consumidores/ColaCorreo": "ColaCorreoFallidos",
    }


def test_dependencia_de_origen_per_source_queue_of_the_project_template() -> None:
    # GIVEN the project's source queues, with and without a stage suffix  WHEN each is asked for its breaker
    # THEN the consumer's one provider names it; the e-mail's consumer has a fallback provider, so none
    assert dependencia_de_origen("cola-mercadofresco-pedidos") == "pasarela"  # through the pipe's state machine
    assert dependencia_de_origen("mercadofresco-erp-pre") == "erp"
    assert dependencia_de_origen("cola-mercadofresco-stock.fifo") == "erp"
    assert dependencia_de_origen("mercadofresco-correo") is None
    assert dependencia_de_origen("mercadofresco-erp-fallidos") is None  # a DLQ, not the ERP queue of a stage


def test_registros_del_consumidor_per_dlq_of_the_project_template_with_and_without_suffix() -> None:
    # GIVEN the project's DLQs  WHEN each is asked for its consumer's log group
    # THEN the answer follows the template's wiring: function log groups, the pipe's state machine
    assert registros_del_consumidor("mercadofresco-erp-fallidos") == "/aws/lambda/mercadofresco-erp"
    assert registros_del_consumidor("mercadofresco-stock-fallidos-pre.fifo") == "/aws/lambda/mercadofresco-erp-pre"
    assert registros_del_consumidor("mercadofresco-proyeccion-fallidos") == "/aws/lambda/mercadofresco-proyeccion"
    assert registros_del_consumidor("mercadofresco-pedidos-fallidos") == (
        "/aws/vendedlogs/states/mercadofresco-procesar-pedido"
    )
    assert registros_del_consumidor("otra-cola").startswith("los registros del consumidor")
    assert registros_del_consumidor("mercadofresco-erp-fallidos-dev") == "/aws/lambda/mercadofresco-erp-dev"


def test_smoke_names_every_dlq_of_the_template() -> None:
    # GIVEN the smoke test's names for a stage  WHEN its DLQs are listed
    nombres = Nombres("-pre")

    # THEN they are every queue the template names as a dead-letter target, suffixed
    assert set(nombres.colas_fallidos) == {
        f"mercadofresco-{c}-fallidos-pre" for c in ("pedidos", "erp", "correo", "carritos", "proyeccion")
    } | {"mercadofresco-stock-fallidos-pre.fifo"}
    assert nombres.maquina == "mercadofresco-procesar-pedido-pre"
    assert nombres.tabla_idempotencia == "mercadofresco-idempotencia-pre"
