"""A compensation outwaits an open breaker: in the template's bounds, and in the chaos run's compression."""

from __future__ import annotations

from pathlib import Path

from mercadofresco.circuit_breaker import BreakerConfig
from mercadofresco_local import RAIZ
from mercadofresco_local.plazos import comprimir_plazos
from sam_emulator.functions import Function
from template_model import Template

from tests.fixtures.flujo import tiempos_plantilla


def test_every_reask_wait_outlasts_the_breakers_first_open_period() -> None:
    # GIVEN the waits after which a workflow asks a function again (a refund met CircuitoAbierto, its
    # Retry gave up: the Catch re-asks after the Wait), on both engines, and that function's breaker
    plantilla = Template(RAIZ / "template.yaml")
    limites = tiempos_plantilla()
    esperas = [
        (espera_s, funcion)
        for motor in (*limites.workflows.values(), *limites.durables.values())
        for nombre, funcion in motor.waits_after_lease.items()
        if (espera_s := motor.waits_s[nombre]) is not None
    ]
    assert esperas, "no re-ask wait found in the template"
    for espera_s, funcion in esperas:
        abierto_s = BreakerConfig.from_env(_variables_del_interruptor(plantilla, funcion)).open_base_s
        # THEN the next ask meets a breaker at least half-open after a first trip: a Retry whose full
        # jitter drew short waits cannot make the compensation give up while the circuit is still open
        assert espera_s > abierto_s, (funcion, espera_s, abierto_s)


def test_the_breakers_periods_shrink_with_the_waits_and_its_window_does_not() -> None:
    # GIVEN the charge function as the template declares it (a lease, the gateway's timeouts, its Timeout)
    funcion = Function(
        logical_id="CobroFunction",
        name="mercadofresco-cobro",
        code=Path("functions/cobro"),
        environment={
            "IDEMPOTENCY_LEASE_S": "100",
            "PASARELA_READ_TIMEOUT_S": "8",
            "FUNCTION_TIMEOUT_S": "40",
        },
    )
    real = BreakerConfig()
    # WHEN the chaos run compresses it 20 times
    comprimir_plazos(funcion, 20.0)
    # THEN the lease and the HTTP timeout shrink, the function's own Timeout does not...
    assert funcion.environment["IDEMPOTENCY_LEASE_S"] == "5"
    assert float(funcion.environment["PASARELA_READ_TIMEOUT_S"]) == 0.4
    assert funcion.environment["FUNCTION_TIMEOUT_S"] == "40"
    # ...and the breaker the function builds from that environment stays open 1/20 as long (the refund's
    # compressed Retry and EsperarFinBloqueo outlast it as in AWS), probes and caches in proportion,
    # while its rate window still measures uncompressed traffic
    comprimido = BreakerConfig.from_env(funcion.environment)
    assert comprimido.open_base_s == real.open_base_s / 20
    assert comprimido.open_max_s == real.open_max_s / 20
    assert comprimido.probe_reservation_s == real.probe_reservation_s / 20
    assert comprimido.cache_max_age_s <= comprimido.open_base_s
    assert comprimido.window_s == real.window_s


def _variables_del_interruptor(plantilla: Template, funcion: str) -> dict[str, str]:
    """The ``BREAKER_*`` variables the template gives ``funcion`` (Globals, then its own), resolved."""
    globales = (plantilla.doc.get("Globals") or {}).get("Function") or {}
    propias = plantilla.resources[funcion].get("Properties") or {}
    variables = {
        **((globales.get("Environment") or {}).get("Variables") or {}),
        **((propias.get("Environment") or {}).get("Variables") or {}),
    }
    return {k: str(plantilla.resolve(v)) for k, v in variables.items() if k.startswith("BREAKER_")}
