"""The default profile's data path in MiniStack's CloudFormation: Aurora, ElastiCache Serverless, the NAT.

MiniStack 1.5.33's *services* run these for real: its RDS API starts a PostgreSQL container behind an
Aurora cluster (TLS with its own CA, the managed master secret in Secrets Manager), its ElastiCache API a
TLS-only cluster-mode Valkey behind a serverless cache, its EC2 API keeps elastic IPs and NAT gateways.
Its *CloudFormation* does not use them: ``AWS::RDS::DBCluster``/``DBInstance`` are records only (an
endpoint name nothing answers, no ``MasterUserSecret``), and ``AWS::EC2::EIP``, ``AWS::EC2::NatGateway``
and ``AWS::ElastiCache::ServerlessCache`` have no handler (the change set is refused). :func:`instalar`
registers a create and a delete for each that call the service's own API, as CloudFormation calls AWS's,
and waits, as CloudFormation does, until the resource is available. One thing the service lacks is added:
ElastiCache's users' passwords, which MiniStack does not keep, are applied to the serverless cache's Valkey
(``ACL SETUSER``), so the AUTH token is required as ElastiCache requires it.

Run inside MiniStack's process (``ministack_del_nivel.py``): stdlib and ministack only. Listed as a gap in
``gaps.py``.
"""

from __future__ import annotations

import re
import time

ESPERA_S = 300  # a hang guard: a database container is ready in seconds on a quiet machine
_CONTRASENAS: dict[str, list[str]] = {}  # ElastiCache user id -> its passwords (MiniStack keeps none)


def _xml_valor(cuerpo: bytes | str, etiqueta: str) -> str:
    texto = cuerpo.decode() if isinstance(cuerpo, bytes) else cuerpo
    hallado = re.search(rf"<{etiqueta}>([^<]*)</{etiqueta}>", texto)
    if hallado is None:
        raise ValueError(f"no <{etiqueta}> in MiniStack's answer: {texto[:300]}")
    return hallado.group(1)


def _llamar(funcion, parametros: dict, tipo: str, accion: str) -> bytes:
    estado, _cabeceras, cuerpo = funcion(parametros)
    if estado >= 400:
        texto = cuerpo.decode(errors="replace") if isinstance(cuerpo, bytes) else str(cuerpo)
        raise ValueError(f"{tipo} {accion} failed ({estado}): {texto[:500]}")
    return cuerpo


def _esperar(hecho, que: str) -> None:
    limite = time.monotonic() + ESPERA_S
    while not hecho():
        if time.monotonic() > limite:
            raise ValueError(f"{que} not available after {ESPERA_S} s")
        time.sleep(0.5)  # the services provision in background threads that announce nothing


# --- AWS::EC2::EIP and AWS::EC2::NatGateway: records of MiniStack's EC2 (no data path: the containers
# reach every address on the Docker bridge directly).
def _eip_create(logical_id, props, stack_name):
    from ministack.services import ec2

    cuerpo = _llamar(ec2._allocate_address, {"Domain": props.get("Domain", "vpc")}, "AWS::EC2::EIP", "create")
    ip, asignacion = _xml_valor(cuerpo, "publicIp"), _xml_valor(cuerpo, "allocationId")
    return ip, {"AllocationId": asignacion, "PublicIp": ip}


def _eip_delete(physical_id, props):
    from ministack.services import ec2

    for asignacion, direccion in list(ec2._addresses.items()):
        if direccion.get("PublicIp") == physical_id:
            ec2._release_address({"AllocationId": asignacion})


def _nat_create(logical_id, props, stack_name):
    from ministack.services import ec2
    from ministack.services.cloudformation import provisioners

    parametros = provisioners._ec_query(
        {k: props[k] for k in ("SubnetId", "AllocationId", "ConnectivityType") if props.get(k)}
    )
    cuerpo = _llamar(ec2._create_nat_gateway, parametros, "AWS::EC2::NatGateway", "create")
    nat = _xml_valor(cuerpo, "natGatewayId")
    return nat, {"NatGatewayId": nat}


def _nat_delete(physical_id, props):
    from ministack.services import ec2

    if physical_id in ec2._nat_gateways:
        ec2._delete_nat_gateway({"NatGatewayId": physical_id})


# --- AWS::RDS::DBCluster and DBInstance through RDS's API: the writer starts the cluster's PostgreSQL.
def _cluster_attrs(cluster: dict) -> dict:
    extremo = cluster["Endpoint"]  # the name CreateDBCluster answers: an alias of its container on DOCKER_NETWORK
    lectura = cluster.get("ReaderEndpoint") or extremo
    return {
        "Arn": cluster["DBClusterArn"],
        "DBClusterArn": cluster["DBClusterArn"],
        "DBClusterResourceId": cluster.get("DbClusterResourceId", ""),
        "Endpoint.Address": extremo["Address"] if isinstance(extremo, dict) else extremo,
        "Endpoint.Port": str(cluster["Port"]),
        "ReadEndpoint.Address": lectura["Address"] if isinstance(lectura, dict) else lectura,
        "MasterUserSecret.SecretArn": (cluster.get("MasterUserSecret") or {}).get("SecretArn", ""),
    }


def _cluster_create(logical_id, props, stack_name):
    from ministack.services import rds
    from ministack.services.cloudformation import provisioners

    identificador = props.get("DBClusterIdentifier") or provisioners._physical_name(
        stack_name, logical_id, lowercase=True, max_len=63
    )
    propiedades = {k: v for k, v in props.items() if k not in ("MasterUserSecret", "Tags")}
    parametros = provisioners._ec_query({**propiedades, "DBClusterIdentifier": identificador})
    if (props.get("MasterUserSecret") or {}).get("KmsKeyId"):
        parametros["MasterUserSecretKmsKeyId"] = props["MasterUserSecret"]["KmsKeyId"]
    _llamar(rds._create_db_cluster, parametros, "AWS::RDS::DBCluster", "create")
    return identificador, _cluster_attrs(rds._clusters[identificador])


def _cluster_delete(physical_id, props):
    from ministack.services import rds

    if physical_id in rds._clusters:
        parametros = {"DBClusterIdentifier": physical_id, "SkipFinalSnapshot": "true"}
        _llamar(rds._delete_db_cluster, parametros, "AWS::RDS::DBCluster", "delete")


def _instance_create(logical_id, props, stack_name):
    from ministack.services import rds
    from ministack.services.cloudformation import provisioners

    identificador = props.get("DBInstanceIdentifier") or provisioners._physical_name(
        stack_name, logical_id, lowercase=True, max_len=63
    )
    propiedades = {k: v for k, v in props.items() if k != "Tags"}
    parametros = provisioners._ec_query({**propiedades, "DBInstanceIdentifier": identificador})
    _llamar(rds._create_db_instance, parametros, "AWS::RDS::DBInstance", "create")
    _esperar(lambda: rds._instances[identificador].get("DBInstanceStatus") == "available", identificador)
    return identificador, _instance_attrs(identificador)


def _instance_attrs(identificador: str) -> dict:
    from ministack.services import rds

    instancia = rds._instances[identificador]
    return {
        "Endpoint.Address": instancia["Endpoint"]["Address"],
        "Endpoint.Port": str(instancia["Endpoint"]["Port"]),
        "DbiResourceId": instancia.get("DbiResourceId", ""),
        "DBInstanceArn": instancia["DBInstanceArn"],
    }


def _instance_delete(physical_id, props):
    from ministack.services import rds

    if physical_id in rds._instances:
        parametros = {"DBInstanceIdentifier": physical_id, "SkipFinalSnapshot": "true"}
        _llamar(rds._delete_db_instance, parametros, "AWS::RDS::DBInstance", "delete")


# --- AWS::ElastiCache::ServerlessCache through ElastiCache's API, its user group's passwords applied.
def _user_create_keeping_passwords(original):
    def crear(logical_id, props, stack_name):
        contrasenas = (props.get("AuthenticationMode") or {}).get("Passwords") or props.get("Passwords") or []
        _CONTRASENAS[props.get("UserId", "")] = list(contrasenas)
        return original(logical_id, props, stack_name)

    return crear


def _aplicar_usuarios(cache: dict) -> None:
    """``ACL SETUSER`` each user of the cache's user group, with its password and access string."""
    from ministack.services import elasticache as ec

    grupo = ec._user_groups.get(cache.get("UserGroupId") or "") or {}
    contenedor = ec._get_docker().containers.get(cache["_docker_container_id"])
    for usuario_id in grupo.get("UserIds") or []:
        usuario = ec._users.get(usuario_id) or {}
        contrasenas = _CONTRASENAS.get(usuario_id) or []
        reglas = ["reset", *(f">{c}" for c in contrasenas), *(["nopass"] if not contrasenas else [])]
        reglas += (usuario.get("AccessString") or "on ~* +@all").split()
        cli = ["redis-cli", *ec._SERVERLESS_TLS_CLI_ARGS, "-p", "6379"]
        salida = contenedor.exec_run([*cli, "ACL", "SETUSER", usuario["UserName"], *reglas])
        if salida.exit_code != 0 or b"OK" not in salida.output:
            raise ValueError(f"ACL SETUSER {usuario['UserName']} failed: {salida.output[:300]!r}")


def _cache_create(logical_id, props, stack_name):
    from ministack.services import elasticache as ec
    from ministack.services.cloudformation import provisioners

    nombre = (props.get("ServerlessCacheName") or provisioners._physical_name(stack_name, logical_id)).lower()
    propiedades = {k: v for k, v in props.items() if k != "Tags"}
    parametros = provisioners._ec_query({**propiedades, "ServerlessCacheName": nombre})
    _llamar(ec._create_serverless_cache, parametros, "AWS::ElastiCache::ServerlessCache", "create")
    _esperar(lambda: ec._serverless_caches[nombre].get("Status") != "creating", nombre)
    cache = ec._serverless_caches[nombre]
    if cache["Status"] != "available":
        raise ValueError(f"serverless cache {nombre} ended {cache['Status']} (see MiniStack's log)")
    _aplicar_usuarios(cache)
    return nombre, _cache_attrs(nombre)


def _cache_attrs(nombre: str) -> dict:
    from ministack.services import elasticache as ec

    cache = ec._serverless_caches[nombre]
    extremo = cache["Endpoint"]
    return {
        "ARN": cache["ARN"],
        "Endpoint.Address": extremo["Address"],
        "Endpoint.Port": str(extremo["Port"]),
        "ReaderEndpoint.Address": extremo["Address"],
        "ReaderEndpoint.Port": str(extremo["Port"]),
        "FullEngineVersion": cache["FullEngineVersion"],
        "Status": cache["Status"],
    }


def _cache_delete(physical_id, props):
    from ministack.services import elasticache as ec

    if physical_id in ec._serverless_caches:
        _llamar(ec._delete_serverless_cache, {"ServerlessCacheName": physical_id}, "ServerlessCache", "delete")


def _sin_cambios(tipo: str, atributos):
    """An update: nothing to do when the properties did not change; anything else is refused, not faked."""

    def actualizar(physical_id, old_props, new_props, stack_name, logical_id=None):
        if old_props != new_props:
            raise ValueError(f"{tipo} {physical_id}: an update is not implemented in the emulated account")
        return physical_id, atributos(physical_id)

    return actualizar


def _cluster_attrs_de(identificador: str) -> dict:
    from ministack.services import rds

    return _cluster_attrs(rds._clusters[identificador])


def instalar() -> None:
    """Register the handlers (MiniStack's snapshot handler for a ``DeletionPolicy: Snapshot`` is kept)."""
    from ministack.services.cloudformation import provisioners

    manejadores = provisioners._RESOURCE_HANDLERS
    propios = {
        "AWS::EC2::EIP": (_eip_create, _eip_delete, lambda ip: {"PublicIp": ip}),
        "AWS::EC2::NatGateway": (_nat_create, _nat_delete, lambda nat: {"NatGatewayId": nat}),
        "AWS::RDS::DBCluster": (_cluster_create, _cluster_delete, _cluster_attrs_de),
        "AWS::RDS::DBInstance": (_instance_create, _instance_delete, _instance_attrs),
        "AWS::ElastiCache::ServerlessCache": (_cache_create, _cache_delete, _cache_attrs),
    }
    for tipo, (crear, borrar, atributos) in propios.items():
        anterior = manejadores.get(tipo, {})
        manejadores[tipo] = {
            **({"snapshot": anterior["snapshot"]} if "snapshot" in anterior else {}),
            "create": crear,
            "delete": borrar,
            "update": _sin_cambios(tipo, atributos),
            "update_with_logical_id": True,
        }
    usuario = manejadores["AWS::ElastiCache::User"]
    usuario["create"] = _user_create_keeping_passwords(usuario["create"])
