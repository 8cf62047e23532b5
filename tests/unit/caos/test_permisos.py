"""The campaign's request-vs-role check: a seed's denied request is a violation; unused grants are campaign-wide."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from least_privilege.registro import Llamada
from mercadofresco_caos import permisos
from mercadofresco_caos.informe import ResultadoSemilla, anotar
from mercadofresco_local import RAIZ
from mercadofresco_local.informe import Informe
from sam_emulator.template import Template


@pytest.fixture(scope="module")
def comprobador() -> permisos.Comprobador:
    # GIVEN the template resolved as a session would: the table and the key it is encrypted with created
    p = Template(path=RAIZ / "template.yaml")
    for clave in p.of_type("AWS::KMS::Key"):
        p.physical_ids[clave] = {"Ref": "1234abcd", "Arn": f"arn:aws:kms:{p.region}:{p.account}:key/1234abcd"}
    tabla = p.properties("TablaIdempotencia")["TableName"]
    p.physical_ids["TablaIdempotencia"] = {
        "Ref": tabla,
        "Arn": f"arn:aws:dynamodb:{p.region}:{p.account}:table/{tabla}",
    }
    return permisos.Comprobador(p)


def _escritura(comprobador: permisos.Comprobador, principal: str, clave: str) -> Llamada:
    (tabla,) = [t for t in comprobador.destino.claves_particion if "idempotencia" in t]
    return Llamada(principal, "dynamodb", "PutItem", {"TableName": tabla, "Item": {"clave": {"S": clave}}})


def test_a_request_the_role_allows_is_no_violation_and_uses_its_statement(comprobador: permisos.Comprobador) -> None:
    # GIVEN a seed in which the ERP consumer released stock (its own key prefix)
    resultado = comprobador.semilla([_escritura(comprobador, "Consumidores/ErpFunction", "liberacion:P1:SKU-1")] * 2)
    # THEN nothing is denied, both calls counted (each with DynamoDB's decrypt of the table key for the
    # caller, decided by the role and the key policy), and the statement that allowed it is not "unused"
    assert resultado.violaciones == []
    assert resultado.solicitudes == 4
    assert resultado.principales == ["Consumidores/ErpFunction", "DatosKey"]
    erp = [s for s in resultado.sin_usar if s.startswith("Consumidores/ErpFunction · ")]
    assert erp and not [s for s in erp if "dynamodb:PutItem" in s]
    # AND every statement of a principal that made no request is unused in this seed
    assert [s for s in resultado.sin_usar if s.startswith("CobroFunction · ")]


def test_a_request_the_role_would_deny_is_a_violation_naming_principal_action_and_key(
    comprobador: permisos.Comprobador,
) -> None:
    # GIVEN the ERP consumer writing a key of the charge's (no role of its grants it)
    resultado = comprobador.semilla([_escritura(comprobador, "Consumidores/ErpFunction", "cobro:P1")])
    # THEN the seed has one violation of the permission invariant, with what was denied
    (violacion,) = resultado.violaciones
    assert violacion.invariante == permisos.INVARIANTE
    assert "Consumidores/ErpFunction: dynamodb:PutItem" in violacion.detalle
    assert "cobro:P1" in violacion.detalle and "implicit deny" in violacion.detalle


def test_a_caller_without_a_role_in_the_template_is_a_violation(comprobador: permisos.Comprobador) -> None:
    resultado = comprobador.semilla([Llamada("FuncionDesconocida", "sqs", "ListQueues", {})])
    assert [v.detalle for v in resultado.violaciones] == ["FuncionDesconocida no tiene rol en la plantilla"]


def test_unused_in_the_campaign_means_unused_in_every_seed() -> None:
    # GIVEN two seeds: A's statement 1 used in the second seed only, B never ran
    semillas = [
        (["A"], ["A · 1: x", "A · 2: y", "B · 1: z"]),
        (["A"], ["A · 2: y", "B · 1: z"]),
    ]
    # THEN only A's statement 2 is unused, and B is listed as a role with no request at all
    assert permisos.sin_usar_en_campana(semillas) == (["A · 2: y"], ["B"])


def test_without_the_recorder_a_seed_is_not_checked() -> None:
    assert permisos.activo() is None
    assert permisos.comprobar_semilla(Template(path=RAIZ / "template.yaml")) is None


def _resultado(semilla: int, **campos: object) -> ResultadoSemilla:
    base = {
        "semilla": semilla,
        "pedidos": 1,
        "faltas": 0,
        "muertes": 0,
        "estrangulados": 0,
        "violaciones": [],
        "informe_invariantes": [],
        "reembolsos": 0,
        "notas": [],
    }
    return ResultadoSemilla(**{**base, **campos})  # type: ignore[arg-type]


def test_the_campaign_report_fails_on_a_denied_request_and_lists_unused_grants(
    comprobador: permisos.Comprobador,
) -> None:
    # GIVEN two checked seeds, the second with a denied request, crossing a child's JSON line
    denegada = comprobador.semilla([_escritura(comprobador, "Consumidores/ErpFunction", "cobro:P1")])
    resultados = [
        _resultado(
            1,
            solicitudes_iam=3,
            principales_iam=["ErpFunction"],
            permisos_sin_usar=["ErpFunction · X: a", "Otra · Y: b"],
        ),
        _resultado(
            2,
            violaciones=denegada.violaciones,
            solicitudes_iam=denegada.solicitudes,
            principales_iam=denegada.principales,
            permisos_sin_usar=["ErpFunction · X: a", "Otra · Y: b"],
        ),
    ]
    resultados = [ResultadoSemilla.desde_json(asdict(r)) for r in resultados]
    # WHEN the campaign's report is written
    informe = Informe("caos")
    anotar(informe, resultados, 6, 6.0)
    # THEN the permission invariant fails, and the unused grant and the idle role are listed
    (invariante,) = [i for i in informe.invariantes if permisos.INVARIANTE in i.nombre]
    assert not invariante.cumple and not informe.correcto
    assert "permiso concedido que ninguna semilla usó: ErpFunction · X: a" in informe.notas
    assert "roles sin ninguna solicitud en la campaña: Otra" in informe.notas
    # AND the denial is replayed with the recorder installed (plain mf-demo does not record)
    (nota,) = [n for n in informe.notas if permisos.INVARIANTE in n]
    assert "python -m mercadofresco_caos.hijo --escenario caos --semilla 2" in nota
