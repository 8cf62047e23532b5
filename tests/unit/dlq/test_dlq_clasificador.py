"""The classifier as a pure function over dead letters with realistic, generated timestamps."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from dlq_generadores import caida_de_proveedor, crudo, ejercicio_2, goteo_de_datos, pedido, repartidos
from mercadofresco_ops.dlq.clasificador import DE_DATOS, ENVENENADO, TRANSITORIO, clasificar, distribucion
from mercadofresco_ops.dlq.mensajes import leer


def test_clasificar_exercise_2_window_after_a_deploy_is_envenenado_by_content() -> None:
    # GIVEN the lesson's exercise 2: 340 messages, all "version": 2, in a 1 h 47 min window, ReceiveCount 5
    mensajes = ejercicio_2()

    # WHEN classified against a consumer that reads version 1
    diagnostico = clasificar(mensajes, version_esperada=1)

    # THEN poison, proved by the content, with the misleading window named as only a clue
    assert diagnostico.tipo == ENVENENADO
    assert diagnostico.confianza == "alta"
    assert diagnostico.distribucion.forma == "ventana"
    assert "El contenido es la prueba: 340/340" in diagnostico.explicacion
    assert '"version": 2' in diagnostico.explicacion
    assert "1 h 47 min" in diagnostico.explicacion and "solo una pista" in diagnostico.explicacion
    assert any("uniforme = 5 en 340/340" in e for e in diagnostico.evidencias)
    assert any("ausente en 340/340" in e for e in diagnostico.evidencias)


def test_clasificar_30_min_burst_with_healthy_content_is_transitorio() -> None:
    # GIVEN a 30-minute burst of healthy orders after a provider outage (18:12–18:41)
    mensajes = caida_de_proveedor()

    # WHEN classified
    diagnostico = clasificar(mensajes)

    # THEN transient: a window and nothing wrong in the content
    assert diagnostico.tipo == TRANSITORIO
    assert diagnostico.confianza == "alta"
    assert diagnostico.distribucion.forma == "ventana"
    assert diagnostico.distribucion.inicio == datetime(2026, 11, 23, 18, 12, tzinfo=UTC)
    assert any("sin defecto visible en 340/340" in e for e in diagnostico.evidencias)


def test_clasificar_three_day_trickle_with_different_defects_is_a_data_problem() -> None:
    # GIVEN malformed and missing-field messages trickling in over three days
    mensajes = goteo_de_datos()

    # WHEN classified
    diagnostico = clasificar(mensajes)

    # THEN data: a trickle and a different defect from message to message
    assert diagnostico.tipo == DE_DATOS
    assert diagnostico.confianza == "alta"
    assert diagnostico.distribucion.forma == "goteo"
    assert "3 d" in diagnostico.explicacion
    assert any("errores distintos" in e for e in diagnostico.evidencias)


def test_clasificar_trickle_of_valid_events_without_reason_is_intermittent_dependency_or_consumer_bug() -> None:
    # GIVEN healthy orders without a reason trickling in over two days (SQS's redrive, now and then)
    inicio = datetime(2026, 11, 20, tzinfo=UTC)
    mensajes = [leer(crudo(pedido(i), t)) for i, t in enumerate(repartidos(inicio, timedelta(days=2), 40))]

    # WHEN classified
    diagnostico = clasificar(mensajes)

    # THEN not "bad data": a flapping dependency or a consumer bug, with the consumer's errors to look at,
    # and never the advice that a redrive only brings them back (they are valid: it processes them)
    assert (diagnostico.tipo, diagnostico.confianza) == (TRANSITORIO, "baja")
    assert "dependencia intermitente" in diagnostico.explicacion and "fallo del consumidor" in diagnostico.explicacion
    assert "Errores por tipo" in diagnostico.explicacion
    assert "devolverá" not in diagnostico.explicacion and "devolverían" not in diagnostico.explicacion


def test_clasificar_exhausted_deferrals_are_transitorio_even_as_a_trickle() -> None:
    # GIVEN ERP messages that exhausted their deferrals while the circuit stayed open, over a day
    inicio = datetime(2026, 11, 20, tzinfo=UTC)
    mensajes = [
        leer(crudo(pedido(i), t, 1, "aplazamientos-agotados"))
        for i, t in enumerate(repartidos(inicio, timedelta(days=1), 20))
    ]

    # WHEN classified
    diagnostico = clasificar(mensajes)

    # THEN transient: the dependency was down
    assert (diagnostico.tipo, diagnostico.confianza) == (TRANSITORIO, "alta")


def test_clasificar_reads_the_version_inside_sns_and_eventbridge_envelopes() -> None:
    # GIVEN version-2 events inside SNS and EventBridge envelopes (EventBridge's own "version" is "0")
    t = datetime(2026, 11, 22, 22, 4, tzinfo=UTC)

    sns = {"Type": "Notification", "Message": json.dumps(pedido(1, version=2))}
    eb = {"version": "0", "detail-type": "PedidoCreado", "source": "mercadofresco.tienda", "detail": pedido(2, 2)}
    mensajes = [leer(crudo(sns, t)), leer(crudo(eb, t + timedelta(minutes=5)))]

    # WHEN classified
    diagnostico = clasificar(mensajes)

    # THEN both count as version 2: poison
    assert [m.version for m in mensajes] == [2, 2]
    assert diagnostico.tipo == ENVENENADO


def test_clasificar_empty_sample_fails() -> None:
    # GIVEN / WHEN / THEN an empty sample is refused, not classified
    with pytest.raises(ValueError, match="vacía") as error:
        clasificar([])
    assert error.type is ValueError


def test_distribucion_histogram_spreads_every_message_over_bars() -> None:
    # GIVEN 340 messages over 1 h 47 min
    tiempos = [m.enviado_ms for m in ejercicio_2()]

    # WHEN the distribution is computed
    dist = distribucion(tiempos)

    # THEN 12 bars that add up to the sample, and one text line per bar
    assert len(dist.histograma) == 12
    assert sum(n for _, n in dist.histograma) == 340
    assert len(dist.texto_histograma()) == 12
    assert dist.duracion_s == pytest.approx(107 * 60, abs=1)


def test_distribucion_labels_are_in_spanish() -> None:
    # GIVEN exercise 2 (Sunday night)
    diagnostico = clasificar(ejercicio_2())

    # THEN the evidence names Sunday as the on-call says it
    assert any("de dom 22 22:04 a dom 22 23:51 UTC (1 h 47 min)" in e for e in diagnostico.evidencias)
    assert diagnostico.distribucion.texto_histograma()[0].startswith("dom 22 22:04 │")
