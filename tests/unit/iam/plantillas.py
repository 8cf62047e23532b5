"""A transformed template with one grant taken out: what a test removes to see the check fail."""

from __future__ import annotations

import copy
from typing import Any


def sin_accion(transformada: dict[str, Any], rol: str, sid: str, accion: str) -> dict[str, Any]:
    """``transformada`` with ``accion`` taken out of statement ``sid`` of ``rol``'s inline policies."""
    copia = copy.deepcopy(transformada)
    for politica in copia["Resources"][rol]["Properties"]["Policies"]:
        for sentencia in politica["PolicyDocument"]["Statement"]:
            if isinstance(sentencia, dict) and sentencia.get("Sid") == sid:
                sentencia["Action"] = [a for a in sentencia["Action"] if a != accion]
    return copia


def sin_sentencia(transformada: dict[str, Any], recurso: str, propiedad: str, sid: str) -> dict[str, Any]:
    """``transformada`` without statement ``sid`` of ``recurso``'s policy document ``propiedad`` (``KeyPolicy``...)."""
    copia = copy.deepcopy(transformada)
    documento = copia["Resources"][recurso]["Properties"][propiedad]
    documento["Statement"] = [s for s in documento["Statement"] if s.get("Sid") != sid]
    return copia


def sin_sentencia_de_rol(transformada: dict[str, Any], rol: str, sid: str) -> dict[str, Any]:
    """``transformada`` without statement ``sid`` of ``rol``'s inline policies."""
    copia = copy.deepcopy(transformada)
    for politica in copia["Resources"][rol]["Properties"]["Policies"]:
        documento = politica["PolicyDocument"]
        documento["Statement"] = [
            s for s in documento["Statement"] if not (isinstance(s, dict) and s.get("Sid") == sid)
        ]
    return copia
