"""Infrastructure on request (issue 16): an empty account gets a VPC, Aurora and Valkey; given ones are used instead."""

from __future__ import annotations

from typing import Any

import pytest
from sam_emulator.template import Template

EXISTENTE = {
    "SubnetIds": "subnet-1,subnet-2",
    "SecurityGroupIds": "sg-1",
    "AuroraEndpoint": "aurora-mf-escritor.cluster-x.eu-south-2.rds.amazonaws.com",
    "ValkeyEndpoint": "mercadofresco-catalogo-x.serverless.euso2.cache.amazonaws.com:6379",
}
_INFRA = ("AWS::EC2::", "AWS::RDS::", "AWS::ElastiCache::")


def _desplegada(**parametros: str) -> Template:
    """The template as `sam deploy` sees it: the parameters' own defaults (not the local run's), plus these."""
    p = Template()
    defectos = {k: str(v.get("Default", "")) for k, v in p.doc["Parameters"].items()}
    return Template(parameters={**defectos, **parametros})


def _creados(p: Template) -> set[str]:
    """The infrastructure created, in the root and in the units it creates (the network is unidades/red.yaml)."""
    return {
        lid
        for _ruta, t in p.walk()
        for lid, r in t.resources.items()
        if r["Type"].startswith(_INFRA) and t.condition(r.get("Condition"))
    }


def _entorno(p: Template, lid: str) -> dict[str, Any]:
    """A function's environment as deployed: Globals merged with its own, intrinsics left as written."""
    globales = p.doc["Globals"]["Function"]["Environment"].get("Variables", {})
    propio = (p.resources[lid]["Properties"].get("Environment") or {}).get("Variables", {})
    return {**globales, **propio}


def test_infrastructure_empty_account_creates_network_aurora_and_valkey() -> None:
    # GIVEN the default parameters (an empty account)
    p = _desplegada()
    creados = _creados(p)
    # THEN the VPC (2 private subnets in 2 AZs), the endpoints, Aurora and Valkey are created
    assert {"Vpc", "SubredPrivadaA", "SubredPrivadaB", "SgFunciones", "AuroraCluster", "AuroraEscritor"} <= creados
    assert {"ValkeyCatalogo", "EndpointDynamoDB", "EndpointSqs", "EndpointEvents", "EndpointSecretsManager"} <= creados
    red = p.units()["Red"]
    zonas = {str(red.resources[s]["Properties"]["AvailabilityZone"]) for s in ("SubredPrivadaA", "SubredPrivadaB")}
    assert len(zonas) == 2
    # AND the functions run in the created subnets and security group: the network unit's outputs
    vpc = p.doc["Globals"]["Function"]["VpcConfig"]
    assert p.chosen(vpc["SubnetIds"]) == {"Fn::Split": [",", {"Fn::GetAtt": ["Red", "Outputs.SubredesPrivadas"]}]}
    assert p.chosen(vpc["SecurityGroupIds"]) == [{"Fn::GetAtt": ["Red", "Outputs.SgFunciones"]}]
    salidas = red.doc["Outputs"]
    subredes = [{"Ref": "SubredPrivadaA"}, {"Ref": "SubredPrivadaB"}]
    assert salidas["SubredesPrivadas"]["Value"] == {"Fn::Join": [",", subredes]}
    assert salidas["SgFunciones"]["Value"] == {"Ref": "SgFunciones"}
    # AND reach the created cache by the Valkey unit's output
    for lid in p.of_type("AWS::Serverless::Function"):
        assert p.chosen(_entorno(p, lid)["VALKEY_ENDPOINT"]) == {"Fn::GetAtt": ["Valkey", "Outputs.Endpoint"]}, lid


def test_infrastructure_existing_endpoints_create_nothing_and_are_passed_to_the_functions() -> None:
    # GIVEN an existing VPC, Aurora and Valkey
    p = _desplegada(**EXISTENTE)
    # THEN no infrastructure is created
    assert _creados(p) == set()
    # AND every function reaching Aurora gets the given endpoint, every function the given Valkey
    for lid, r in p.resources.items():
        if r["Type"] != "AWS::Serverless::Function":
            continue
        entorno = _entorno(p, lid)
        assert p.chosen(entorno["VALKEY_ENDPOINT"]) == {"Ref": "ValkeyEndpoint"}
        if "AURORA_ENDPOINT" in entorno:
            assert p.chosen(entorno["AURORA_ENDPOINT"]) == {"Ref": "AuroraEndpoint"}, lid


@pytest.mark.parametrize("proxy", ["disabled", "enabled"])
def test_infrastructure_created_aurora_is_what_the_functions_reach(proxy: str) -> None:
    # GIVEN a created Aurora, with or without RDS Proxy
    p = _desplegada(RdsProxy=proxy)
    aurora = p.units()["Aurora"]
    esperado = (
        {"Fn::GetAtt": ["AuroraProxy", "Endpoint"]}
        if proxy == "enabled"
        else {"Fn::GetAtt": ["AuroraCluster", "Endpoint.Address"]}
    )
    # THEN every function of the stack that reads AURORA_ENDPOINT gets the Aurora unit's endpoint: the cluster's (or
    # the proxy's); a unit's function through the parameter the root passes it in
    lectores = [
        (t, ruta + lid)
        for ruta, t in p.walk()
        for lid, r in t.resources.items()
        if r["Type"] == "AWS::Serverless::Function" and "AURORA_ENDPOINT" in _entorno(t, lid)
    ]
    assert {"Tienda/TiendaFunction", "Tienda/ProyeccionFunction", "Outbox/OutboxFunction"} <= {r for _, r in lectores}
    for t, ruta in lectores:
        valor = _entorno(t, ruta.rsplit("/", 1)[-1])["AURORA_ENDPOINT"]
        if t.parent is not None:
            assert set(valor) == {"Ref"}, ruta
            valor = t.passed_by_parent(valor["Ref"])
        assert p.chosen(valor) == {"Fn::GetAtt": ["Aurora", "Outputs.Endpoint"]}, ruta
    assert aurora.chosen(aurora.doc["Outputs"]["Endpoint"]["Value"]) == esperado
    assert ("AuroraProxy" in _creados(p)) is (proxy == "enabled")


def test_aurora_serverless_v2_scales_down_idle_and_keeps_its_password_in_secrets_manager() -> None:
    raiz = _desplegada()
    p = raiz.units()["Aurora"]
    cluster = p.resources["AuroraCluster"]
    props = cluster["Properties"]
    # THEN PostgreSQL Serverless v2, master password managed by Secrets Manager with the data key
    assert props["Engine"] == "aurora-postgresql" and props["ManageMasterUserPassword"] is True
    assert props["MasterUserSecret"]["KmsKeyId"] == {"Ref": "DataKeyArn"}
    assert raiz.resources["Aurora"]["Properties"]["Parameters"]["DataKeyArn"]["Fn::If"][0] == "CreateKmsKey"
    assert p.resources["AuroraEscritor"]["Properties"]["DBInstanceClass"] == "db.serverless"
    assert p.resolve(p.resources["AuroraEscritor"]["Properties"]["DBInstanceIdentifier"]) == "aurora-mf-escritor"
    # AND its minimum capacity is a parameter whose default and choices scale it down when idle
    minimo = raiz.doc["Parameters"]["AuroraMinCapacity"]
    assert props["ServerlessV2ScalingConfiguration"]["MinCapacity"] == {"Ref": "AuroraMinCapacity"}
    assert raiz.resources["Aurora"]["Properties"]["Parameters"]["AuroraMinCapacity"] == {"Ref": "AuroraMinCapacity"}
    assert minimo["Default"] in (0, 0.5) and {0, 0.5} <= set(minimo["AllowedValues"])
    # AND orders outlive the stack
    assert (cluster["DeletionPolicy"], cluster["UpdateReplacePolicy"]) == ("Snapshot", "Snapshot")
    assert props["StorageEncrypted"] is True


def test_valkey_serverless_has_tls_auth_and_the_lessons_name() -> None:
    p = _desplegada().units()["Valkey"]
    cache = p.resources["ValkeyCatalogo"]["Properties"]
    assert cache["Engine"] == "valkey" and p.resolve(cache["ServerlessCacheName"]) == "mercadofresco-catalogo"
    # AUTH: the user group's default user has the ValkeySecret token the breaker's client sends
    usuario = p.resources["ValkeyUsuario"]["Properties"]
    assert usuario["UserName"] == "default" and usuario["AuthenticationMode"]["Type"] == "password"
    assert "SecretString:token" in str(usuario["AuthenticationMode"]["Passwords"])


@pytest.mark.parametrize(
    ("unidad", "sg", "puertos"), [("Aurora", "SgAurora", (5432, 5432)), ("Valkey", "SgValkey", (6379, 6380))]
)
def test_security_groups_databases_accept_only_the_functions(unidad: str, sg: str, puertos: tuple[int, int]) -> None:
    # GIVEN a database's security group WHEN its ingress rules are read
    raiz = _desplegada()
    reglas = raiz.units()[unidad].resources[sg]["Properties"]["SecurityGroupIngress"]
    # THEN only the functions' group may connect, on the database's port: the one the network unit made
    assert [(r["FromPort"], r["ToPort"], r["SourceSecurityGroupId"]) for r in reglas] == [
        (*puertos, {"Ref": "SgFunciones"})
    ]
    assert raiz.resources[unidad]["Properties"]["Parameters"]["SgFunciones"] == {
        "Fn::GetAtt": ["Red", "Outputs.SgFunciones"]
    }
    assert all("CidrIp" not in r for r in reglas)


def test_migrations_run_once_per_deploy_as_admin_and_never_hang_the_stack() -> None:
    p = _desplegada()
    recurso = p.resources["MigracionesAurora"]["Properties"]
    # THEN a new layer (new migration files) updates the resource, so each deploy runs what is new
    assert recurso["Capa"] == {"Ref": "ComunLayer"}
    # AND it connects as the created cluster's managed master user, and creates the runtime role
    assert p.chosen(recurso["AdminSecretArn"]) == {"Fn::GetAtt": ["Aurora", "Outputs.AdminSecretArn"]}
    salidas = p.units()["Aurora"].doc["Outputs"]
    assert salidas["AdminSecretArn"]["Value"] == {"Fn::GetAtt": ["AuroraCluster", "MasterUserSecret.SecretArn"]}
    # AND straight to the writer, never through RDS Proxy (DDL and role management)
    assert p.chosen(recurso["Endpoint"]) == {"Fn::GetAtt": ["Aurora", "Outputs.EscritorEndpoint"]}
    assert salidas["EscritorEndpoint"]["Value"] == {"Fn::GetAtt": ["AuroraCluster", "Endpoint.Address"]}
    assert p.chosen(recurso["RuntimeSecretArn"]) == {"Ref": "AuroraSecret"}
    # AND CloudFormation stops waiting long before its default hour; the function answers before its timeout
    funcion = p.resources["MigracionesFunction"]["Properties"]
    assert funcion["Timeout"] < recurso["ServiceTimeout"] <= 600
    # AND its way to CloudFormation's answer URL (the network unit: routes, NAT, endpoints) is deleted after
    # it: the function runs in the unit's subnets (Globals), so the unit outlives the function and its resource
    assert "VpcConfig" not in funcion
    vpc = p.chosen(p.doc["Globals"]["Function"]["VpcConfig"])
    assert vpc["SubnetIds"]["Fn::Split"][1] == {"Fn::GetAtt": ["Red", "Outputs.SubredesPrivadas"]}
    # AND the outbox schedules start only after the deploy migrated: their unit is created after it
    programas = [prefijo for prefijo, t in p.walk() for _ in t.of_type("AWS::Scheduler::Schedule")]
    assert programas == ["Outbox/", "Outbox/"]
    assert p.resources["Outbox"].get("DependsOn") == "MigracionesAurora"
