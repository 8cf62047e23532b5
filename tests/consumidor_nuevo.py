"""A copy of the template with one more consumer, as a user adds one ("Adding a consumer", docs/adding-a-consumer.md).

The new consumer ("Factura": one invoice per confirmed order, through an invoicing provider) is made the way
the guide says: its name added to every loop that has the ERP's (``Fn::ForEach`` collections: its queue, DLQ,
subscription and log group, its alarms) with the ``Mappings`` entries they read, its bounds in
``Mappings.Plazos``, its provider's URL parameter and the condition that plays it in the sandbox, and the
block written per consumer (queue policies, function, role, sandbox provider) copied from the ERP's. What the
ERP has beyond the shape (its second queue, the FIFO stock reservations) is not copied, and the role's key
prefixes are the new handler's (``factura:*``).

The copy is written beside ``template.yaml`` (its other ``CodeUri`` paths resolve as the original's) with
the new function's code in a folder of its own: :data:`HANDLER`, a handler of a few lines on the layer.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfnlint.decode import decode

if TYPE_CHECKING:
    from collections.abc import Iterator

MODELO, NUEVO = "Erp", "Factura"
PREFIJO = "factura"  # the key operation its handler builds: factura:{pedido_id}

HANDLER = '''"""ColaFactura (PedidoConfirmado) -> one invoice per confirmed order; an open circuit defers."""

from mercadofresco.consumer import Consumer, Route, accepted
from mercadofresco.dominio.valores import CAMPOS
from mercadofresco.errors import CircuitoAbierto
from mercadofresco.http import client_from_env
from mercadofresco.idempotency import IdempotencyStore
from mercadofresco.idempotency.keys import make_key


def crear_consumidor(factura, store):
    def facturar(evento):
        clave = make_key("factura", evento["pedido_id"])
        cuerpo = {"pedido_id": evento["pedido_id"], "importe_centimos": evento.get("importe_centimos")}
        def enviar():
            respuesta = factura.post("/facturas", json=cuerpo, idempotency_key=clave, idempotent=True)
            return accepted(respuesta, "factura")

        return store.run(clave, enviar, payload=cuerpo)

    rutas = {"PedidoConfirmado": Route(facturar, fields=("pedido_id",))}
    return Consumer("factura", rutas, defer_on=(CircuitoAbierto,), field_checks=CAMPOS)


def lambda_handler(event, context):
    consumidor = crear_consumidor(client_from_env("factura", "FACTURA_URL"), IdempotencyStore.from_env())
    return dict(consumidor(event, context))
'''

_PALABRA = re.compile(rf"{MODELO}(?=[A-Z_]|$)")


def _renombrar(texto: str) -> str:
    return _PALABRA.sub(NUEVO, texto).replace(MODELO.lower(), NUEVO.lower()).replace(MODELO.upper(), NUEVO.upper())


def _renombrado(nodo: Any) -> Any:
    if isinstance(nodo, dict):
        return {_renombrar(k): _renombrado(v) for k, v in nodo.items()}
    if isinstance(nodo, list):
        return [_renombrado(v) for v in nodo]
    return _renombrar(nodo) if isinstance(nodo, str) else nodo


def _es_referencia(nodo: Any, ids: set[str]) -> bool:
    """Whether ``nodo`` is a Ref or GetAtt of one of ``ids``."""
    if not isinstance(nodo, dict) or len(nodo) != 1:
        return False
    att = nodo.get("Fn::GetAtt")
    return nodo.get("Ref") in ids or (isinstance(att, list) and bool(att) and att[0] in ids)


def _nombra(nodo: Any, ids: set[str]) -> bool:
    """Whether ``nodo`` refers to one of ``ids`` anywhere."""
    if _es_referencia(nodo, ids):
        return True
    valores = nodo.values() if isinstance(nodo, dict) else nodo if isinstance(nodo, list) else ()
    return any(_nombra(v, ids) for v in valores)


def _solo_de(sentencia: Any, ids: set[str]) -> bool:
    """A policy statement whose every Resource is one of ``ids``."""
    recursos = sentencia.get("Resource") if isinstance(sentencia, dict) else None
    recursos = recursos if isinstance(recursos, list) else [recursos]
    return all(_es_referencia(r, ids) for r in recursos)


def _sin(nodo: Any, ids: set[str]) -> Any:
    """``nodo`` without what refers to ``ids`` (the model's extra queues): list items, statements, events."""
    if isinstance(nodo, dict):
        return {
            k: {n: _sin(e, ids) for n, e in v.items() if not _nombra(e, ids)} if k == "Events" else _sin(v, ids)
            for k, v in nodo.items()
        }
    if isinstance(nodo, list):
        return [_sin(v, ids) for v in nodo if not (_es_referencia(v, ids) or _solo_de(v, ids))]
    return nodo


def _con_prefijo(nodo: Any) -> Any:
    """Every ``dynamodb:LeadingKeys`` condition of the role narrowed to the new handler's operation."""
    if isinstance(nodo, dict):
        return {k: ([f"{PREFIJO}:*"] if k == "dynamodb:LeadingKeys" else _con_prefijo(v)) for k, v in nodo.items()}
    if isinstance(nodo, list):
        return [_con_prefijo(v) for v in nodo]
    return nodo


def _copiado(doc: dict[str, Any]) -> dict[str, Any]:
    """A template (the root or a unit) with the model's resources, loop entries, mappings, parameters,
    conditions and outputs copied for the new consumer."""
    nuevo = copy.deepcopy(doc)
    propios = {lid for lid in doc["Resources"] if not lid.startswith("Fn::ForEach::") and _PALABRA.search(lid)}
    # The model's queues of another shape (the ERP's FIFO stock queue and its DLQ): not the new consumer's.
    colas = {lid for lid, r in doc["Resources"].items() if isinstance(r, dict) and r.get("Type") == "AWS::SQS::Queue"}
    ajenas = {c for c in colas - propios if any(_nombra(doc["Resources"][lid], {c}) for lid in propios)}
    for lid in sorted(propios):
        recurso = _sin(copy.deepcopy(doc["Resources"][lid]), ajenas)
        nuevo["Resources"][_renombrar(lid)] = _con_prefijo(_renombrado(recurso))
    # The loops that write every consumer's alarms, and the words of each instance.
    for clave, bucle in doc["Resources"].items():
        if clave.startswith("Fn::ForEach::") and MODELO in bucle[1]:
            nuevo["Resources"][clave][1] = [*bucle[1], NUEVO]
    # What a unit is handed for it (the sandbox unit: the URL parameter that says whether it plays the provider).
    for lid, recurso in doc["Resources"].items():
        pasados = (recurso.get("Properties") or {}).get("Parameters") if isinstance(recurso, dict) else None
        for clave in [k for k in pasados or {} if _PALABRA.search(k)]:
            nuevo["Resources"][lid]["Properties"]["Parameters"][_renombrar(clave)] = _renombrado(pasados[clave])
    # Its provider: the URL parameter a deploy may give, the condition that plays it in the sandbox, what a unit
    # outputs for it.
    for seccion in ("Mappings", "Parameters", "Conditions", "Outputs"):
        for clave in [k for k in doc.get(seccion) or {} if _PALABRA.search(k)]:
            nuevo[seccion][_renombrar(clave)] = _renombrado(doc[seccion][clave])
    for nombre, mapa in (doc.get("Mappings") or {}).items():
        for clave in [k for k in mapa if _PALABRA.search(k)]:
            nuevo["Mappings"][nombre][_renombrar(clave)] = _renombrado(mapa[clave])
    for clave, condicion in (doc.get("Conditions") or {}).items():
        alternativas = condicion.get("Fn::Or") if isinstance(condicion, dict) else None
        propias = [a for a in alternativas or [] if isinstance(a, dict) and _PALABRA.search(str(a.get("Condition")))]
        if propias:
            nuevo["Conditions"][clave]["Fn::Or"] = [*alternativas, *(_renombrado(a) for a in propias)]
    return nuevo


def _leido(ruta: Path) -> dict[str, Any]:
    documento, errores = decode(str(ruta))
    assert not errores, errores
    return json.loads(json.dumps(documento))


def con_consumidor_nuevo(plantilla: Path) -> dict[str, Any]:
    """The template at ``plantilla`` as written (its loops kept), with the new consumer added."""
    return _copiado(_leido(plantilla))


def unidades_con_consumidor_nuevo(plantilla: Path, documento: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each local unit of ``documento`` (by logical id) that has a resource of the model's, with the new
    consumer's copied in (the sandbox unit: its simulator)."""
    unidades = {}
    for lid, recurso in documento["Resources"].items():
        ubicacion = (recurso.get("Properties") or {}).get("Location") if isinstance(recurso, dict) else None
        if isinstance(ubicacion, str) and not ubicacion.startswith(("s3://", "https://")):
            unidad = _leido(plantilla.parent / ubicacion)
            if any(_PALABRA.search(r) for r in unidad["Resources"]):
                unidades[lid] = _copiado(unidad)
    return unidades


@contextmanager
def plantilla_con_consumidor_nuevo(raiz: Path) -> Iterator[Path]:
    """The copy written beside ``raiz / "template.yaml"`` (a unit it changes beside the unit), its function's code
    in ``functions/<id>/``; all removed."""
    marca = uuid.uuid4().hex[:8]
    codigo = raiz / "functions" / f".factura-{marca}"
    documento = con_consumidor_nuevo(raiz / "template.yaml")
    escritos = []
    for lid, unidad in unidades_con_consumidor_nuevo(raiz / "template.yaml", documento).items():
        propiedades = documento["Resources"][lid]["Properties"]
        ubicacion = Path(propiedades["Location"])
        if (funcion := unidad["Resources"].get(f"{NUEVO}Function")) is not None:  # the consumers' unit
            funcion["Properties"]["CodeUri"] = f"{'../' * len(ubicacion.parent.parts)}functions/{codigo.name}/"
        copia = ubicacion.with_name(f".{ubicacion.stem}-factura-{marca}.json")
        (raiz / copia).write_text(json.dumps(unidad, indent=1))
        escritos.append(raiz / copia)
        propiedades["Location"] = str(copia)
    ruta = raiz / f".template-factura-{marca}.json"
    codigo.mkdir()
    (codigo / "app.py").write_text(HANDLER)
    ruta.write_text(json.dumps(documento, indent=1))
    try:
        yield ruta
    finally:
        ruta.unlink()
        for escrito in escritos:
            escrito.unlink()
        shutil.rmtree(codigo)
