"""Adding a consumer edits the template and adds a handler: every tool sees it with no other edit (issue 40).

The copy of the template with one more consumer (:mod:`tests.consumidor_nuevo`: "Factura", one invoice per
confirmed order) is read by each tool's own code, unchanged: the template model, cfn-lint with the rule pack,
the least-privilege check's policies, the on-call's DLQ topology, the local run's stand-ins, fan-out and
breakers, the chaos campaign's deliveries and targets, the sam local level and the deploy level's checks.
The local run's provisioning of it is in tests/integration/runtime_local/test_consumidor_nuevo.py.
"""

from __future__ import annotations

import ast
import json
import re
from typing import TYPE_CHECKING

import pytest
from cfn_lint_mensajeria import RULES_DIR
from cfnlint.api import lint_file
from emulated_account.observaciones import Cuenta
from least_privilege.evaluador import Decision, Solicitud, decidir
from least_privilege.roles import plantilla_transformada, politicas_por_principal
from mercadofresco_caos import especificacion, fis, lambdas
from mercadofresco_local import RAIZ, firma, flujo, observador
from mercadofresco_local.proveedores import Proveedores
from mercadofresco_ops.smoke import consumidores_del_reparto
from mercadofresco_ops.topologia import Topologia
from sam_emulator.template import Template
from sam_local.cases import stand_in
from template_model import Template as TemplateModel
from template_model import as_nested
from template_model import messaging as m

from tests.consumidor_nuevo import PREFIJO, plantilla_con_consumidor_nuevo
from tests.unit.iam.pila import creada

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

# The new consumer in the consumers' unit (its DLQ in the root, with every DLQ), named by stack path.
UNIDAD = "Consumidores"
NUEVO, COLA, DLQ = f"{UNIDAD}/FacturaFunction", f"{UNIDAD}/ColaFactura", "ColaFacturaFallidos"


@pytest.fixture(scope="module")
def copia() -> Iterator[Path]:
    with plantilla_con_consumidor_nuevo(RAIZ) as ruta:
        yield ruta


@pytest.fixture(scope="module")
def plantilla(copia: Path) -> Template:
    return Template(path=copia)


def test_the_model_sees_the_new_consumer_with_its_queues_key_prefix_and_provider(plantilla: Template) -> None:
    # GIVEN the copy  WHEN the model lists consumers and providers
    (consumidor,) = [c for c in m.stack_consumers(plantilla) if c.function == NUEVO]
    # THEN it is a consumer of its own queue, redriving to its own DLQ, claiming only its own keys
    assert consumidor.queues == (COLA,) and consumidor.dead_letter_queues == (DLQ,)
    assert consumidor.role == f"{UNIDAD}/FacturaFunctionRole" and consumidor.log_group == f"{UNIDAD}/FacturaLogs"
    assert consumidor.key_prefixes == (f"{PREFIJO}:*",)
    # AND the topic delivers to it; its provider is a dependency with a breaker of its own and a sandbox stand-in
    assert COLA in plantilla.paths(m.subscribed_queues) and DLQ in plantilla.paths(m.dead_letter_queues)
    (proveedor,) = [p for p in m.providers_called(plantilla) if p.dependency == "factura"]
    assert proveedor.variable == "FACTURA_URL" and proveedor.parameter == "FacturaUrl"
    assert proveedor.stand_in == "Simuladores/SimuladorFacturaFunction"  # in the sandbox unit


def test_cfn_lint_and_the_rule_pack_pass_the_copy(copia: Path) -> None:
    # GIVEN the copy, whose new DLQ has its alarm only because the DLQ alarms' loop has one more instance
    # WHEN cfn-lint checks it with the pack  THEN nothing is reported (E9102 would name a DLQ without alarm)
    # (the consumers' unit as the copy nests it: what the copy passes written in, as the rules read a unit its
    # template.yaml nests)
    unidad = TemplateModel(copia).units()[UNIDAD]
    anidada = unidad.path.with_name(f"{unidad.path.stem}-anidada.json")
    anidada.write_text(json.dumps(as_nested(unidad.doc, unidad)))
    try:
        for ruta in (copia, anidada):
            problemas = lint_file(ruta, config={"append_rules": [RULES_DIR], "regions": ["eu-south-2"]})
            assert [str(p) for p in problemas] == []
    finally:
        anidada.unlink()
    assert "AlarmaColaFacturaFallidos" in Template(path=copia).resources


def test_the_least_privilege_policies_give_the_new_role_its_own_queue_and_keys_only(plantilla: Template) -> None:
    # GIVEN the new function's role as SAM deploys it, resolved to ARNs in a stack deployed from the copy
    pila = creada(plantilla)
    politicas = politicas_por_principal(pila, plantilla_transformada(pila.path, pila.region))[NUEVO]
    propia, ajena = pila.get_att(COLA, "Arn"), pila.get_att(f"{UNIDAD}/ColaErp", "Arn")

    def decide(accion: str, recurso: str, *contexto: tuple[str, tuple[str, ...]]) -> Decision:
        return decidir(politicas, Solicitud(accion, recurso, tuple(contexto)))

    # THEN it may poll its queue and claim its own keys, not another consumer's queue or keys
    assert decide("sqs:ReceiveMessage", propia) is Decision.PERMITIDA
    assert decide("sqs:ReceiveMessage", ajena) is not Decision.PERMITIDA
    tabla = pila.get_att("TablaIdempotencia", "Arn")
    assert decide("dynamodb:PutItem", tabla, ("dynamodb:LeadingKeys", ("factura:PED-1",))) is Decision.PERMITIDA
    assert decide("dynamodb:PutItem", tabla, ("dynamodb:LeadingKeys", ("aviso-erp:PED-1",))) is not Decision.PERMITIDA


def test_the_on_call_tools_see_its_dlq_and_its_breaker(copia: Path, plantilla: Template) -> None:
    # GIVEN the on-call's topology of a stack deployed from the copy
    topologia = Topologia(sufijo="-pre", ruta=copia)
    # THEN mf-dlq knows its DLQ, where it comes from and which breaker gates a redrive of it
    assert "mercadofresco-factura-fallidos-pre" in topologia.nombres_dlq()
    assert topologia.dependencia_de_cola(COLA) == "factura"
    assert topologia.registros_del_consumidor(COLA) is not None
    # AND mf-smoke expects its effect for a confirmed order
    claves = dict((c.function, c.keys_for("PED-1")) for c in consumidores_del_reparto(plantilla))
    assert claves[NUEVO] == ("factura:PED-1",)


def test_the_local_run_gives_it_a_stand_in_a_breaker_and_a_share_of_the_fan_out(plantilla: Template) -> None:
    # GIVEN the local run reading the copy
    # THEN its provider has a stand-in, its breaker is watched, its queue is part of the fan-out's balance
    assert Proveedores(plantilla=plantilla).por_variable()["FACTURA_URL"].nombre == "factura"
    assert "factura" in observador.interruptores(plantilla)
    assert flujo.reparto(plantilla)[COLA].function == NUEVO
    assert "FACTURA_URL" in firma.urls_firmadas(plantilla)


def test_the_chaos_campaign_and_the_levels_target_it(plantilla: Template) -> None:
    # GIVEN the chaos campaign, the sam local level and the deploy level reading the copy
    # THEN its Lambda faults and FIS experiments can hit the new consumer, sam local knows its stand-in
    assert NUEVO in [c.function for c in especificacion.consumidores(plantilla)]
    assert "factura" in lambdas.funciones(plantilla)
    assert NUEVO in fis.funciones_objetivo(de=plantilla)
    assert stand_in(plantilla, NUEVO) == "factura"
    # AND the deploy level's checks (every DLQ empty, every consumer's queue drained) include its queues
    cuenta = Cuenta.__new__(Cuenta)  # its names only: no account behind it
    cuenta.plantilla = plantilla
    assert "mercadofresco-factura-fallidos" in cuenta.dlqs
    assert (
        "mercadofresco-factura" in cuenta.colas_de_consumidores and "mercadofresco-factura" in cuenta.colas_del_reparto
    )
    # ...and a confirmed order is awaited until the new consumer too has done its part (its own key for the order)
    # (each consumer as its unit names it)
    assert NUEVO.rsplit("/", 1)[-1] in [c.function for c in cuenta.avisados["CONFIRMADO"]]
    assert NUEVO.rsplit("/", 1)[-1] not in [c.function for c in cuenta.avisados["RECHAZADO"]]


def _textos_de_codigo(ruta: Path) -> Iterator[tuple[int, str]]:
    """Every string a module's code holds (not its docstrings, which explain with examples), with its line."""
    arbol = ast.parse(ruta.read_text(encoding="utf-8"))
    documentos = {
        id(n.body[0].value)
        for n in ast.walk(arbol)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }  # fmt: skip
    for n in ast.walk(arbol):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in documentos:
            yield n.lineno, n.value


def _nombres_de_consumidores() -> set[str]:
    """What names one consumer: its function, role, log group and queues (logical and deployed), its key prefixes."""
    nombres: set[str] = set()
    raiz = TemplateModel(RAIZ / "template.yaml")
    for ruta, unidad in raiz.walk():
        for c in m.consumers(unidad):
            colas = [raiz.locate(ruta + q) for q in c.queues] + [raiz.locate(d) for d in c.dead_letter_queues]
            nombres.update((c.function, *filter(None, (c.role, c.log_group))))
            nombres.update(n for plantilla, q in colas for n in (q, m.physical_name(plantilla, q, "QueueName")))
            nombres.update(p.removesuffix("*") for p in c.key_prefixes)  # "aviso-erp:", with its colon: a key
    return nombres


def test_no_tool_names_a_particular_consumer_in_its_code() -> None:
    # GIVEN what names each consumer of the template, and the code of the tools and the packages
    nombres = _nombres_de_consumidores()
    assert {"ErpFunction", "ColaCorreoFallidos", "mercadofresco-proyeccion", "aviso-erp:"} <= nombres
    patron = re.compile("|".join(re.escape(n) for n in sorted(nombres, key=len, reverse=True)))
    modulos = [r for carpeta in ("tools", "packages") for r in (RAIZ / carpeta).rglob("*.py") if "tests" not in r.parts]
    # WHEN every string their code holds is searched for those names
    nombrados = [
        f"{r.relative_to(RAIZ)}:{linea}: {encontrado.group(0)!r}"
        for r in modulos
        for linea, texto in _textos_de_codigo(r)
        if (encontrado := patron.search(texto))
    ]
    # ...and every line of their data files that is not a comment (the chaos spec, fallos.yaml, among them)
    datos = [
        r
        for carpeta in ("tools", "packages")
        for ext in ("yaml", "json")
        for r in (RAIZ / carpeta).rglob(f"*.{ext}")
        if "tests" not in r.parts and "node_modules" not in r.parts
    ]
    nombrados += [
        f"{r.relative_to(RAIZ)}:{n}: {encontrado.group(0)!r}"
        for r in datos
        for n, linea in enumerate(r.read_text(encoding="utf-8").splitlines(), 1)
        if not linea.lstrip().startswith("#") and (encontrado := patron.search(linea))
    ]
    # THEN none names one: the tools ask the template model, so a new consumer needs no edit there
    assert len(modulos) > 100 and any(r.name == "fallos.yaml" for r in datos)
    assert nombrados == []
