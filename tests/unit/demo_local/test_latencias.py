"""Per-order stage latencies come from the recorded timestamps, stage by stage (issue 14)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from mercadofresco_informes import latencias as lat


def _t(s: float) -> datetime:
    return datetime.fromtimestamp(1_800_000_000 + s, tz=UTC)


def _salida(nombre: str, s: float) -> dict:
    return {"type": "TaskStateExited", "timestamp": _t(s), "stateExitedEventDetails": {"name": nombre}}


def test_history_marks_last_charge_exit_and_confirm_exit() -> None:
    # GIVEN a history where the first charge attempt failed and ReintentarCobro charged
    historia = [
        {"type": "ExecutionStarted", "timestamp": _t(1.0)},
        _salida("ReclamarPedido", 1.1),
        _salida("Cobrar", 1.5),
        _salida("ReintentarCobro", 2.5),
        _salida("Confirmar", 3.0),
        {"type": "ExecutionSucceeded", "timestamp": _t(3.2)},
    ]
    # WHEN the marks are read
    marcas = lat.marcas_de_historia(historia)
    # THEN start, the charge that counted and the confirmation are the recorded instants
    base = _t(0).timestamp()
    assert {k: round(v - base, 3) for k, v in marcas.items()} == {"iniciada": 1.0, "cobrado": 2.5, "confirmado": 3.0}


def test_history_charge_mark_ignores_the_refunds_re_ask() -> None:
    # GIVEN a charge that was confirmed by the gateway, a later step that failed, and a refund asked again
    # (Reconsultar serves both operations: after Reembolsar it asks about the refund)
    historia = [
        {"type": "ExecutionStarted", "timestamp": _t(1.0)},
        _salida("Cobrar", 1.5),
        {"type": "TaskStateEntered", "timestamp": _t(2.0), "stateEnteredEventDetails": {"name": "Reembolsar"}},
        _salida("Reembolsar", 2.5),
        _salida("Reconsultar", 140.0),
    ]
    # WHEN the marks are read THEN the charge is the charge's exit, not the refund's re-ask
    base = _t(0).timestamp()
    assert {k: round(v - base, 3) for k, v in lat.marcas_de_historia(historia).items()} == {
        "iniciada": 1.0, "cobrado": 1.5,
    }  # fmt: skip


def _registro(tipo: str, pedido_id: str) -> dict:
    cuerpo = {"tipo": tipo, "version": 1, "pedido_id": pedido_id}
    return {"eventSource": "aws:sqs", "body": json.dumps(cuerpo)}


def test_consumers_marks_first_successful_confirmation_per_order_and_function() -> None:
    # GIVEN an ERP invocation that failed, its retry that succeeded, a stock reservation and an e-mail
    def inv(funcion: str, inicio: float, error: bool, *registros: dict) -> lat.Invocacion:
        evento = {"Records": list(registros)}
        return lat.Invocacion(funcion, inicio, 0.5, error, 512, len(registros), tuple(lat.pedidos_de(evento)))

    invocaciones = [
        inv("ErpFunction", 10.0, True, _registro("PedidoConfirmado", "P1")),
        inv("ErpFunction", 20.0, False, _registro("PedidoConfirmado", "P1")),
        inv("ErpFunction", 5.0, False, _registro("ReservaStock", "P1")),
        inv("CorreoFunction", 12.0, False, _registro("PedidoConfirmado", "P1")),
    ]
    # WHEN the consumers' marks are computed
    marcas = lat.marcas_de_consumidores(invocaciones, ["ErpFunction", "CorreoFunction"])
    # THEN the ERP mark is the end of the successful retry, not the failure nor the reservation
    assert marcas == {"P1": {"ErpFunction": 20.5, "CorreoFunction": 12.5}}


def test_resumir_stage_percentiles_only_over_orders_with_both_ends() -> None:
    # GIVEN 100 orders whose bus stage took 1..100 ms, one of them never published
    marcas = [lat.Marcas(f"P{i}", creado=0.0, publicado=i / 1000) for i in range(1, 101)]
    marcas.append(lat.Marcas("P-sin-publicar", creado=0.0))
    # WHEN summarised
    (fila,) = lat.resumir(marcas)
    # THEN nearest-rank p50/p99/max over the 100 that have both ends
    assert (fila.etapa, fila.n) == ("commit → en el bus", 100)
    assert (fila.p50_s, fila.p99_s, fila.max_s) == (0.05, 0.099, 0.1)


def test_avisado_needs_every_consumer_of_the_fan_out() -> None:
    # GIVEN an order whose e-mail went out but whose ERP notice did not
    marcas = lat.Marcas("P1", creado=0.0, confirmado=1.0, reparto={"ErpFunction": None, "CorreoFunction": 2.0})
    # THEN it has no end-to-end figure: the order is not done
    assert marcas.avisado is None
    assert [f.etapa for f in lat.resumir([marcas])] == []
    # AND once the ERP notice is done too, the later of the two ends it
    marcas.reparto["ErpFunction"] = 3.0
    assert marcas.avisado == 3.0


def test_pedidos_de_reads_envelopes_and_direct_payloads() -> None:
    # GIVEN an EventBridge envelope in an SQS record, an SNS envelope and the charge's direct payload
    eb = {"source": "mercadofresco.tienda", "detail-type": "PedidoCreado", "detail": {"pedido_id": "P1"}}
    sns = {"Type": "Notification", "TopicArn": "arn", "Message": json.dumps({"tipo": "X", "pedido_id": "P2"})}
    evento = {"Records": [{"eventSource": "aws:sqs", "body": json.dumps(eb)}, {"body": json.dumps(sns)}]}
    # THEN each record's order and type is found; a bad body is skipped
    assert list(lat.pedidos_de(evento)) == [("P1", "PedidoCreado"), ("P2", "X")]
    assert list(lat.pedidos_de({"Records": [{"body": "no json"}]})) == []
    assert list(lat.pedidos_de({"operacion": "cobro", "pedido": {"pedido_id": "P3"}})) == [("P3", "cobro")]


def _espera(tipo: str, nombre: str, s: float) -> dict:
    clave = "stateEnteredEventDetails" if tipo == "WaitStateEntered" else "stateExitedEventDetails"
    return {"type": tipo, "timestamp": _t(s), clave: {"name": nombre}}


def test_wait_states_are_summed_per_state_from_the_history() -> None:
    # GIVEN a throttled charge that waited twice for capacity, then once for the charge's lease
    historia = [
        {"type": "ExecutionStarted", "timestamp": _t(0.0)},
        _espera("WaitStateEntered", "EsperarCapacidad", 1.0),
        _espera("WaitStateExited", "EsperarCapacidad", 61.0),
        _espera("WaitStateEntered", "EsperarCapacidad", 62.0),
        _espera("WaitStateExited", "EsperarCapacidad", 122.5),
        _espera("WaitStateEntered", "EsperarFinBloqueo", 130.0),
        _espera("WaitStateExited", "EsperarFinBloqueo", 260.0),
        _salida("Reconsultar", 261.0),
    ]
    # WHEN the waits are read
    esperas = lat.esperas_de_historia(historia)
    # THEN each Wait state's entered -> exited seconds are added up
    assert {k: round(v, 3) for k, v in esperas.items()} == {"EsperarCapacidad": 120.5, "EsperarFinBloqueo": 130.0}


def test_resumir_reports_waits_apart_and_says_whether_they_were_compressed() -> None:
    # GIVEN 10 charged orders, two of which waited for capacity (60 s and 61 s) inside their charge stage
    marcas = [lat.Marcas(f"P{i}", iniciada=0.0, cobrado=1.0) for i in range(8)]
    for i, s in ((8, 60.0), (9, 61.0)):
        marcas.append(lat.Marcas(f"P{i}", iniciada=0.0, cobrado=s + 1.0))
        marcas[-1].esperas["EsperarCapacidad"] = s
    # WHEN summarised by a run that does not compress Wait states
    cobro, esperas = lat.resumir(marcas, esperas_comprimidas=False)
    # THEN the charge stage holds the waits, and a line of its own shows them over the two orders, as real seconds
    assert (cobro.etapa, cobro.n, cobro.max_s) == ("iniciada → cobrado", 10, 62.0)
    assert (esperas.n, esperas.p50_s, esperas.max_s) == (2, 60.0, 61.0)
    assert "EsperarCapacidad" in esperas.etapa and "segundos reales" in esperas.etapa and not esperas.comprimida
    # AND a run that compresses them says so; orders that never waited add no line
    assert lat.resumir(marcas, esperas_comprimidas=True)[-1].comprimida
    assert len(lat.resumir(marcas[:8])) == 1
