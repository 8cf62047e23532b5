"""Deployable as a reviewer would deploy it (issue 26): the defaults fit a new account, impossible parameter
combinations are refused by the Rules, the migrations' network outlives them, the roles allow what the code writes."""

from __future__ import annotations

import ast
import tomllib
from typing import Any

import pytest
from least_privilege.acciones import OPERACION_URL, Destino, solicitudes_de
from least_privilege.evaluador import Decision, Solicitud, decidir
from least_privilege.roles import plantilla_transformada, politicas_por_principal
from mercadofresco.dominio import claves
from mercadofresco_local import RAIZ
from sam_emulator.template import Template
from template_model.wiring import ref_id

from tests.unit.iam.pila import creada

_VALKEY_MAX = 40  # ElastiCache's limit on ServerlessCacheName


def _desplegada(**parametros: str) -> Template:
    """The template with the parameters' own defaults (not the local run's), plus these."""
    p = Template()
    defectos = {k: str(v.get("Default", "")) for k, v in p.doc["Parameters"].items()}
    return Template(parameters={**defectos, **parametros})


def _evaluar(p: Template, nodo: Any) -> Any:
    """A Rules expression: Fn::EachMemberEquals and the boolean functions over resolved parameters."""
    if isinstance(nodo, dict) and len(nodo) == 1:
        ((funcion, arg),) = nodo.items()
        if funcion == "Fn::EachMemberEquals":
            return all(v == arg[1] for v in _evaluar(p, arg[0]) or [""])
        if funcion == "Fn::Equals":
            return _evaluar(p, arg[0]) == _evaluar(p, arg[1])
        if funcion == "Fn::Not":
            return not _evaluar(p, arg[0])
        if funcion == "Fn::And":
            return all(_evaluar(p, a) for a in arg)
        if funcion == "Fn::Or":
            return any(_evaluar(p, a) for a in arg)
    return p.resolve(nodo)


def _incumplidas(**parametros: str) -> list[str]:
    """The AssertDescription of every Rules assertion these parameters break (what CloudFormation prints)."""
    p = _desplegada(**parametros)
    rotas = []
    for regla in p.doc["Rules"].values():
        if "RuleCondition" in regla and not _evaluar(p, regla["RuleCondition"]):
            continue
        rotas += [a["AssertDescription"] for a in regla["Assertions"] if not _evaluar(p, a["Assert"])]
    return rotas


EXISTENTE = {
    "SubnetIds": "subnet-1,subnet-2",
    "SecurityGroupIds": "sg-1",
    "AuroraEndpoint": "aurora-mf-escritor.cluster-x.eu-south-2.rds.amazonaws.com",
    "AuroraSecretArn": "arn:aws:secretsmanager:eu-south-2:123456789012:secret:mf-app-AbCdEf",
    "ValkeyEndpoint": "mercadofresco-catalogo-x.serverless.euso2.cache.amazonaws.com:6379",
}
PROVEEDORES = {
    f"{n}Url": f"https://{n.lower()}.interno.example"
    for n in ("Pasarela", "Erp", "CorreoPrincipal", "CorreoSecundario")
}


def _perfil(nombre: str) -> dict[str, str]:
    """A samconfig.toml environment's parameter_overrides."""
    config = tomllib.loads((RAIZ / "samconfig.toml").read_text())
    return dict(par.split("=", 1) for par in config[nombre]["deploy"]["parameters"]["parameter_overrides"].split())


@pytest.mark.parametrize(
    "parametros",
    [
        {},
        EXISTENTE,
        {"NatGateway": "disabled", **PROVEEDORES},
        {"NatGateway": "instance"},  # sandbox providers reached through the NAT instance
        _perfil("prueba"),
    ],
)
def test_rules_accept_the_defaults_existing_infrastructure_and_the_profiles(parametros: dict[str, str]) -> None:
    assert _incumplidas(**parametros) == []


@pytest.mark.parametrize(
    ("parametros", "motivo"),
    [
        ({"NatGateway": "disabled"}, "NatGateway=disabled needs PasarelaUrl"),  # sandbox providers are on the internet
        ({"NatGateway": "disabled", **{**PROVEEDORES, "ErpUrl": ""}}, "NatGateway=disabled needs"),
        ({"VpcEndpoints": "none", "NatGateway": "disabled", **PROVEEDORES}, "VpcEndpoints=none"),
        ({"VpcEndpoints": "none", "NatGateway": "disabled", **PROVEEDORES}, "needs NatGateway=enabled or instance"),
        ({**EXISTENTE, "SecurityGroupIds": ""}, "give SecurityGroupIds too"),
        ({"SecurityGroupIds": "sg-1"}, "give both or neither"),
    ],
)
def test_rules_refuse_combinations_that_cannot_work(parametros: dict[str, str], motivo: str) -> None:
    assert any(motivo in r for r in _incumplidas(**parametros)), _incumplidas(**parametros)


def test_name_suffix_cannot_break_the_40_character_cache_name() -> None:
    p = _desplegada()
    maximo = p.doc["Parameters"]["NameSuffix"]["MaxLength"]
    larga = _desplegada(NameSuffix="-" + "x" * (maximo - 1))
    valkey = larga.units()["Valkey"]
    nombre = valkey.resolve(valkey.resources["ValkeyCatalogo"]["Properties"]["ServerlessCacheName"])
    assert len(nombre) <= _VALKEY_MAX


def test_defaults_reserve_no_concurrency_a_new_account_does_not_have() -> None:
    # A new account's concurrency quota is 10 and Lambda keeps 100 unreserved: any reservation fails the deploy.
    p = _desplegada()
    assert not p.condition("ReserveConcurrency")


def test_the_migrations_custom_resource_is_deleted_before_its_network_path() -> None:
    p = _desplegada()
    recurso = p.resources["MigracionesAurora"]
    dependencias = recurso.get("DependsOn", [])
    dependencias = [dependencias] if isinstance(dependencias, str) else dependencias
    referidos = {
        r["Ref"]
        for d in dependencias
        for rama in p.resources[d].get("Metadata", {}).values()
        for alternativa in rama["Fn::If"][1:]
        for r in alternativa
    }
    camino = {
        lid
        for lid, r in p.resources.items()
        if r["Type"] in ("AWS::EC2::Route", "AWS::EC2::SubnetRouteTableAssociation", "AWS::EC2::VPCGatewayAttachment")
        or (
            r["Type"] == "AWS::EC2::VPCEndpoint"
            and str(r["Properties"]["ServiceName"]).endswith(
                (".s3}", ".secretsmanager}", ".kms}", ".logs}", ".s3", ".secretsmanager", ".kms", ".logs")
            )
        )
    }
    assert camino <= referidos, f"not kept until the custom resource is gone: {sorted(camino - referidos)}"


def _prefijos_de(modulo: str) -> set[str]:
    """The key operations a module builds with ``claves.<builder>(...)`` (read from its source)."""
    prefijos = set()
    for nodo in ast.walk(ast.parse((RAIZ / "functions" / modulo).read_text())):
        if (
            isinstance(nodo, ast.Call)
            and isinstance(nodo.func, ast.Attribute)
            and isinstance(nodo.func.value, ast.Name)
            and nodo.func.value.id == "claves"
        ):
            argumentos = ["PED-1", "SKU-1"][: len(nodo.args)]
            prefijos.add(getattr(claves, nodo.func.attr)(*argumentos).operation)
    return prefijos


@pytest.mark.parametrize(
    ("logical_id", "modulo"),
    [
        ("CobroFunction", "cobro/operaciones.py"),  # solicitud.py builds reserva keys only to validate the lines
        ("ReclamoFunction", "reclamo/app.py"),
        ("Consumidores/ErpFunction", "erp/app.py"),
        ("Consumidores/CorreoFunction", "correo/app.py"),
    ],
)
def test_each_role_may_write_every_idempotency_key_its_code_builds(logical_id: str, modulo: str) -> None:
    # GIVEN the role as SAM deploys it, and every key operation the function's code builds
    p = _desplegada()
    tabla = "arn:aws:dynamodb:eu-south-2:123456789012:table/mf"
    p.physical_ids["TablaIdempotencia"] = {"Ref": "mercadofresco-idempotencia", "Arn": tabla}
    politicas = politicas_por_principal(p, plantilla_transformada(p.path, p.region))[logical_id]
    prefijos = _prefijos_de(modulo)
    assert prefijos, f"no claves.<builder>() call found in functions/{modulo}"

    # THEN the claim of each (a conditional PutItem) is allowed by the role's dynamodb:LeadingKeys
    for prefijo in prefijos:
        clave = (("dynamodb:LeadingKeys", (f"{prefijo}:X",)),)
        solicitud = Solicitud("dynamodb:PutItem", tabla, clave)
        assert decidir(politicas, solicitud) is Decision.PERMITIDA, f"{logical_id} may not claim {prefijo}:*"


@pytest.mark.parametrize("ruta", ["Outbox/OutboxFunction", "Tienda/TiendaFunction"])
def test_a_pausable_aurora_turns_the_relays_pending_signal_on_and_lets_the_role_reach_valkey(ruta: str) -> None:
    # GIVEN the cheap profile (Aurora at 0 ACU) and the default one
    for parametros, senal in ((_perfil("prueba"), "valkey"), ({}, "")):
        raiz = _desplegada(**parametros)
        p, logical_id = raiz.locate(ruta)  # the relay and the store, each in its unit
        variables = p.resources[logical_id]["Properties"]["Environment"]["Variables"]
        # THEN the store and the relay use the Valkey signal exactly when Aurora may pause
        assert p.resolve(variables["OUTBOX_PENDING_SIGNAL"]) == senal
        # AND the role may then read the Valkey token (and only then)
        sentencias = [x for _, docs in _documentos(p, logical_id) for x in docs]
        (condicionada,) = [s["Fn::If"] for s in sentencias if "Fn::If" in s and s["Fn::If"][0] in CONDICION_SENAL]
        assert condicionada[1]["Sid"] == "PendingSignalInValkey"
        assert p.condition(condicionada[0]) == bool(senal)


SIMULADORES = {"SimuladorPasarelaFunction", "SimuladorErpFunction", "SimuladorCorreoFunction"}
UNIDAD = "Simuladores"  # the root's nested unit that plays the providers (unidades/simuladores.yaml)
ACCESO = "AccesoSimuladores"  # the one that grants their callers (unidades/acceso_simuladores.yaml)
# Each caller and the one simulator it may invoke, with the parameter that makes it a sandbox.
LLAMANTES = [
    ("CobroFunction", "SimuladorPasarelaFunction", "PasarelaUrl"),
    ("Consumidores/ErpFunction", "SimuladorErpFunction", "ErpUrl"),
    ("Consumidores/CorreoFunction", "SimuladorCorreoFunction", "CorreoPrincipalUrl"),
]
# The defaults, every provider real, and each provider alone a sandbox.
COMBINACIONES = [{}, PROVEEDORES, *({**PROVEEDORES, parametro: ""} for parametro in PROVEEDORES)]


def test_no_function_url_is_public() -> None:
    # GIVEN every function URL of the default stack (the sandbox providers, in their unit) and every Lambda permission
    p = _desplegada()
    urls = [(prefijo, r) for prefijo, t in p.walk() for r in t.resources.values() if r["Type"] == "AWS::Lambda::Url"]
    assert {prefijo + u["Properties"]["TargetFunctionArn"]["Fn::GetAtt"][0] for prefijo, u in urls} == {
        f"{UNIDAD}/{s}" for s in SIMULADORES
    }
    # THEN each is AWS_IAM: Lambda refuses an unsigned or unauthorised request before invoking
    assert {u["Properties"]["AuthType"] for _, u in urls} == {"AWS_IAM"}
    # AND no resource policy, in the root or a unit, opens one to everybody
    permisos = [
        r["Properties"] for _, t in p.walk() for r in t.resources.values() if r["Type"] == "AWS::Lambda::Permission"
    ]
    assert not [x for x in permisos if x.get("FunctionUrlAuthType") == "NONE" or x.get("InvokedViaFunctionUrl")]


def test_every_simulator_is_capped_when_concurrency_can_be_reserved() -> None:
    # GIVEN the sandbox unit of a stack that reserves concurrency
    unidad = _desplegada(ReservedConcurrency="enabled").units()[UNIDAD]
    for lid in SIMULADORES:
        # THEN its function reserves concurrency: its callers' floods cannot take the order path's
        reservada = unidad.resolve(unidad.resources[lid]["Properties"].get("ReservedConcurrentExecutions"))
        assert isinstance(reservada, int | str) and int(reservada) > 0, lid


CONDICION_SENAL = {"SenalOutboxValkey", "SenalEnValkey"}  # the root's condition, and the units'


def _documentos(p: Template, lid: str) -> list[tuple[str, list[Any]]]:
    """``(function, statements)`` for each policy of a function: its SAM ``Policies`` or its role's."""
    propiedades = p.resources[lid]["Properties"]
    if "Role" in propiedades:
        rol = p.resources[propiedades["Role"]["Fn::GetAtt"][0]]["Properties"]
        return [(lid, x["PolicyDocument"]["Statement"]) for x in rol.get("Policies", [])]
    return [(lid, x["Statement"]) for x in propiedades.get("Policies") or [] if "Statement" in x]


def _sentencias_invoke_url(p: Template) -> list[tuple[str, str | None, dict[str, Any]]]:
    """``(function, Fn::If condition or None, statement)`` for every statement granting a Lambda invoke action.

    A function's statements are its SAM ``Policies``, or those of the ``AWS::IAM::Role`` it names.
    """
    documentos = [
        d for lid, r in p.resources.items() if r["Type"] == "AWS::Serverless::Function" for d in _documentos(p, lid)
    ]
    encontradas = []
    for lid, sentencias in documentos:
        for sentencia in sentencias:
            condicion, cuerpo = sentencia["Fn::If"][:2] if "Fn::If" in sentencia else (None, sentencia)
            if "lambda:Invoke" in str(cuerpo.get("Action")):
                encontradas.append((lid, condicion, cuerpo))
    return encontradas


# What a signed call to a function URL needs (a URL created since October 2025: both actions), each with
# the condition that keeps it to that path.
_CONDICION_POR_ACCION = {
    "lambda:InvokeFunctionUrl": {"StringEquals": {"lambda:FunctionUrlAuthType": "AWS_IAM"}},
    "lambda:InvokeFunction": {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}},
}


def _rol_de(p: Template, funcion: str) -> str:
    """A function's role by stack path (``funcion`` one too)."""
    donde, lid = p.locate(funcion)
    return donde.prefix + donde.resources[lid]["Properties"]["Role"]["Fn::GetAtt"][0]


def _pasado(acceso: Template, parametro: str) -> str:
    """The resource the parent passes the grants unit as ``parametro``, by stack path: one of its own (``Ref``,
    ``GetAtt``), or a unit's, through that unit's output."""
    pasado = acceso.parameters[parametro]
    unidad, atributo = pasado.get("Fn::GetAtt") or (None, "")
    if not atributo.startswith("Outputs."):
        return ref_id(pasado)
    return f"{unidad}/{ref_id(acceso.parent.units()[unidad].output(atributo.removeprefix('Outputs.')))}"


def _simulador_pasado(acceso: Template, parametro: str) -> str:
    """The sandbox unit's function the parent passes the grants unit as ``parametro`` (through an output)."""
    ruta = _pasado(acceso, parametro)
    assert ruta.startswith(f"{UNIDAD}/"), ruta
    return ruta.removeprefix(f"{UNIDAD}/")


def test_each_function_url_caller_is_granted_both_invoke_actions_on_one_simulator_through_its_url() -> None:
    p = _desplegada()
    # THEN no function of the root grants itself a Lambda invoke: the production roles carry no sandbox grant
    assert not _sentencias_invoke_url(p)
    acceso = p.units()[ACCESO]
    politicas = [r for r in acceso.resources.values() if r["Type"] == "AWS::IAM::Policy"]
    # AND the sandbox grants unit attaches to each caller's role (the parent's, passed to it) exactly the two actions
    # on its own simulator's ARN (the sandbox unit's, passed to it)
    concedidas = sorted(
        (
            _pasado(acceso, rol["Ref"]),
            _simulador_pasado(acceso, sentencia["Resource"]["Ref"]),
            sentencia["Action"],
        )
        for politica in politicas
        for rol in politica["Properties"]["Roles"]
        for sentencia in politica["Properties"]["PolicyDocument"]["Statement"]
    )
    assert concedidas == sorted(
        (_rol_de(p, c), sim, accion) for c, sim, _ in LLAMANTES for accion in _CONDICION_POR_ACCION
    )
    for politica in politicas:
        (pasado,) = {x["Resource"]["Ref"] for x in politica["Properties"]["PolicyDocument"]["Statement"]}
        simulador = _simulador_pasado(acceso, pasado)
        # AND one action on one function's ARN, only through a signed (AWS_IAM) URL call
        for sentencia in politica["Properties"]["PolicyDocument"]["Statement"]:
            assert sentencia["Condition"] == _CONDICION_POR_ACCION[sentencia["Action"]], simulador
        # AND only when the sandbox unit creates that simulator
        for parametros in COMBINACIONES:
            q = _desplegada(**parametros)
            if (unidad := q.units().get(UNIDAD)) is not None:
                creado = unidad.condition(unidad.resources[simulador].get("Condition"))
                concedido = q.units()[ACCESO]
                assert concedido.condition(politica.get("Condition")) == creado, (simulador, parametros)
            else:
                assert ACCESO not in q.units(), parametros


@pytest.mark.parametrize(("logical_id", "simulador", "parametro"), LLAMANTES)
def test_a_caller_may_invoke_its_simulator_url_exactly_when_it_calls_a_sandbox(
    logical_id: str, simulador: str, parametro: str
) -> None:
    destino = Destino("eu-south-2", "123456789012", urls_funcion={"https://sim/": ""})
    # the simulators' ARNs, as a stack that plays every provider creates them
    simuladores = creada(_desplegada()).created_units[UNIDAD].physical_ids
    for parametros, simulado in (({}, True), ({parametro: "https://real.example", **PROVEEDORES}, False)):
        p = creada(_desplegada(**parametros))
        politicas = politicas_por_principal(p, plantilla_transformada(p.path, p.region))[logical_id]

        def permitida(funcion: str, politicas: Any = politicas, **contexto: str) -> bool:
            """Every IAM request of one signed call to ``funcion``'s URL is allowed."""
            destino.urls_funcion["https://sim/"] = simuladores[funcion]["Arn"]
            solicitudes = solicitudes_de("lambda", OPERACION_URL, {"FunctionUrl": "https://sim/x"}, destino)
            solicitudes = [
                Solicitud(s.accion, s.recurso, tuple((k, (contexto.get(k, v[0]),)) for k, v in s.contexto))
                for s in solicitudes
            ]
            return all(decidir(politicas, s) is Decision.PERMITIDA for s in solicitudes)

        # THEN its own simulator, signed, exactly when the stack plays that provider
        assert permitida(simulador) == simulado, (logical_id, parametros)
        # AND never another simulator, nor a call through a URL of another auth type, nor a direct invoke
        assert not any(permitida(otro) for otro in SIMULADORES - {simulador}), logical_id
        assert not permitida(simulador, **{"lambda:FunctionUrlAuthType": "NONE"}), logical_id
        assert not permitida(simulador, **{"lambda:InvokedViaFunctionUrl": "false"}), logical_id


def test_the_prueba_profile_routes_the_private_subnets_through_a_hardened_nat_instance() -> None:
    # GIVEN the cheap profile
    raiz = _desplegada(**_perfil("prueba"))
    p = raiz.units()["Red"]  # the network unit, with what the root passes it
    assert p.condition("CreateNatInstance") and not p.condition("CreateNatGateway")
    assert not p.of_type("AWS::EC2::NatGateway")
    (instancia,) = p.of_type("AWS::EC2::Instance").values()
    propiedades = instancia["Properties"]
    # THEN a small Graviton instance from AWS's public Amazon Linux parameter, IMDSv2 only, no role
    assert propiedades["InstanceType"] == "t4g.nano"
    assert propiedades["ImageId"].startswith("{{resolve:ssm:/aws/service/ami-amazon-linux-latest/")
    assert propiedades["ImageId"].endswith("-arm64}}")
    assert propiedades["MetadataOptions"]["HttpTokens"] == "required"
    assert "IamInstanceProfile" not in propiedades
    # AND its volume is encrypted with the project's key
    (volumen,) = propiedades["BlockDeviceMappings"]
    assert volumen["Ebs"]["Encrypted"] is True
    assert volumen["Ebs"]["KmsKeyId"] == {"Ref": "DataKeyArn"}
    assert raiz.resources["Red"]["Properties"]["Parameters"]["DataKeyArn"] == {
        "Fn::If": ["CreateKmsKey", {"Fn::GetAtt": ["DatosKey", "Arn"]}, {"Ref": "KmsKeyArn"}]
    }
    # AND it forwards (no source/destination check) from its own interface in the public subnet, with the EIP
    assert propiedades["SourceDestCheck"] is False
    (interfaz,) = propiedades["NetworkInterfaces"]
    assert interfaz["SubnetId"] == {"Ref": "SubredPublicaA"}
    (instancia_id,) = p.of_type("AWS::EC2::Instance")
    (ip,) = p.of_type("AWS::EC2::EIP").values()
    assert p.chosen(ip["Properties"]["InstanceId"]) == {"Ref": instancia_id}
    # AND its security group lets in only HTTPS from the VPC
    (sg_ref,) = interfaz["GroupSet"]
    entrada = p.resources[sg_ref["Ref"]]["Properties"]["SecurityGroupIngress"]
    vpc = p.resources["Vpc"]["Properties"]["CidrBlock"]
    assert [(r["IpProtocol"], r["FromPort"], r["ToPort"], r["CidrIp"]) for r in entrada] == [("tcp", 443, 443, vpc)]
    # AND the private route table's default route goes to that instance
    ruta = p.resources["RutaPrivadaNat"]["Properties"]
    assert ruta["DestinationCidrBlock"] == "0.0.0.0/0"
    assert p.resolve(ruta["NatGatewayId"]) is p.resolve({"Ref": "AWS::NoValue"})
    assert p.chosen(ruta["InstanceId"]) == {"Ref": instancia_id}


def test_the_prueba_nat_instance_can_be_replaced_before_the_old_one_is_deleted() -> None:
    # GIVEN the cheap profile's NAT instance (a new AMI is taken by replacing it: create new, then delete old)
    p = _desplegada(**_perfil("prueba")).units()["Red"]
    ((instancia_id, instancia),) = p.of_type("AWS::EC2::Instance").items()
    # THEN it attaches nothing created outside it, which the old instance would still hold
    for interfaz in instancia["Properties"]["NetworkInterfaces"]:
        assert "NetworkInterfaceId" not in interfaz, "a pre-created interface cannot be on two instances"
    assert not p.of_type("AWS::EC2::NetworkInterfaceAttachment")
    # AND whatever names it follows it by an update in place (the route's InstanceId, the EIP's
    # InstanceId), never by an association resource that CloudFormation would have to replace
    assert not p.of_type("AWS::EC2::EIPAssociation")
    referencias = [
        (lid, prop)
        for lid, r in p.resources.items()
        for prop, valor in (r.get("Properties") or {}).items()
        if lid != instancia_id
        and r.get("Type") != "AWS::CloudFormation::WaitConditionHandle"
        and {"Ref": instancia_id} in _valores(p.chosen(valor))
    ]
    assert sorted(referencias) == [("IpNat", "InstanceId"), ("RutaPrivadaNat", "InstanceId")]


def _valores(valor: Any) -> list[Any]:
    """``valor`` and everything nested in it."""
    if isinstance(valor, dict):
        return [valor, *(v for x in valor.values() for v in _valores(x))]
    if isinstance(valor, list):
        return [valor, *(v for x in valor for v in _valores(x))]
    return [valor]


def test_the_default_keeps_the_managed_nat_gateway_and_no_instance() -> None:
    p = _desplegada().units()["Red"]
    assert p.of_type("AWS::EC2::NatGateway") and not p.of_type("AWS::EC2::Instance")
    ruta = p.resources["RutaPrivadaNat"]["Properties"]
    assert not p.condition(ruta["InstanceId"]["Fn::If"][0])
    assert p.condition(ruta["NatGatewayId"]["Fn::If"][0])
