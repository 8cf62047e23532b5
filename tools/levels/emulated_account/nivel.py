"""The deploy level: ``make deploy-emulated`` into an empty account, orders and faults through its API, the records.

One run (``python -m emulated_account run --out FILE``, what ``make test-deploy`` and ``tests/deploy`` start),
in an account of its own (``build/deploy-level/cuenta``: a user's running account is never touched):

1. ``make deploy-emulated``, exactly as a user runs it (docs/emulated-account.md): the account started,
   the real template built and deployed with samconfig.toml's parameters — the default profile: a VPC,
   Aurora, ElastiCache Serverless — plus the level's small API burst limit;
2. the orders (:mod:`emulated_account.escenarios`): the sandbox gateway down until its breaker opens on
   its own, an order failing fast while it is open, one closing it after the recovery; orders placed with
   ``mf-smoke``, a declined card among them; an order of several lines, delivered twice and confirmed
   twice; an order refunded after its stock was reserved; a burst at the API's limit;
3. what the stack recorded about each (:mod:`emulated_account.observaciones`), every DLQ's depth, the
   deployed pipe's configuration, the default profile's resources; least privilege by execution;
4. a dead letter left in the order DLQ, ``sam delete``, the retained resources checked (still there, in no
   stack), ``mf-retenidos adoptar`` (README, "Deploying again after ``sam delete``"), then
   ``make deploy-emulated PARAMETROS='... Chaos=enabled'`` into the same account: whether it updated the
   adopted stack without replacing a retained resource, kept their data, and still confirms an order;
5. ``make deploy-emulated-down``, whatever happened.

The observations go to ``--out`` as JSON for ``tests/deploy`` to assert; logs in ``build/deploy-level/``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mercadofresco_ops.recursos import resumenes_de_la_pila

from emulated_account import cuenta, despliegue, gaps, privilegios
from emulated_account.ciclo import Pila
from emulated_account.emulador import MiniStack
from emulated_account.escenarios import CLIENTE_RECHAZADO, LINEAS, Escenarios, mf_smoke, pedido
from emulated_account.observaciones import Cuenta, esperar

if TYPE_CHECKING:
    from collections.abc import Callable

RAIZ = despliegue.RAIZ
LOGS = Path(os.environ.get("MF_DEPLOY_LOGS", RAIZ / "build" / "deploy-level"))
CARPETA_CUENTA = LOGS / "cuenta"
# The API's burst as the level deploys it: the burst scenario places this many orders at once.
PARAMETROS = {"TiendaRateLimit": "4", "TiendaBurstLimit": "8"}
PEDIDOS_CONFIRMADOS = int(os.environ.get("MF_DEPLOY_PEDIDOS", "2"))  # placed with mf-smoke


def _paso(texto: str) -> None:
    print(f"[deploy level {time.strftime('%H:%M:%S')}] {texto}", flush=True)


def _make(objetivo: str, **variables: str) -> int:
    """``make <objetivo> K=V`` as a user runs it, against the level's own account; its exit code."""
    comando = ["make", "--no-print-directory", objetivo, *(f"{k}={v}" for k, v in variables.items())]
    _paso("$ " + shlex.join(comando))
    entorno = {**os.environ, "MF_CUENTA_DIR": str(CARPETA_CUENTA)}
    with (LOGS / f"make-{objetivo}.log").open("ab") as log:
        hecho = subprocess.run(comando, cwd=RAIZ, env=entorno, stdout=log, stderr=subprocess.STDOUT, check=False)
    print((LOGS / f"make-{objetivo}.log").read_text(errors="replace")[-3000:], flush=True)
    return hecho.returncode


class Nivel:
    """The deployed stack's lifecycle checks: its resources, the retained ones, a delete and a redeploy."""

    def __init__(self, c: Cuenta) -> None:
        self.c = c

    def recursos(self) -> dict[str, list[str]]:
        """Resource type -> logical ids, as the stack and the units it nests (the network) hold them."""
        tipos: dict[str, list[str]] = {}
        for r in resumenes_de_la_pila(self.c.cliente("cloudformation"), despliegue.PILA):
            tipos.setdefault(r["ResourceType"], []).append(r["LogicalResourceId"])
        return tipos

    def perfil(self) -> dict[str, Any]:
        """The default profile as deployed: its data stores' endpoints, and what every function is given."""
        rds, ec, lam = self.c.cliente("rds"), self.c.cliente("elasticache"), self.c.cliente("lambda")
        variables = [
            (f.get("Environment") or {}).get("Variables") or {}
            for p in lam.get_paginator("list_functions").paginate()
            for f in p["Functions"]
        ]
        return {
            "clusters": [
                {"endpoint": c["Endpoint"], "puerto": c["Port"], "motor": c["Engine"], "version": c["EngineVersion"]}
                for c in rds.describe_db_clusters()["DBClusters"]
            ],
            "caches": [
                {
                    "estado": s["Status"],
                    "motor": s["Engine"],
                    "grupo": s.get("UserGroupId"),
                    "endpoint": f"{s['Endpoint']['Address']}:{s['Endpoint']['Port']}",
                }
                for s in ec.describe_serverless_caches()["ServerlessCaches"]
            ],
            "aurora_endpoints": sorted({v["AURORA_ENDPOINT"] for v in variables if v.get("AURORA_ENDPOINT")}),
            "valkey_endpoints": sorted({v["VALKEY_ENDPOINT"] for v in variables if v.get("VALKEY_ENDPOINT")}),
        }

    def pipes(self) -> dict[str, dict[str, Any]]:
        """Each deployed pipe as the account describes it (what the SQS-source bridge runs from)."""
        pipes = self.c.cliente("pipes")
        return {
            p["Name"]: {
                k: v
                for k, v in pipes.describe_pipe(Name=p["Name"]).items()
                if k in ("Source", "Target", "CurrentState", "SourceParameters", "TargetParameters")
            }
            for p in pipes.list_pipes()["Pipes"]
        }


def registros(c: Cuenta, pedidos: list[str]) -> dict[str, Any]:
    """Everything the stack recorded about ``pedidos`` once each has its final state and its customer e-mail."""
    finales = esperar(lambda: c.finales(pedidos), "every order's final state")

    def avisados() -> dict[str, dict[str, str]] | None:
        # The final state is the projection's; the other consumers of the same outcome act on it on their own.
        vistas = c.idempotencia(pedidos)
        for p, estado in finales.items():
            for consumidor in c.avisados[estado]:
                if not any(consumidor.identifier_in(k) == p and v == "COMPLETADO" for k, v in vistas[p].items()):
                    return None
        return vistas

    esperar(avisados, "every consumer of each order's outcome done with it")

    # ...and every consumer's queue drained: a line's reservation or release may be held back and delivered
    # again past its queue's visibility timeout (a consumer short of time), still queued, not lost.
    def vacias() -> dict[str, int] | None:
        profundidades = c.profundidades(c.colas_de_consumidores)
        return None if any(profundidades.values()) else profundidades

    colas = esperar(vacias, "every consumer's queue drained")
    return {
        "colas": colas,
        "estados": finales,
        "ejecuciones": c.ejecuciones(pedidos),
        "idempotencia": c.idempotencia(pedidos),
        "proveedores": c.proveedores(pedidos),
        "dlqs": c.profundidades(c.dlqs),
    }


def pedidos(c: Cuenta) -> dict[str, Any]:
    """Every scenario's orders (escenarios.py), then what the stack recorded about each."""
    esc = Escenarios(c)
    # The outage first: its orders then wait twice 130 s to ask the gateway again, while the others run.
    obs: dict[str, Any] = {"caida": esc.caida_de_la_pasarela()}
    _paso(f"gateway outage: breaker {obs['caida']['abierto']['estado']}, then {obs['caida']['cerrado']}")
    with ThreadPoolExecutor(max_workers=2) as hilos:
        confirmados = hilos.submit(mf_smoke, c, "confirmados", PEDIDOS_CONFIRMADOS, LOGS)
        rechazado = hilos.submit(mf_smoke, c, "rechazado", 1, LOGS, CLIENTE_RECHAZADO)
        obs["varias_lineas"] = esc.colocar(pedido("SMOKE-VARIAS-LINEAS", LINEAS))
        obs["reembolso"] = esc.reembolso()
        obs["rafaga"] = esc.rafaga()
        esperar(lambda: c.finales([obs["varias_lineas"]]), "the order of several lines")
        obs["duplicados"] = esc.duplicados(obs["varias_lineas"])
        obs["smoke"] = {"confirmados": confirmados.result(), "rechazado": rechazado.result()}
    caida = obs["caida"]
    todos = [
        *caida["durante"], caida["con_el_circuito_abierto"], caida["tras_recuperarse"],
        *(p["pedido_id"] for s in obs["smoke"].values() for p in s["pedidos"]),
        obs["varias_lineas"], obs["reembolso"], *obs["rafaga"],
    ]  # fmt: skip
    obs["registros"] = registros(c, todos)
    obs["reintentos_tienda"] = esc.reintentos
    return obs


def _ciclo_de_vida(c: Cuenta, obs: dict[str, Any]) -> None:
    """sam delete, the retained resources checked, adopted, and the Chaos=enabled deploy into the same account."""
    pila = Pila(c)
    obs["retenidos"] = pila.retenidos_de_la_pila()
    carta = pila.dejar_carta()
    try:
        despliegue.sam(c.estado, "delete", "--stack-name", despliegue.PILA, "--region", c.estado.region, "--no-prompts",
                       log="sam-delete.log")  # fmt: skip
        obs["delete"] = 0
    except despliegue.DespliegueError:
        obs["delete"] = 1
    obs["pila_tras_delete"] = pila.estado_pila()
    obs["retenidos_tras_delete"] = pila.fuera_de_pila(obs["retenidos"])
    # The second deploy, into the same account, is the Chaos=enabled one (issue 29): the FIS extension's
    # stand-in is the emulator's gap (gaps.fis_extension_stand_in).
    segundo = {**PARAMETROS, "Chaos": "enabled"}
    obs["adoptar"] = pila.retenidos_adoptar(despliegue.parametros(segundo), LOGS / "mf-retenidos.log")
    print((LOGS / "mf-retenidos.log").read_text(errors="replace")[-2000:], flush=True)
    obs["capa_fis"] = gaps.fis_extension_stand_in(
        c.cliente, despliegue.ARQUITECTURA, Path(c.estado.parametros_publicos)
    )
    obs["redeploy"] = _make("deploy-emulated", PARAMETROS=shlex.join(f"{k}={v}" for k, v in segundo.items()))
    obs["pila_tras_redeploy"] = pila.estado_pila()
    if obs["redeploy"] != 0:
        return
    c = Cuenta(c.estado, despliegue.url_tienda(c.estado), despliegue.parametros(segundo))  # a new API, Valkey...
    pila = Pila(c)
    obs["retenidos_tras_redeploy"] = pila.retenidos_de_la_pila()
    obs["reemplazos_retenidos"] = pila.reemplazos_del_despliegue(obs["retenidos"])
    obs["carta_retenida"] = {"dejada": carta, "recogida": pila.recoger_carta(carta)}
    confirmados = [p["pedido_id"] for p in obs["smoke"]["confirmados"]["pedidos"]]
    obs["registros_retenidos"] = c.idempotencia(confirmados)
    obs["caos_en_funciones"] = pila.extension_fis()
    obs["bucket_caos"] = pila.id_fisico("ChaosConfigBucket")
    smoke = mf_smoke(c, "caos-confirmado", 1, LOGS)
    obs["con_caos"] = {"smoke": smoke, "registros": registros(c, [p["pedido_id"] for p in smoke["pedidos"]])}
    obs["minimo_privilegio"]["despliegue-2-caos"] = _privilegios(c, "despliegue-2-caos")


def _privilegios(c: Cuenta, fase: str) -> dict[str, Any]:
    informe = privilegios.comprobar(c, fase, LOGS)
    _paso(f"least privilege ({fase}): " + informe["texto"].splitlines()[0] + f" ({LOGS}/minimo-privilegio-{fase}.txt)")
    return informe


def _fase(obs: dict[str, Any], nombre: str, hacer: Callable[[], object]) -> None:
    """Run one phase; its failure is an observation (the tests show it) and the level goes on to the next."""
    try:
        hacer()
    except Exception:
        obs.setdefault("errores", {})[nombre] = traceback.format_exc()
        _paso(f"{nombre} failed:\n{obs['errores'][nombre]}")


def _restos(antes: dict[str, list[str]], estado: cuenta.Estado) -> dict[str, Any]:
    """Which of the account's containers, volumes and network are still there, and whether its server runs."""
    ahora = MiniStack(Path(estado.carpeta), puerto=_puerto(estado)).docker()
    volumenes = set(MiniStack._docker("volume", "ls", "-q").split())
    return {
        "contenedores": ahora["contenedores"],
        "volumenes": [v for v in antes["volumenes"] if v in volumenes],
        "redes": ahora["redes"],
        "servidor": cuenta.vivo(estado.pid),
    }


def _puerto(estado: cuenta.Estado) -> int:
    return int(estado.gateway.rsplit(":", 1)[1])


def ejecutar(salida: Path) -> int:
    inicio = time.monotonic()
    obs: dict[str, Any] = {"gaps": [g.what for g in gaps.GAPS]}
    cuenta.parar(CARPETA_CUENTA)  # one left by a run that was killed: the level starts from an empty account
    shutil.rmtree(LOGS, ignore_errors=True)
    LOGS.mkdir(parents=True)
    try:
        obs["deploy"] = _make("deploy-emulated", PARAMETROS=shlex.join(f"{k}={v}" for k, v in PARAMETROS.items()))
        estado = cuenta.Estado.leer(CARPETA_CUENTA)
        if obs["deploy"] != 0 or estado is None:
            return 0
        # This process's own clients (the store API's signer, boto3's defaults) are the account's.
        os.environ.update(estado.entorno())
        os.environ.pop("AWS_PROFILE", None)
        c = Cuenta(estado, despliegue.url_tienda(estado), despliegue.parametros(PARAMETROS))
        nivel = Nivel(c)
        obs["deploy_s"] = round(time.monotonic() - inicio)
        obs["pila"] = Pila(c).estado_pila()
        obs["recursos"] = nivel.recursos()
        obs["perfil"] = nivel.perfil()
        obs["pipes"] = nivel.pipes()
        _fase(obs, "pedidos", lambda: obs.update(pedidos(c)))
        obs["minimo_privilegio"] = {"despliegue-1": _privilegios(c, "despliegue-1")}
        _fase(obs, "ciclo_de_vida", lambda: _ciclo_de_vida(c, obs))
    finally:
        estado = cuenta.Estado.leer(CARPETA_CUENTA)
        antes = MiniStack(Path(estado.carpeta), puerto=_puerto(estado)).docker() if estado else None
        obs["down"] = _make("deploy-emulated-down")
        if estado is not None and antes is not None:
            obs["restos"] = _restos(antes, estado)
        obs["segundos"] = round(time.monotonic() - inicio)
        salida.write_text(json.dumps(obs, indent=1, default=str))
        _paso(f"done in {obs['segundos']} s; observations in {salida}; logs in {LOGS}")
    return 0
