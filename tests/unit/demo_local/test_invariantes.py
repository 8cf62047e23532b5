"""The demo's invariants fail exactly when the records show a broken guarantee."""

from __future__ import annotations

import json
from collections import Counter

from mercadofresco_local import invariantes as inv


def test_un_evento_procesado_por_pedido_holds_when_a_duplicate_is_stopped_at_the_claim() -> None:
    # GIVEN two orders, one of them started twice (the duplicate ended at the claim)
    resultados = {"P1": Counter({"Confirmado": 1, "Duplicado": 1}), "P2": Counter({"Rechazado": 1})}

    # WHEN the invariant is computed
    resultado = inv.un_evento_procesado_por_pedido(["P1", "P2"], resultados)

    # THEN it holds
    assert resultado.cumple, resultado.detalle


def test_un_evento_procesado_por_pedido_fails_and_names_orders_without_event_or_processed_twice() -> None:
    # GIVEN an order never processed and one processed twice
    resultados = {"P2": Counter({"Confirmado": 2})}

    # WHEN the invariant is computed
    resultado = inv.un_evento_procesado_por_pedido(["P1", "P2"], resultados)

    # THEN it fails naming both orders
    assert not resultado.cumple
    assert "P1" in resultado.detalle
    assert "P2" in resultado.detalle


def test_un_cobro_como_maximo_fails_on_a_double_charge() -> None:
    # GIVEN the gateway charged P1 twice
    cobros = [{"pedido_id": "P1", "referencia_cobro": "ch_1"}, {"pedido_id": "P1", "referencia_cobro": "ch_2"}]

    # WHEN / THEN the invariant fails and names P1
    resultado = inv.un_cobro_como_maximo(cobros)
    assert not resultado.cumple
    assert "P1" in resultado.detalle


def test_reembolsos_con_cobro_fails_on_an_orphan_or_repeated_reembolso() -> None:
    # GIVEN one charge refunded twice and a refund of a charge that does not exist
    cobros = [{"pedido_id": "P1", "referencia_cobro": "ch_1"}]
    reembolsos = [
        {"referencia_reembolso": "re_1", "referencia_cobro": "ch_1"},
        {"referencia_reembolso": "re_2", "referencia_cobro": "ch_1"},
        {"referencia_reembolso": "re_3", "referencia_cobro": "ch_9"},
    ]

    # WHEN the invariant is computed
    resultado = inv.reembolsos_con_cobro(cobros, reembolsos)

    # THEN it fails naming the orphan and the double refund
    assert not resultado.cumple
    assert "re_3" in resultado.detalle
    assert "ch_1" in resultado.detalle


def test_ningun_mensaje_perdido_fails_when_the_balance_does_not_add_up() -> None:
    # GIVEN one flow that balances and one that lost a message
    balances = [inv.Balance("pedidos", 10, 8, 1, 1), inv.Balance("aviso erp", 5, 4, 0, 0)]

    # WHEN / THEN the invariant fails on the second flow, saying how many were lost
    resultado = inv.ningun_mensaje_perdido(balances)
    assert not resultado.cumple
    assert "aviso erp: 5 = 4 + 0 DLQ + 0 en cola ✗ 1 perdidos" in resultado.detalle
    assert inv.ningun_mensaje_perdido(balances[:1]).cumple


def test_ningun_mensaje_perdido_holds_when_the_dlq_holds_copies_of_processed_messages() -> None:
    # GIVEN every notice delivered, and 17 copies of delivered notices in the DLQ (received again
    # while their first invocation still ran, then dead-lettered)
    balances = [inv.Balance("aviso erp", 40, 40, 0, 0, copias_en_dlq=17)]

    # WHEN the invariant is computed
    resultado = inv.ningun_mensaje_perdido(balances)

    # THEN nothing is called lost: the copies are named as what they are
    assert resultado.cumple, resultado.detalle
    assert "+17 copias en DLQ de mensajes ya contados, no perdidos" in resultado.detalle
    assert "perdidos" not in resultado.detalle.replace("no perdidos", "")


def test_cobros_con_pedido_fails_on_a_cobro_of_an_order_neither_confirmed_nor_refunded() -> None:
    # GIVEN P1 charged and confirmed, P2 charged then refunded, P3 charged but never confirmed
    cobros = [
        {"pedido_id": "P1", "referencia_cobro": "ch_1"},
        {"pedido_id": "P2", "referencia_cobro": "ch_2"},
        {"pedido_id": "P3", "referencia_cobro": "ch_3"},
    ]
    reembolsos = [{"referencia_reembolso": "re_1", "referencia_cobro": "ch_2"}]
    resultados = {"P1": Counter({"Confirmado": 1}), "P2": Counter({"Cancelado": 1}), "P3": Counter({"Fallido": 1})}

    # WHEN the invariant is computed
    resultado = inv.cobros_con_pedido(cobros, reembolsos, resultados)

    # THEN only P3 is named
    assert not resultado.cumple
    assert "P3" in resultado.detalle
    assert "P1" not in resultado.detalle


def test_an_execution_the_platform_stopped_is_named_as_such_not_as_a_lost_message() -> None:
    from mercadofresco_local.observador import Ejecucion, resultados_por_pedido

    # GIVEN P2's only execution timed out in Cobrar (past the run's compressed TimeoutSeconds)
    lista = [
        Ejecucion("P1", "SUCCEEDED", "Confirmado", 1),
        Ejecucion("P2", "TIMED_OUT", "Cobrar", 1),
        Ejecucion("P3", "FAILED", "PasarelaCaida", 1),  # a designed outcome: a Fail state
    ]
    resultados = resultados_por_pedido(lista)

    # WHEN the order invariant and the pedidos balance (P2 counted as cut short) are computed
    por_pedido = inv.un_evento_procesado_por_pedido(["P1", "P2", "P3"], resultados)
    balance = inv.ningun_mensaje_perdido([inv.Balance("pedidos", 3, 2, 0, 0, cortadas=1)])

    # THEN the order is reported unprocessed with how its execution ended, and no message is called lost
    assert not por_pedido.cumple
    assert "sin procesar: P2 (TIMED_OUT en Cobrar)" in por_pedido.detalle
    assert balance.cumple, balance.detalle
    assert "+ 1 ejecuciones cortadas (TIMED_OUT/ABORTED)" in balance.detalle


def test_ningun_registro_en_curso_fails_on_any_open_record_whatever_its_lease() -> None:
    # GIVEN the run at rest with a charge claim nobody closed (its lease may still be live)
    # WHEN the invariant is computed
    abiertos = inv.ningun_registro_en_curso(["cobro:PED-1"])
    cerrados = inv.ningun_registro_en_curso([])
    # THEN it fails naming the key, and holds when every record was closed
    assert not abiertos.cumple and "cobro:PED-1" in abiertos.detalle
    assert cerrados.cumple, cerrados.detalle


def test_a_durable_execution_is_read_as_the_state_machine_final_state_of_the_same_outcome() -> None:
    from mercadofresco_local.observador import ejecucion_durable, resultados_por_pedido
    from sam_emulator.durable import DurableExecution

    entrada = json.dumps([{"body": json.dumps({"detail": {"pedido_id": "P1", "version": 1}})}])
    # GIVEN durable executions of P1: confirmed, a duplicate, refunded (a failed end), and one timed out mid-saga
    lista = [
        ejecucion_durable(DurableExecution("a1", "n1", entrada, "SUCCEEDED", result='{"fin": "Confirmado"}')),
        ejecucion_durable(DurableExecution("a2", "n2", entrada, "SUCCEEDED", result='{"fin": "Duplicado"}')),
        ejecucion_durable(DurableExecution("a3", "n3", entrada, "FAILED", error_type="PedidoCancelado")),
        ejecucion_durable(DurableExecution("a4", "n4", entrada, "TIMED_OUT", last_operation="cobrar")),
    ]

    # WHEN the report reads them
    resultados = resultados_por_pedido(lista)

    # THEN each has the order and the final state the judge knows from the state machine (Cancelado, not the class)
    assert [(e.pedido_id, e.version) for e in lista] == [("P1", 1)] * 4
    assert resultados["P1"] == {"Confirmado": 1, "Duplicado": 1, "Cancelado": 1, "TIMED_OUT en cobrar": 1}
