"""The template's HTTP APIs (``AWS::Serverless::HttpApi``) on loopback, calling their functions as API Gateway does.

Each function ``Events`` entry of ``Type: HttpApi`` (``ApiId``, ``Method``, ``Path``) becomes a
route of a :class:`ApiHttpLocal` server on ``127.0.0.1:<free port>``; a request is turned into
an HTTP API payload 2.0 event (``routeKey``, ``pathParameters``, ``rawPath``, lower-cased
headers, an IAM caller in ``requestContext.authorizer.iam``) and the function's answer
(``statusCode``, ``headers``, ``body``, ``isBase64Encoded``) into the HTTP response. No route:
404 ``{"message": "Not Found"}``, as API Gateway answers. IAM auth is not checked here (there
is no signature to verify locally); the API's route table is the template's.

``mf-smoke --url <api.url>`` places orders through it exactly as through the deployed API.
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from sam_emulator.background import LocalServer

if TYPE_CHECKING:
    from sam_emulator.functions import Funcion, Funciones
    from sam_emulator.template import Plantilla

LLAMANTE_LOCAL = "arn:aws:iam::123456789012:user/sam-emulator"


@dataclass(frozen=True, slots=True)
class Ruta:
    """``METHOD /path/{param}`` of an HTTP API, and the function behind it."""

    metodo: str
    ruta: str
    funcion: Funcion

    @property
    def clave(self) -> str:
        return f"{self.metodo} {self.ruta}"

    def coincide(self, metodo: str, camino: str) -> dict[str, str] | None:
        """The path parameters when ``metodo camino`` is this route; ``None`` otherwise."""
        if self.metodo not in (metodo, "ANY"):
            return None
        patron = "^" + re.sub(r"\\\{([A-Za-z0-9_]+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.ruta)) + "$"
        encontrado = re.match(patron, camino)
        return None if encontrado is None else {k: unquote(v) for k, v in encontrado.groupdict().items()}


def rutas_de_plantilla(plantilla: Plantilla, funciones: Funciones) -> dict[str, list[Ruta]]:
    """API logical id -> its routes, from the functions' ``HttpApi`` events (the template's own table)."""
    rutas: dict[str, list[Ruta]] = {}
    for lid, recurso in plantilla.de_tipo("AWS::Serverless::Function").items():
        for evento in recurso.get("Properties", {}).get("Events", {}).values():
            if evento.get("Type") != "HttpApi":
                continue
            if lid not in funciones.por_id:
                continue  # not provisioned in this run
            props = evento.get("Properties", {})
            # ApiId is a Ref to the template's HttpApi; without one, SAM's implicit ServerlessHttpApi.
            api_id = props.get("ApiId")
            api = api_id.get("Ref", "ServerlessHttpApi") if isinstance(api_id, dict) else "ServerlessHttpApi"
            ruta = Ruta(str(props.get("Method", "ANY")).upper(), props.get("Path", "/"), funciones.por_id[lid])
            rutas.setdefault(api, []).append(ruta)
    return rutas


def evento_http(
    metodo: str,
    ruta: Ruta,
    camino: str,
    consulta: str,
    cabeceras: dict[str, str],
    cuerpo: bytes,
    parametros: dict[str, str],
) -> dict[str, Any]:
    """The HTTP API payload 2.0 event API Gateway would send for this request."""
    try:
        texto, en_base64 = cuerpo.decode(), False
    except UnicodeDecodeError:
        texto, en_base64 = base64.b64encode(cuerpo).decode(), True
    evento: dict[str, Any] = {
        "version": "2.0",
        "routeKey": ruta.clave,
        "rawPath": camino,
        "rawQueryString": consulta,
        "headers": {k.lower(): v for k, v in cabeceras.items()},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "local",
            "authorizer": {"iam": {"userArn": LLAMANTE_LOCAL, "callerId": "sam-emulator"}},
            "domainName": "127.0.0.1",
            "http": {"method": metodo, "path": camino, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": str(uuid.uuid4()),
            "routeKey": ruta.clave,
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "isBase64Encoded": en_base64,
    }
    if cuerpo:
        evento["body"] = texto
    if parametros:
        evento["pathParameters"] = parametros
    return evento


@dataclass
class ApiHttpLocal(LocalServer):
    """One HTTP API on loopback: ``with ApiHttpLocal(rutas) as api: api.url``."""

    rutas: list[Ruta]
    nombre_hilo = "mf-api-http"

    def crear_servidor(self) -> ThreadingHTTPServer:
        servidor = ThreadingHTTPServer(("127.0.0.1", 0), _manejador(self))
        servidor.daemon_threads = True
        return servidor

    def atender(
        self, metodo: str, destino: str, cabeceras: dict[str, str], cuerpo: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        partes = urlsplit(destino)
        for ruta in self.rutas:
            if (parametros := ruta.coincide(metodo, partes.path)) is not None:
                evento = evento_http(metodo, ruta, partes.path, partes.query, cabeceras, cuerpo, parametros)
                try:
                    respuesta = ruta.funcion.invocar(evento)
                except Exception:  # API Gateway's answer when the integration fails
                    return 500, {"Content-Type": "application/json"}, b'{"message":"Internal Server Error"}'
                return _respuesta_http(respuesta)
        return 404, {"Content-Type": "application/json"}, b'{"message":"Not Found"}'


def _respuesta_http(respuesta: Any) -> tuple[int, dict[str, str], bytes]:
    if not isinstance(respuesta, dict) or "statusCode" not in respuesta:
        # Payload 2.0's shortcut: a plain value is a 200 JSON body.
        return 200, {"Content-Type": "application/json"}, json.dumps(respuesta).encode()
    cuerpo = respuesta.get("body") or ""
    datos = base64.b64decode(cuerpo) if respuesta.get("isBase64Encoded") else str(cuerpo).encode()
    cabeceras = {str(k): str(v) for k, v in (respuesta.get("headers") or {}).items()}
    return int(respuesta["statusCode"]), cabeceras, datos


def _manejador(api: ApiHttpLocal) -> type[BaseHTTPRequestHandler]:
    class Manejador(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _atender(self) -> None:
            largo = int(self.headers.get("Content-Length") or 0)
            cuerpo = self.rfile.read(largo) if largo else b""
            estado, cabeceras, datos = api.atender(self.command, self.path, dict(self.headers.items()), cuerpo)
            self.send_response(estado)
            for nombre, valor in cabeceras.items():
                if nombre.lower() != "content-length":
                    self.send_header(nombre, valor)
            self.send_header("Content-Length", str(len(datos)))
            self.end_headers()
            self.wfile.write(datos)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _atender

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            """Silence the per-request stderr line."""

    return Manejador
