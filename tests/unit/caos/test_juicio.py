"""The chaos judge: at rest, an EN_CURSO record is a violation whatever its lease (issue 28)."""

from __future__ import annotations

from collections import Counter

import pytest
from mercadofresco_caos.juicio import Registros, juzgar

AHORA_S = 1_800_000_000.0


def _registros(en_curso: list[tuple[str, float | None]]) -> Registros:
    """One order confirmed, charged once and told; nothing else wrong."""
    return Registros(
        comprometidos=["PED-1"],
        por_pedido={"PED-1": Counter({"Confirmado": 1})},
        cobros=[{"pedido_id": "PED-1", "referencia_cobro": "ch_1"}],
        reembolsos=[],
        avisos={"PED-1": {"confirmacion-pedido"}},
        repetidos={},
        en_curso=en_curso,
        balances=[],
        en_reposo=True,
    )


def test_a_clean_run_has_no_violation() -> None:
    violaciones, invariantes = juzgar(_registros([]), AHORA_S)
    assert violaciones == []
    assert all(i.cumple for i in invariantes)


@pytest.mark.parametrize("caduca", [AHORA_S + 7_000, AHORA_S - 60, None], ids=["live", "lapsed", "no-lease"])
def test_an_en_curso_record_at_rest_is_a_violation_whatever_its_lease(caduca: float | None) -> None:
    # GIVEN a quiescent run that left the order's claim open (its lease live, lapsed or missing)
    violaciones, invariantes = juzgar(_registros([("pedido:PED-1", caduca)]), AHORA_S)
    # THEN it is invariant 6's violation on that order, and the run's invariant fails
    assert [(v.invariante, v.pedido) for v in violaciones] == [("6 ningún registro EN_CURSO en reposo", "PED-1")]
    assert {i.nombre: i.cumple for i in invariantes}["ningún registro EN_CURSO en reposo"] is False
