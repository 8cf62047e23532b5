"""The deploy level's recorders and their check (least_privilege.desplegado, emulated_account.gaps).

The in-container recorder is run as the Lambda runtime runs it: a fresh interpreter whose site
directory holds the recorder's ``.pth``, the recorder's folder on ``PYTHONPATH`` (last: whatever
``sitecustomize`` the interpreter finds first, Debian's included, it records). Its lines and the
state machine's are read back and evaluated against the roles of the real template, resolved as a
deployed stack's, so a request a role denies fails the check.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from emulated_account import gaps
from least_privilege.desplegado import (
    FISICOS_DE_LA_UNIDAD,
    comprobar_despliegue,
    funciones_de_pila,
    leer_registro,
    llamada_de_tarea,
    plantilla_desplegada,
)
from least_privilege.evaluador import Solicitud
from least_privilege.roles import plantilla_transformada, politicas_por_principal

RAIZ = Path(__file__).resolve().parents[3]
CUENTA = "000000000000"
REGION = "eu-south-2"

# A function's calls, made through botocore's Stubber (nothing leaves the process): the recorder
# wraps the client's API call, so a stubbed call goes through it as a real one would.
_FUNCION = """
import boto3
from botocore.stub import Stubber
ddb = boto3.client("dynamodb", region_name="eu-south-2", aws_access_key_id="a", aws_secret_access_key="b")
with Stubber(ddb) as stub:
    stub.add_response("put_item", {})
    ddb.put_item(TableName="mercadofresco-idempotencia", Item={"clave": {"S": "liberacion:p1:sku-1"}})
"""


@pytest.fixture(scope="module")
def python_del_contenedor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An interpreter of this Python with the recorder's ``.pth`` in its site directory, as the containers have it."""
    entorno = tmp_path_factory.mktemp("python-del-contenedor")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(entorno)
    python = entorno / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    shutil.copy(gaps.RECORDER_SOURCE / gaps.RECORDER_PTH, site)
    return python


def _ejecutar_funcion(
    python: Path, carpeta: Path | None, codigo: str = _FUNCION, delante: tuple[Path, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``codigo`` as a function in its container runs it; ``delante``: folders on the path before everything."""
    ruta = [*map(str, delante), *sys.path, str(gaps.RECORDER_SOURCE)]
    entorno = {**os.environ, "PYTHONPATH": os.pathsep.join(ruta), "AWS_LAMBDA_FUNCTION_NAME": "mercadofresco-erp"}
    entorno.pop("MF_IAM_REGISTRO", None)
    if carpeta is not None:
        entorno["MF_IAM_REGISTRO"] = str(carpeta)
    return subprocess.run([python, "-c", codigo], env=entorno, capture_output=True, text=True, check=True)


_PUT_GRABADO = {
    "funcion": "mercadofresco-erp",
    "servicio": "dynamodb",
    "operacion": "PutItem",
    "parametros": {"TableName": "mercadofresco-idempotencia", "Item": {"clave": {"S": "liberacion:p1:sku-1"}}},
}


def test_the_container_recorder_writes_each_call_once_and_lets_it_through(
    tmp_path: Path, python_del_contenedor: Path
) -> None:
    _ejecutar_funcion(python_del_contenedor, tmp_path)
    (fichero,) = tmp_path.glob("mercadofresco-erp.*.jsonl")
    lineas = [json.loads(linea) for linea in fichero.read_text().splitlines()]
    assert lineas == [_PUT_GRABADO]


# Another sitecustomize (Debian's Python ships one in its standard library): it leaves a mark.
_OTRO_SITECUSTOMIZE = """
import os
open(os.path.join(os.environ["MF_IAM_REGISTRO"], "otro-sitecustomize-ejecutado"), "w").close()
"""


def test_the_container_recorder_records_beside_a_sitecustomize_found_before_its_folder(
    tmp_path: Path, python_del_contenedor: Path
) -> None:
    # GIVEN a sitecustomize first on the path, the recorder's folder last
    otro = tmp_path / "otro"
    otro.mkdir()
    (otro / "sitecustomize.py").write_text(_OTRO_SITECUSTOMIZE)
    registro = tmp_path / "registro"
    registro.mkdir()
    # WHEN a function makes its call
    _ejecutar_funcion(python_del_contenedor, registro, delante=(otro,))
    # THEN that sitecustomize ran, and the call was recorded all the same
    assert (registro / "otro-sitecustomize-ejecutado").is_file()
    (fichero,) = registro.glob("mercadofresco-erp.*.jsonl")
    assert [json.loads(linea) for linea in fichero.read_text().splitlines()] == [_PUT_GRABADO]


def test_without_its_folder_the_recorder_records_nothing(tmp_path: Path, python_del_contenedor: Path) -> None:
    _ejecutar_funcion(python_del_contenedor, None)  # the call still succeeds
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("recurso", "parametros", "esperada"),
    [
        ("arn:aws:states:::sqs:sendMessage", {"QueueUrl": "u"}, ("sqs", "SendMessage")),
        ("arn:aws:states:::sqs:sendMessage.waitForTaskToken", {"QueueUrl": "u"}, ("sqs", "SendMessage")),
        ("arn:aws:states:::lambda:invoke", {"FunctionName": "f"}, ("lambda", "Invoke")),
        ("arn:aws:states:::dynamodb:updateItem", {"TableName": "t"}, ("dynamodb", "UpdateItem")),
        ("arn:aws:states:::events:putEvents", {"Entries": []}, ("events", "PutEvents")),
        ("arn:aws:states:::sns:publish", {"TopicArn": "t"}, ("sns", "Publish")),
        ("arn:aws:states:::aws-sdk:dynamodb:getItem", {"TableName": "t"}, ("dynamodb", "GetItem")),
    ],
)
def test_a_task_is_the_api_call_its_integration_makes(recurso: str, parametros: dict, esperada: tuple) -> None:
    llamada = llamada_de_tarea("ProcesarPedido", recurso, parametros)
    assert (llamada.servicio, llamada.operacion) == esperada
    assert llamada.parametros == parametros and llamada.principal == "ProcesarPedido"


def test_a_direct_function_arn_is_an_invoke_and_an_unknown_task_is_kept_to_be_denied() -> None:
    arn = f"arn:aws:lambda:{REGION}:{CUENTA}:function:mercadofresco-cobro"
    assert llamada_de_tarea("M", arn, {"x": 1}).parametros == {"FunctionName": arn}
    desconocida = llamada_de_tarea("M", "arn:aws:states:::states:startExecution", {})
    assert (desconocida.servicio, desconocida.operacion) == ("states", "arn:aws:states:::states:startExecution")


ERP = "Consumidores/ErpFunction"  # the ERP consumer, in the consumers' unit (unidades/consumidores.yaml)
ERP_ROL = "mercadofresco-dev-ErpFunctionRole-1A2B"
# The sandbox unit's simulators (unidades/simuladores.yaml, nested as Simuladores): function name, URL id.
SANDBOX = "mercadofresco-simulador"
SIMULADORES = {
    "Erp": ("simulador-erp", "erp0url0id"),
    "Pasarela": ("simulador-pasarela", "pasarela0url0id"),
}


def _escribir(carpeta: Path, nombre: str, lineas: list[dict]) -> None:
    (carpeta / nombre).write_text("".join(json.dumps(linea) + "\n" for linea in lineas))


def _plantilla(**parametros: str) -> object:
    tabla = "mercadofresco-idempotencia"
    clave = f"arn:aws:kms:{REGION}:{CUENTA}:key/1234abcd"
    fisicos = {
        "DatosKey": {"Ref": "1234abcd", "Arn": clave, "KeyId": "1234abcd"},
        "TablaIdempotencia": {"Ref": tabla, "Arn": f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/{tabla}"},
        # the consumers' unit: the ERP's function and its role, by the name CloudFormation gave it (the sandbox grants
        # unit attaches its simulator's grant to it, read from the unit's output)
        "Consumidores": {
            "Ref": f"arn:aws:cloudformation:{REGION}:{CUENTA}:stack/mercadofresco-dev-Consumidores/1",
            "Outputs.ErpFunctionRole": ERP_ROL,
            "Outputs.ErpFunctionArn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:mercadofresco-erp",
            FISICOS_DE_LA_UNIDAD: {
                "ErpFunction": {
                    "Ref": "mercadofresco-erp",
                    "Arn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:mercadofresco-erp",
                },
                "ErpFunctionRole": {"Ref": ERP_ROL, "Arn": f"arn:aws:iam::{CUENTA}:role/{ERP_ROL}"},
            },
        },
        # the sandbox grants unit, which attaches each simulator's grant to its caller's role
        "AccesoSimuladores": {"Ref": f"arn:aws:cloudformation:{REGION}:{CUENTA}:stack/mercadofresco-dev-Acceso/1"},
        # the nested stack, as fisicos_de_pila gives it: its outputs, which the root's URLs read
        "Simuladores": {
            "Ref": f"arn:aws:cloudformation:{REGION}:{CUENTA}:stack/mercadofresco-dev-Simuladores/1",
            **{
                clave: valor
                for simulador, (nombre, url_id) in SIMULADORES.items()
                for clave, valor in {
                    f"Outputs.Simulador{simulador}Url": f"https://{url_id}.lambda-url.{REGION}.on.aws/",
                    f"Outputs.Simulador{simulador}FunctionRole": f"{nombre}-role",
                    f"Outputs.Simulador{simulador}FunctionArn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:{nombre}",
                }.items()
            },
            # ...and its own resources' physical ids, which its roles and URLs resolve with
            FISICOS_DE_LA_UNIDAD: {
                "TablaSimulador": {"Ref": SANDBOX, "Arn": f"arn:aws:dynamodb:{REGION}:{CUENTA}:table/{SANDBOX}"},
                **{
                    clave: valor
                    for simulador, (nombre, url_id) in SIMULADORES.items()
                    for clave, valor in {
                        f"Simulador{simulador}Function": {
                            "Ref": nombre,
                            "Arn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:{nombre}",
                            "FunctionUrl": f"https://{url_id}.lambda-url.{REGION}.on.aws/",
                        },
                        f"Simulador{simulador}FunctionRole": {"Ref": f"{nombre}-role"},
                    }.items()
                },
            },
        },
    }
    return plantilla_desplegada(
        RAIZ / "template.yaml",
        {"SubnetIds": "subnet-a,subnet-b", "SecurityGroupIds": "sg-1", "ReservedConcurrency": "disabled", **parametros},
        REGION,
        CUENTA,
        "mercadofresco-dev",
        fisicos,
    )


def _put(clave: str) -> dict:
    return {
        "funcion": "mercadofresco-erp",
        "servicio": "dynamodb",
        "operacion": "PutItem",
        "parametros": {"TableName": "mercadofresco-idempotencia", "Item": {"clave": {"S": clave}}},
    }


def test_recorded_requests_are_judged_by_the_deployed_role_and_a_denied_one_fails(tmp_path: Path) -> None:
    # GIVEN the ERP consumer's recorded writes: a stock release's key (its role lists it) and one it does not
    _escribir(tmp_path, "mercadofresco-erp.1.jsonl", [_put("liberacion:p1:sku-1"), _put("correo-confirmacion:p1")])
    registro = leer_registro(tmp_path, {"mercadofresco-erp": ERP}, "ProcesarPedido")
    # WHEN they are evaluated against the transformed template's roles, as deployed
    informe = comprobar_despliegue(registro, _plantilla())
    # THEN only the write outside its key prefixes is denied (each write also had DynamoDB decrypt the
    # table key for the caller: its role's kms:Decrypt, allowed)
    assert informe.solicitudes == 4 and not informe.sin_rol
    assert [dict(d.solicitud.contexto)["dynamodb:LeadingKeys"] for d in informe.denegadas] == [
        ("correo-confirmacion:p1",)
    ]


def test_a_function_the_stack_does_not_name_has_no_role(tmp_path: Path) -> None:
    _escribir(tmp_path, "otra.1.jsonl", [{**_put("liberacion:p1:s"), "funcion": "otra"}])
    _escribir(tmp_path, "states.1.jsonl", [{"recurso": "arn:aws:states:::sqs:sendMessage", "parametros": {}}])
    registro = leer_registro(tmp_path, {"mercadofresco-erp": ERP}, None)
    assert {ll.principal for ll in registro.llamadas()} == {"(function otra)", "(state machine)"}
    assert comprobar_despliegue(registro, _plantilla()).sin_rol == {"(function otra)", "(state machine)"}


def test_the_docker_flags_mount_the_recorder_its_pth_and_its_folder(tmp_path: Path) -> None:
    banderas = gaps.recorder_docker_flags(tmp_path).split()
    assert f"{gaps.RECORDER_SOURCE}:/var/mf-iam-codigo:ro" in banderas
    # the .pth in a site directory of the image's Python (Debian's: tools/levels/sam_local/build-image.sh)
    pth = gaps.RECORDER_SOURCE / gaps.RECORDER_PTH
    assert f"{pth}:/usr/lib/python3/dist-packages/{gaps.RECORDER_PTH}:ro" in banderas
    assert f"{tmp_path}:/var/mf-iam-registro" in banderas
    assert {"PYTHONPATH=/var/mf-iam-codigo", "MF_IAM_REGISTRO=/var/mf-iam-registro"} <= set(banderas)
    assert pth.read_text() == "import mf_iam_registro\n"
    assert (gaps.RECORDER_SOURCE / "mf_iam_registro.py").is_file()


def test_a_secret_asked_for_by_name_is_authorised_by_its_arn(tmp_path: Path) -> None:
    arn = f"arn:aws:secretsmanager:{REGION}:{CUENTA}:secret:mf-valkey-AbCdEf"
    linea = {"funcion": "f", "servicio": "secretsmanager", "operacion": "GetSecretValue"}
    _escribir(
        tmp_path,
        "f.1.jsonl",
        [{**linea, "parametros": {"SecretId": "mf-valkey"}}, {**linea, "parametros": {"SecretId": "otro"}}],
    )
    registro = leer_registro(tmp_path, {"f": "F"}, None, {"mf-valkey": arn}.get)
    assert [ll.parametros["SecretId"] for ll in registro.llamadas()] == [arn, "otro"]  # unknown: left as asked


def test_a_units_function_is_judged_by_its_own_role_in_the_nested_stack(tmp_path: Path) -> None:
    # GIVEN the sandbox gateway's recorded writes (a function of the Simuladores unit): to its own table and
    # to the idempotency records, which its role does not list
    put = {"funcion": "simulador-pasarela", "servicio": "dynamodb", "operacion": "PutItem"}
    _escribir(
        tmp_path,
        "simulador-pasarela.1.jsonl",
        [
            {**put, "parametros": {"TableName": SANDBOX, "Item": {"clave": {"S": "cobro:k1"}}}},
            {**put, "parametros": {"TableName": "mercadofresco-idempotencia", "Item": {"clave": {"S": "x"}}}},
        ],
    )
    registro = leer_registro(tmp_path, {"simulador-pasarela": "Simuladores/SimuladorPasarelaFunction"}, None)
    # WHEN they are evaluated against the deployed roles, the unit's with its nested stack's physical ids
    informe = comprobar_despliegue(registro, _plantilla())
    # THEN the unit's function has its role (SandboxState on its table), and only the write elsewhere is denied
    assert not informe.sin_rol
    assert [(d.principal, d.solicitud.recurso) for d in informe.denegadas] == [
        (
            "Simuladores/SimuladorPasarelaFunction",
            "arn:aws:dynamodb:eu-south-2:000000000000:table/mercadofresco-idempotencia",
        )
    ]


def test_with_chaos_enabled_the_root_attaches_the_extension_policy_to_the_units_gateway_role() -> None:
    # GIVEN the deployed template with and without Chaos=enabled (the sandbox gateway is then an experiment target)
    def acciones_del_simulador(**parametros: str) -> set[str]:
        plantilla = _plantilla(**parametros)
        politicas = politicas_por_principal(plantilla, plantilla_transformada(plantilla.path, plantilla.region))
        return {
            accion
            for documento in politicas["Simuladores/SimuladorPasarelaFunction"]
            for sentencia in documento["Statement"]
            for accion in ([sentencia["Action"]] if isinstance(sentencia["Action"], str) else sentencia["Action"])
        }

    # WHEN the unit's principal is read  THEN the root's ChaosExtensionPolicy, attached to the unit's role by the
    # name the unit outputs, is among its policies only with chaos
    assert {"s3:GetObject", "s3:ListBucket"} <= acciones_del_simulador(Chaos="enabled")
    assert "s3:GetObject" not in acciones_del_simulador()
    assert "dynamodb:PutItem" in acciones_del_simulador()  # its own SandboxState, in both


def test_with_chaos_enabled_the_extension_policy_is_part_of_the_targets_roles(tmp_path: Path) -> None:
    # ChaosExtensionPolicy names one of its roles under a condition (Fn::If in Roles): it is resolved.
    _escribir(tmp_path, "mercadofresco-erp.1.jsonl", [_put("liberacion:p1:sku-1")])
    registro = leer_registro(tmp_path, {"mercadofresco-erp": ERP}, None)

    def acciones_sin_uso(**parametros: str) -> set[str]:
        informe = comprobar_despliegue(registro, _plantilla(**parametros))
        assert not informe.denegadas and not informe.sin_rol
        return {a for u in informe.sin_uso if u.principal == ERP for a in u.acciones}

    assert "s3:GetObject" in acciones_sin_uso(Chaos="enabled")
    assert "s3:GetObject" not in acciones_sin_uso()


# A caller's signed request to a sandbox's function URL, made by the layer's own strategy.
_FIRMA_URL = """
from mercadofresco.http.auth import FunctionUrlSigV4
url = "http://172.17.0.1:4599/_aws/lambda-url/erp0url0id/avisos"
FunctionUrlSigV4(region="eu-south-2").headers("POST", url, {}, b"{}")
"""


def test_the_container_recorder_writes_each_signed_function_url_call(
    tmp_path: Path, python_del_contenedor: Path
) -> None:
    _ejecutar_funcion(python_del_contenedor, tmp_path, _FIRMA_URL)
    (fichero,) = tmp_path.glob("mercadofresco-erp.*.jsonl")
    assert [json.loads(linea) for linea in fichero.read_text().splitlines()] == [
        {
            "funcion": "mercadofresco-erp",
            "servicio": "lambda",
            "operacion": "InvokeFunctionUrl",
            "parametros": {"FunctionUrl": "http://172.17.0.1:4599/_aws/lambda-url/erp0url0id/avisos"},
        }
    ]


def _url(url_id: str) -> dict:
    return {
        "funcion": "mercadofresco-erp",
        "servicio": "lambda",
        "operacion": "InvokeFunctionUrl",
        "parametros": {"FunctionUrl": f"http://172.17.0.1:4599/_aws/lambda-url/{url_id}/avisos"},
    }


def test_a_signed_call_is_both_invoke_actions_on_the_simulator_behind_that_url(tmp_path: Path) -> None:
    # GIVEN the ERP consumer's signed calls, in MiniStack's path form: to its own simulator and to the gateway's
    _escribir(tmp_path, "mercadofresco-erp.1.jsonl", [_url("erp0url0id"), _url("pasarela0url0id")])
    registro = leer_registro(tmp_path, {"mercadofresco-erp": ERP}, None)
    # WHEN they are evaluated against the deployed roles (ErpUrl empty: the stack plays the ERP)
    informe = comprobar_despliegue(registro, _plantilla())
    # THEN each is lambda:InvokeFunctionUrl and lambda:InvokeFunction on the function behind the URL (a URL
    # created since October 2025 authorises both), signed (AWS_IAM): the gateway's are denied
    pasarela = f"arn:aws:lambda:{REGION}:{CUENTA}:function:simulador-pasarela"
    assert [d.solicitud for d in informe.denegadas] == [
        Solicitud("lambda:InvokeFunctionUrl", pasarela, (("lambda:FunctionUrlAuthType", ("AWS_IAM",)),)),
        Solicitud("lambda:InvokeFunction", pasarela, (("lambda:InvokedViaFunctionUrl", ("true",)),)),
    ]
    # AND both of its own grants are used, so neither is listed as unused
    sin_uso = {u.sid for u in informe.sin_uso if u.principal == ERP}
    assert not sin_uso & {"SandboxProviderUrl", "SandboxProviderInvoke"}
    # AND with a real ERP (no simulator, no grant) the same calls are denied
    real = comprobar_despliegue(registro, _plantilla(ErpUrl="https://erp.example"))
    assert len(real.denegadas) == 4


def test_the_functions_of_a_stack_and_its_units_are_named_from_the_physical_ids_already_read() -> None:
    # GIVEN a stack's physical ids as fisicos_de_pila reads them: a function, a queue, a unit with its own
    fisicos = {
        "ErpFunction": {"Ref": "mercadofresco-erp", "Arn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:mf-erp"},
        "ColaErp": {"Ref": "https://sqs/cola", "Arn": f"arn:aws:sqs:{REGION}:{CUENTA}:mercadofresco-erp"},
        "Simuladores": {
            "Ref": f"arn:aws:cloudformation:{REGION}:{CUENTA}:stack/s/1",
            "Outputs.SimuladorErpFunctionArn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:simulador-erp",
            FISICOS_DE_LA_UNIDAD: {
                "SimuladorErpFunction": {
                    "Ref": "simulador-erp",
                    "Arn": f"arn:aws:lambda:{REGION}:{CUENTA}:function:simulador-erp",
                },
            },
        },
    }
    # WHEN the functions are named  THEN each deployed name maps to its logical id, a unit's under its path
    assert funciones_de_pila(fisicos) == {
        "mercadofresco-erp": "ErpFunction",  # its name is its Ref, not the ARN's last part
        "simulador-erp": "Simuladores/SimuladorErpFunction",
    }
