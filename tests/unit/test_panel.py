"""The on-call's dashboard (mercadofresco-mensajeria) shows every queue and every DLQ the template has."""

from __future__ import annotations

import json
import re

from template_model import Template
from template_model import messaging as m

WIDGETS_COLAS = ("Queue depth (messages visible)", "Age of the oldest message (s)")
WIDGET_DLQ = "Dead-letter queues (messages visible)"


def _cola(p: Template, nombre: str) -> str:
    """The queue a metric names, as a stack path: ``${ColaErp.QueueName}`` a root queue, ``${Tienda.Outputs.X}``
    the queue whose name the unit's output gives (``Tienda/ColaProyeccion``)."""
    recurso, atributo = nombre.split(".", 1)
    if not atributo.startswith("Outputs."):
        assert atributo == "QueueName", nombre
        return recurso
    salida = p.units()[recurso].output(atributo.removeprefix("Outputs."))
    assert salida["Fn::GetAtt"][1] == "QueueName", salida
    return f"{recurso}/{salida['Fn::GetAtt'][0]}"


def _colas_por_widget(p: Template) -> dict[str, set[str]]:
    """Each widget's title and the queues (stack paths) its metrics name."""
    (panel,) = p.of_type("AWS::CloudWatch::Dashboard").values()
    cuerpo, _variables = panel["Properties"]["DashboardBody"]["Fn::Sub"]
    return {
        w["properties"]["title"]: {
            _cola(p, nombre)
            for metrica in w["properties"]["metrics"]
            for nombre in re.findall(r"\$\{([\w.]+)\}", metrica[-1])
        }
        for w in json.loads(cuerpo)["widgets"]
        if "QueueName" in json.dumps(w)
    }


def test_the_dashboard_shows_every_dlq_and_every_other_queue() -> None:
    # GIVEN every queue of the stack, in the root and its units, the DLQs apart (all in the root: a unit is
    # handed its DLQ)
    p = Template()
    dlqs = set(m.dead_letter_queues(p))
    colas = set(p.paths(m.queues)) - dlqs
    assert {"ColaCarritosFallidos", "ColaProyeccionFallidos"} <= dlqs and "Tienda/ColaProyeccion" in colas
    widgets = _colas_por_widget(p)
    # THEN the DLQ widget shows each DLQ, and only DLQs
    assert widgets[WIDGET_DLQ] == dlqs
    # AND the depth and age widgets show every other queue
    for titulo in WIDGETS_COLAS:
        assert widgets[titulo] == colas, titulo
