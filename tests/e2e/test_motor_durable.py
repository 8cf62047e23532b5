"""The local run on the durable engine (``WorkflowEngine=DurableFunction``, issue 37): a scenario, the chaos campaign.

The same template, store, queues, stand-ins and judge as the state machine's runs; the order workflow is
``mercadofresco-pedido-durable`` started by ``pipe-mf-pedidos-durable`` and run by the durable service's local
stand-in (:mod:`sam_emulator.durable`), its Lambda faults drawn for that function (it claims and charges).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import comprobacion

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco_local.informe import Informe

# Hang guards only (the seeds' drains are bounded by the workflow's own timeout, compressed).
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1800)]

MOTOR = "DurableFunction"
FUNCION = "mercadofresco-pedido-durable"
SEMILLAS = list(range(1, 7))
PEDIDOS_POR_SEMILLA = 6
RITMO_POR_S = 6.0


def test_scenario_normal_on_the_durable_engine_confirms_every_order(escenario: Callable[..., Informe]) -> None:
    # GIVEN / WHEN 12 orders with every provider healthy, the saga run as a durable function
    informe = escenario("normal", 12, motor=MOTOR)

    # THEN every invariant holds, every order is confirmed and every DLQ is empty
    assert not [f"{i.nombre}: {i.detalle}" for i in informe.invariantes if not i.cumple]
    assert comprobacion(informe, "todos los pedidos confirmados")
    assert comprobacion(informe, "todas las DLQ vacías")
    # AND the report says its cost section does not count the durable operations
    assert any("operaciones durables" in nota for nota in informe.notas)


@pytest.fixture(scope="module")
def campana():
    """Six seeds in one session on the durable engine; the results and the platform's deaths, by function."""
    from collections import Counter

    import mercadofresco_caos as caos
    from mercadofresco_local.sesion import Sesion
    from sam_emulator import deaths

    with Sesion("caos-durable-e2e", compresion=caos.COMPRESION, caos=True, motor=MOTOR) as sesion:
        resultados = [caos.correr_semilla(sesion, s, PEDIDOS_POR_SEMILLA, RITMO_POR_S) for s in SEMILLAS]
        muertes = Counter(funcion for funcion, *_ in deaths.CONTROL.deaths)  # read before the session resets it
        estrangulados = Counter(deaths.CONTROL.throttled)
    return resultados, muertes, estrangulados


def test_chaos_seeds_on_the_durable_engine_keep_every_invariant(campana) -> None:
    from mercadofresco_caos import describir_violaciones

    resultados, _, _ = campana
    # GIVEN six seeds' fault schedules drawn for the durable engine  WHEN their orders have flowed
    lineas = [linea for r in resultados for linea in describir_violaciones(r, PEDIDOS_POR_SEMILLA, RITMO_POR_S)]
    # THEN every order of every seed keeps the six invariants (a violation's replay command names the engine)
    assert not lineas, "\n".join(lineas)
    assert sum(r.pedidos for r in resultados) == len(SEMILLAS) * PEDIDOS_POR_SEMILLA
    assert {r.motor for r in resultados} == {MOTOR}


def test_chaos_on_the_durable_engine_really_kills_and_throttles_the_saga_function(campana) -> None:
    # GIVEN / WHEN the same runs  THEN the platform faults drawn for the saga's function happened to it (the
    # schedule has no charge or claim function to hit on this engine), and some order was refunded
    resultados, muertes, estrangulados = campana
    assert muertes[FUNCION] > 0
    assert estrangulados[FUNCION] > 0
    assert sum(r.reembolsos for r in resultados) > 0
