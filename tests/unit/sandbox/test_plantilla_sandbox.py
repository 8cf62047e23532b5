"""template.yaml's sandbox wiring: an empty provider URL deploys its simulador (in the Simuladores unit) and
points the callers at it."""

from __future__ import annotations

import pytest
from sam_emulator.template import Template

URLS_REALES = {
    "PasarelaUrl": "https://pasarela.example/api",
    "ErpUrl": "https://erp.example/api",
    "CorreoPrincipalUrl": "https://correo1.example/api",
    "CorreoSecundarioUrl": "https://correo2.example/api",
}
SIMULADORES = ("SimuladorPasarelaFunction", "SimuladorErpFunction", "SimuladorCorreoFunction")
UNIDAD = "Simuladores"  # the root's nested unit that plays the providers (unidades/simuladores.yaml)


def _variable(p: Template, funcion: str, variable: str) -> object:
    """A function's variable as the template that decides it writes it (a unit's parameter: what its parent passes)."""
    donde, lid = p.locate(funcion)
    return donde.written_above(donde.resources[lid]["Properties"]["Environment"]["Variables"][variable])[1]


def _de_tipo(p: Template, *tipos: str) -> set[str]:
    """Every resource of these types the stack creates, in the root or in a unit (``Simuladores/X``)."""
    return {prefijo + lid for prefijo, t in p.walk() for lid in t.of_type(*tipos)}


def test_plantilla_default_urls_empty_deploys_every_simulador() -> None:
    # GIVEN the template's defaults (a newcomer's first deploy)
    p = Template()
    # THEN the sandbox unit is part of the stack
    unidad = p.units()[UNIDAD]
    assert p.resources[UNIDAD]["Properties"]["Location"] == "unidades/simuladores.yaml"
    # AND it holds the three sandbox functions, their URLs and the shared table, and nothing else in the stack does
    assert {f"{UNIDAD}/{lid}" for lid in SIMULADORES} <= _de_tipo(p, "AWS::Serverless::Function")
    assert set(SIMULADORES) <= set(unidad.of_type("AWS::Serverless::Function"))
    assert _de_tipo(p, "AWS::Lambda::Url") == {
        f"{UNIDAD}/{lid}" for lid in ("SimuladorPasarelaUrl", "SimuladorErpUrl", "SimuladorCorreoUrl")
    }
    assert "TablaSimulador" in unidad.of_type("AWS::DynamoDB::Table")


def test_plantilla_given_urls_deploys_no_simulador() -> None:
    # GIVEN every provider's real URL
    p = Template(parameters=URLS_REALES)
    # THEN the sandbox unit is not created, and no simulator, function URL or table of theirs anywhere
    assert UNIDAD not in p.units()
    assert not {lid.rsplit("/", 1)[-1] for lid in _de_tipo(p, "AWS::Serverless::Function")} & set(SIMULADORES)
    assert not _de_tipo(p, "AWS::Lambda::Url")
    assert not {lid for lid in _de_tipo(p, "AWS::DynamoDB::Table") if lid.endswith("TablaSimulador")}
    # AND with only the ERP left a sandbox, the unit plays the ERP alone
    solo_erp = Template(parameters={**URLS_REALES, "ErpUrl": ""})
    unidad = solo_erp.units()[UNIDAD]
    assert set(unidad.of_type("AWS::Serverless::Function")) & set(SIMULADORES) == {"SimuladorErpFunction"}
    assert set(unidad.of_type("AWS::Lambda::Url")) == {"SimuladorErpUrl"}


# The defaults, every provider real, and each provider alone a sandbox.
COMBINACIONES = [{}, URLS_REALES, *({**URLS_REALES, parametro: ""} for parametro in URLS_REALES)]


@pytest.mark.parametrize(
    ("funcion", "variable", "url", "sufijo"),
    [
        ("CobroFunction", "PASARELA_URL", "SimuladorPasarelaUrl", ""),
        ("Consumidores/ErpFunction", "ERP_URL", "SimuladorErpUrl", ""),
        ("Consumidores/CorreoFunction", "CORREO_PRINCIPAL_URL", "SimuladorCorreoUrl", "principal"),
        ("Consumidores/CorreoFunction", "CORREO_SECUNDARIO_URL", "SimuladorCorreoUrl", "secundario"),
    ],
)
def test_plantilla_caller_url_is_the_simulador_url_signed_or_the_given_one(
    funcion: str, variable: str, url: str, sufijo: str
) -> None:
    # GIVEN the caller's variable in the template
    valor = _variable(Template(), funcion, variable)
    # THEN: the given URL when there is one, else the sandbox unit's output for it
    condicion, simulada, dada = valor["Fn::If"]
    assert Template().condition(condicion) and not Template(parameters=URLS_REALES).condition(condicion)
    assert simulada["Fn::Sub"] == f"${{{UNIDAD}.Outputs.{url}}}{sufijo}"
    assert "Ref" in dada
    # AND that output is the simulator's function URL (it ends with "/")
    unidad = Template().units()[UNIDAD]
    assert unidad.output(url) == {"Fn::GetAtt": [url, "FunctionUrl"]}
    assert unidad.resources[url]["Type"] == "AWS::Lambda::Url"
    # AND whenever the caller reads it, the unit exists and declares that output (else the deploy fails)
    for parametros in COMBINACIONES:
        p = Template(parameters=parametros)
        if p.condition(condicion):
            unidad = p.units()[UNIDAD]
            assert unidad.condition(unidad.doc["Outputs"][url].get("Condition")), parametros
            assert unidad.condition(unidad.resources[url].get("Condition")), parametros
    # AND, under the same condition only, the caller is told to sign (mercadofresco.http.auth)
    assert _variable(Template(), funcion, f"{variable}_AUTH") == {"Fn::If": [condicion, "AWS_IAM", ""]}


def test_plantilla_sandbox_has_no_path_token_nor_its_secret() -> None:
    # AWS_IAM authenticates the callers: a token in the URL would be one more secret to keep
    for prefijo, p in Template().walk():
        assert not [lid for lid in p.resources if "Secret" in lid and "Simulador" in lid], prefijo
        assert "SIMULADOR_SECRET_ARN" not in str(p.resources) and "{token}" not in str(p.resources), prefijo


def test_plantilla_no_function_gets_a_secret_in_an_environment_variable() -> None:
    # Dynamic references resolve at deploy time: the value would sit in the function's configuration.
    # GIVEN every function of the stack, in the root or in a unit, with its template's Globals
    for prefijo, p in Template().walk():
        globales = (((p.doc.get("Globals") or {}).get("Function") or {}).get("Environment") or {}).get("Variables", {})
        for lid, recurso in p.resources.items():
            if recurso["Type"] != "AWS::Serverless::Function":
                continue
            variables = {**globales, **(recurso["Properties"].get("Environment") or {}).get("Variables", {})}
            assert "{{resolve:" not in str(variables), prefijo + lid


def test_the_local_stand_ins_verify_signatures_exactly_where_the_template_signs() -> None:
    from mercadofresco_local.firma import urls_firmadas

    # GIVEN the defaults (every provider a sandbox) THEN each caller variable is its simulator's signed URL,
    # named in the sandbox unit as SAM names a nested resource
    firmadas = urls_firmadas(Template())
    assert firmadas == {
        "PASARELA_URL": f"{UNIDAD}/SimuladorPasarelaUrl",
        "ERP_URL": f"{UNIDAD}/SimuladorErpUrl",
        "CORREO_PRINCIPAL_URL": f"{UNIDAD}/SimuladorCorreoUrl",
        "CORREO_SECUNDARIO_URL": f"{UNIDAD}/SimuladorCorreoUrl",
    }
    # AND each names a function URL the unit creates
    for url in firmadas.values():
        unidad, lid = Template().locate(url)
        assert lid in unidad.of_type("AWS::Lambda::Url"), url
    # AND with real providers nothing is signed, nor verified
    assert urls_firmadas(Template(parameters=URLS_REALES)) == {}
    assert urls_firmadas(Template(parameters={**URLS_REALES, "ErpUrl": ""})) == {"ERP_URL": f"{UNIDAD}/SimuladorErpUrl"}
