"""The on-call's dashboard (mercadofresco-mensajeria) shows every queue and every DLQ the template has."""

from __future__ import annotations

import json
import re

from template_model import Template
from template_model import messaging as m

WIDGETS_COLAS = ("Queue depth (messages visible)", "Age of the oldest message (s)")
WIDGET_DLQ = "Dead-letter queues (messages visible)"


def _colas_por_widget(p: Template) -> dict[str, set[str]]:
    """Each widget's title and the queues (logical ids) its metrics name through ``${<Cola>.QueueName}``."""
    (panel,) = p.of_type("AWS::CloudWatch::Dashboard").values()
    cuerpo, _variables = panel["Properties"]["DashboardBody"]["Fn::Sub"]
    return {
        w["properties"]["title"]: {
            lid for metrica in w["properties"]["metrics"] for lid in re.findall(r"\$\{(\w+)\.QueueName\}", metrica[-1])
        }
        for w in json.loads(cuerpo)["widgets"]
    }


def test_the_dashboard_shows_every_dlq_and_every_other_queue() -> None:
    # GIVEN every queue of the stack, the DLQs apart (all in the root: a unit is handed its DLQ)
    p = Template()
    assert [prefijo for prefijo, t in p.walk() if m.queues(t)] == [""]
    dlqs = set(m.dead_letter_queues(p))
    colas = set(m.queues(p)) - dlqs
    assert {"ColaCarritosFallidos", "ColaProyeccionFallidos"} <= dlqs and "ColaProyeccion" in colas
    widgets = _colas_por_widget(p)
    # THEN the DLQ widget shows each DLQ, and only DLQs
    assert widgets[WIDGET_DLQ] == dlqs
    # AND the depth and age widgets show every other queue
    for titulo in WIDGETS_COLAS:
        assert widgets[titulo] == colas, titulo
