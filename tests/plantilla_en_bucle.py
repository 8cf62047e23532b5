"""A copy of a template whose consumers are written once, with ``Fn::ForEach`` (decision 0130), for tests.

The consumers are the template model's (a function fed by SQS, ``<Name>Function``); every resource whose
logical id names one of them (``Cola<Name>``, ``<Name>FunctionRole``, ``Simulador<Name>Url``...) moves into
a loop, its id written ``Cola${Instancia}``. Resources of one shape across consumers share one loop: what
differs between them is a ``Mappings`` value read with ``!FindInMap [Bucle, !Ref Instancia, Vn]`` (a string or a
list of strings, as the decision allows), and a ``Fn::Sub`` text that differs in one stretch reads that
stretch from the mapping. A resource whose instances differ otherwise (other keys, another condition, a
reference to another parameter) gets a loop of its own over its one consumer. References to looped
resources are written as the decision says the loops must write them (``!GetAtt [!Sub "X${Instancia}", Arn]``,
``Ref: !Sub "X${Instancia}"``, ``${X${Instancia}.Arn}`` in a ``Fn::Sub``); everything else is kept as written.

So the copy is what a restructure into loops would produce, derived from the current template rather
than written by hand (which would drift from it): the same resources under the same ids once expanded.
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

from template_model import Template, consumers

LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"
MAPA = "Bucle"
IDENTIFICADOR = "Instancia"  # not a name the template's own Fn::Sub variables use (a loop would replace it)
_INTRINSECAS = ("Ref", "Condition")  # besides every Fn::*
_REFERENCIA_SUB = re.compile(r"\$\{([A-Za-z0-9]+)([.}])")
_NUMEROS = itertools.count()  # one name per mapping value, across every loop of the copy


class _NoSePliega(Exception):
    """The instances of a resource differ in a way one loop body cannot hold."""


def consumidores_en_bucle(plantilla: Template) -> dict[str, Any]:
    """The template's document with its consumers' resources written in ``Fn::ForEach`` loops."""
    documento = copy.deepcopy(plantilla.doc)
    nombres = [c.function.removesuffix("Function") for c in consumers(plantilla) if c.function.endswith("Function")]
    recursos = documento["Resources"]
    grupos: dict[str, dict[str, str]] = {}  # id pattern -> consumer name -> logical id
    for lid in recursos:
        for nombre in nombres:
            if encontrado := re.search(rf"{nombre}(?=[A-Z0-9]|$)", lid):
                grupos.setdefault(lid[: encontrado.start()] + "${" + IDENTIFICADOR + "}" + lid[encontrado.end() :], {})[
                    nombre
                ] = lid
                break
    patron_de = {lid: patron for patron, miembros in grupos.items() for lid in miembros.values()}
    # A unit's parameters named for a consumer (ErpName, ErpDlqArn: what its parent hands each) are referenced as the
    # loops reference their own resources: Ref: !Sub "${Instancia}Name".
    for parametro in documento.get("Parameters") or {}:
        for nombre in nombres:
            if encontrado := re.search(rf"{nombre}(?=[A-Z0-9]|$)", parametro):
                patron_de[parametro] = (
                    f"{parametro[: encontrado.start()]}${{{IDENTIFICADOR}}}{parametro[encontrado.end() :]}"
                )
                break
    mapa: dict[str, dict[str, Any]] = {}
    nuevos: dict[str, Any] = {}
    for lid, recurso in recursos.items():
        if lid not in patron_de:
            nuevos[lid] = recurso
            continue
        patron = patron_de[lid]
        miembros = grupos[patron]
        if lid != next(iter(miembros.values())):
            continue  # already in its group's loop
        cuerpos = {n: _con_patrones(recursos[m], n, patron_de) for n, m in miembros.items()}
        try:
            if len(cuerpos) < 2:
                raise _NoSePliega(patron)
            variables: dict[str, dict[str, Any]] = {n: {} for n in cuerpos}
            cuerpo = _recurso(cuerpos, variables)
        except _NoSePliega:
            for nombre, propio in cuerpos.items():
                nuevos[f"Fn::ForEach::{_alfanumerico(patron)}{nombre}"] = [IDENTIFICADOR, [nombre], {patron: propio}]
            continue
        for nombre, valores in variables.items():
            mapa.setdefault(nombre, {}).update(valores)
        nuevos[f"Fn::ForEach::{_alfanumerico(patron)}"] = [IDENTIFICADOR, list(cuerpos), {patron: cuerpo}]
    documento["Resources"] = nuevos
    documento.setdefault("Mappings", {})[MAPA] = mapa
    transformaciones = documento.get("Transform") or []
    transformaciones = transformaciones if isinstance(transformaciones, list) else [transformaciones]
    documento["Transform"] = [LANGUAGE_EXTENSIONS, *(t for t in transformaciones if t != LANGUAGE_EXTENSIONS)]
    return documento


def _alfanumerico(texto: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", texto.replace("${" + IDENTIFICADOR + "}", "X"))


def _con_patrones(nodo: Any, nombre: str, patron_de: dict[str, str]) -> Any:
    """``nodo`` with every reference to a looped resource of consumer ``nombre`` written with ``${Instancia}``."""

    def propio(lid: Any) -> str | None:
        return patron_de.get(lid) if isinstance(lid, str) and nombre in lid else None

    if isinstance(nodo, list):
        return [_con_patrones(x, nombre, patron_de) for x in nodo]
    if not isinstance(nodo, dict):
        return nodo
    if set(nodo) == {"Ref"} and (patron := propio(nodo["Ref"])):
        return {"Ref": {"Fn::Sub": patron}}
    if set(nodo) == {"Fn::GetAtt"}:
        destino, atributo = (
            nodo["Fn::GetAtt"] if isinstance(nodo["Fn::GetAtt"], list) else (nodo["Fn::GetAtt"].split(".", 1))
        )
        if patron := propio(destino):
            return {"Fn::GetAtt": [{"Fn::Sub": patron}, atributo]}
    if set(nodo) == {"Fn::Sub"}:
        argumento = nodo["Fn::Sub"]
        texto, variables = (argumento, None) if isinstance(argumento, str) else argumento
        texto = _REFERENCIA_SUB.sub(lambda m: "${" + (propio(m[1]) or m[1]) + m[2], texto)
        if variables is None:
            return {"Fn::Sub": texto}
        return {"Fn::Sub": [texto, _con_patrones(variables, nombre, patron_de)]}
    return {k: _con_patrones(v, nombre, patron_de) for k, v in nodo.items()}


def _recurso(cuerpos: dict[str, dict[str, Any]], variables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One body for every instance of a resource: its attributes equal, its Properties unified."""
    claves = {tuple(c) for c in cuerpos.values()}
    if len(claves) != 1:
        raise _NoSePliega("attributes")
    (orden,) = claves
    cuerpo = {}
    for clave in orden:
        valores = {n: c[clave] for n, c in cuerpos.items()}
        cuerpo[clave] = _unificar(valores, variables) if clave == "Properties" else _igual(valores)
    return cuerpo


def _igual(valores: dict[str, Any]) -> Any:
    primero, *resto = valores.values()
    if any(v != primero for v in resto):
        raise _NoSePliega("differs")
    return primero


def _unificar(valores: dict[str, Any], variables: dict[str, dict[str, Any]]) -> Any:
    """One node for every instance's: equal parts kept, differing strings (or lists of them) from the mapping."""
    primero, *resto = valores.values()
    if all(v == primero for v in resto):
        return primero
    if all(isinstance(v, dict) for v in valores.values()):
        claves = {tuple(v) for v in valores.values()}
        if len(claves) != 1:
            raise _NoSePliega("keys")
        (orden,) = claves
        if len(orden) == 1 and (orden[0].startswith("Fn::") or orden[0] in _INTRINSECAS):
            return _intrinseca(orden[0], {n: v[orden[0]] for n, v in valores.items()}, variables)
        return {k: _unificar({n: v[k] for n, v in valores.items()}, variables) for k in orden}
    if all(isinstance(v, list) for v in valores.values()) and len({len(v) for v in valores.values()}) == 1:
        return [_unificar({n: v[i] for n, v in valores.items()}, variables) for i in range(len(primero))]
    if all(_mapeable(v) for v in valores.values()):
        return _del_mapa(valores, variables)
    raise _NoSePliega("shape")


def _mapeable(valor: Any) -> bool:
    """What a ``Mappings`` value may be: a string, or a list of strings."""
    return isinstance(valor, str) or (isinstance(valor, list) and all(isinstance(x, str) for x in valor))


def _del_mapa(valores: dict[str, Any], variables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    nombre = f"V{next(_NUMEROS)}"
    for instancia, valor in valores.items():
        variables[instancia][nombre] = valor
    return {"Fn::FindInMap": [MAPA, {"Ref": IDENTIFICADOR}, nombre]}


def _intrinseca(funcion: str, argumentos: dict[str, Any], variables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if funcion == "Fn::Sub":
        return _sub(argumentos, variables)
    if funcion == "Fn::If":
        condicion = _igual({n: a[0] for n, a in argumentos.items()})
        ramas = [_unificar({n: a[i] for n, a in argumentos.items()}, variables) for i in (1, 2)]
        return {"Fn::If": [condicion, *ramas]}
    if funcion == "Fn::Join":
        separador = _igual({n: a[0] for n, a in argumentos.items()})
        return {"Fn::Join": [separador, _unificar({n: a[1] for n, a in argumentos.items()}, variables)]}
    raise _NoSePliega(funcion)  # a reference, a condition, a map key: the same in every instance, or no loop


def _sub(argumentos: dict[str, Any], variables: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A ``Fn::Sub`` whose texts differ in one stretch without placeholders: that stretch read from the mapping."""
    textos = {n: a if isinstance(a, str) else a[0] for n, a in argumentos.items()}
    propias = {n: {} if isinstance(a, str) else a[1] for n, a in argumentos.items()}
    if len({tuple(v) for v in propias.values()}) != 1:
        raise _NoSePliega("Fn::Sub variables")
    claves = next(iter(propias.values()))
    sustituciones = {k: _unificar({n: v[k] for n, v in propias.items()}, variables) for k in claves}
    primero, *resto = textos.values()
    if any(t != primero for t in resto):
        lista = list(textos.values())
        prefijo = _comun(lista)
        sufijo = _comun([t[len(prefijo) :][::-1] for t in lista])[::-1]
        medios = {n: t[len(prefijo) : len(t) - len(sufijo)] for n, t in textos.items()}
        if prefijo.count("${") != prefijo.count("}") or any("$" in m or "{" in m or "}" in m for m in medios.values()):
            raise _NoSePliega("Fn::Sub text")
        marcador = f"Bucle{next(_NUMEROS)}"
        sustituciones[marcador] = _del_mapa(medios, variables)
        primero = f"{prefijo}${{{marcador}}}{sufijo}"
    return {"Fn::Sub": [primero, sustituciones] if sustituciones else primero}


def _comun(textos: list[str]) -> str:
    """The longest prefix of every text."""
    corto = min(textos, key=len)
    for i, letra in enumerate(corto):
        if any(t[i] != letra for t in textos):
            return corto[:i]
    return corto
