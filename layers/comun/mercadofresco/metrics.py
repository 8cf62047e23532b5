"""The layer's metrics sink: what the breaker, the budget and the HTTP client emit, one EMF line each.

``single_metric`` flushes at once with its own dimension (``dependencia``), so these counts
never add a dimension to the handler's own ``Metrics`` set, and a transition is published even
if the handler later fails before its metrics flush.
"""

from __future__ import annotations

from typing import Any, Protocol

from aws_lambda_powertools.metrics import MetricUnit, single_metric

METRICS_NAMESPACE = "MercadoFresco/Tienda"  # the project's one namespace (DESIGN.md)

CIRCUIT_OPEN = "CircuitoAbierto"
SHARED_STATE_UNAVAILABLE = "EstadoCompartidoNoDisponible"
RETRIES = "Reintentos"
PROVIDER_LATENCY = "LatenciaProveedor"  # ms per HTTP attempt; the p99 alarm on "pasarela" reads it


class MetricsSink(Protocol):
    """Where counts go: ``count("CircuitoAbierto", "pasarela")``."""

    def count(self, name: str, dependency: str, value: float = 1) -> None: ...

    def measure_ms(self, name: str, dependency: str, value_ms: float) -> None: ...


class PowertoolsMetrics:
    """Counts as Powertools EMF lines in ``MercadoFresco/Tienda`` with dimension ``dependencia``."""

    def __init__(self, namespace: str = METRICS_NAMESPACE) -> None:
        self.namespace = namespace

    def count(self, name: str, dependency: str, value: float = 1) -> None:
        with single_metric(name=name, unit=MetricUnit.Count, value=value, namespace=self.namespace) as metric:
            metric.add_dimension(name="dependencia", value=dependency)

    def measure_ms(self, name: str, dependency: str, value_ms: float) -> None:
        with single_metric(name=name, unit=MetricUnit.Milliseconds, value=value_ms, namespace=self.namespace) as metric:
            metric.add_dimension(name="dependencia", value=dependency)


def as_metrics(metrics: Any) -> MetricsSink:
    """Accept ``None`` (default sink), a :class:`MetricsSink`, or a Powertools ``Metrics`` (its namespace is used)."""
    if metrics is None:
        return PowertoolsMetrics()
    if hasattr(metrics, "count"):
        return metrics
    return PowertoolsMetrics(getattr(metrics, "namespace", None) or METRICS_NAMESPACE)
