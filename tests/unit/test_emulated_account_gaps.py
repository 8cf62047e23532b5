"""The deploy level's one list of emulator gaps (tools/levels/emulated_account/gaps.py), on the real template."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from emulated_account import gaps
from template_model import read

RAIZ = Path(__file__).resolve().parents[2]
GATEWAY = "172.17.0.1:4599"


@pytest.fixture(scope="module")
def plantilla() -> dict:
    return read(RAIZ / "template.yaml")


def test_only_the_archive_the_fis_experiments_and_the_metric_math_alarms_are_dropped(plantilla: dict) -> None:
    adaptada = gaps.adapt(plantilla, GATEWAY)
    quitados = set(plantilla["Resources"]) - set(adaptada["Resources"])
    esperados = {
        n
        for n, r in plantilla["Resources"].items()
        if r["Type"] in {"AWS::Events::Archive", "AWS::FIS::ExperimentTemplate"}
        or (r["Type"] == "AWS::CloudWatch::Alarm" and "Metrics" in r.get("Properties", {}))
    }
    assert quitados == esperados
    assert "ArchivoBusMercadoFresco" in quitados
    # The single-metric alarms (each DLQ > 0) stay.
    assert any(r["Type"] == "AWS::CloudWatch::Alarm" for r in adaptada["Resources"].values())


def test_the_chaos_units_fis_experiments_are_dropped_in_its_own_file(tmp_path: Path) -> None:
    # GIVEN the template and the units it nests, as sam build lays them out (a unit's file beside the root)
    shutil.copytree(RAIZ / "unidades", tmp_path / "unidades")
    (tmp_path / "template.yaml").write_text((RAIZ / "template.yaml").read_text())
    experimentos = {
        n
        for n, r in read(RAIZ / "unidades" / "caos.yaml")["Resources"].items()
        if r["Type"] == "AWS::FIS::ExperimentTemplate"
    }
    # WHEN the gaps adapt the built files
    gaps.adapt_file(tmp_path / "template.yaml", GATEWAY, log=lambda _linea: None)
    # THEN the unit's experiment templates are gone from its file, the rest of the unit stays
    unidad = read(tmp_path / "unidades" / "caos.yaml")["Resources"]
    assert experimentos and not experimentos & set(unidad)
    assert {"ChaosConfigBucket", "ChaosFisRole"} <= set(unidad)


def test_function_urls_given_to_the_functions_point_at_the_gateway(plantilla: dict) -> None:
    # GIVEN the root and the units it nests (the sandbox unit's outputs say which values are function URLs)
    unidades = gaps.unit_templates(plantilla, RAIZ)
    # WHEN the root is adapted  THEN no function URL it reads (its own or a unit's output) is left in AWS's form
    texto = json.dumps(gaps.adapt(plantilla, GATEWAY, unidades)["Resources"])
    assert ".FunctionUrl}" not in texto
    assert "${Simuladores.Outputs.Simulador" not in texto
    # the gateway (for the charge function and the durable saga), the ERP, the primary and secondary e-mail
    assert texto.count(f"http://{GATEWAY}/_aws/lambda-url/") == 5
    # AND a unit's URL output is cut from what MiniStack answers for that output
    assert '{"Fn::GetAtt": ["Simuladores", "Outputs.SimuladorErpUrl"]}' in texto


def test_a_dropped_resource_still_referenced_is_refused() -> None:
    plantilla = {
        "Resources": {
            "Archivo": {"Type": "AWS::Events::Archive", "Properties": {}},
            "Cola": {"Type": "AWS::SQS::Queue", "DependsOn": "Archivo"},
        }
    }
    with pytest.raises(ValueError, match="Archivo"):
        gaps.adapt(plantilla, GATEWAY)


def test_the_store_api_url_becomes_the_gateway_path_form() -> None:
    url = gaps.api_url_in_gateway("https://a1b2c3d4.execute-api.eu-south-2.amazonaws.com", GATEWAY)
    assert url == f"http://{GATEWAY}/_aws/execute-api/a1b2c3d4/$default"


def test_generated_secrets_without_punctuation_say_which_characters(plantilla: dict) -> None:
    """MiniStack honours only ExcludeCharacters: a '?' in a generated value once cut a URL (every call 404)."""
    secreto = gaps.adapt(plantilla, GATEWAY)["Resources"]["PasarelaSecret"]["Properties"]["GenerateSecretString"]
    assert secreto["ExcludePunctuation"] is True
    assert set("?#/%&=+") <= set(secreto["ExcludeCharacters"])


def test_the_fis_extension_stand_in_is_named_by_the_public_parameter_and_injects_nothing(
    aws: None, tmp_path: Path
) -> None:
    import io
    import subprocess
    import zipfile

    import boto3

    def cliente(servicio: str) -> object:
        return boto3.client(servicio, region_name="eu-south-2")

    # GIVEN an account with neither AWS's public parameters nor its layers; WHEN the gap provides them
    publicos = tmp_path / "parametros-publicos.json"
    publicos.write_text(json.dumps({"/aws/service/otro": "x"}))
    capa = gaps.fis_extension_stand_in(cliente, "x86_64", publicos)
    # THEN the public parameter Chaos=enabled resolves names the published layer (the others are kept)
    nombre = "/aws/service/fis/lambda-extension/AWS-FIS-extension-x86_64/1.x.x"
    assert json.loads(publicos.read_text()) == {"/aws/service/otro": "x", nombre: capa}
    # AND its /opt/aws-fis/bootstrap, executable, runs the runtime command it wraps, unchanged
    (version,) = cliente("lambda").list_layer_versions(LayerName="stand-in-aws-fis-extension-x86_64")["LayerVersions"]
    assert version["LayerVersionArn"] == capa
    with zipfile.ZipFile(io.BytesIO(gaps._stand_in_zip())) as zf:
        info = zf.getinfo("aws-fis/bootstrap")
        assert (info.external_attr >> 16) & 0o111
        zf.extractall(tmp_path)
    bootstrap = tmp_path / "aws-fis" / "bootstrap"
    bootstrap.chmod(0o755)
    hecho = subprocess.run([str(bootstrap), "printf", "%s|%s", "a b", "c"], capture_output=True, text=True, check=True)
    assert hecho.stdout == "a b|c"


def test_the_docs_list_of_gaps_is_the_gaps_modules() -> None:
    # docs/emulated-account.md carries the list a user reads; gaps.py is where each gap is handled.
    texto = (RAIZ / "docs" / "emulated-account.md").read_text()
    lista = texto.split("<!-- gaps:start -->\n", 1)[1].split("<!-- gaps:end -->", 1)[0]
    assert lista == gaps.markdown() + "\n"
    assert len(gaps.markdown().splitlines()) == len(gaps.GAPS)


RAIZ_EN_UNIDADES = """
Transform: [AWS::LanguageExtensions, AWS::Serverless-2016-10-31]
Mappings:
  SAMCodeUriConsumidores:
    Erp: {CodeUri: ErpFunction}
    Correo: {CodeUri: CorreoFunction}
Resources:
  Fn::ForEach::Consumidores:
    - Nombre
    - [Erp, Correo]
    - ${Nombre}Function:
        Type: AWS::Serverless::Function
        Properties:
          CodeUri: !FindInMap [SAMCodeUriConsumidores, !Ref Nombre, CodeUri]
          Handler: app.lambda_handler
          Runtime: python3.13
  Sandbox:
    Type: AWS::Serverless::Application
    Properties:
      Location: Sandbox/template.yaml
"""
UNIDAD = """
Resources:
  Bus:
    Type: AWS::Events::EventBus
    Properties: {Name: bus}
  Archivo:
    Type: AWS::Events::Archive
    Properties: {SourceArn: !GetAtt Bus.Arn}
  Alarma:
    Type: AWS::CloudWatch::Alarm
    Properties:
      ComparisonOperator: GreaterThanThreshold
      EvaluationPeriods: 1
      Threshold: 0
      Metrics: [{Id: m, Expression: "1"}]
"""


def test_a_built_template_with_loops_and_units_is_adapted_whole(tmp_path: Path) -> None:
    # GIVEN a sam build output with a loop (its artifacts in SAM's generated mapping) and a nested unit
    (tmp_path / "Sandbox").mkdir()
    raiz, unidad = tmp_path / "template.yaml", tmp_path / "Sandbox" / "template.yaml"
    raiz.write_text(RAIZ_EN_UNIDADES)
    unidad.write_text(UNIDAD)
    # WHEN the gaps are applied to it
    vistos: list[str] = []
    gaps.adapt_file(raiz, GATEWAY, log=vistos.append)
    # THEN the root is expanded with each function's artifact a literal path sam deploy can package
    adaptada = gaps.template_of(raiz)
    assert {n: r["Properties"]["CodeUri"] for n, r in adaptada["Resources"].items() if n.endswith("Function")} == {
        "ErpFunction": "ErpFunction",
        "CorreoFunction": "CorreoFunction",
    }
    # AND the unit is adapted too: its archive and its metric-math alarm dropped, its bus kept
    assert set(gaps.template_of(unidad)["Resources"]) == {"Bus"}
    assert len(vistos) == 2 and "dropped Alarma, Archivo;" in vistos[1]


def test_a_unit_under_a_false_condition_has_no_stack_to_visit(aws, tmp_path: Path) -> None:
    import boto3

    # GIVEN a built root with two units, the chaos one under a condition, and a deployed stack with only the other
    for carpeta, cuerpo in (("Sandbox", UNIDAD), ("Caos", UNIDAD)):
        (tmp_path / carpeta).mkdir()
        (tmp_path / carpeta / "template.yaml").write_text(cuerpo)
    raiz = tmp_path / "template.yaml"
    raiz.write_text(
        RAIZ_EN_UNIDADES
        + "  Caos:\n    Type: AWS::Serverless::Application\n    Condition: ChaosEnabled\n"
        + "    Properties:\n      Location: Caos/template.yaml\n"
    )
    s3, cfn = boto3.client("s3"), boto3.client("cloudformation")
    s3.create_bucket(Bucket="plantillas", CreateBucketConfiguration={"LocationConstraint": s3.meta.region_name})
    s3.put_object(Bucket="plantillas", Key="unidad.json", Body=json.dumps({"Resources": {
        "Cola": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cola-de-la-unidad"}}}}))  # fmt: skip
    url = f"https://plantillas.s3.{s3.meta.region_name}.amazonaws.com/unidad.json"
    cfn.create_stack(StackName="raiz", TemplateBody=json.dumps({"Resources": {
        "Sandbox": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": url}}}}))  # fmt: skip
    # WHEN the deployed stacks are walked
    pilas = [pila for pila, _plantilla in gaps.stacks(raiz, "raiz", cfn)]
    # THEN the root and the sandbox unit's stack are visited, and the chaos unit, never created, is not
    assert len(pilas) == 2 and pilas[0] == "raiz"
    assert pilas[1] == cfn.describe_stack_resource(StackName="raiz", LogicalResourceId="Sandbox")[
        "StackResourceDetail"]["PhysicalResourceId"]  # fmt: skip


EMPAQUETADA = f"""
Resources:
  Caos:
    Type: AWS::Serverless::Application
    Properties:
      Location: http://{GATEWAY}/aws-sam-cli-managed-default-samclisourcebucket-1/9170888d.template
  Funcion:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: s3://aws-sam-cli-managed-default-samclisourcebucket-1/0a1b2c
      Handler: app.lambda_handler
      Runtime: python3.13
      Environment:
        Variables:
          ERP_URL: http://{GATEWAY}/_aws/lambda-url/erp/
"""


def test_a_packaged_units_url_is_written_as_aws_writes_it_and_sam_delete_reads_it(tmp_path: Path) -> None:
    from samcli.lib.utils.s3 import parse_s3_url

    # GIVEN a template sam package wrote against the emulator: the unit's URL on the gateway
    ruta = tmp_path / "packaged.yaml"
    ruta.write_text(EMPAQUETADA)
    with pytest.raises(ValueError, match="not a valid S3 url"):  # what sam delete met
        parse_s3_url(gaps.template_of(ruta)["Resources"]["Caos"]["Properties"]["Location"])
    # WHEN the units' URLs are put in AWS's form
    assert gaps.units_in_aws_form(ruta, GATEWAY, "eu-south-2") == ["Caos"]
    # THEN sam delete's parser reads the unit's bucket and key, and nothing else changed
    recursos = gaps.template_of(ruta)["Resources"]
    assert parse_s3_url(recursos["Caos"]["Properties"]["Location"]) == {
        "Bucket": "aws-sam-cli-managed-default-samclisourcebucket-1", "Key": "9170888d.template"}  # fmt: skip
    assert recursos["Funcion"]["Properties"]["Environment"]["Variables"]["ERP_URL"].startswith(f"http://{GATEWAY}/")
    assert (
        recursos["Funcion"]["Properties"]["CodeUri"] == "s3://aws-sam-cli-managed-default-samclisourcebucket-1/0a1b2c"
    )
