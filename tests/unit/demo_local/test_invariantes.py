"""The demo's invariants fail exactly when the records show a broken guarantee."""

from __future__ import annotations

from collections import Counter

from mercadofresco_local import invariantes as inv


def test_un_evento_procesado_por_pedido_con_duplicado_parado_en_la_reclamacion_cumple() -> None:
    # GIVEN two orders, one of them started twice (the duplicate ended at the claim)
    resultados = {"P1": Counter({"Confirmado": 1, "Duplicado": 1}), "P2": Counter({"Rechazado": 1})}

    # WHEN the invariant is computed
    resultado = inv.un_evento_procesado_por_pedido(["P1", "P2"], resultados)

    # THEN it holds
    assert resultado.cumple, resultado.detalle


def test_un_evento_procesado_por_pedido_sin_evento_o_procesado_dos_veces_falla_y_los_nombra() -> None:
    # GIVEN an order never processed and one processed twice
    resultados = {"P2": Counter({"Confirmado": 2})}

    # WHEN the invariant is computed
    resultado = inv.un_evento_procesado_por_pedido(["P1", "P2"], resultados)

    # THEN it fails naming both orders
    assert not resultado.cumple
    assert "P1" in resultado.detalle
    assert "P2" in resultado.detalle


def test_un_cobro_como_maximo_con_cobro_doble_falla() -> None:
    # GIVEN the gateway charged P1 twice
    cobros = [{"pedido_id": "P1", "referencia_cobro": "ch_1"}, {"pedido_id": "P1", "referencia_cobro": "ch_2"}]

    # WHEN / THEN the invariant fails and names P1
    resultado = inv.un_cobro_como_maximo(cobros)
    assert not resultado.cumple
    assert "P1" in resultado.detalle


def test_reembolsos_con_cobro_reembolso_huerfano_o_repetido_falla() -> None:
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


def test_ningun_mensaje_perdido_cuando_no_cuadra_falla() -> None:
    # GIVEN one flow that balances and one that lost a message
    balances = [inv.Balance("pedidos", 10, 8, 1, 1), inv.Balance("aviso erp", 5, 4, 0, 0)]

    # WHEN / THEN the invariant fails on the second flow
    resultado = inv.ningun_mensaje_perdido(balances)
    assert not resultado.cumple
    assert "aviso erp: 5 = 4 + 0 DLQ + 0 en cola ✗" in resultado.detalle
    assert inv.ningun_mensaje_perdido(balances[:1]).cumple


def test_cobros_con_pedido_cobro_de_pedido_no_confirmado_ni_reembolsado_falla() -> None:
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
