"""The relay's and the clean-up's knobs, with the lesson's numbers as defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass

PUT_EVENTS_MAX_ENTRADAS = 10  # EventBridge PutEvents hard limit per call
PUT_EVENTS_MAX_BYTES = 256 * 1024  # PutEvents hard limit per call (and so per entry)


@dataclass(frozen=True, slots=True)
class OutboxConfig:
    """How the relay claims, sends and gives up, and how the clean-up deletes.

    ``drenaje_s`` is how long one invocation keeps draining (most of the scheduled
    minute); ``sondeo_s`` the pause when there is nothing to send. A row rejected
    ``intentos_max`` times in total is parked with its reason instead of blocking the rest.
    """

    bus_name: str
    source: str = "mercadofresco.tienda"
    lote_max: int = 100
    entradas_por_llamada: int = PUT_EVENTS_MAX_ENTRADAS
    bytes_por_llamada: int = PUT_EVENTS_MAX_BYTES
    reenvios_por_lote: int = 2
    intentos_max: int = 8
    drenaje_s: float = 50.0
    margen_s: float = 5.0
    sondeo_s: float = 1.0
    espera_bloqueo_s: float = 0.02
    espera_reenvio_s: float = 0.05
    espera_tras_error_s: float = 1.0
    retencion_dias: int = 7
    lote_limpieza: int = 1000

    def __post_init__(self) -> None:
        if not self.bus_name:
            raise ValueError("bus_name is required (EVENT_BUS_NAME)")
        if not 1 <= self.entradas_por_llamada <= PUT_EVENTS_MAX_ENTRADAS:
            raise ValueError(f"entradas_por_llamada must be 1..{PUT_EVENTS_MAX_ENTRADAS}")
        if not 1 <= self.bytes_por_llamada <= PUT_EVENTS_MAX_BYTES:
            raise ValueError(f"bytes_por_llamada must be 1..{PUT_EVENTS_MAX_BYTES}")
        if self.lote_max < 1 or self.lote_limpieza < 1 or self.intentos_max < 1 or self.reenvios_por_lote < 0:
            raise ValueError("lote_max, lote_limpieza and intentos_max must be >= 1, reenvios_por_lote >= 0")
        if self.retencion_dias < 1:
            raise ValueError("retencion_dias must be >= 1")

    @classmethod
    def from_env(cls) -> OutboxConfig:
        """Read ``EVENT_BUS_NAME`` (required) and the optional ``OUTBOX_*`` overrides."""
        extra: dict[str, float | int] = {}
        for campo, tipo in (("drenaje_s", float), ("lote_max", int), ("intentos_max", int), ("retencion_dias", int)):
            valor = os.environ.get(f"OUTBOX_{campo.upper()}")
            if valor:
                extra[campo] = tipo(valor)
        return cls(bus_name=os.environ.get("EVENT_BUS_NAME", ""), **extra)  # type: ignore[arg-type]
