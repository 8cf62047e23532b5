"""mf-dlq on whatever a DLQ can hold: reading, classifying, printing and the per-group commands never fail."""

from __future__ import annotations

import io
import json
import shlex

import jmespath
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco_ops.dlq import presentacion
from mercadofresco_ops.dlq.argumentos import construir_parser
from mercadofresco_ops.dlq.grupos import clasificar_grupos
from mercadofresco_ops.dlq.mensajes import leer
from mercadofresco_ops.dlq.reproceso import Plan, preparar
from rich.console import Console

from tests.unit.fuzz.estrategias import cuerpo_malo, texto_sqs, valor_json

MOTIVOS = st.sampled_from(
    [None, "json-invalido", "campo-ausente", "version-desconocida", "dato-invalido", "aplazamientos-agotados"]
)


@st.composite
def mensaje_sqs(draw) -> dict:
    """One element of ReceiveMessage's Messages, with what a DLQ can really hold (and leave out)."""
    cuerpo = draw(
        st.one_of(
            cuerpo_malo,
            st.fixed_dictionaries(
                {
                    "tipo": st.one_of(st.sampled_from(["PedidoConfirmado", "ReservaStock"]), valor_json),
                    "version": st.one_of(st.just(1), valor_json),
                    "pedido_id": valor_json,
                    "cliente_id": valor_json,
                }
            ).map(lambda d: json.dumps(d, ensure_ascii=True)),
        )
    )
    sistema = draw(
        st.dictionaries(
            st.sampled_from(["SentTimestamp", "ApproximateReceiveCount", "MessageGroupId"]),
            st.one_of(st.integers(min_value=0, max_value=10**20).map(str), texto_sqs),
            max_size=3,
        )
    )
    atributos = {}
    if (motivo := draw(MOTIVOS)) is not None:
        atributos["mf-motivo"] = {"DataType": "String", "StringValue": motivo}
    for nombre in draw(st.lists(st.sampled_from(["mf-detalle", "mf-funcion", "otro", "mf-cola-origen"]), max_size=3)):
        atributos[nombre] = draw(
            st.one_of(
                st.builds(lambda v: {"DataType": "String", "StringValue": v}, texto_sqs),
                st.builds(lambda v: {"DataType": "Binary", "BinaryValue": v}, st.binary(max_size=8)),
            )
        )
    return {
        "MessageId": draw(st.uuids()).hex,
        "ReceiptHandle": "rh",
        "Body": cuerpo,
        "Attributes": sistema,
        "MessageAttributes": atributos,
    }


@given(crudos=st.lists(mensaje_sqs(), min_size=1, max_size=8), version=valor_json)
def test_fuzz_dlq_any_messages_are_read_classified_and_printed_without_error(crudos, version, monkeypatch) -> None:
    # GIVEN any messages a DLQ can hold (bodies of any shape and depth, odd attributes, no timestamps)
    mensajes = [leer(m) for m in crudos]

    # WHEN classified per group and printed for a person and as JSON
    informe = clasificar_grupos(mensajes, version_esperada=version, cola="mercadofresco-erp-fallidos")
    consola = Console(width=50, file=io.StringIO(), force_terminal=True)
    monkeypatch.setattr(presentacion, "salida", consola)
    presentacion.informe(informe, "mercadofresco-erp-fallidos")
    presentacion.mensajes(mensajes, "muestra")
    texto_json = io.StringIO()
    monkeypatch.setattr("sys.stdout", texto_json)
    presentacion.imprimir_json(informe.a_dict())

    # THEN every message is in exactly one group, each group has a verdict, and the JSON is valid
    assert sum(g.diagnostico.muestra for g in informe.grupos) == len(mensajes)
    assert informe.tipo and all(g.diagnostico.tipo for g in informe.grupos)
    assert json.loads(texto_json.getvalue())["tipo"] == informe.tipo
    # AND each group's command is one line, and selects exactly that group's messages
    lineas = consola.file.getvalue().splitlines()
    sin_grupo = {m.message_id for m in mensajes}
    for grupo in informe.grupos:
        assert grupo.orden is None or ("\n" not in grupo.orden and grupo.orden in lineas)
        if grupo.orden and " reprocesar " in grupo.orden:
            args = construir_parser().parse_args(shlex.split(grupo.orden)[1:])
            plan = Plan(dlq=None, destino=None, filtro=args.filtro, motivo=args.motivo)  # type: ignore[arg-type]
            filtro = jmespath.compile(args.filtro)
            elegidos = [m for m in mensajes if preparar(m, plan, filtro) is not None]
            assert len(elegidos) == grupo.diagnostico.muestra
            assert {m.message_id for m in elegidos} <= sin_grupo  # no message belongs to two groups
            sin_grupo -= {m.message_id for m in elegidos}
