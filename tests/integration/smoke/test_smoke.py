"""mf-smoke against a local store (the tienda handler on loopback HTTP, the real PostgreSQL) and moto's server.

The test plays the platform between mf-smoke's observations (its ``dormir``): it starts the
executions the pipe would start, dead-letters or loses an order on purpose, and applies the
projection and the consumers' idempotency records. What matters: each order's outcome is
classified right, and the exit code is 1 exactly when an order is lost, stuck or dead-lettered.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import psycopg
import pytest
from mercadofresco import db
from mercadofresco.dominio.proyeccion import proyectar
from mercadofresco.outbox.schema import apply_migrations
from mercadofresco_ops import smoke
from sam_emulator.functions import Function, Functions, code_path, shared_environment
from sam_emulator.http_api import LocalHttpApi, routes_from_template
from sam_emulator.moto_server import MotoServer
from sam_emulator.template import Template, create_table_from

from tests.conftest import plantilla_con_clave

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

FLUJO_TRIVIAL = json.dumps({"StartAt": "Fin", "States": {"Fin": {"Type": "Pass", "End": True}}})


@pytest.fixture
def moto() -> Iterator[MotoServer]:
    with MotoServer() as servidor:
        yield servidor


@pytest.fixture
def cuenta(moto: MotoServer) -> dict[str, Any]:
    """What mf-smoke reads, created in moto's server: the workflow, the idempotency table, a DLQ."""
    sfn = boto3.client("stepfunctions", endpoint_url=moto.url)
    maquina = sfn.create_state_machine(
        name="mercadofresco-procesar-pedido",
        definition=FLUJO_TRIVIAL,
        roleArn="arn:aws:iam::123456789012:role/mercadofresco-local",
    )["stateMachineArn"]
    plantilla = plantilla_con_clave(endpoint_url=moto.url)
    tabla = create_table_from(boto3.client("dynamodb", endpoint_url=moto.url), plantilla, "TablaIdempotencia")
    dlq = boto3.client("sqs", endpoint_url=moto.url).create_queue(QueueName="mercadofresco-pedidos-fallidos")[
        "QueueUrl"
    ]
    return {"maquina": maquina, "tabla": tabla, "dlq": dlq}


@pytest.fixture
def tienda_url(pg_dsn: str) -> Iterator[str]:
    """The template's api-mercadofresco-tienda on loopback (sam_emulator.http_api), on this schema."""
    with psycopg.connect(pg_dsn) as conn:
        apply_migrations(conn)
    db.shared_pool.cache_clear()
    tienda = Function(
        "Tienda/TiendaFunction",  # its stack path: the store API is a unit (unidades/tienda.yaml)
        "mercadofresco-tienda",
        code_path("functions/tienda/"),
        environment={"DATABASE_URL": pg_dsn},
    )
    funciones = Functions()
    funciones.add(tienda)
    rutas = routes_from_template(Template(), funciones)
    assert {r.key for r in rutas["Tienda/ApiTienda"]} == {"POST /pedidos", "GET /pedidos/{pedido_id}"}
    try:
        with LocalHttpApi(rutas["Tienda/ApiTienda"]) as api:
            yield api.url
    finally:
        shared_environment([])  # the process's own environment back (the function's DATABASE_URL out)
        if db.shared_pool.cache_info().currsize:
            db.shared_pool().close()
        db.shared_pool.cache_clear()


class Plataforma:
    """Plays the outbox relay, the pipe, the workflow's outcome and the consumers, one step per mf-smoke sleep."""

    def __init__(self, dsn: str, cuenta: dict[str, Any], endpoint: str, destinos: list[str]) -> None:
        self.dsn, self.cuenta, self.destinos = dsn, cuenta, destinos
        self.sfn = boto3.client("stepfunctions", endpoint_url=endpoint)
        self.ddb = boto3.client("dynamodb", endpoint_url=endpoint)
        self.sqs = boto3.client("sqs", endpoint_url=endpoint)
        self.ahora = 1_796_000_000.0

    def reloj(self) -> float:
        return self.ahora

    def paso(self, segundos: float) -> None:
        self.ahora += segundos
        with psycopg.connect(self.dsn) as conn:
            pendientes = list(
                conn.execute("SELECT id, payload FROM outbox WHERE NOT publicado ORDER BY creado_en, secuencia")
            )
            for (outbox_id, payload), destino in zip(pendientes, self.destinos, strict=False):
                conn.execute("UPDATE outbox SET publicado = true, publicado_en = now() WHERE id = %s", (outbox_id,))
                self._llevar(conn, payload, destino)

    def _llevar(self, conn: psycopg.Connection, payload: dict[str, Any], destino: str) -> None:
        pedido_id = payload["pedido_id"]
        evento = {"detail-type": "PedidoCreado", "source": "mercadofresco.tienda", "detail": payload}
        if destino == "perdido":
            return  # the event never reaches the workflow
        if destino == "dlq":
            self.sqs.send_message(QueueUrl=self.cuenta["dlq"], MessageBody=json.dumps(evento))
            return
        # The pipe's input: a list of one SQS record whose body is the bus event.
        entrada = json.dumps([{"messageId": "m-1", "body": json.dumps(evento)}])
        # (moto's server needs a name; the pipe lets Step Functions generate one)
        self.sfn.start_execution(stateMachineArn=self.cuenta["maquina"], name=f"pipe-{pedido_id}", input=entrada)
        if destino == "confirmado":
            proyectar(conn, pedido_id, "PedidoConfirmado")
            for clave in (f"aviso-erp:{pedido_id}", f"correo-confirmacion:{pedido_id}"):
                self.ddb.put_item(
                    TableName=self.cuenta["tabla"],
                    Item={
                        "clave": {"S": clave},
                        "estado": {"S": "COMPLETADO"},
                        "expira_en": {"N": str(int(self.ahora) + 86_400)},
                    },
                )
        elif destino == "rechazado":
            proyectar(conn, pedido_id, "PedidoRechazado", motivo="tarjeta_rechazada")


def _smoke(tienda_url: str, moto: MotoServer, plataforma: Plataforma) -> smoke.Smoke:
    observador = smoke.Observador(plataforma.sfn, plataforma.ddb, plataforma.sqs, smoke.Nombres())
    cliente = smoke.ClienteTienda(tienda_url, firmar=False)
    return smoke.Smoke(cliente, observador, reloj=plataforma.reloj, dormir=plataforma.paso)


def test_smoke_mixed_outcomes_classifies_each_order_and_fails(
    tienda_url: str, pg_dsn: str, cuenta: dict[str, Any], moto: MotoServer
) -> None:
    # GIVEN a platform that confirms one order, rejects one, loses one and dead-letters one
    plataforma = Plataforma(pg_dsn, cuenta, moto.url, ["confirmado", "rechazado", "perdido", "dlq"])
    prueba = _smoke(tienda_url, moto, plataforma)
    # WHEN mf-smoke places four orders and follows them for 30 (simulated) seconds
    assert prueba.colocar(4) == []
    prueba.seguir(espera_s=30, intervalo_s=3)
    # THEN each order gets its outcome...
    resultados = [s.resultado() for s in prueba.seguimientos]
    assert resultados == ["CONFIRMADO", "RECHAZADO", "PERDIDO", "EN_DLQ"]
    assert prueba.seguimientos[3].dlq == "mercadofresco-pedidos-fallidos"
    assert prueba.seguimientos[0].ejecucion is not None and prueba.seguimientos[2].ejecucion is None
    # ...the table names them, and the run fails
    informe = smoke.tabla(prueba.seguimientos)
    assert all(s.pedido_id in informe for s in prueba.seguimientos)
    texto, codigo = smoke.resumen(prueba.seguimientos, [])
    assert codigo == 1
    assert "PERDIDO 1" in texto and "EN_DLQ 1" in texto


def test_smoke_every_order_final_exits_0(
    tienda_url: str, pg_dsn: str, cuenta: dict[str, Any], moto: MotoServer
) -> None:
    # GIVEN a platform that confirms or rejects every order
    plataforma = Plataforma(pg_dsn, cuenta, moto.url, ["confirmado", "rechazado", "confirmado"])
    prueba = _smoke(tienda_url, moto, plataforma)
    # WHEN three orders are placed and followed
    prueba.colocar(3)
    prueba.seguir(espera_s=30, intervalo_s=3)
    # THEN all are final, the fan-out was seen for the confirmed ones, and the run passes
    assert [s.resultado() for s in prueba.seguimientos] == ["CONFIRMADO", "RECHAZADO", "CONFIRMADO"]
    confirmados = [s for s in prueba.seguimientos if s.estado == "CONFIRMADO"]
    assert all(
        set(s.reparto_en) == {"Consumidores/ErpFunction", "Consumidores/CorreoFunction"} and s.repartido
        for s in confirmados
    )
    assert smoke.resumen(prueba.seguimientos, [])[1] == 0


def test_smoke_confirmed_without_fan_out_is_stuck(
    tienda_url: str, pg_dsn: str, cuenta: dict[str, Any], moto: MotoServer
) -> None:
    # GIVEN an order confirmed by the workflow whose ERP notice and e-mail never happened
    plataforma = Plataforma(pg_dsn, cuenta, moto.url, ["solo-ejecucion"])
    prueba = _smoke(tienda_url, moto, plataforma)
    prueba.colocar(1)
    with psycopg.connect(pg_dsn) as conn:
        proyectar(conn, prueba.seguimientos[0].pedido_id, "PedidoConfirmado")
    # WHEN it is followed past the deadline
    prueba.seguir(espera_s=9, intervalo_s=3)
    # THEN it is stuck (the customer was told "confirmed" but nothing was shipped or mailed)
    assert prueba.seguimientos[0].resultado() == "ATASCADO"
    assert smoke.resumen(prueba.seguimientos, [])[1] == 1


def test_mf_smoke_cli_nothing_progresses_prints_lost_orders_and_exits_1(
    tienda_url: str, cuenta: dict[str, Any], moto: MotoServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the local store and moto's server, with no relay running
    # WHEN the command places two orders and waits no time at all
    codigo = smoke.main(["--url", tienda_url, "-n", "2", "--endpoint-url", moto.url, "--espera-s", "0"])
    # THEN both are reported lost, in Spanish, and the exit code is 1
    salida = capsys.readouterr().out
    assert codigo == 1
    assert salida.count("PERDIDO") >= 2
    assert "FALLO" in salida


def test_mf_smoke_store_refuses_order_reports_it(moto: MotoServer, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN no store at that address
    codigo = smoke.main(["--url", "http://127.0.0.1:9", "-n", "1", "--endpoint-url", moto.url, "--espera-s", "0"])
    # THEN a clear message, exit 1, no traceback
    assert codigo == 1
    assert "no se pudo contactar con la tienda" in capsys.readouterr().err


def test_buscar_pedido_id_finds_it_in_the_pipes_input() -> None:
    entrada = json.dumps([{"body": json.dumps({"detail": {"pedido_id": "PED-1"}})}])
    assert smoke.buscar_pedido_id(entrada) == "PED-1"
    assert smoke.buscar_pedido_id("no es json") is None


def test_cliente_tienda_signs_execute_api_requests_with_sigv4() -> None:
    # GIVEN an execute-api URL (IAM auth)
    cliente = smoke.ClienteTienda("https://a1b2c3d4e5.execute-api.eu-south-2.amazonaws.com", firmar=True)
    # WHEN a request is prepared
    cabeceras = cliente._firmadas("POST", cliente.url + "/pedidos", b"{}", {"Content-Type": "application/json"})
    # THEN it carries a SigV4 signature for execute-api in the URL's region
    assert smoke.ClienteTienda.es_execute_api(cliente.url)
    assert cabeceras["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=")
    assert "/eu-south-2/execute-api/aws4_request" in cabeceras["Authorization"]


def test_cliente_tienda_signs_for_the_apis_region_not_the_default_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a caller whose default region is another one
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    cliente = smoke.ClienteTienda("https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com", firmar=True)
    # WHEN a request is signed THEN it is for the API's region
    cabeceras = cliente._firmadas("GET", cliente.url + "/pedidos/PED-1", None, {})
    assert "/eu-west-1/execute-api/aws4_request" in cabeceras["Authorization"]


def test_mf_smoke_stack_without_store_output_says_so(moto: MotoServer) -> None:
    # GIVEN a stack that has no TiendaApiUrl output
    cfn = boto3.client("cloudformation", endpoint_url=moto.url)
    plantilla = {"Resources": {"Cola": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"Otra": {"Value": "x"}}}
    cfn.create_stack(StackName="mercadofresco", TemplateBody=json.dumps(plantilla))
    # WHEN mf-smoke is pointed at it THEN it stops with a clear message, and reads the URL when there is one
    with pytest.raises(SystemExit, match="no tiene la salida TiendaApiUrl"):
        smoke.main(["--pila", "mercadofresco", "--endpoint-url", moto.url])
    plantilla["Outputs"]["TiendaApiUrl"] = {"Value": "https://a1b2c3d4e5.execute-api.eu-south-2.amazonaws.com"}
    cfn.create_stack(StackName="mercadofresco-dev", TemplateBody=json.dumps(plantilla))
    url = smoke.url_de_pila("mercadofresco-dev", moto.url, None)
    assert url == "https://a1b2c3d4e5.execute-api.eu-south-2.amazonaws.com"


def test_mf_smoke_without_url_or_stack_follows_the_stack_sam_deploy_creates() -> None:
    # GIVEN neither --url nor --pila WHEN mf-smoke reads its arguments
    args = smoke.analizar(["-n", "1"])
    # THEN the stack is samconfig.toml's (mercadofresco-dev), the one `sam deploy` creates, not a guess
    assert (args.url, args.pila) == (None, "mercadofresco-dev")
