"""The metric sink: Powertools EMF lines with the dependency as their only dimension."""

from __future__ import annotations

import json

from aws_lambda_powertools import Metrics
from mercadofresco.metrics import PowertoolsMetrics, as_metrics


def _emf(salida: str) -> list[dict]:
    return [json.loads(linea) for linea in salida.splitlines() if linea.startswith("{")]


def test_powertools_metrics_one_emf_line_with_dependencia(capsys) -> None:
    # WHEN a count is emitted
    PowertoolsMetrics().count("CircuitoAbierto", "pasarela")
    # THEN one EMF line in MercadoFresco/Tienda, value 1, dimensions dependencia + the service Powertools
    # adds from POWERTOOLS_SERVICE_NAME (the template's alarms name both)
    [linea] = _emf(capsys.readouterr().out)
    definicion = linea["_aws"]["CloudWatchMetrics"][0]
    assert definicion["Namespace"] == "MercadoFresco/Tienda"
    assert definicion["Dimensions"] == [["dependencia", "service"]]
    assert linea["service"] == "mercadofresco"
    assert definicion["Metrics"][0]["Name"] == "CircuitoAbierto"
    assert (linea["dependencia"], linea["CircuitoAbierto"]) == ("pasarela", [1.0])


def test_as_metrics_takes_a_handlers_metrics_namespace_without_touching_its_set(capsys) -> None:
    # GIVEN the handler's own Powertools Metrics (with a dimension of its own)
    metrics = Metrics(namespace="Otro/Espacio")
    metrics.add_dimension(name="funcion", value="cobro")
    # WHEN the breaker counts through it
    as_metrics(metrics).count("Reintentos", "erp")
    # THEN the line uses its namespace, and the handler's dimension did not leak into it
    [linea] = _emf(capsys.readouterr().out)
    assert linea["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Otro/Espacio"
    assert "funcion" not in linea
    metrics.clear_metrics()
