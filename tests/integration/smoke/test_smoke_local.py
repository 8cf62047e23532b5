"""mf-smoke against the whole local run: the template provisioned in moto's server, the store API on loopback.

The same command an operator runs after a deploy, here with ``--endpoint-url`` (moto's server)
and the local HTTP API: every order must reach a final state the customer can see, through the
outbox relay, the bus, the pipe, the workflow, the fan-out and the projection.
"""

from __future__ import annotations

import pytest
from mercadofresco.aws import client
from mercadofresco_local.sesion import Sesion
from mercadofresco_ops import smoke
from sam_emulator.http_api import LocalHttpApi, routes_from_template

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_mf_smoke_local_run_every_order_confirmed_exits_0() -> None:
    # GIVEN the local run (template in moto, real PostgreSQL/Redis, loopback providers) and its store API
    with Sesion("smoke") as sesion:
        assert sesion.runtime is not None and sesion.servidor_url is not None
        rutas = routes_from_template(sesion.runtime.template, sesion.runtime.functions)
        with LocalHttpApi(rutas["Tienda/ApiTienda"]) as api:
            # WHEN mf-smoke (as its main() wires it, on moto's endpoint) places three orders and follows them
            extra = {"endpoint_url": sesion.servidor_url}
            observador = smoke.Observador(
                client("stepfunctions", **extra), client("dynamodb", **extra), client("sqs", **extra), smoke.Nombres()
            )
            prueba = smoke.Smoke(smoke.ClienteTienda(api.url, firmar=False), observador)
            errores = prueba.colocar(3)
            prueba.seguir(espera_s=180, intervalo_s=1)
    # THEN every order went through the workflow, the fan-out and the projection, and the run passes
    informe = smoke.tabla(prueba.seguimientos)
    assert errores == [], errores
    assert [s.resultado() for s in prueba.seguimientos] == ["CONFIRMADO"] * 3, informe
    assert all(s.ejecucion and s.reparto_en and s.repartido for s in prueba.seguimientos), informe
    assert smoke.resumen(prueba.seguimientos, errores)[1] == 0
