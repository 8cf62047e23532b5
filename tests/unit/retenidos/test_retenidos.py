"""``mf-retenidos``: the retained resources read from template.yaml, and the IMPORT request made of them.

The account is botocore's ``Stubber`` on real clients: it pins each request's shape (the deploy
level, ``tests/deploy``, runs the same command against the emulated account), and a call nobody
queued fails the test, so "nothing changed" is checked by the absence of any CreateChangeSet.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from mercadofresco_ops import retenidos
from mercadofresco_ops.retenidos import ImportacionError, RechazoError, adoptar, main, plantilla_de_importacion
from mercadofresco_ops.topologia import PLANTILLA, Topologia
from sam_emulator.template import Template
from template_model import Template as Modelo
from template_model import messaging as m

if TYPE_CHECKING:
    from collections.abc import Iterator

REGION, CUENTA, PILA = "eu-south-2", "123456789012", "mercadofresco-dev"
CLAVE = "1234abcd-12ab-34cd-56ef-1234567890ab"
CLAVE_ARN = f"arn:aws:kms:{REGION}:{CUENTA}:key/{CLAVE}"
AHORA = datetime(2026, 12, 3, tzinfo=UTC)
TABLAS = {"TablaIdempotencia": "mercadofresco-idempotencia", "TablaCarritos": "mercadofresco-carritos"}
COLAS = {
    "ColaPedidosFallidos": "mercadofresco-pedidos-fallidos",
    "ColaErpFallidos": "mercadofresco-erp-fallidos",
    "ColaCorreoFallidos": "mercadofresco-correo-fallidos",
    "ColaStockFallidos": "mercadofresco-stock-fallidos.fifo",
    "ColaCarritosFallidos": "mercadofresco-carritos-fallidos",
    "ColaProyeccionFallidos": "mercadofresco-proyeccion-fallidos",
}
RETENIDOS = (  # template order, a loop's resources after the ones written out (cfn-lint's expansion)
    "DatosKey", "TablaIdempotencia", "ColaStockFallidos", "TablaCarritos", "ColaPedidosFallidos",
    "ColaErpFallidos", "ColaCorreoFallidos", "ColaCarritosFallidos", "ColaProyeccionFallidos",
)  # fmt: skip


def _url(cola: str) -> str:
    return f"https://sqs.{REGION}.amazonaws.com/{CUENTA}/{cola}"


def _con_sufijo(nombre: str, sufijo: str) -> str:
    base, fifo = nombre.removesuffix(".fifo"), ".fifo" if nombre.endswith(".fifo") else ""
    return base + sufijo + fifo


class Cuenta:
    """One stubbed client per service, handed out as ``adoptar``'s ``clientes``."""

    def __init__(self) -> None:
        self.clientes = {
            s: boto3.client(s, region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
            for s in ("sqs", "dynamodb", "kms", "cloudformation")
        }
        self.stubs = {s: Stubber(c) for s, c in self.clientes.items()}
        self.peticiones: dict[str, dict[str, Any]] = {}
        self.clientes["cloudformation"].meta.events.register(
            "provide-client-params.cloudformation.CreateChangeSet", self._guardar
        )

    def _guardar(self, params: dict[str, Any], **_: Any) -> None:
        self.peticiones["CreateChangeSet"] = params

    def __call__(self, servicio: str) -> Any:
        return self.clientes[servicio]

    def retenidos_en_la_cuenta(
        self, faltan: tuple[str, ...] = (), estado_clave: str = "Enabled", sufijo: str = ""
    ) -> None:
        """What ``localizar`` reads, in template order: the named resources, then their key."""
        sqs, ddb, kms = self.stubs["sqs"], self.stubs["dynamodb"], self.stubs["kms"]
        con_clave = []
        for lid in RETENIDOS[1:]:
            if lid in TABLAS:
                if lid in faltan:
                    ddb.add_client_error("describe_table", "ResourceNotFoundException", http_status_code=400)
                    continue
                nombre = _con_sufijo(TABLAS[lid], sufijo)
                tabla = {"TableName": nombre, "SSEDescription": {"Status": "ENABLED", "KMSMasterKeyArn": CLAVE_ARN}}
                ddb.add_response("describe_table", {"Table": tabla}, {"TableName": nombre})
            else:
                if lid in faltan:
                    sqs.add_client_error("get_queue_url", "QueueDoesNotExist", http_status_code=400)
                    continue
                nombre = _con_sufijo(COLAS[lid], sufijo)
                sqs.add_response("get_queue_url", {"QueueUrl": _url(nombre)}, {"QueueName": nombre})
                sqs.add_response(
                    "get_queue_attributes",
                    {"Attributes": {"KmsMasterKeyId": CLAVE}},
                    {"QueueUrl": _url(nombre), "AttributeNames": ["KmsMasterKeyId"]},
                )
            con_clave.append(lid)
        for _ in con_clave[:1] if estado_clave == "PendingDeletion" else con_clave:  # refused at the first
            kms.add_response(
                "describe_key", {"KeyMetadata": {"KeyId": CLAVE, "KeyState": estado_clave}}, {"KeyId": ANY}
            )

    def pilas(self, otras: dict[str, list[tuple[str, str, str]]] | None = None) -> None:
        """The live stacks (name -> [(logical id, type, physical id)]) ``duenos`` lists."""
        cfn, otras = self.stubs["cloudformation"], otras or {}
        resumen = [{"StackName": n, "StackId": f"id-{n}", "CreationTime": AHORA, "StackStatus": "CREATE_COMPLETE"}
                   for n in otras]  # fmt: skip
        cfn.add_response("list_stacks", {"StackSummaries": resumen}, {"StackStatusFilter": ANY})
        for nombre, recursos in otras.items():
            filas = [
                {"LogicalResourceId": lid, "ResourceType": tipo, "PhysicalResourceId": fisico,
                 "LastUpdatedTimestamp": AHORA, "ResourceStatus": "CREATE_COMPLETE"}
                for lid, tipo, fisico in recursos
            ]  # fmt: skip
            cfn.add_response("list_stack_resources", {"StackResourceSummaries": filas}, {"StackName": f"id-{nombre}"})

    def pila_ausente(self) -> None:
        self.stubs["cloudformation"].add_client_error(
            "describe_stacks", "ValidationError", f"Stack with id {PILA} does not exist", 400
        )

    def estado_pila(self, estado: str) -> None:
        pila = {"StackName": PILA, "CreationTime": AHORA, "StackStatus": estado, "StackStatusReason": "motivo"}
        self.stubs["cloudformation"].add_response("describe_stacks", {"Stacks": [pila]}, {"StackName": PILA})


@pytest.fixture
def cuenta(monkeypatch: pytest.MonkeyPatch) -> Iterator[Cuenta]:
    monkeypatch.setattr(retenidos.time, "sleep", lambda _s: pytest.fail("polled a status that was already final"))
    c = Cuenta()
    for stub in c.stubs.values():
        stub.activate()
    yield c
    for stub in c.stubs.values():
        stub.assert_no_pending_responses()
        stub.deactivate()


def test_retained_resources_are_the_templates_retain_ones_for_the_deploys_parameters() -> None:
    assert Topologia().retenidos() == RETENIDOS
    # An existing key or carts stream: the stack creates neither, so neither is retained.
    externos = Topologia(parametros={"KmsKeyArn": CLAVE_ARN, "CarritosStreamArn": "arn:aws:dynamodb:x"})
    assert externos.retenidos() == tuple(r for r in RETENIDOS if r not in ("DatosKey", "TablaCarritos"))


def test_every_resource_a_delete_retains_is_in_the_root_stack_where_adoptar_imports_it() -> None:
    # GIVEN every unit the template nests, each created (the sandbox, the chaos experiments, the network and
    # the databases: their parameters' defaults create them; Chaos=enabled adds its unit)
    plantilla = Modelo(path=PLANTILLA, parameters={"Chaos": "enabled"})  # the template's defaults, not the local run's
    unidades = [(ruta, t) for ruta, t in plantilla.walk() if ruta]
    assert {ruta.rstrip("/") for ruta, _ in unidades} >= {"Red", "Aurora", "Valkey", "Simuladores", "Caos", "Carritos"}
    # WHEN the resources each keeps after a stack delete are read  THEN there are none: an import creates one
    # stack, so a table or DLQ retained in a unit could not be adopted before the next deploy creates the unit
    # (decision 0130: what a delete retains stays in the root)
    assert {ruta: m.retained(t) for ruta, t in unidades if m.retained(t)} == {}


def test_import_definition_is_the_templates_own_so_the_next_deploy_changes_nothing() -> None:
    # Resolved definitions (a literal QueueName where the template has !Sub ...${NameSuffix}) made the
    # following deploy's change set show every name "changed" (MiniStack: Replacement True for all eight).
    escrito = Template(path=PLANTILLA).doc["Resources"]
    plantilla = plantilla_de_importacion(Topologia(sufijo="-v2"), RETENIDOS)
    for lid in RETENIDOS:
        assert plantilla["Resources"][lid] == escrito[lid], lid
    assert set(plantilla["Parameters"]) == {"NameSuffix", "KmsKeyArn", "CarritosStreamArn"}
    assert set(plantilla["Conditions"]) == {"CreateKmsKey", "CreateCarritosTable"}


def test_import_definition_resolves_a_branch_that_names_a_resource_left_out() -> None:
    # An existing key: DatosKey is not retained, so !If [CreateKmsKey, !Ref DatosKey, ...] cannot stay.
    externa = Topologia(parametros={"KmsKeyArn": CLAVE_ARN})
    cola = externa.definicion_para_importar("ColaErpFallidos", externa.retenidos())
    assert cola["Properties"]["KmsMasterKeyId"] == {"Ref": "KmsKeyArn"}
    nombre = {"Fn::FindInMap": ["Colas", "Erp", "Nombre"]}  # as the template's loop writes it, expanded
    texto = "mercadofresco-${Nombre}-fallidos${NameSuffix}"
    assert cola["Properties"]["QueueName"] == {"Fn::Sub": [texto, {"Nombre": nombre}]}


def test_import_definition_refuses_a_reference_to_a_resource_left_out_of_the_import() -> None:
    with pytest.raises(ValueError, match="ColaPedidos references ColaPedidosFallidos"):
        Topologia().definicion_para_importar("ColaPedidos", ["ColaPedidos", "DatosKey"])


def test_adoptar_imports_every_loose_retained_resource_in_one_import_change_set(cuenta: Cuenta) -> None:
    # GIVEN every retained resource in the account, in no stack (another stack holds something else)
    cuenta.retenidos_en_la_cuenta(sufijo="-v2")
    cuenta.pilas({"otra": [("Cola", "AWS::SQS::Queue", _url("otra-cola"))]})
    cuenta.pila_ausente()
    cfn = cuenta.stubs["cloudformation"]

    def importado(tipo: str, lid: str, identificador: dict[str, str]) -> dict[str, Any]:
        return {"ResourceType": tipo, "LogicalResourceId": lid, "ResourceIdentifier": identificador}

    esperados = [
        importado("AWS::KMS::Key", "DatosKey", {"KeyId": CLAVE}),
        *(importado("AWS::DynamoDB::Table", lid, {"TableName": n + "-v2"}) for lid, n in TABLAS.items()),
        *(importado("AWS::SQS::Queue", lid, {"QueueUrl": _url(_con_sufijo(n, "-v2"))}) for lid, n in COLAS.items()),
    ]
    cfn.add_response(
        "create_change_set",
        {"Id": "arn:cs", "StackId": "arn:pila"},
        {"StackName": PILA, "ChangeSetName": ANY, "ChangeSetType": "IMPORT", "Description": ANY,
         "TemplateBody": ANY, "ResourcesToImport": ANY,
         "Parameters": [{"ParameterKey": "NameSuffix", "ParameterValue": "-v2"}]},
    )  # fmt: skip
    cfn.add_response(
        "describe_change_set", {"Status": "CREATE_COMPLETE"}, {"ChangeSetName": "arn:cs", "StackName": PILA}
    )
    cfn.add_response("execute_change_set", {}, {"ChangeSetName": "arn:cs", "StackName": PILA})
    cuenta.estado_pila("IMPORT_COMPLETE")

    # WHEN
    adoptados = adoptar(Topologia(sufijo="-v2"), PILA, cuenta, print)

    # THEN one IMPORT change set names each by its identifier, in a template of exactly those, retained
    assert [r.logico for r in adoptados] == list(RETENIDOS)
    peticion = cuenta.peticiones["CreateChangeSet"]
    assert peticion["ChangeSetType"] == "IMPORT"
    assert sorted(peticion["ResourcesToImport"], key=str) == sorted(esperados, key=str)
    plantilla = json.loads(peticion["TemplateBody"])
    assert set(plantilla["Resources"]) == set(RETENIDOS)
    for lid, recurso in plantilla["Resources"].items():
        assert recurso["DeletionPolicy"] == "Retain", lid
    # What they reference is declared there: only the parameters and conditions they use, nothing else.
    assert set(plantilla["Parameters"]) == {"NameSuffix", "KmsKeyArn", "CarritosStreamArn"}
    assert set(plantilla["Conditions"]) == {"CreateKmsKey", "CreateCarritosTable"}


def test_adoptar_with_nothing_retained_in_the_account_says_so_and_changes_nothing(cuenta: Cuenta) -> None:
    cuenta.retenidos_en_la_cuenta(faltan=RETENIDOS[1:])
    cuenta.pilas()
    dicho: list[str] = []
    assert adoptar(Topologia(), PILA, cuenta, dicho.append) == []
    assert dicho == ["nada que adoptar: no existe ninguno"]


def test_adoptar_when_the_stack_already_owns_them_has_nothing_to_do(cuenta: Cuenta) -> None:
    cuenta.retenidos_en_la_cuenta()
    propios = [(lid, "AWS::SQS::Queue", _url(n)) for lid, n in COLAS.items()]
    propios += [(lid, "AWS::DynamoDB::Table", n) for lid, n in TABLAS.items()] + [("DatosKey", "AWS::KMS::Key", CLAVE)]
    cuenta.pilas({PILA: propios})
    dicho: list[str] = []
    assert adoptar(Topologia(), PILA, cuenta, dicho.append) == []
    assert dicho == [f"nada que adoptar: los retenidos existentes están en {PILA}"]


@pytest.mark.parametrize(
    ("situacion", "mensaje"),
    [
        ("falta una DLQ", "faltan 1 de 9 retenidos (ColaErpFallidos)"),
        ("la pila existe", f"la pila {PILA} ya existe (ROLLBACK_COMPLETE)"),
        ("una tabla en otra pila", "TablaIdempotencia (mercadofresco-idempotencia) está en la pila otra"),
        ("clave por borrar", f"la clave KMS {CLAVE} (DatosKey) está programada para borrarse"),
    ],
)
def test_adoptar_refuses_a_partial_situation_before_any_change(cuenta: Cuenta, situacion: str, mensaje: str) -> None:
    cuenta.retenidos_en_la_cuenta(
        faltan=("ColaErpFallidos",) if situacion == "falta una DLQ" else (),
        estado_clave="PendingDeletion" if situacion == "clave por borrar" else "Enabled",
    )
    if situacion != "clave por borrar":  # refused while reading the key, before any stack is listed
        otra = [("T", "AWS::DynamoDB::Table", "mercadofresco-idempotencia")] if situacion.startswith("una") else []
        cuenta.pilas({"otra": otra})
        if situacion == "la pila existe":
            cuenta.estado_pila("ROLLBACK_COMPLETE")
        else:
            cuenta.pila_ausente()
    with pytest.raises(RechazoError) as rechazo:
        adoptar(Topologia(), PILA, cuenta, print)
    assert mensaje in str(rechazo.value)
    assert "CreateChangeSet" not in cuenta.peticiones


def test_adoptar_removes_the_empty_stack_a_refused_import_left(cuenta: Cuenta) -> None:
    cuenta.retenidos_en_la_cuenta()
    cuenta.pilas()
    cuenta.pila_ausente()
    cfn = cuenta.stubs["cloudformation"]
    cfn.add_response("create_change_set", {"Id": "arn:cs"}, None)
    fallido = {"Status": "FAILED", "StatusReason": "Resource ... already exists in stack arn:..."}
    cfn.add_response("describe_change_set", fallido, {"ChangeSetName": "arn:cs", "StackName": PILA})
    cfn.add_response("describe_change_set", fallido, {"ChangeSetName": "arn:cs", "StackName": PILA})
    cfn.add_response("delete_change_set", {}, {"ChangeSetName": "arn:cs", "StackName": PILA})
    cuenta.estado_pila("REVIEW_IN_PROGRESS")
    cfn.add_response("delete_stack", {}, {"StackName": PILA})
    with pytest.raises(ImportacionError, match="already exists in stack"):
        adoptar(Topologia(), PILA, cuenta, print)


def test_cli_refusal_is_one_line_and_exit_code_2(cuenta: Cuenta, capsys: pytest.CaptureFixture[str]) -> None:
    cuenta.retenidos_en_la_cuenta(faltan=("TablaCarritos",))
    cuenta.pilas()
    cuenta.pila_ausente()
    assert main(["--pila", PILA, "--parametros", "Stage=dev", "adoptar"], clientes=cuenta) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("mf-retenidos: faltan 1 de 9 retenidos (TablaCarritos)")
    assert error.rstrip().endswith("nada se ha cambiado")


def test_cli_listar_reads_the_name_suffix_from_the_deploys_parameters(
    cuenta: Cuenta, capsys: pytest.CaptureFixture[str]
) -> None:
    cuenta.retenidos_en_la_cuenta(sufijo="-v2")
    cuenta.pilas()
    assert main(["--pila", "mf-v2", "--parametros", "Stage=dev NameSuffix=-v2", "listar"], clientes=cuenta) == 0
    lineas = capsys.readouterr().out.splitlines()
    assert [linea.split()[0] for linea in lineas] == list(RETENIDOS)
    assert "mercadofresco-stock-fallidos-v2.fifo" in lineas[RETENIDOS.index("ColaStockFallidos")]
    assert all(linea.endswith("suelto") for linea in lineas)


def test_adoptar_reports_an_import_rolled_back_with_its_reason(cuenta: Cuenta) -> None:
    cuenta.retenidos_en_la_cuenta()
    cuenta.pilas()
    cuenta.pila_ausente()
    cfn = cuenta.stubs["cloudformation"]
    cfn.add_response("create_change_set", {"Id": "arn:cs"}, None)
    cfn.add_response(
        "describe_change_set", {"Status": "CREATE_COMPLETE"}, {"ChangeSetName": "arn:cs", "StackName": PILA}
    )
    cfn.add_response("execute_change_set", {}, {"ChangeSetName": "arn:cs", "StackName": PILA})
    cuenta.estado_pila("IMPORT_ROLLBACK_COMPLETE")
    cuenta.estado_pila("IMPORT_ROLLBACK_COMPLETE")
    with pytest.raises(ImportacionError, match="terminó en IMPORT_ROLLBACK_COMPLETE: motivo"):
        adoptar(Topologia(), PILA, cuenta, print)
