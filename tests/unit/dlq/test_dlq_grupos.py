"""``clasificar`` per group: a mixed DLQ, a slow trickle of valid messages, a data problem of a few customers."""

from __future__ import annotations

import shlex

import jmespath
from dlq_generadores import datos_de_algunos_clientes, dlq_mixta, goteo_de_validos
from mercadofresco_ops.dlq.argumentos import construir_parser
from mercadofresco_ops.dlq.clasificador import DE_DATOS, ENVENENADO, TRANSITORIO
from mercadofresco_ops.dlq.grupos import MIXTO, clasificar_grupos
from mercadofresco_ops.dlq.reproceso import Plan, preparar

DLQ = "mercadofresco-erp-fallidos"


def _veredictos(informe) -> dict[tuple[str | None, str], tuple[str, int]]:
    return {(g.motivo, g.contenido): (g.diagnostico.tipo, g.diagnostico.muestra) for g in informe.grupos}


def _seleccionados(orden: str, mensajes) -> set[str]:
    """The MessageIds the printed command would move, parsed exactly as mf-dlq parses it."""
    args = construir_parser().parse_args(shlex.split(orden)[1:])
    plan = Plan(dlq=None, destino=None, filtro=args.filtro, motivo=args.motivo)  # type: ignore[arg-type]
    filtro = jmespath.compile(args.filtro) if args.filtro else None
    return {m.message_id for m in mensajes if preparar(m, plan, filtro) is not None}


def test_clasificar_grupos_mixed_dlq_gives_one_verdict_per_group_not_one_false_verdict() -> None:
    # GIVEN a DLQ with an outage's redrive, a version-2 producer, bad amounts of two customers and garbage
    mensajes = dlq_mixta()

    # WHEN classified per group
    informe = clasificar_grupos(mensajes, version_esperada=1, cola=DLQ)

    # THEN four groups, largest first, each with its own verdict, and "mixto" overall
    tipo_v1, tipo_v2 = 'tipo "PedidoConfirmado", version 1', 'tipo "PedidoConfirmado", version 2'
    assert _veredictos(informe) == {
        (None, tipo_v1): (TRANSITORIO, 120),
        (None, tipo_v2): (ENVENENADO, 40),
        ("dato-invalido", tipo_v1): (DE_DATOS, 12),
        ("json-invalido", "cuerpo ilegible (no es un objeto JSON)"): (ENVENENADO, 6),
    }
    assert [g.diagnostico.muestra for g in informe.grupos] == [120, 40, 12, 6]
    assert informe.tipo == MIXTO and "4 problemas distintos" in informe.explicacion


def test_clasificar_grupos_each_command_is_one_line_moving_exactly_its_group() -> None:
    # GIVEN the mixed DLQ, classified
    mensajes = dlq_mixta()
    informe = clasificar_grupos(mensajes, cola=DLQ)

    for grupo in informe.grupos:
        # THEN every group has one single-line command
        assert grupo.orden and "\n" not in grupo.orden
        if grupo.contenido.startswith("cuerpo ilegible"):
            # AND unreadable bodies are not reprocessed: their command saves the evidence
            assert grupo.orden.startswith(f"mf-dlq inspeccionar --cola {DLQ}")
            continue
        # AND the reprocess command, parsed as mf-dlq parses it, selects exactly this group's messages
        assert grupo.orden.startswith(f"mf-dlq reprocesar --cola {DLQ} --motivo ")
        miembros = {
            m.message_id
            for m in mensajes
            if m.evento is not None
            and m.motivo == grupo.motivo
            and grupo.contenido.endswith(f"version {m.evento['version']}")
        }
        assert len(miembros) == grupo.diagnostico.muestra
        assert _seleccionados(grupo.orden, mensajes) == miembros
    # AND data and poison groups say the command waits for the fix
    notas = {g.diagnostico.tipo: g.nota_orden for g in informe.grupos}
    assert notas[DE_DATOS].startswith("solo después de corregir el dato")


def test_clasificar_grupos_trickle_of_valid_events_points_at_the_consumer_errors() -> None:
    # GIVEN 30 valid notices without a reason trickling in over 20 hours
    informe = clasificar_grupos(goteo_de_validos(), cola=DLQ)

    # THEN one group: a flapping dependency or a consumer bug, pointing at the ERP function's logs
    (grupo,) = informe.grupos
    d = grupo.diagnostico
    assert (informe.tipo, d.tipo, d.distribucion.forma) == (TRANSITORIO, TRANSITORIO, "goteo")
    assert "dependencia intermitente" in d.explicacion and "fallo del consumidor" in d.explicacion
    assert any("/aws/lambda/mercadofresco-erp" in e for e in d.evidencias)
    # AND never the advice that a redrive only brings them back: they are valid, a redrive processes them
    assert "volver" not in d.explicacion and "devolver" not in d.explicacion
    assert grupo.orden == (
        "mf-dlq reprocesar --cola mercadofresco-erp-fallidos --motivo ninguno "
        "--filtro 'tipo == `\"PedidoConfirmado\"` && version == `1`'"
    )
    assert not grupo.nota_orden.startswith("solo después")


def test_clasificar_grupos_data_problem_names_the_customers_and_pedidos_it_touches() -> None:
    # GIVEN healthy redriven orders plus bad amounts/currencies that only two customers produce
    informe = clasificar_grupos(datos_de_algunos_clientes(), cola=DLQ)

    # THEN the data group names exactly those customers and its 16 orders; the healthy group is transient
    por_tipo = {g.diagnostico.tipo: g for g in informe.grupos}
    assert set(por_tipo) == {TRANSITORIO, DE_DATOS} and informe.tipo == MIXTO
    datos = por_tipo[DE_DATOS]
    assert datos.motivo == "dato-invalido" and datos.diagnostico.muestra == 16
    assert sorted(datos.clientes) == ["cli-3", "cli-8"] and datos.total_clientes == 2
    assert datos.total_pedidos == 16 and len(datos.pedidos) == 10  # listed up to 10, counted in full
    assert por_tipo[TRANSITORIO].total_clientes == 20


def test_report_on_a_30_column_terminal_prints_each_command_on_one_line(monkeypatch) -> None:
    # GIVEN the mixed DLQ's report and a console only 30 columns wide (a split pane, a phone)
    import io

    from mercadofresco_ops.dlq import presentacion
    from rich.console import Console

    informe = clasificar_grupos(dlq_mixta(), cola=DLQ)
    buffer = io.StringIO()
    monkeypatch.setattr(presentacion, "salida", Console(width=30, file=buffer, force_terminal=True, color_system=None))

    # WHEN printed for a person
    presentacion.informe(informe, DLQ)

    # THEN every command is one whole line: the terminal wraps it for the eye, a copy gets it intact
    lineas = buffer.getvalue().splitlines()
    for grupo in informe.grupos:
        assert grupo.orden in lineas
