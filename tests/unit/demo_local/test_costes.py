"""Cost per order: the run's counts times the price file, per service and for Express (issue 14)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from mercadofresco_informes import costes
from mercadofresco_informes.latencias import EjecucionLeida, Invocacion

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def _evento(tipo: str, s: float, **detalles: object) -> dict:
    return {"type": tipo, "timestamp": T0 + timedelta(seconds=s), **detalles}


def _programada(servicio: str, accion: str, s: float) -> dict:
    return _evento("TaskScheduled", s, taskScheduledEventDetails={"resourceType": servicio, "resource": accion})


def test_contar_historias_transitions_integrations_and_duration() -> None:
    # GIVEN one execution: 3 states entered, an SQS send, an SNS publish, a DynamoDB update; 1.25 s long
    historia = (
        _evento("ExecutionStarted", 0),
        _evento("TaskStateEntered", 0.1),
        _programada("sqs", "sendMessage", 0.2),
        _evento("PassStateEntered", 0.3),
        _programada("sns", "publish", 0.4),
        _evento("TaskStateEntered", 0.5, stateEnteredEventDetails={"name": "Confirmado"}),
        _programada("dynamodb", "updateItem", 0.6),
        _evento("ExecutionSucceeded", 1.25),
    )
    cuentas = costes.Cuentas(pedidos=1)
    # WHEN counted
    costes.contar_historias(cuentas, [EjecucionLeida(("P1",), historia)])
    # THEN transitions are the states entered; the pipe's request and its queue's 3 requests are added
    assert (cuentas.transiciones, cuentas.ejecuciones, cuentas.duraciones_ejecucion_s) == (3, 1, [1.25])
    assert (cuentas.sqs, cuentas.sns, cuentas.dynamodb_escrituras, cuentas.pipes) == (1 + 3, 1, 1, 1)
    # AND per path, by the last state entered: the report's transitions per confirmed order
    assert (cuentas.transiciones_por_final, cuentas.ejecuciones_por_final) == ({"Confirmado": 3}, {"Confirmado": 1})


def test_contar_invocaciones_gb_s_deliveries_and_calls_without_putevents() -> None:
    # GIVEN an ERP batch of 2 records (one notice delivered by SNS, one reservation the workflow sent)
    invs = [
        Invocacion("ErpFunction", 0.0, 0.0101, False, 512, 2, (("P1", "PedidoConfirmado"), ("P1", "ReservaStock"))),
        Invocacion("Outbox/OutboxFunction", 0.0, 1.0, False, 1024, 0, ()),
    ]
    llamadas = Counter(
        {("ErpFunction", "dynamodb", "PutItem"): 2, ("ErpFunction", "dynamodb", "GetItem"): 1,
         ("Outbox/OutboxFunction", "events", "PutEvents"): 3}
    )  # fmt: skip
    cuentas = costes.Cuentas(pedidos=1)
    # WHEN counted
    costes.contar_invocaciones(cuentas, invs, llamadas)
    # THEN GB-s use the billed ms (11 ms x 0.5 GB + 1 s x 1 GB); SQS = 1 delivery + receive + delete
    assert cuentas.gb_s["ErpFunction"] == pytest.approx(0.011 * 0.5)
    assert cuentas.gb_s["Outbox/OutboxFunction"] == pytest.approx(1.0)
    assert cuentas.sqs == 3
    assert (cuentas.dynamodb_escrituras, cuentas.dynamodb_lecturas) == (2, 1)
    assert cuentas.eventbridge == 0  # per event (outbox rows), never per PutEvents call


def test_partidas_step_functions_cost_matches_lesson_at_nine_transitions() -> None:
    # GIVEN 1,000 orders at 9 transitions each (what the lesson's 54 USD/month implies)
    precios = costes.cargar_precios()
    cuentas = costes.Cuentas(pedidos=1000, transiciones=9000)
    # WHEN priced
    sfn = next(p for p in costes.partidas(cuentas, precios) if p.servicio == "step_functions")
    # THEN 0.225 USD per 1,000 orders and 54 USD per month at 240,000 orders
    assert sfn.usd_por_1000 == pytest.approx(0.225)
    assert sfn.usd_mes == pytest.approx(54.0)
    assert sfn.leccion_usd_mes == 54.0


def test_express_rounds_each_execution_up_to_100_ms_at_64_mb() -> None:
    # GIVEN 2 orders, 2 executions of 0.25 s and 0.05 s
    cuentas = costes.Cuentas(pedidos=2, ejecuciones=2, duraciones_ejecucion_s=[0.25, 0.05])
    precios = costes.cargar_precios()
    p = precios["precios_usd"]
    # WHEN priced as Express
    por_pedido = costes.express_por_pedido(cuentas, precios)
    # THEN (2 requests + (0.3 + 0.1) s x 1/16 GB) / 2 orders
    esperado = (2 * p["step_functions_express_por_peticion"] + 0.4 / 16 * p["step_functions_express_por_gb_s"]) / 2
    assert por_pedido == pytest.approx(esperado)


def test_cargar_precios_missing_date_is_a_clear_error(tmp_path) -> None:
    # GIVEN a price file without the date it was read
    ruta = tmp_path / "precios.json"
    datos = json.loads(costes.PRECIOS.read_text())
    del datos["leidos_el"]
    ruta.write_text(json.dumps(datos))
    # THEN loading it says what is missing
    with pytest.raises(ValueError, match="leidos_el"):
        costes.cargar_precios(ruta)


def test_scheduled_relay_priced_per_month_not_per_order() -> None:
    # GIVEN a run (compressed x30) with 10 orders: 10 cobro invocations and 4 relay invocations of 1 GB-s each
    cuentas = costes.Cuentas(pedidos=10, compresion=30.0)
    cuentas.invocaciones.update({"CobroFunction": 10, "Outbox/OutboxFunction": 4})
    cuentas.gb_s.update({"CobroFunction": 0.5, "Outbox/OutboxFunction": 4.0})
    precios = costes.cargar_precios()
    p = precios["precios_usd"]
    # WHEN priced
    filas = {f.servicio: f for f in costes.partidas(cuentas, precios)}
    # THEN the per-order Lambda line has only cobro; the relay is 43,800 runs a month at 30 GB-s each
    assert filas["lambda"].cantidad_por_pedido == 1.0
    (programadas,) = [f for s, f in filas.items() if s.startswith("lambda programadas")]
    assert programadas.usd_mes == pytest.approx(43_800 * (p["lambda_por_peticion"] + 30.0 * p["lambda_arm64_por_gb_s"]))
    assert programadas.usd_por_1000 == 0.0


def test_express_at_its_five_minute_maximum_bounds_the_cost() -> None:
    # GIVEN one order whose execution took 2 s
    cuentas = costes.Cuentas(pedidos=1, ejecuciones=1, duraciones_ejecucion_s=[2.0])
    precios = costes.cargar_precios()
    # THEN pricing it at Express's 300 s maximum costs more than the measured duration, never less
    assert costes.express_por_pedido(cuentas, precios, costes.EXPRESS_MAX_S) > costes.express_por_pedido(
        cuentas, precios
    )


def test_the_scheduled_functions_priced_per_month_are_the_ones_the_templates_schedules_invoke() -> None:
    from template_model import Template

    # GIVEN every function a schedule of the stack invokes, by the stack path the local run records it under
    programadas = Template().paths(
        lambda t: [
            t.resources[lid]["Properties"]["Target"]["Arn"]["Fn::GetAtt"][0]
            for lid in t.of_type("AWS::Scheduler::Schedule")
        ]
    )
    # THEN the cost report prices exactly those per month, not per order (a moved function would be billed per order)
    assert sorted(programadas) == sorted(costes.PROGRAMADAS_POR_MES)
