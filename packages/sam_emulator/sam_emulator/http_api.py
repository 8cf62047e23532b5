"""The template's HTTP APIs (``AWS::Serverless::HttpApi``) on loopback, calling their functions as API Gateway does.

Each function ``Events`` entry of ``Type: HttpApi`` (``ApiId``, ``Method``, ``Path``) becomes a
route of a :class:`LocalHttpApi` server on ``127.0.0.1:<free port>``; a request is turned into
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
    from sam_emulator.functions import Function, Functions
    from sam_emulator.template import Template

LOCAL_CALLER = "arn:aws:iam::123456789012:user/sam-emulator"


@dataclass(frozen=True, slots=True)
class Route:
    """``METHOD /path/{param}`` of an HTTP API, and the function behind it."""

    method: str
    path: str
    function: Function

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    def matches(self, method: str, route_path: str) -> dict[str, str] | None:
        """The path parameters when ``method route_path`` is this route; ``None`` otherwise."""
        if self.method not in (method, "ANY"):
            return None
        pattern = "^" + re.sub(r"\\\{([A-Za-z0-9_]+)\\\}", r"(?P<\1>[^/]+)", re.escape(self.path)) + "$"
        found = re.match(pattern, route_path)
        return None if found is None else {k: unquote(v) for k, v in found.groupdict().items()}


def routes_from_template(template: Template, functions: Functions) -> dict[str, list[Route]]:
    """API path -> its routes, from the functions' ``HttpApi`` events (the template's own table), in the root and
    in every unit it creates; an API and a function are named by their stack path (``Tienda/ApiTienda``), as
    ``Template.walk()`` names them."""
    routes: dict[str, list[Route]] = {}
    for unit_path, unit in template.walk():
        for lid, resource in unit.of_type("AWS::Serverless::Function").items():
            function = functions.by_id.get(f"{unit_path}{lid}")
            if function is None:
                continue  # not provisioned in this run
            for event in resource.get("Properties", {}).get("Events", {}).values():
                if event.get("Type") != "HttpApi":
                    continue
                props = event.get("Properties", {})
                # ApiId is a Ref to the template's HttpApi; without one, SAM's implicit ServerlessHttpApi.
                api_id = props.get("ApiId")
                api = api_id.get("Ref", "ServerlessHttpApi") if isinstance(api_id, dict) else "ServerlessHttpApi"
                route = Route(str(props.get("Method", "ANY")).upper(), props.get("Path", "/"), function)
                routes.setdefault(f"{unit_path}{api}", []).append(route)
    return routes


def http_event(
    method: str,
    path: Route,
    route_path: str,
    query_text: str,
    headers: dict[str, str],
    body: bytes,
    parameters: dict[str, str],
) -> dict[str, Any]:
    """The HTTP API payload 2.0 event API Gateway would send for this request."""
    try:
        text, as_base64 = body.decode(), False
    except UnicodeDecodeError:
        text, as_base64 = base64.b64encode(body).decode(), True
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": path.key,
        "rawPath": route_path,
        "rawQueryString": query_text,
        "headers": {k.lower(): v for k, v in headers.items()},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "local",
            "authorizer": {"iam": {"userArn": LOCAL_CALLER, "callerId": "sam-emulator"}},
            "domainName": "127.0.0.1",
            "http": {"method": method, "path": route_path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
            "requestId": str(uuid.uuid4()),
            "routeKey": path.key,
            "stage": "$default",
            "timeEpoch": int(time.time() * 1000),
        },
        "isBase64Encoded": as_base64,
    }
    if body:
        event["body"] = text
    if parameters:
        event["pathParameters"] = parameters
    return event


@dataclass
class LocalHttpApi(LocalServer):
    """One HTTP API on loopback: ``with LocalHttpApi(routes) as api: api.url``."""

    routes: list[Route]
    thread_name = "mf-api-http"

    def create_server(self) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        return server

    def serve(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(target)
        for path in self.routes:
            if (parameters := path.matches(method, parts.path)) is not None:
                event = http_event(method, path, parts.path, parts.query, headers, body, parameters)
                try:
                    response = path.function.invoke(event)
                except Exception:  # API Gateway's answer when the integration fails
                    return 500, {"Content-Type": "application/json"}, b'{"message":"Internal Server Error"}'
                return _http_response(response)
        return 404, {"Content-Type": "application/json"}, b'{"message":"Not Found"}'


def _http_response(response: Any) -> tuple[int, dict[str, str], bytes]:
    if not isinstance(response, dict) or "statusCode" not in response:
        # Payload 2.0's shortcut: a plain value is a 200 JSON body.
        return 200, {"Content-Type": "application/json"}, json.dumps(response).encode()
    body = response.get("body") or ""
    data = base64.b64decode(body) if response.get("isBase64Encoded") else str(body).encode()
    headers = {str(k): str(v) for k, v in (response.get("headers") or {}).items()}
    return int(response["statusCode"]), headers, data


def _handler(api: LocalHttpApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            state, headers, data = api.serve(self.command, self.path, dict(self.headers.items()), body)
            self.send_response(state)
            for name, value in headers.items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            """Silence the per-request stderr line."""

    return Handler
