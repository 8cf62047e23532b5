"""The generator's FIS experiment templates are the chaos unit's, nested and wired only under Chaos=enabled."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from cfn_lint_mensajeria import RULES_DIR
from cfnlint.api import lint_file
from mercadofresco_caos import especificacion, fis
from mercadofresco_local import RAIZ
from sam_emulator.template import Template
from template_model import with_defaults

if TYPE_CHECKING:
    from pathlib import Path

IGNORADAS = ["ES6000", "WS1004"]  # .cfnlintrc's, with its reasons


@pytest.fixture(scope="module")
def recursos() -> dict:
    return json.loads(json.dumps(Template().resources))


@pytest.fixture(scope="module")
def unidad() -> Template:
    """The chaos unit as the parent nests it with Chaos=enabled (what it passes, as written where unresolved)."""
    return Template(parameters={"Chaos": "enabled"}).units()[fis.UNIDAD]


def test_the_chaos_unit_holds_exactly_the_generators_experiment_templates(recursos: dict, unidad: Template) -> None:
    # GIVEN the spec's FIS-capable kinds  WHEN the generator turns them into experiment templates
    generadas = fis.plantillas()
    # THEN the chaos unit holds exactly those, one per FIS-capable kind, and the root none (outside the
    # production path, decision 0130)
    en_unidad = {k: v for k, v in unidad.resources.items() if v["Type"] == "AWS::FIS::ExperimentTemplate"}
    assert json.loads(json.dumps(en_unidad)) == generadas
    assert len(generadas) == len(especificacion.cargar().de_fis()) == 3
    assert not [k for k, v in recursos.items() if v["Type"] == "AWS::FIS::ExperimentTemplate"]


def _arn_en_el_padre(ruta: str) -> dict:
    """How the root reads the ARN of the function at ``ruta`` (as ``Template.walk`` names it): its own function's
    ``GetAtt F.Arn``; a unit's, the output of that unit whose value is the function's ARN."""
    *unidades, funcion = ruta.split("/")
    if not unidades:
        return {"Fn::GetAtt": [funcion, "Arn"]}
    (unidad,) = unidades  # one level of units: the root's
    salidas = Template().units()[unidad].doc["Outputs"]
    (salida,) = [n for n, s in salidas.items() if s["Value"] == {"Fn::GetAtt": [funcion, "Arn"]}]
    return {"Fn::GetAtt": [unidad, f"Outputs.{salida}"]}


def test_the_parent_passes_every_target_and_stop_alarm_its_experiments_name(recursos: dict) -> None:
    # GIVEN what template.yaml passes its chaos unit
    pasados = recursos[fis.UNIDAD]["Properties"]["Parameters"]
    # THEN each named target and stop alarm X arrives as XArn, X's ARN (a condition's target only under it)
    for entrada in especificacion.cargar().de_fis():
        assert entrada.fis is not None
        for funcion in entrada.fis.funciones:
            valor = pasados[fis.parametro(funcion)]
            assert valor == {"Fn::If": [entrada.fis.condicion, _arn_en_el_padre(fis.ubicacion(funcion)), ""]}
    for alarma in fis.ALARMAS_DE_PARADA:
        assert pasados[fis.parametro(alarma)] == {"Fn::GetAtt": [alarma, "Arn"]}
    # AND the consumers' list is every consumer the template model gives: a new consumer is in consumidor-error
    consumidores = [f for f, condicion in fis.funciones_objetivo().items() if condicion is None]
    lista = pasados[fis.PARAMETRO_CONSUMIDORES]["Fn::Join"]
    assert lista[0] == "," and lista[1] == [_arn_en_el_padre(f) for f in consumidores]


def test_generator_output_is_pinned() -> None:
    # GIVEN / WHEN the generated templates  THEN the actions and their parameters are these
    acciones = {
        id_logico: {n: (a["ActionId"], a["Parameters"]) for n, a in r["Properties"]["Actions"].items()}
        for id_logico, r in fis.plantillas().items()
    }
    assert acciones == {
        "ExperimentoCaosPasarelaTiempoAgotado": {
            "PasarelaTiempoAgotado": (
                "aws:lambda:invocation-add-delay",
                {"duration": "PT5M", "invocationPercentage": "30", "startupDelayMilliseconds": "10000"},
            )
        },
        "ExperimentoCaosCobroTrasCargo": {
            "CobroTrasCargo": (
                # not invocation-http-integration-response: AWS documents it for API Gateway, ALB
                # and VPC Lattice, not for the function URL cobro calls (README, "Chaos campaign")
                "aws:lambda:invocation-error",
                {"duration": "PT5M", "invocationPercentage": "20", "preventExecution": "false"},
            )
        },
        "ExperimentoCaosConsumidorError": {
            "ConsumidorError": (
                "aws:lambda:invocation-error",
                {"duration": "PT5M", "invocationPercentage": "20", "preventExecution": "false"},
            )
        },
    }


def test_every_target_carries_the_extension_only_under_chaos(recursos: dict) -> None:
    # GIVEN every function an experiment targets, where it is declared (the root or a unit it nests)
    con_caos, sin_caos = Template(parameters={"Chaos": "enabled"}), Template()
    cubo = con_caos.resolve(recursos[fis.UNIDAD]["Properties"]["Parameters"]["ConfigBucketName"])
    for ruta, condicion_extra in fis.funciones_objetivo().items():
        suya, funcion = con_caos.locate(ruta)
        recurso = json.loads(json.dumps(suya.resources[funcion]))
        propiedades = recurso["Properties"]
        comunes = json.loads(json.dumps((suya.doc.get("Globals") or {}).get("Function") or {}))
        # WHEN its layers and variables are read, as SAM merges its template's Globals under them  THEN the
        # extension, its wrapper and its configuration location are there only through Fn::If on ChaosEnabled
        # (AWS::NoValue otherwise)
        capas = [c for c in [*comunes.get("Layers", []), *propiedades.get("Layers", [])] if "Fn::If" in c]
        assert len(capas) == 1 and capas[0]["Fn::If"][0] == fis.CONDICION
        assert "AWS-FIS-extension-${Architecture}/1.x.x" in json.dumps(capas[0])
        variables = {
            **((comunes.get("Environment") or {}).get("Variables") or {}),
            **propiedades["Environment"]["Variables"],
        }
        for nombre in ("AWS_LAMBDA_EXEC_WRAPPER", "AWS_FIS_CONFIGURATION_LOCATION"):
            assert variables[nombre]["Fn::If"][0] == fis.CONDICION
            assert variables[nombre]["Fn::If"][2] == {"Ref": "AWS::NoValue"}
        assert variables["AWS_LAMBDA_EXEC_WRAPPER"]["Fn::If"][1] == "/opt/aws-fis/bootstrap"
        # AND its condition holds exactly under Chaos=enabled (a unit's, as its parent drives it), where the
        # configuration location is the chaos unit's bucket
        assert suya.condition(fis.CONDICION)
        assert not sin_caos.locate(ruta)[0].condition(fis.CONDICION)
        assert suya.resolve(variables["AWS_FIS_CONFIGURATION_LOCATION"]) == f"arn:aws:s3:::{cubo}/FisConfigs/"
        assert condicion_extra is None or recurso["Condition"] == condicion_extra


def test_every_chaos_resource_is_conditional_and_chaos_defaults_to_disabled(recursos: dict, unidad: Template) -> None:
    # GIVEN the template  WHEN its chaos resources and parameter are read
    plantilla = Template().doc
    caos = {k: v for k, v in recursos.items() if k.startswith(("Chaos", "ExperimentoCaos")) or k == fis.UNIDAD}
    # THEN nothing of it is attached unless Chaos=enabled: the unit and the extension's grant in the targets' roles
    assert plantilla["Parameters"]["Chaos"]["Default"] == "disabled"
    condiciones = {k: v["Condition"] for k, v in caos.items()}
    assert condiciones == {fis.UNIDAD: "ChaosEnabled", "ChaosExtensionPolicy": "ChaosEnabled"}
    # AND the unit holds the rest: the bucket, its policy, FIS's role and the experiments
    assert sorted(unidad.resources) == sorted(
        ["ChaosConfigBucket", "ChaosConfigBucketPolicy", "ChaosFisRole", *fis.plantillas()]
    )
    assert fis.UNIDAD not in Template().units()


@pytest.mark.parametrize(
    "reglas", [[RULES_DIR], [RULES_DIR, "cfn_lint_serverless.rules"]], ids=["cfn-lint", "serverless"]
)
def test_template_with_chaos_enabled_lints_clean(tmp_path: Path, reglas: list[str]) -> None:
    # GIVEN template.yaml with Chaos defaulting to enabled (next to it: its CodeUri paths resolve)
    copia = RAIZ / f".template-con-caos-{tmp_path.name}.yaml"
    copia.write_text(with_defaults((RAIZ / "template.yaml").read_text(), {"Chaos": "enabled"}))
    try:
        # WHEN cfn-lint reads it with the project's rules (and AWS's serverless rules)
        errores = lint_file(
            copia, config={"append_rules": reglas, "regions": ["eu-south-2"], "ignore_checks": IGNORADAS}
        )
    finally:
        copia.unlink()
    # THEN nothing is reported, in the root nor in the chaos unit it nests
    assert [str(e) for e in errores] == []
    unidad = lint_file(
        RAIZ / "unidades" / "caos.yaml",
        config={"append_rules": reglas, "regions": ["eu-south-2"], "ignore_checks": IGNORADAS},
    )
    assert [str(e) for e in unidad] == []


@pytest.mark.parametrize(("duracion", "minutos"), [("PT5M", 5), ("PT1H30M", 90), ("PT90S", 1.5), ("PT2M30S", 2.5)])
def test_minutos_reads_fis_durations(duracion: str, minutos: float) -> None:
    # GIVEN / WHEN / THEN an ISO 8601 duration is read in minutes
    assert fis.minutos(duracion) == minutos


def test_minutos_refuses_what_is_not_a_duration() -> None:
    with pytest.raises(ValueError, match="P5D"):
        fis.minutos("P5D")


def test_coste_bills_every_started_action_minute_at_ten_cents() -> None:
    # GIVEN two actions of 5 min and one of 2 min 10 s  WHEN costed  THEN 5 + 5 + 3 minutes at 0.10 USD
    assert fis.coste_usd([5, 5, 2 + 10 / 60]) == 1.30


def test_the_chaos_bucket_name_fits_s3_in_every_region_with_the_longest_name_suffix() -> None:
    import re

    import botocore.session

    # GIVEN every region botocore knows, in every partition, and the longest NameSuffix the template accepts
    sesion = botocore.session.get_session()
    regiones = [r for p in sesion.get_available_partitions() for r in sesion.get_available_regions("s3", p)]
    parametro = Template().doc["Parameters"]["NameSuffix"]
    sufijo = "-" + "x" * (parametro["MaxLength"] - 1)
    assert re.fullmatch(parametro["AllowedPattern"], sufijo)
    # WHEN the bucket's name is resolved for each (a 12-digit account id)
    for region in regiones:
        p = Template(region=region, account="123456789012", parameters={"NameSuffix": sufijo, "Chaos": "enabled"})
        unidad = p.units()[fis.UNIDAD]
        nombre = unidad.resolve(unidad.resources["ChaosConfigBucket"]["Properties"]["BucketName"])
        # THEN it is a valid S3 bucket name: 3-63 lowercase letters, digits, hyphens, alphanumeric ends
        assert len(nombre) <= 63, (region, nombre, len(nombre))
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]", nombre), nombre
