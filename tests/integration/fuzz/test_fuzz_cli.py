"""``mf-dlq`` and ``mf-circuito`` under any arguments: an exit code and at most one line on stderr, never a traceback.

Arguments are what a shell passes: any text, including the lone surrogates Python makes of
bytes that are not UTF-8 (``mf-circuito estado $'\\xff'``). AWS is moto in process; Valkey is
the real local Redis under this test's own key prefix.
"""

from __future__ import annotations

import io
import json

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco_ops import circuito
from mercadofresco_ops.dlq import cli

from tests.unit.fuzz.estrategias import ejemplos, texto_cualquiera

pytestmark = pytest.mark.integration

DLQ = "mercadofresco-erp-fallidos"
OPCIONES_DLQ = [
    "-n",
    "--muestra",
    "--maximo",
    "--tasa",
    "--visibilidad-s",
    "--edad-max-s",
    "--filtro",
    "--motivo",
    "--transformar",
    "--destino",
    "--desde",
    "--esperados",
    "--version-esperada",
    "--tarea",
]
# "tareas" and "cancelar" only call ListMessageMoveTasks/CancelMessageMoveTask, which moto does not implement.
ORDENES_DLQ = ["inspeccionar", "clasificar", "reprocesar", "verificar"]
argumento = st.one_of(texto_cualquiera, st.sampled_from(["0", "-1", "nan", "inf", "1e400", "", "10", DLQ]))


def _salida(capsys, codigo: int, permitidos: set[int]) -> str:
    salida = capsys.readouterr()
    assert codigo in permitidos, salida
    assert "Traceback" not in salida.err and "Traceback" not in salida.out
    return salida.err


@pytest.fixture
def dlq_con_mensajes(aws):
    sqs = boto3.client("sqs", region_name="eu-south-2")
    url = sqs.create_queue(QueueName=DLQ)["QueueUrl"]
    for cuerpo in ['{"tipo": "PedidoConfirmado", "version": 1, "pedido_id": "P-1"}', "{", "[[[[", '"\\ud800"']:
        sqs.send_message(QueueUrl=url, MessageBody=cuerpo)
    return url


@given(
    orden=st.sampled_from(ORDENES_DLQ),
    extra=st.lists(st.tuples(st.sampled_from(OPCIONES_DLQ), argumento), max_size=3),
    cola=st.one_of(st.just(DLQ), texto_cualquiera),
)
def test_fuzz_mf_dlq_any_arguments_give_an_exit_code_never_a_traceback(
    dlq_con_mensajes, capsys, orden, extra, cola
) -> None:
    # GIVEN any options and values (and sometimes a queue name that is not one), with --simulacro so nothing moves
    argv = [orden, "--cola", cola, *[x for par in extra for x in par]]
    if orden == "reprocesar":
        argv.append("--simulacro")
    # WHEN mf-dlq runs
    try:
        codigo = cli.main(argv)
    except SystemExit as exc:  # argparse: a usage error, exit 2 with its usage line
        codigo = exc.code
    # THEN a documented exit code, and an error is one line
    err = _salida(capsys, codigo, {cli.OK, cli.FALLO, cli.USO})
    if codigo == cli.USO and err.startswith("mf-dlq: "):
        assert err.count("\n") == 1


@ejemplos(0.2)  # each example ends in a 1 s long poll that finds the DLQ exhausted
@given(muestra=st.integers(min_value=1, max_value=12))
def test_fuzz_mf_dlq_clasificar_json_always_has_a_verdict_when_it_exits_0(dlq_con_mensajes, capsys, muestra) -> None:
    # GIVEN a DLQ with readable and unreadable bodies WHEN classified as JSON
    codigo = cli.main(["clasificar", "--cola", DLQ, "--muestra", str(muestra), "--json"])
    # THEN exit 0 with a verdict for every group; and the messages stay visible for the next command
    informe = json.loads(capsys.readouterr().out)
    assert codigo == cli.OK and informe["tipo"] and all(g["tipo"] for g in informe["grupos"])
    atributos = boto3.client("sqs", region_name="eu-south-2").get_queue_attributes(
        QueueUrl=dlq_con_mensajes, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    assert atributos["ApproximateNumberOfMessages"] == "4"


@given(
    orden=st.sampled_from(["estado", "abrir", "cerrar"]),
    dependencias=st.lists(texto_cualquiera, min_size=1, max_size=3),
)
def test_fuzz_mf_circuito_any_dependency_name_gives_an_exit_code_never_a_traceback(
    redis_url, redis_prefix, capsys, monkeypatch, orden, dependencias
) -> None:
    # GIVEN any dependency names (surrogates from non-UTF-8 bytes included) on this test's own keys
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))  # a real, strict stdout
    argv = [
        "--redis-url",
        redis_url,
        "--prefijo",
        redis_prefix,
        orden,
        *(dependencias if orden == "estado" else dependencias[:1]),
    ]
    # WHEN mf-circuito runs
    try:
        codigo = circuito.main(argv)
    except SystemExit as exc:
        codigo = exc.code
    # THEN a documented exit code, never a traceback
    _salida(capsys, codigo, {circuito.SALIDA_OK, circuito.SALIDA_USO, circuito.SALIDA_VALKEY, circuito.SALIDA_CONFIG})
