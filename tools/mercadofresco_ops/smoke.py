"""``mf-smoke``: place N real orders through the store API and follow each one to its outcome.

After a deploy (or against the local run) the command answers "does the whole chain work?":

1. ``POST /pedidos`` N times (a fresh ``Idempotency-Key`` each), SigV4-signed with the caller's
   AWS credentials when ``--url`` is an ``execute-api`` URL (the API's IAM auth), plain HTTP
   otherwise (a local store);
2. follows every order through the outbox and the bus to its ``mercadofresco-procesar-pedido``
   execution (matched by the ``pedido_id`` in the execution's input), the workflow's end, the
   fan-out (the idempotency record each consumer the confirmation topic feeds keeps for the order:
   one of its role's key prefixes followed by the order id, ``<operación>:{id}``), the DLQs (a
   peek, never a delete) and the projection's state (``GET /pedidos/{id}``);
3. prints one row per order with the outcome and the seconds each stage took, and exits 1 if
   any order is lost (never reached the workflow nor a DLQ), stuck (no final state by
   ``--espera-s``) or dead-lettered.

``--endpoint-url`` points every AWS client at another endpoint (moto's server in the tests and
the local run). Resource names, the fan-out's consumers and their key prefixes are read from
``template.yaml`` (:mod:`mercadofresco_ops.topologia`), names with ``--sufijo`` (the stack's ``NameSuffix``).

Output is in Spanish, like the other operator commands.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import urllib3
from mercadofresco.dominio.proyeccion import ESTADO_POR_EVENTO
from template_model import messaging as m

from mercadofresco_ops.ayuda import ParserEspanol
from mercadofresco_ops.errores import ErrorOperador, errores_de_aws, una_linea
from mercadofresco_ops.retenidos import _samconfig  # what sam deploy reads: the stack it creates
from mercadofresco_ops.topologia import Topologia, de_plantilla

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterable, Sequence

    from botocore.client import BaseClient
    from template_model import Consumer, Template

ESTADOS_FINALES = frozenset(e.nombre for e in ESTADO_POR_EVENTO.values())  # the states an outcome leaves
# A store that did not answer, or answered 429/5xx, is asked again this many times with the same Idempotency-Key:
# a cold start or a burst is the platform's, not a lost order (mf-smoke and mf-caos --pila place orders so).
REINTENTOS_TIENDA = 4
CATALOGO = (("FRU-MAN-001", 249), ("VER-TOM-014", 189), ("LAC-LEC-003", 115), ("PAN-BAR-002", 95))


@dataclass(frozen=True, slots=True)
class Nombres:
    """The deployed names this command reads, from template.yaml with the stack's suffix."""

    sufijo: str = ""

    @property
    def _topologia(self) -> Topologia:
        return de_plantilla(self.sufijo)

    @property
    def maquina(self) -> str:
        return self._topologia.nombre("ProcesarPedido", "Name")

    @property
    def tabla_idempotencia(self) -> str:
        return self._topologia.nombre("TablaIdempotencia", "TableName")

    @property
    def colas_fallidos(self) -> tuple[str, ...]:
        """Every DLQ of the template (:attr:`Topologia.dlqs`)."""
        return self._topologia.nombres_dlq()

    @property
    def reparto(self) -> tuple[Consumer, ...]:
        return consumidores_del_reparto(self._topologia.plantilla)


def consumidores_del_reparto(plantilla: Template) -> tuple[Consumer, ...]:
    """The consumers the confirmation topic feeds that keep an idempotency record of what they did."""
    return tuple(c for c in m.fan_out(plantilla) if c.key_prefixes)


@dataclass
class Seguimiento:
    """One order placed by the smoke test and what has been seen of it (times are epoch seconds)."""

    pedido_id: str
    clave: str
    enviado_en: float
    respuesta_s: float
    ejecucion: str | None = None
    estado_ejecucion: str | None = None
    inicio_flujo: float | None = None
    fin_flujo: float | None = None
    estado: str = "CREADO"
    estado_en: float | None = None
    reparto_en: dict[str, float | None] = field(default_factory=dict)  # fan-out consumer -> when it acted
    dlq: str | None = None

    @property
    def repartido(self) -> bool:
        """Whether every consumer of the fan-out acted on the order."""
        return all(en is not None for en in self.reparto_en.values())

    @property
    def final(self) -> bool:
        if self.dlq is not None:
            return True
        if self.estado not in ESTADOS_FINALES:
            return False
        # A confirmed order is done once the fan-out acted (each of its consumers).
        return self.estado != "CONFIRMADO" or self.repartido

    def resultado(self) -> str:
        if self.dlq is not None:
            return "EN_DLQ"
        if self.final:
            return self.estado
        return "PERDIDO" if self.ejecucion is None else "ATASCADO"

    @property
    def correcto(self) -> bool:
        return self.resultado() in ESTADOS_FINALES


class ClienteTienda:
    """``POST /pedidos`` and ``GET /pedidos/{id}``; SigV4-signed (service ``execute-api``) when ``firmar``."""

    def __init__(
        self, url: str, *, firmar: bool, region: str | None = None, timeout_s: float = 15, reintentos: int = 0
    ) -> None:
        """``reintentos``: how many times a request with no answer (a cold start past ``timeout_s``, a reset) or
        answered 429/5xx is sent again, the same request with the same ``Idempotency-Key`` (the store's contract:
        a retried order is the same order), after the answer's ``Retry-After`` or a short backoff. 0: never (a
        caller that counts each answer itself)."""
        self.url = url.rstrip("/")
        self.firmar = firmar
        self.region = region
        retries = (
            urllib3.Retry(
                total=reintentos,
                allowed_methods=frozenset({"GET", "POST"}),
                status_forcelist=(429, 500, 502, 503, 504),
                backoff_factor=0.5,
                respect_retry_after_header=True,
                raise_on_status=False,  # the last answer is returned and reported, not an exception
            )
            if reintentos
            else False
        )
        self._http = urllib3.PoolManager(retries=retries, timeout=urllib3.Timeout(total=timeout_s))

    @staticmethod
    def es_execute_api(url: str) -> bool:
        return ".execute-api." in (urlsplit(url).hostname or "")

    def _firmadas(self, metodo: str, url: str, cuerpo: bytes | None, cabeceras: dict[str, str]) -> dict[str, str]:
        if not self.firmar:
            return cabeceras
        import boto3
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        sesion = boto3.session.Session()
        credenciales = sesion.get_credentials()
        if credenciales is None:
            raise SystemExit("mf-smoke: no hay credenciales de AWS para firmar (SigV4) las peticiones a la API")
        # The API's own region (in its host name) first: a default region elsewhere would sign for the wrong one.
        partes = (urlsplit(url).hostname or "").split(".")
        region = self.region or (partes[2] if len(partes) > 2 and partes[1] == "execute-api" else sesion.region_name)
        peticion = AWSRequest(method=metodo, url=url, data=cuerpo, headers=cabeceras)
        SigV4Auth(credenciales.get_frozen_credentials(), "execute-api", region).add_auth(peticion)
        return dict(peticion.headers.items())

    def _pedir(self, metodo: str, ruta: str, cuerpo: dict[str, Any] | None, **cabeceras: str) -> tuple[int, Any]:
        url = self.url + ruta
        datos = json.dumps(cuerpo).encode() if cuerpo is not None else None
        base = {"Accept": "application/json", **({"Content-Type": "application/json"} if datos else {}), **cabeceras}
        respuesta = self._http.request(metodo, url, body=datos, headers=self._firmadas(metodo, url, datos, base))
        try:
            return respuesta.status, json.loads(respuesta.data or b"null")
        except ValueError:
            return respuesta.status, {"message": respuesta.data.decode(errors="replace")[:300]}

    def crear(self, cuerpo: dict[str, Any], clave: str) -> tuple[int, Any]:
        return self._pedir("POST", "/pedidos", cuerpo, **{"Idempotency-Key": clave})

    def leer(self, pedido_id: str) -> tuple[int, Any]:
        return self._pedir("GET", f"/pedidos/{pedido_id}", None)


def pedido_de_prueba(numero: int, ejecucion: str, cliente_id: str | None = None) -> dict[str, Any]:
    """A small, valid order; ``cliente_id`` marks it as the smoke test's (or is the one given)."""
    sku, precio = CATALOGO[numero % len(CATALOGO)]
    return {
        "cliente_id": cliente_id or f"SMOKE-{ejecucion}",
        "email": f"smoke+{ejecucion}-{numero}@example.com",
        "moneda": "EUR",
        "lineas": [{"sku": sku, "cantidad": 1 + numero % 3, "precio_centimos": precio}],
    }


def buscar_pedido_id(valor: Any, profundidad: int = 0) -> str | None:
    """The ``pedido_id`` anywhere in an execution's input (an SQS record list, a body string, an event)."""
    if profundidad > 6:
        return None
    if isinstance(valor, str):
        texto = valor.strip()
        if texto[:1] in "{[":
            try:
                return buscar_pedido_id(json.loads(texto), profundidad + 1)
            except ValueError:
                return None
        return None
    if isinstance(valor, dict):
        if isinstance(valor.get("pedido_id"), str):
            return valor["pedido_id"]
        valores: Iterable[Any] = valor.values()
    elif isinstance(valor, list):
        valores = valor
    else:
        return None
    return next((p for v in valores if (p := buscar_pedido_id(v, profundidad + 1))), None)


def _epoch(valor: Any) -> float | None:
    if valor is None:
        return None
    if isinstance(valor, datetime):
        return valor.timestamp()
    return datetime.fromisoformat(str(valor)).timestamp()


@dataclass
class Observador:
    """Reads what AWS (or moto) shows of the orders: executions, idempotency records, DLQs."""

    sfn: BaseClient
    ddb: BaseClient
    sqs: BaseClient
    nombres: Nombres
    _entradas: dict[str, str | None] = field(default_factory=dict)  # execution ARN -> pedido_id
    _maquina: str | None = None

    def maquina(self) -> str | None:
        if self._maquina is None:
            paginas = self.sfn.get_paginator("list_state_machines").paginate()
            self._maquina = next(
                (
                    m["stateMachineArn"]
                    for p in paginas
                    for m in p["stateMachines"]
                    if m["name"] == self.nombres.maquina
                ),
                None,
            )
        return self._maquina

    def ejecuciones(self, pedidos: set[str]) -> dict[str, dict[str, Any]]:
        """``pedido_id`` -> its latest execution (ARN, status, start, stop), for the orders asked."""
        arn = self.maquina()
        if arn is None:
            return {}
        vistas: dict[str, dict[str, Any]] = {}
        for pagina in self.sfn.get_paginator("list_executions").paginate(stateMachineArn=arn):
            for ejecucion in pagina["executions"]:
                clave = ejecucion["executionArn"]
                if clave not in self._entradas:
                    entrada = self.sfn.describe_execution(executionArn=clave).get("input", "")
                    self._entradas[clave] = buscar_pedido_id(entrada)
                pedido = self._entradas[clave]
                # ListExecutions already carries status, startDate and (once finished) stopDate.
                if pedido in pedidos and (pedido not in vistas or ejecucion["startDate"] > vistas[pedido]["startDate"]):
                    vistas[pedido] = ejecucion
        return vistas

    def hecho_en(self, clave: str, ttl_s: int = 24 * 3600) -> float | None:
        """When the consumer claimed ``clave`` (its record's TTL minus 24 h), if it COMPLETED."""
        item = self.ddb.get_item(TableName=self.nombres.tabla_idempotencia, Key={"clave": {"S": clave}}).get("Item")
        if not item or item.get("estado", {}).get("S") != "COMPLETADO":
            return None
        return int(item["expira_en"]["N"]) - ttl_s

    def repartido_en(self, pedido_id: str) -> dict[str, float | None]:
        """Fan-out consumer -> when it completed its operation on the order (a key of its own naming the order)."""
        return {
            consumidor.function: next(filter(None, map(self.hecho_en, consumidor.keys_for(pedido_id))), None)
            for consumidor in self.nombres.reparto
        }

    def en_dlq(self, pedidos: set[str]) -> dict[str, str]:
        """``pedido_id`` -> the DLQ holding a message about it (peeked: read, never deleted)."""
        encontrados: dict[str, str] = {}
        for nombre in self.nombres.colas_fallidos:
            try:
                url = self.sqs.get_queue_url(QueueName=nombre)["QueueUrl"]
            except self.sqs.exceptions.QueueDoesNotExist:
                continue
            visibles = int(
                self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])[
                    "Attributes"
                ]["ApproximateNumberOfMessages"]
            )
            if not visibles:
                continue
            # A short visibility: the messages reappear a few seconds later for the runbook's tools.
            mensajes = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=5).get(
                "Messages", []
            )
            for mensaje in mensajes:
                if (pedido := buscar_pedido_id(mensaje["Body"])) in pedidos:
                    encontrados.setdefault(pedido, nombre)
        return encontrados


@dataclass
class Smoke:
    """Place orders, follow them, report. ``reloj``/``dormir`` are injectable (the tests drive them)."""

    tienda: ClienteTienda
    observador: Observador
    reloj: Callable[[], float] = time.time
    dormir: Callable[[float], None] = time.sleep
    seguimientos: list[Seguimiento] = field(default_factory=list)

    def colocar(self, n: int, cliente_id: str | None = None) -> list[str]:
        """POST n orders; return the errors (an order the store refused is reported, not followed)."""
        ejecucion = uuid.uuid4().hex[:8]
        errores = []
        for numero in range(1, n + 1):
            clave = f"mf-smoke-{ejecucion}-{numero}"
            inicio = self.reloj()
            estado, cuerpo = self.tienda.crear(pedido_de_prueba(numero, ejecucion, cliente_id), clave)
            if estado not in (200, 201):
                errores.append(f"pedido {numero}: la tienda respondió {estado}: {cuerpo}")
                continue
            seguimiento = Seguimiento(cuerpo["pedido_id"], clave, inicio, self.reloj() - inicio)
            seguimiento.reparto_en = dict.fromkeys(c.function for c in self.observador.nombres.reparto)
            self.seguimientos.append(seguimiento)
        return errores

    def observar(self) -> None:
        """One pass over every order not yet final."""
        abiertos = {s.pedido_id: s for s in self.seguimientos if not s.final}
        if not abiertos:
            return
        for pedido, ejecucion in self.observador.ejecuciones(set(abiertos)).items():
            s = abiertos[pedido]
            s.ejecucion, s.estado_ejecucion = ejecucion["executionArn"], ejecucion["status"]
            s.inicio_flujo, s.fin_flujo = _epoch(ejecucion.get("startDate")), _epoch(ejecucion.get("stopDate"))
        for s in abiertos.values():
            estado, cuerpo = self.tienda.leer(s.pedido_id)
            if estado == 200:
                s.estado = cuerpo["estado"]
                s.estado_en = _epoch(cuerpo.get("estado_actualizado_en"))
            if s.estado == "CONFIRMADO" and not s.repartido:
                vistos = self.observador.repartido_en(s.pedido_id)
                s.reparto_en = {c: s.reparto_en.get(c) or vistos.get(c) for c in s.reparto_en}
        for pedido, cola in self.observador.en_dlq({p for p, s in abiertos.items() if not s.final}).items():
            abiertos[pedido].dlq = cola

    def seguir(self, espera_s: float, intervalo_s: float) -> None:
        limite = self.reloj() + espera_s
        while True:
            self.observar()
            if all(s.final for s in self.seguimientos) or self.reloj() >= limite:
                return
            self.dormir(intervalo_s)


def _s(desde: float | None, hasta: float | None) -> str:
    return "-" if desde is None or hasta is None else f"{max(0.0, hasta - desde):.1f}"


def tabla(seguimientos: Sequence[Seguimiento]) -> str:
    """The report: one row per order, the outcome and the seconds per stage."""
    cabecera = ("pedido", "resultado", "tienda ms", "hasta flujo s", "flujo s", "proyección s", "reparto s", "detalle")
    filas = [cabecera]
    for s in seguimientos:
        reparto = max(filter(None, s.reparto_en.values()), default=None) if s.repartido else None
        detalle = s.dlq or (s.estado_ejecucion or "sin ejecución")
        filas.append(
            (
                s.pedido_id,
                s.resultado(),
                f"{s.respuesta_s * 1000:.0f}",
                _s(s.enviado_en, s.inicio_flujo),
                _s(s.inicio_flujo, s.fin_flujo),
                _s(s.fin_flujo, s.estado_en),
                _s(s.fin_flujo, reparto),
                detalle,
            )
        )
    anchos = [max(len(f[i]) for f in filas) for i in range(len(cabecera))]
    return "\n".join("  ".join(c.ljust(a) for c, a in zip(f, anchos, strict=True)).rstrip() for f in filas)


def resumen(seguimientos: Sequence[Seguimiento], errores: Sequence[str]) -> tuple[str, int]:
    """The closing lines and the exit code: 1 if any order is lost, stuck, dead-lettered or refused."""
    malos = [s for s in seguimientos if not s.correcto]
    por_resultado: dict[str, int] = {}
    for s in seguimientos:
        por_resultado[s.resultado()] = por_resultado.get(s.resultado(), 0) + 1
    lineas = [
        f"{len(seguimientos)} pedidos seguidos: "
        + ", ".join(f"{r} {n}" for r, n in sorted(por_resultado.items()))
        + (f"; {len(errores)} rechazados por la tienda" if errores else ""),
        *errores,
    ]
    if malos or errores:
        lineas.append("FALLO: hay pedidos perdidos, atascados, en una DLQ o rechazados (runbooks/dlq.md)")
        return "\n".join(lineas), 1
    lineas.append("OK: cada pedido llegó a un estado final que el cliente puede ver")
    return "\n".join(lineas), 0


def _clientes(endpoint_url: str | None, region: str | None) -> tuple[BaseClient, BaseClient, BaseClient]:
    from mercadofresco.aws import client

    extra: dict[str, Any] = {}
    if endpoint_url:
        extra["endpoint_url"] = endpoint_url
    if region:
        extra["region_name"] = region
    return client("stepfunctions", **extra), client("dynamodb", **extra), client("sqs", **extra)


def construir_parser() -> argparse.ArgumentParser:
    p = ParserEspanol(
        prog="mf-smoke", description="Coloca N pedidos reales por la API de la tienda y sigue cada uno hasta su final."
    )
    destino = p.add_mutually_exclusive_group()
    destino.add_argument(
        "--url", help="URL base de api-mercadofresco-tienda (salida TiendaApiUrl) o de la tienda local"
    )
    destino.add_argument(
        "--pila",
        help="nombre de la pila desplegada: la URL se lee de su salida TiendaApiUrl "
        "(por defecto, sin --url, el stack_name de samconfig.toml: la pila que crea sam deploy)",
    )
    p.add_argument("--pedidos", "-n", type=int, default=5, help="pedidos a colocar (5)")
    p.add_argument("--sufijo", default="", help="NameSuffix de la pila (vacío por defecto)")
    p.add_argument(
        "--cliente",
        help="cliente_id de los pedidos (por defecto SMOKE-<ejecución>); p. ej. uno de SimuladorTarjetasRechazadas",
    )
    p.add_argument(
        "--endpoint-url", metavar="URL", help="endpoint de AWS alternativo (el servidor de moto de la ejecución local)"
    )
    p.add_argument("--region", help="región (por defecto la de la configuración de AWS)")
    p.add_argument("--espera-s", type=float, default=300, help="segundos máximos esperando estados finales (300)")
    p.add_argument("--intervalo-s", type=float, default=3, help="segundos entre observaciones (3)")
    p.add_argument(
        "--json", metavar="FICHERO", help="además, escribe en este fichero cada pedido y su resultado (JSON)"
    )
    p.add_argument(
        "--firmar",
        choices=("auto", "si", "no"),
        default="auto",
        help="firmar con SigV4 (auto: sí para URLs execute-api)",
    )
    return p


def analizar(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = construir_parser()
    args = p.parse_args(argv)
    if args.pedidos < 1:
        p.error("--pedidos debe ser al menos 1")
    if args.url is None and args.pila is None:
        args.pila = _samconfig("default").get("stack_name")
        if not args.pila:
            p.error("da --url o --pila (samconfig.toml no tiene stack_name)")
    return args


def url_de_pila(nombre: str, endpoint_url: str | None, region: str | None) -> str:
    """The stack's ``TiendaApiUrl`` output; ``SystemExit`` with a clear message when there is none."""
    from mercadofresco.aws import client

    extra = {k: v for k, v in (("endpoint_url", endpoint_url), ("region_name", region)) if v}
    cfn = client("cloudformation", **extra)
    try:
        pila = cfn.describe_stacks(StackName=nombre)["Stacks"][0]
    except cfn.exceptions.ClientError as exc:
        raise SystemExit(f"mf-smoke: no se pudo leer la pila {nombre!r}: {exc}") from None
    salidas = {o["OutputKey"]: o["OutputValue"] for o in pila.get("Outputs", [])}
    if "TiendaApiUrl" not in salidas:
        raise SystemExit(f"mf-smoke: la pila {nombre!r} no tiene la salida TiendaApiUrl (¿desplegada sin la tienda?)")
    return salidas["TiendaApiUrl"]


def main(argv: Sequence[str] | None = None) -> int:
    args = analizar(argv)
    try:
        with errores_de_aws("AWS"):  # a last net: any AWS/botocore failure is one line, never a traceback
            return _ejecutar(args)
    except ErrorOperador as exc:
        print(f"mf-smoke: {una_linea(exc)}", file=sys.stderr)
        return 2


def _ejecutar(args: argparse.Namespace) -> int:
    if args.pila:
        args.url = url_de_pila(args.pila, args.endpoint_url, args.region)
    firmar = args.firmar == "si" or (args.firmar == "auto" and ClienteTienda.es_execute_api(args.url))
    sfn, ddb, sqs = _clientes(args.endpoint_url, args.region)
    smoke = Smoke(
        ClienteTienda(args.url, firmar=firmar, region=args.region, reintentos=REINTENTOS_TIENDA),
        Observador(sfn, ddb, sqs, Nombres(args.sufijo)),
    )
    try:
        errores = smoke.colocar(args.pedidos, args.cliente)
    except urllib3.exceptions.HTTPError as exc:
        print(f"mf-smoke: no se pudo contactar con la tienda en {args.url}: {exc}", file=sys.stderr)
        return 1
    print(f"{len(smoke.seguimientos)} pedidos colocados; siguiéndolos hasta {args.espera_s:.0f} s", file=sys.stderr)
    smoke.seguir(args.espera_s, args.intervalo_s)
    print(tabla(smoke.seguimientos))
    if args.json:
        filas = [
            {"pedido_id": s.pedido_id, "resultado": s.resultado(), "ejecucion": s.ejecucion} for s in smoke.seguimientos
        ]
        Path(args.json).write_text(json.dumps({"pedidos": filas, "errores": errores}, indent=1))
    texto, codigo = resumen(smoke.seguimientos, errores)
    print(texto)
    return codigo


if __name__ == "__main__":
    sys.exit(main())
