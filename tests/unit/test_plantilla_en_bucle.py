"""The tools' questions to the template get the same answers when its consumers are written with ``Fn::ForEach``.

Decision 0130 restructures ``template.yaml`` into units and loops; every tool reads it through the template
model, so a restructure must change none of their answers. This runs each tool's own reading of the template
(the on-call's topology and smoke test, the local run's stand-ins, breakers, fan-out and signed URLs, the
chaos campaign's targets, weights, experiments and schedules, the sam local level's stand-ins, the time
bounds) against the template and against a copy whose consumers are loops (:mod:`tests.plantilla_en_bucle`),
and compares. Where an answer follows template order only because of where a resource is written (a
consumer's queues), it is compared as a set: a loop's resources come after the written ones.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco_caos import especificacion, fis, lambdas
from mercadofresco_caos.sorteo import programa
from mercadofresco_local import RAIZ, carritos, firma, flujo, observador
from mercadofresco_local.proveedores import Proveedores
from mercadofresco_ops.smoke import consumidores_del_reparto
from mercadofresco_ops.topologia import Topologia
from sam_local.cases import stand_in
from template_model import Template, as_nested
from template_model import messaging as m
from template_model.bounds import time_bounds
from template_model.document import has_loops
from template_model.wiring import FUNCTIONS

from tests.plantilla_en_bucle import consumidores_en_bucle

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(scope="module")
def plana() -> Template:
    return Template(path=RAIZ / "template.yaml")


UNIDAD = "Consumidores"  # the unit that holds the topic's consumers (unidades/consumidores.yaml)


@pytest.fixture(scope="module")
def en_bucle(plana: Template) -> Iterator[tuple[Path, Path]]:
    """(a copy of template.yaml nesting the looped copy of the consumers' unit, that unit's copy), each beside its
    original (their CodeUri and DefinitionUri paths resolve as the originals')."""
    marca = uuid.uuid4().hex[:8]
    ubicacion = Path(plana.resources[UNIDAD]["Properties"]["Location"])
    unidad = RAIZ / ubicacion.with_name(f".{ubicacion.stem}-en-bucle-{marca}.json")
    unidad.write_text(json.dumps(consumidores_en_bucle(Template(path=RAIZ / ubicacion)), indent=1))
    raiz = json.loads(json.dumps(plana.doc))
    raiz["Resources"][UNIDAD]["Properties"]["Location"] = str(unidad.relative_to(RAIZ))
    ruta = RAIZ / f".template-en-bucle-{marca}.json"
    ruta.write_text(json.dumps(raiz, indent=1))
    try:
        yield ruta, unidad
    finally:
        ruta.unlink()
        unidad.unlink()


def _consumidor(c: Any) -> tuple[Any, ...]:
    """A consumer, its queues and DLQs as sets (their order is where each is written)."""
    return (c.function, frozenset(c.queues), frozenset(c.dead_letter_queues), c.role, c.log_group,
            c.key_prefixes, c.providers)  # fmt: skip


def preguntas(ruta: Path) -> dict[str, Any]:
    """Every answer the tools read from the template at ``ruta``, each through the tool's own code."""
    t = Template(path=ruta)
    topologia = Topologia(sufijo="-pre", ruta=ruta)
    colas = t.paths(m.queues)
    funciones = t.paths(lambda u: list(u.of_type(*FUNCTIONS)))
    limites = {prefijo: time_bounds(as_nested(u.doc, u) if prefijo else u.doc, u.folder) for prefijo, u in t.walk()}
    return {
        # the model itself, asked of the whole stack
        "consumidores": sorted(map(_consumidor, m.stack_consumers(t))),
        "proveedores": m.providers_called(t),
        "dlqs": sorted(t.paths(m.dead_letter_queues)),
        "flujos": m.workflow_queues(t),
        "reparto": sorted(t.paths(m.subscribed_queues)),
        "retenidos": sorted(t.paths(m.retained)),
        "plazos": {p: (b.timeouts_s, b.leases_s, b.workflows, b.literals) for p, b in limites.items()},
        # the on-call's commands (mf-dlq, mf-smoke, mf-retenidos)
        "nombres de DLQ": sorted(topologia.nombres_dlq()),
        "origenes": {d: sorted(topologia.origenes(d)) for d in topologia.dlqs},
        "registros": {c: topologia.registros_del_consumidor(c) for c in colas},
        "interruptor por cola": {c: topologia.dependencia_de_cola(c) for c in colas},
        "claves del reparto": [(c.function, c.keys_for("PED-1")) for c in consumidores_del_reparto(t)],
        # the local run
        "stand-ins": {v: p.nombre for v, p in Proveedores(plantilla=t).por_variable().items()},
        "interruptores": observador.interruptores(t),
        "balances del reparto": {cola: c.function for cola, c in flujo.reparto(t).items()},
        "urls firmadas": firma.urls_firmadas(t),
        "carritos": carritos.tabla_de_carritos(t),
        # the chaos campaign
        "consumidores con proveedor": [c.function for c in especificacion.consumidores(t)],
        "pesos": lambdas.funciones(t),
        "objetivos FIS": fis.funciones_objetivo(de=t),
        "calendarios": [programa(semilla, plantilla=t) for semilla in (1, 2, 3)],
        # the sam local level
        "stand-in por función": {f: stand_in(t, f) for f in funciones},
    }


def test_the_copy_writes_the_consumers_in_loops_and_expands_to_the_same_resources(
    plana: Template, en_bucle: tuple[Path, Path]
) -> None:
    # GIVEN the consumers' unit copied  THEN its consumers are loops, some shared by several consumers
    ruta, unidad = en_bucle
    escrito = json.loads(unidad.read_text())
    bucles = {k: v[1] for k, v in escrito["Resources"].items() if k.startswith("Fn::ForEach::")}
    assert "ErpFunction" not in escrito["Resources"] and has_loops(escrito["Resources"])
    assert any(len(instancias) > 1 for instancias in bucles.values())
    assert {"Erp", "Correo"} <= {i for instancias in bucles.values() for i in instancias}
    # WHEN the model reads the copy of the stack  THEN its unit holds the unit's resources, under the same ids
    assert set(Template(path=ruta).units()[UNIDAD].resources) == set(plana.units()[UNIDAD].resources)


def test_every_tool_question_gets_the_same_answer_from_the_looped_copy(en_bucle: tuple[Path, Path]) -> None:
    # GIVEN the tools' questions, asked of the template and of the copy whose consumers' unit is looped
    planas, en_bucles = preguntas(RAIZ / "template.yaml"), preguntas(en_bucle[0])
    # THEN each gets the same answer (and a real one: the template has consumers, providers, DLQs...)
    assert planas["consumidores"] and planas["proveedores"] and planas["balances del reparto"]
    assert {k: v for k, v in en_bucles.items() if v != planas[k]} == {}
