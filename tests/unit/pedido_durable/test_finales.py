"""The saga ends as the state machine ends: the same failed ends, by name, naming the same things to act on."""

from __future__ import annotations

import json
import re

from mercadofresco.dominio.errores import FINALES_DEL_FLUJO

from tests.conftest import RAIZ

ASL = json.loads((RAIZ / "statemachines" / "procesar_pedido.asl.json").read_text())["States"]
FALLOS = {nombre: estado for nombre, estado in ASL.items() if estado["Type"] == "Fail"}
# What an on-call acts on, named by a cause: the records, the queue, the runbook.
ACCIONABLE = re.compile(r"(?:cobro|reembolso|pedido):\{pedido_id\}|runbooks/[\w.-]*|mercadofresco-pedidos-fallidos")


def test_every_failed_end_of_the_state_machine_is_a_class_the_layer_names() -> None:
    # GIVEN the ASL's Fail states THEN each Error is a workflow end of dominio.errores or a mechanism's error
    assert {e["Error"] for e in FALLOS.values()} <= {*FINALES_DEL_FLUJO, "CircuitoAbierto", "EventoInvalido"}


def test_saga_ends_in_the_state_machines_failed_ends_all_but_the_capacity_wait(durable) -> None:
    import saga

    # GIVEN the saga's failed ends THEN each is a Fail state's Error; the one it never reaches is
    # PlataformaOcupada: it has no capacity wait, a throttled invocation is the durable service's to retry
    finales = {cls.__name__ for cls in saga.CAUSAS}
    assert finales <= {e["Error"] for e in FALLOS.values()}
    assert {e["Error"] for e in FALLOS.values()} - finales == {"PlataformaOcupada"}


def test_saga_causes_name_what_to_act_on_as_the_state_machines_do(durable) -> None:
    import saga

    # GIVEN each failed end's cause on both engines THEN they name the same records, queue and runbook
    for cls, causa in saga.CAUSAS.items():
        (asl,) = {e["Cause"] for e in FALLOS.values() if e["Error"] == cls.__name__}
        assert set(ACCIONABLE.findall(causa)) == set(ACCIONABLE.findall(asl)), cls.__name__
