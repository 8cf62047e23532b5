"""Cold start guard: importing a function loads only what its init phase needs (issue 14).

Measured by ``sys.modules`` in a fresh interpreter, not by time (``bench/bench_cold_start.py``
times it on the built artifact). The X-Ray SDK is imported by the first traced invocation
(``mercadofresco.tracing.LazyTracer``), the Valkey client's redis by the first provider call,
the PostgreSQL driver (and the asyncio it brings) by the first connection, Powertools' event
handler (every resolver it has, AppSync's asyncio included) by the store API's first request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RAIZ = Path(__file__).resolve().parents[2]
CAPA = RAIZ / "layers" / "comun"
# What no function's import may load: every one of them has an init phase that does not need it.
PESADOS = ("aws_xray_sdk", "psycopg", "psycopg_pool", "redis", "asyncio", "aws_lambda_powertools.event_handler")
ENTORNO = {
    "AWS_REGION": "eu-south-2",
    "AWS_DEFAULT_REGION": "eu-south-2",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "LAMBDA_TASK_ROOT": "/var/task",  # as in Lambda: Powertools' Tracer is enabled, so it would patch at import
    "AWS_LAMBDA_FUNCTION_NAME": "prueba",
    "POWERTOOLS_SERVICE_NAME": "mercadofresco",
    "TABLA_IDEMPOTENCIA": "mercadofresco-idempotencia",
    "VALKEY_ENDPOINT": "127.0.0.1:9",
    "PASARELA_URL": "http://127.0.0.1:9",
    "ERP_URL": "http://127.0.0.1:9",
    "CORREO_PRINCIPAL_URL": "http://127.0.0.1:9",
    "CORREO_SECUNDARIO_URL": "http://127.0.0.1:9",
    "AURORA_ENDPOINT": "127.0.0.1",
    "EVENT_BUS_NAME": "bus-mercadofresco",
    # the durable order saga's resources and bounds (functions/pedido_durable/configuracion.py); the
    # charge's lease set here, not inherited from whatever an earlier test left in this process
    "IDEMPOTENCY_LEASE_S": "100",
    "RECLAMO_LEASE_S": "7500",
    "RECONSULTA_WAIT_S": "130",
    "COLA_STOCK_URL": "http://127.0.0.1:9/cola-stock.fifo",
    "COLA_PEDIDOS_URL": "http://127.0.0.1:9/cola-pedidos",
    "COLA_PEDIDOS_FALLIDOS_URL": "http://127.0.0.1:9/pedidos-fallidos",
    "TEMA_PEDIDO_CONFIRMADO_ARN": "arn:aws:sns:eu-south-2:123456789012:mercadofresco-pedido-confirmado",
}
SONDA = (
    "import json, sys\n"
    "sys.path[:0] = [{funcion!r}, {capa!r}]\n"
    "import app\n"
    "print(json.dumps(sorted(set(sys.modules) & set({pesados!r}))))\n"
)


def _cargados_al_importar(funcion: str) -> list[str]:
    codigo = SONDA.format(funcion=str(RAIZ / "functions" / funcion), capa=str(CAPA), pesados=PESADOS)
    entorno = {**{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}, **ENTORNO}
    salida = subprocess.run([sys.executable, "-c", codigo], env=entorno, capture_output=True, text=True, cwd=RAIZ)
    assert salida.returncode == 0, salida.stderr
    return json.loads(salida.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("funcion", sorted(p.name for p in (RAIZ / "functions").iterdir() if (p / "app.py").is_file()))
def test_handler_import_loads_no_deferred_package(funcion: str) -> None:
    # GIVEN a fresh interpreter laid out as Lambda does (function dir, then the layer)
    # WHEN it imports the function's handler module
    cargados = _cargados_al_importar(funcion)
    # THEN nothing its first invocation can load instead was imported by the init phase
    assert cargados == [], f"{funcion} imports {cargados} at import time"


def test_lazy_tracer_first_invocation_builds_tracer_and_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    from mercadofresco.tracing import TRACED_MODULES, LazyTracer

    # GIVEN a handler decorated by a LazyTracer (tracing disabled: no X-Ray daemon here)
    tracer = LazyTracer(disabled=True)
    llamadas: list[dict] = []

    @tracer.capture_lambda_handler
    def handler(event: dict, context: object) -> dict:
        llamadas.append(event)
        return {"ok": True}

    # THEN decorating built nothing
    assert tracer._tracer is None
    # WHEN it is invoked
    resultado = handler({"n": 1}, None)
    # THEN the real Tracer exists, with the project's patch list, and the handler ran once through it
    assert resultado == {"ok": True} and llamadas == [{"n": 1}]
    assert tracer._tracer is not None and tracer._options["patch_modules"] == list(TRACED_MODULES)
    assert handler.__name__ == "handler"
