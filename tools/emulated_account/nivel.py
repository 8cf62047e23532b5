"""The deploy level: the real template into an empty emulated account, orders through its store API, then the records.

One run (``python -m emulated_account run --out FILE``, what ``make test-deploy`` and ``tests/deploy``
start):

1. the level's own "existing infrastructure" (:mod:`infraestructura`: PostgreSQL and Valkey with TLS
   and passwords on the Docker bridge) and an empty MiniStack (:mod:`emulador`);
2. in that account, what a user brings to "Existing infrastructure stays the alternative" (README): a
   VPC's subnets and security group, the admin and runtime database secrets, the Valkey token;
3. ``sam build`` (``Architecture=x86_64``: the containers run this CPU) and ``sam deploy`` with those
   parameters, ``ReservedConcurrency=disabled`` as the README says for a new account; the emulator's
   gaps applied to the build output in between (:mod:`gaps`, the one place);
4. ``mf-smoke`` through the deployed store API: orders that must end ``CONFIRMADO``, an order whose
   card the sandbox gateway declines (``SimuladorTarjetasRechazadas``), and one placed while the
   sandbox gateway answers 503 to everything (its function's fault setting changed in the account,
   then restored);
5. the records: each order's ``estado`` in PostgreSQL, its execution, the idempotency records of
   the charge and of the e-mails, the sandbox gateway's charges, every DLQ's depth;
6. a dead letter left in ``mercadofresco-pedidos-fallidos``, ``sam delete``, the retained resources
   checked (still there, in no stack), ``mf-retenidos adoptar`` (README, "Deploying again after
   ``sam delete``"), then ``sam deploy`` again into the same account: whether it succeeded, whether
   its change set planned to replace any retained resource, whether the new stack owns the same
   ones, and whether the dead letter and the idempotency records of the first orders survived
   (``gaps``: MiniStack would otherwise recreate them empty).

Everything it starts is stopped at the end, whatever happened; the observations go to ``--out`` as
JSON for ``tests/deploy`` to assert.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercadofresco_ops.topologia import RETENCIONES

from emulated_account import gaps
from emulated_account.emulador import REGION, MiniStack
from emulated_account.infraestructura import PUENTE, AuroraDelNivel, Certificados, ValkeyDelNivel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from botocore.client import BaseClient

RAIZ = Path(__file__).resolve().parents[2]
VENV_BIN = RAIZ / ".venv" / "bin"
PILA = "mercadofresco-dev"  # samconfig.toml's
ARQUITECTURA = "x86_64"
BUILD_DIR = RAIZ / ".aws-sam" / f"deploy-{ARQUITECTURA}"
CLIENTE_RECHAZADO = "SMOKE-TARJETA-RECHAZADA"
PEDIDOS_CONFIRMADOS = int(os.environ.get("MF_DEPLOY_PEDIDOS", "2"))
ESPERA_S = int(os.environ.get("MF_DEPLOY_ESPERA_S", "420"))  # a hang guard per mf-smoke run
TODAS_LAS_DLQ = (
    "mercadofresco-pedidos-fallidos",
    "mercadofresco-proyeccion-fallidos",
    "mercadofresco-erp-fallidos",
    "mercadofresco-correo-fallidos",
    "mercadofresco-carritos-fallidos",
    "mercadofresco-stock-fallidos.fifo",
)


def _paso(texto: str) -> None:
    print(f"[deploy level {time.strftime('%H:%M:%S')}] {texto}", flush=True)


class Nivel:
    def __init__(self, ms: MiniStack, aurora: AuroraDelNivel, valkey: ValkeyDelNivel, carpeta: Path) -> None:
        self.ms, self.aurora, self.valkey, self.carpeta = ms, aurora, valkey, carpeta
        self.entorno = {
            **os.environ,
            "AWS_ENDPOINT_URL": ms.endpoint,
            "AWS_ACCESS_KEY_ID": "test",  # the emulator's; never a real account
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # a real python3.13 for sam build
            "SAM_CLI_TELEMETRY": "0",
        }
        self.entorno.pop("AWS_PROFILE", None)
        self.valores: dict[str, str] = {}

    def cliente(self, servicio: str) -> BaseClient:
        import boto3

        return boto3.client(
            servicio,
            endpoint_url=self.ms.endpoint,
            region_name=REGION,
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )

    def _sam(self, *argumentos: str, log: str) -> int:
        comando = [str(VENV_BIN / "sam"), *argumentos]
        _paso("$ " + shlex.join(comando))
        with (self.carpeta / log).open("ab") as salida:
            hecho = subprocess.run(
                comando, cwd=RAIZ, env={**self.entorno, "ARCHITECTURE": ARQUITECTURA}, stdout=salida, stderr=salida
            )
        if hecho.returncode != 0:
            print((self.carpeta / log).read_text(errors="replace")[-4000:], flush=True)
        return hecho.returncode

    # What a user brings: the network, the database's and Valkey's secrets.
    def infraestructura_existente(self) -> dict[str, str]:
        ec2, sm = self.cliente("ec2"), self.cliente("secretsmanager")
        vpc = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
        subredes = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.42.{n}.0/24")["Subnet"]["SubnetId"] for n in (1, 2)]
        sg = ec2.create_security_group(GroupName="mf-funciones", Description="functions", VpcId=vpc)["GroupId"]
        admin = sm.create_secret(Name="mf-aurora-admin", SecretString=json.dumps(self.aurora.secreto_admin()))
        runtime = {**self.aurora.secreto_admin(), "username": "mercadofresco_app", "password": os.urandom(12).hex()}
        app = sm.create_secret(Name="mf-aurora-app", SecretString=json.dumps(runtime))
        valkey = sm.create_secret(Name="mf-valkey", SecretString=json.dumps({"token": self.valkey.token}))
        return {
            "SubnetIds": ",".join(subredes),
            "SecurityGroupIds": sg,
            "AuroraEndpoint": PUENTE,
            "AuroraDatabase": self.aurora.database,
            "AuroraAdminSecretArn": admin["ARN"],
            "AuroraSecretArn": app["ARN"],
            "ValkeyEndpoint": self.valkey.endpoint,
            "ValkeySecretArn": valkey["ARN"],
        }

    def construir(self) -> int:
        codigo = self._sam(
            "build", "--build-dir", str(BUILD_DIR), "--cache-dir", str(BUILD_DIR) + "-cache", "--cached",
            "--parameter-overrides", f"Architecture={ARQUITECTURA}", log="sam-build.log",
        )  # fmt: skip
        if codigo == 0:
            gaps.adapt_file(BUILD_DIR / "template.yaml", self.ms.gateway, log=_paso)
        return codigo

    @staticmethod
    def valores_de(parametros: dict[str, str]) -> dict[str, str]:
        """A deploy's ``--parameter-overrides``: the level's fixed ones, then ``parametros``."""
        return {
            "Stage": "dev",
            "Architecture": ARQUITECTURA,
            "ReservedConcurrency": "disabled",  # README: a new account's concurrency quota leaves none to reserve
            "SimuladorTarjetasRechazadas": f"tok_rechazada,{CLIENTE_RECHAZADO}",
            **parametros,
        }

    def desplegar(self, parametros: dict[str, str], log: str) -> int:
        valores = self.valores_de(parametros)
        self.valores = valores  # the last deploy's parameter values (the least-privilege check resolves with them)
        return self._sam(
            "deploy", "--template-file", str(BUILD_DIR / "template.yaml"), "--stack-name", PILA,
            "--region", REGION, "--resolve-s3", "--no-confirm-changeset", "--no-fail-on-empty-changeset",
            "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
            "--parameter-overrides", *(f"{k}={v}" for k, v in valores.items()),
            log=log,
        )  # fmt: skip

    def plantilla(self) -> dict[str, Any]:
        """The template as deployed (the build output, after :func:`gaps.adapt_file`)."""
        from samcli.yamlhelper import yaml_parse

        return yaml_parse((BUILD_DIR / "template.yaml").read_text())

    def url_tienda(self) -> str:
        salidas = self.cliente("cloudformation").describe_stacks(StackName=PILA)["Stacks"][0]["Outputs"]
        return gaps.api_url_in_gateway(
            next(o["OutputValue"] for o in salidas if o["OutputKey"] == "TiendaApiUrl"), self.ms.gateway
        )

    def smoke(self, nombre: str, n: int, cliente: str | None = None) -> dict[str, Any]:
        """``mf-smoke`` through the deployed store API; its JSON (orders and results) and exit code."""
        salida = self.carpeta / f"smoke-{nombre}.json"
        comando = [
            str(VENV_BIN / "mf-smoke"), "--url", self.url_tienda(), "--firmar", "si", "-n", str(n),
            "--endpoint-url", self.ms.endpoint, "--region", REGION, "--espera-s", str(ESPERA_S),
            "--json", str(salida), *(["--cliente", cliente] if cliente else []),
        ]  # fmt: skip
        _paso("$ " + shlex.join(comando))
        hecho = subprocess.run(comando, cwd=RAIZ, env=self.entorno, capture_output=True, text=True)
        print(hecho.stdout + hecho.stderr[-3000:], flush=True)
        resultado = json.loads(salida.read_text()) if salida.exists() else {"pedidos": [], "errores": []}
        return {**resultado, "codigo": hecho.returncode}

    def circuito(self, orden: str) -> None:
        """``mf-circuito <orden> pasarela`` against the level's Valkey, as the on-call runs it."""
        comando = [str(VENV_BIN / "mf-circuito"), "--redis-url", self.valkey.url, orden, "pasarela"]
        subprocess.run(comando, cwd=RAIZ, env=self.entorno, check=True, capture_output=True)

    @contextlib.contextmanager
    def pasarela_caida(self) -> Iterator[None]:
        """The sandbox gateway answers 503 to every request (its fault setting), then recovers.

        Its breaker is opened as ``runbooks/circuito-abierto.md`` does for a known outage
        (``mf-circuito abrir``): an order then fails fast, never calling the gateway, and ends
        "not confirmed". The automatic opening under 503s is the local run's (``viernes``): here an
        order that met the gateway before the breaker opened has an unknown outcome and is consulted
        until the gateway answers again, minutes the level does not need to spend.
        """
        self.circuito("abrir")
        lam = self.cliente("lambda")
        nombre = "simulador-pasarela"
        variables = lam.get_function_configuration(FunctionName=nombre)["Environment"]["Variables"]
        lam.update_function_configuration(
            FunctionName=nombre, Environment={"Variables": {**variables, "SIMULADOR_PROPORCION_FALLOS": "1"}}
        )
        try:
            yield
        finally:
            lam.update_function_configuration(FunctionName=nombre, Environment={"Variables": variables})
            self.circuito("cerrar")

    def registros(self, pedidos: list[str]) -> dict[str, Any]:
        """What the stack itself recorded about each order, and every DLQ's depth."""
        import psycopg

        ddb, sqs = self.cliente("dynamodb"), self.cliente("sqs")
        with psycopg.connect(self.aurora.url, dbname=self.aurora.database) as conn:
            estados = dict(
                conn.execute("SELECT pedido_id::text, estado FROM pedidos WHERE pedido_id::text = ANY(%s)", (pedidos,))
            )

        def registro(tabla: str, clave: str) -> str | None:
            item = ddb.get_item(TableName=tabla, Key={"clave": {"S": clave}}, ConsistentRead=True).get("Item")
            return None if item is None else item.get("estado", {}).get("S", "PRESENTE")

        por_pedido = {}
        for p in pedidos:
            por_pedido[p] = {
                "estado": estados.get(p),
                **{
                    k: registro("mercadofresco-idempotencia", f"{k}:{p}")
                    for k in ("pedido", "cobro", "correo-confirmacion", "correo-no-confirmado", "aviso-erp")
                },
                "cobro_en_pasarela": registro("mercadofresco-simulador", f"cobro-pedido:{p}"),
            }
        dlqs = {}
        for cola in TODAS_LAS_DLQ:
            url = sqs.get_queue_url(QueueName=cola)["QueueUrl"]
            atributos = sqs.get_queue_attributes(
                QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
            )["Attributes"]
            dlqs[cola] = sum(int(v) for v in atributos.values())
        return {"pedidos": por_pedido, "dlqs": dlqs}

    def registros_finales(self, smoke: dict[str, Any]) -> dict[str, Any]:
        """:meth:`registros` once each order's customer e-mail is recorded (mf-smoke stops at the state).

        A final state is written by the projection, the e-mail by another consumer of the same event: it
        may come a little later. Polled until it is there, or :data:`ESPERA_S` passed (then read as is).
        """
        correo = {"confirmados": "correo-confirmacion", "rechazado": "correo-no-confirmado"}
        esperados = {
            p["pedido_id"]: correo.get(escenario, "correo-no-confirmado")
            for escenario, s in smoke.items()
            for p in s["pedidos"]
        }
        limite = time.monotonic() + ESPERA_S
        while True:
            registros = self.registros(list(esperados))
            hechos = all(registros["pedidos"][p][clave] == "COMPLETADO" for p, clave in esperados.items())
            if hechos or time.monotonic() > limite:
                return registros
            time.sleep(3)  # polling records that announce nothing

    def extension_fis(self, funciones: tuple[str, ...]) -> dict[str, Any]:
        """Each function's layers and exec wrapper, as deployed (``Chaos=enabled`` attaches the extension)."""
        lam, vistas = self.cliente("lambda"), {}
        for nombre in funciones:
            configuracion = lam.get_function_configuration(FunctionName=nombre)
            variables = configuracion.get("Environment", {}).get("Variables", {})
            vistas[nombre] = {
                "capas": [c["Arn"] for c in configuracion.get("Layers", [])],
                "wrapper": variables.get("AWS_LAMBDA_EXEC_WRAPPER"),
                "configuracion_fis": variables.get("AWS_FIS_CONFIGURATION_LOCATION"),
            }
        return vistas

    def retenidos_de_la_pila(self) -> dict[str, list[str]]:
        """Logical id -> [type, physical id] of the stack's resources a delete keeps (the template's Retain ones)."""
        plantilla = self.plantilla()["Resources"]
        recursos = self.cliente("cloudformation").describe_stack_resources(StackName=PILA)["StackResources"]
        return {
            r["LogicalResourceId"]: [r["ResourceType"], r["PhysicalResourceId"]]
            for r in recursos
            if plantilla.get(r["LogicalResourceId"], {}).get("DeletionPolicy") in RETENCIONES
        }

    def fuera_de_pila(self, retenidos: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
        """For each retained resource (logical -> physical id): whether the account has it, and which live stack."""
        cfn = self.cliente("cloudformation")
        vivas = [s["StackId"] for s in cfn.list_stacks()["StackSummaries"] if s["StackStatus"] != "DELETE_COMPLETE"]
        en_pilas = {
            r["PhysicalResourceId"]: r["StackName"]
            for pila in vivas
            for r in cfn.describe_stack_resources(StackName=pila)["StackResources"]
        }
        return {
            lid: {"existe": self._existe(tipo, fisico), "pila": en_pilas.get(fisico)}
            for lid, (tipo, fisico) in retenidos.items()
        }

    def _existe(self, tipo: str, fisico: str) -> bool:
        """Whether the account still has the queue (URL), table (name) or enabled key (id) ``fisico``."""
        try:
            if tipo == "AWS::SQS::Queue":
                self.cliente("sqs").get_queue_attributes(QueueUrl=fisico, AttributeNames=["QueueArn"])
            elif tipo == "AWS::DynamoDB::Table":
                self.cliente("dynamodb").describe_table(TableName=fisico)
            else:
                return self.cliente("kms").describe_key(KeyId=fisico)["KeyMetadata"]["KeyState"] == "Enabled"
        except Exception:  # the service's "no such resource", whatever its name
            return False
        return True

    def reemplazos_del_despliegue(self, retenidos: dict[str, list[str]]) -> dict[str, str]:
        """What ``sam deploy``'s change set after the import planned for each retained resource: logical id ->
        its ``Replacement`` ("False" for a change in place; absent: unchanged). An account refuses to replace a
        resource with a fixed name, so anything but "False" here fails there."""
        cfn = self.cliente("cloudformation")
        planes = {}
        for resumen in cfn.list_change_sets(StackName=PILA)["Summaries"]:
            if resumen["ChangeSetName"].startswith("samcli-deploy"):
                for cambio in cfn.describe_change_set(ChangeSetName=resumen["ChangeSetId"])["Changes"]:
                    recurso = cambio["ResourceChange"]
                    if recurso["LogicalResourceId"] in retenidos:
                        planes[recurso["LogicalResourceId"]] = recurso.get("Replacement", "False")
        return planes

    def dejar_carta(self) -> str:
        """A dead letter left in the order DLQ before the stack is deleted; its body."""
        cuerpo = json.dumps({"marca": f"retenido-{os.urandom(6).hex()}"})
        sqs = self.cliente("sqs")
        sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName=TODAS_LAS_DLQ[0])["QueueUrl"], MessageBody=cuerpo)
        return cuerpo

    def recoger_carta(self, cuerpo: str) -> str | None:
        """The dead letter :meth:`dejar_carta` left, received and deleted (the DLQs are empty again); None if gone."""
        sqs = self.cliente("sqs")
        url = sqs.get_queue_url(QueueName=TODAS_LAS_DLQ[0])["QueueUrl"]
        recibidos = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=5, WaitTimeSeconds=2)
        for mensaje in recibidos.get("Messages", []):
            if mensaje["Body"] == cuerpo:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=mensaje["ReceiptHandle"])
                return mensaje["Body"]
        return None

    def retenidos_adoptar(self, parametros: dict[str, str]) -> int:
        """``mf-retenidos adoptar`` with the next deploy's stack and parameters, as the README tells a user."""
        comando = [
            str(VENV_BIN / "mf-retenidos"), "--pila", PILA, "--region", REGION,
            "--parametros", shlex.join(f"{k}={v}" for k, v in self.valores_de(parametros).items()), "adoptar",
        ]  # fmt: skip
        _paso("$ " + shlex.join(comando))
        with (self.carpeta / "mf-retenidos.log").open("ab") as salida:
            hecho = subprocess.run(comando, cwd=RAIZ, env=self.entorno, stdout=salida, stderr=salida)
        print((self.carpeta / "mf-retenidos.log").read_text(errors="replace")[-2000:], flush=True)
        return hecho.returncode

    def id_fisico(self, logico: str) -> str | None:
        """The physical id of one of the stack's resources (``None`` when the stack has no such resource)."""
        recursos = self.cliente("cloudformation").describe_stack_resources(StackName=PILA)["StackResources"]
        return next((r["PhysicalResourceId"] for r in recursos if r["LogicalResourceId"] == logico), None)

    def estado_pila(self) -> str:
        try:
            return self.cliente("cloudformation").describe_stacks(StackName=PILA)["Stacks"][0]["StackStatus"]
        except Exception as exc:  # a deleted stack is an error here, and an answer
            return f"ninguna ({type(exc).__name__})"


def _minimo_privilegio(nivel: Nivel, registro: Path, fase: str, parametros: dict[str, str]) -> dict[str, Any]:
    """:func:`_comprobar_minimo_privilegio`, or the error that stopped it (the test shows it; the level goes on)."""
    try:
        return _comprobar_minimo_privilegio(nivel, registro, fase, parametros)
    except Exception as exc:  # the check's own failure is an outcome to assert, not a reason to skip the redeploy
        _paso(f"least privilege ({fase}) could not be checked: {exc!r}")
        return {"error": repr(exc), "texto": repr(exc), "solicitudes": 0, "denegadas": [], "sin_rol": []}


def _comprobar_minimo_privilegio(nivel: Nivel, registro: Path, fase: str, parametros: dict[str, str]) -> dict[str, Any]:
    """The requests recorded so far (moved to ``registro/<fase>``) against the deployed stack's roles.

    Called while the stack that made them still exists (its physical ids resolve the roles); what its
    containers write later lands in the next phase's files.
    """
    from mercadofresco_iam.desplegado import (
        arn_de_secreto,
        comprobar_despliegue,
        fisicos_de_pila,
        leer_registro,
        plantilla_desplegada,
    )

    cuenta = nivel.cliente("sts").get_caller_identity()["Account"]
    fisicos = fisicos_de_pila(nivel.cliente, PILA, REGION, cuenta)
    carpeta = registro / fase
    carpeta.mkdir()
    for linea in registro.glob("*.jsonl"):
        linea.rename(carpeta / linea.name)
    funciones = {
        r["PhysicalResourceId"]: r["LogicalResourceId"]
        for r in nivel.cliente("cloudformation").describe_stack_resources(StackName=PILA)["StackResources"]
        if r["ResourceType"] == "AWS::Lambda::Function"
    }
    maquinas = [n for n, r in nivel.plantilla()["Resources"].items() if r["Type"] == "AWS::Serverless::StateMachine"]
    llamadas = leer_registro(
        carpeta, funciones, maquinas[0] if len(maquinas) == 1 else None, arn_de_secreto(nivel.cliente)
    )
    plantilla = plantilla_desplegada(RAIZ / "template.yaml", parametros, REGION, cuenta, PILA, fisicos)
    informe = comprobar_despliegue(llamadas, plantilla)
    texto = informe.texto()
    (nivel.carpeta / f"minimo-privilegio-{fase}.txt").write_text(texto + "\n")
    _paso(f"least privilege ({fase}): " + texto.splitlines()[0] + f" (build/deploy-level/minimo-privilegio-{fase}.txt)")
    return {
        "solicitudes": informe.solicitudes,
        "principales": sorted({ll.principal for ll in llamadas.llamadas()}),
        "denegadas": [f"{d.principal}: {d.solicitud.accion} on {d.solicitud.recurso}" for d in informe.denegadas],
        "sin_rol": sorted(informe.sin_rol),
        "sin_uso": [f"{u.principal} {u.sid}" for u in informe.sin_uso],
        "texto": texto,
    }


def _pedidos(nivel: Nivel, escenarios: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The emulator's gaps bridged (routes, warm providers, the SQS pipe), then ``escenarios()``'s orders."""
    plantilla = nivel.plantilla()
    obs: dict[str, Any] = {
        "rutas_creadas": gaps.add_http_api_routes(plantilla, PILA, nivel.cliente),
        "calentadas": gaps.warm_providers(plantilla, PILA, nivel.cliente),
    }
    with gaps.sqs_pipes_running(plantilla, PILA, nivel.cliente):
        obs["smoke"] = escenarios()
    obs["registros"] = nivel.registros_finales(obs["smoke"])
    return obs


def ejecutar(salida: Path) -> int:
    inicio = time.monotonic()
    obs: dict[str, Any] = {"gaps": [g.what for g in gaps.GAPS]}
    with tempfile.TemporaryDirectory(prefix="mf-deploy-") as tmp, contextlib.ExitStack() as pila:
        carpeta = Path(tmp)
        registro = carpeta / "registro-iam"
        certificados = Certificados.emitir(carpeta / "ca", PUENTE)
        _paso("starting the level's PostgreSQL and Valkey (TLS, passwords) and MiniStack")
        aurora = pila.enter_context(AuroraDelNivel(certificados=certificados))
        valkey = pila.enter_context(ValkeyDelNivel(certificados=certificados))
        ms = pila.enter_context(MiniStack(carpeta / "ministack", certificados, registro_iam=registro))
        # This process's own AWS clients (the Pipe emulation's, see gaps.sqs_pipes_running) go to the emulator.
        os.environ.update(
            AWS_ENDPOINT_URL=ms.endpoint,
            AWS_ACCESS_KEY_ID="test",
            AWS_SECRET_ACCESS_KEY="test",
            AWS_DEFAULT_REGION=REGION,
        )
        os.environ.pop("AWS_PROFILE", None)
        nivel = Nivel(ms, aurora, valkey, Path(os.environ.get("MF_DEPLOY_LOGS", RAIZ / "build" / "deploy-level")))
        nivel.carpeta.mkdir(parents=True, exist_ok=True)
        for viejo in nivel.carpeta.glob("minimo-privilegio-*.txt"):
            viejo.unlink()
        try:
            parametros = nivel.infraestructura_existente()
            obs["build"] = nivel.construir()
            t0 = time.monotonic()
            obs["deploy"] = obs["build"] or nivel.desplegar(parametros, "sam-deploy-1.log")
            obs["deploy_s"] = round(time.monotonic() - t0)
            obs["pila"] = nivel.estado_pila()
            if obs["deploy"] == 0:

                def escenarios() -> dict[str, Any]:
                    smoke = {
                        "confirmados": nivel.smoke("confirmados", PEDIDOS_CONFIRMADOS),
                        "rechazado": nivel.smoke("rechazado", 1, CLIENTE_RECHAZADO),
                    }
                    with nivel.pasarela_caida():
                        smoke["pasarela_caida"] = nivel.smoke("pasarela-caida", 1)
                    return smoke

                obs.update(_pedidos(nivel, escenarios))
                obs["minimo_privilegio"] = {
                    "despliegue-1": _minimo_privilegio(nivel, registro, "despliegue-1", nivel.valores)
                }
                obs["retenidos"] = nivel.retenidos_de_la_pila()
                carta = nivel.dejar_carta()
                obs["delete"] = nivel._sam("delete", "--stack-name", PILA, "--region", REGION, "--no-prompts",
                                           log="sam-delete.log")  # fmt: skip
                obs["pila_tras_delete"] = nivel.estado_pila()
                obs["retenidos_tras_delete"] = nivel.fuera_de_pila(obs["retenidos"])
                # The second deploy, into the same account, is the Chaos=enabled one (issue 29): the FIS
                # extension's stand-in is the emulator's gap (gaps.fis_extension_stand_in).
                segundo = {**parametros, "Chaos": "enabled"}
                obs["adoptar"] = nivel.retenidos_adoptar(segundo)
                obs["capa_fis"] = gaps.fis_extension_stand_in(nivel.cliente, ARQUITECTURA, ms.parametros_publicos)
                obs["redeploy"] = nivel.desplegar(segundo, "sam-deploy-2.log")
                obs["pila_tras_redeploy"] = nivel.estado_pila()
                if obs["redeploy"] == 0:
                    obs["retenidos_tras_redeploy"] = nivel.retenidos_de_la_pila()
                    obs["reemplazos_retenidos"] = nivel.reemplazos_del_despliegue(obs["retenidos"])
                    obs["carta_retenida"] = {"dejada": carta, "recogida": nivel.recoger_carta(carta)}
                    obs["registros_retenidos"] = nivel.registros(
                        [p["pedido_id"] for p in obs["smoke"]["confirmados"]["pedidos"]]
                    )["pedidos"]
                    obs["caos_en_funciones"] = nivel.extension_fis(("mercadofresco-erp", "mercadofresco-correo"))
                    obs["bucket_caos"] = nivel.id_fisico("ChaosConfigBucket")
                    obs["con_caos"] = _pedidos(nivel, lambda: {"confirmados": nivel.smoke("caos-confirmado", 1)})
                    obs["minimo_privilegio"]["despliegue-2-caos"] = _minimo_privilegio(
                        nivel, registro, "despliegue-2-caos", nivel.valores
                    )
        finally:
            obs["segundos"] = round(time.monotonic() - inicio)
            salida.write_text(json.dumps(obs, indent=1, default=str))
            for log in (ms.log,):
                if log.exists():
                    (nivel.carpeta / log.name).write_bytes(log.read_bytes())
            _paso(f"done in {obs['segundos']} s; observations in {salida}; logs in {nivel.carpeta}")
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m emulated_account", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="orden", required=True)
    run = sub.add_parser("run", help="run the level once and write its observations")
    run.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    def terminar(senal: int, _marco: object) -> None:
        raise SystemExit(128 + senal)  # unwinds the level: every server and container it started is stopped

    for senal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(senal, terminar)
    return ejecutar(args.out)


if __name__ == "__main__":
    sys.exit(main())
