"""functions/pedido_durable/configuracion.py: every resource and bound read once, a missing one fails the cold start."""

from __future__ import annotations

import pytest

from tests.unit.pedido_durable.conftest import ENTORNO


def test_configuracion_reads_the_state_machines_bounds_and_resources(durable) -> None:
    # GIVEN the function loaded with its environment THEN its configuration is that environment's
    config = durable.configuracion
    assert (config.reclamo_lease_s, config.reconsulta_wait_s) == (7500, 130)
    assert config.bus == "bus-mercadofresco" and config.nombre_funcion == "mercadofresco-pedido-durable"


@pytest.mark.parametrize("variable", ["RECLAMO_LEASE_S", "COLA_STOCK_URL", "TEMA_PEDIDO_CONFIRMADO_ARN"])
def test_configuracion_missing_variable_fails_the_cold_start_naming_it(app_module, variable) -> None:
    # GIVEN the environment without one of the saga's variables WHEN the function is loaded
    # THEN the cold start fails and says which one
    with pytest.raises(ValueError, match=variable):
        app_module("pedido_durable", **{**ENTORNO, variable: ""})


@pytest.mark.parametrize(
    ("cambios", "mensaje"),
    [
        ({"RECONSULTA_WAIT_S": "2m"}, "whole seconds"),
        ({"RECLAMO_LEASE_S": "7500.5"}, "whole seconds"),
        ({"RECLAMO_LEASE_S": "0"}, "positive"),
        ({"RECONSULTA_WAIT_S": "-130"}, "positive"),
    ],
)
def test_configuracion_bound_that_is_not_a_positive_whole_number_fails_the_cold_start(app_module, cambios, mensaje):
    # GIVEN a time bound no template would set WHEN the function is loaded THEN it refuses to start
    with pytest.raises(ValueError, match=mensaje):
        app_module("pedido_durable", **{**ENTORNO, **cambios})
