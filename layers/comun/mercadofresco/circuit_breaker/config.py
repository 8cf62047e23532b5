"""The breaker's parameters and why their defaults (see also ``layers/comun/README.md``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    """When a dependency's breaker opens, for how long, and how it probes.

    Parameters
    ----------
    fallos_seguidos:
        Consecutive failures that open it, whatever the rate: the lesson's 20 ("if the gateway
        has failed 20 times in a row, call 21 will fail too"). Catches a slow trickle of failures
        too sparse for the rate window.
    tasa_fallos:
        Failure ratio over the window that opens it (0.5: most calls fail, the provider is sick).
    minimo_llamadas:
        Calls the window must hold before the rate counts: 3 failures out of 4 calls is noise.
    ventana_s / cubetas:
        The rate's sliding window, kept as ``cubetas`` time buckets (30 s in 10 buckets of 3 s:
        old failures fall out within 3 s; one hash field per bucket).
    apertura_base_s / apertura_max_s:
        Open for ``base * 2**(trips-1)`` seconds, capped. 30 s is the lesson's typical outage; the
        5 min cap matches the ERP consumer's 300 s deferral, so a long outage is probed every 5 min.
    reserva_sonda_s:
        How long the half-open probe reservation lives. Must exceed the guarded call's worst case
        (connect 2 s + read 10 s); when the probing process dies, another may probe after it.
    fallos_seguidos_local / reintento_compartido_s:
        Degraded mode, when Valkey is unreachable: a process-local breaker opens after this many
        consecutive failures (one process sees few calls, so a lower bar), and Valkey is tried
        again only every ``reintento_compartido_s`` so a dead Valkey costs one timeout per period.
    """

    fallos_seguidos: int = 20
    tasa_fallos: float = 0.5
    minimo_llamadas: int = 20
    ventana_s: float = 30.0
    cubetas: int = 10
    apertura_base_s: float = 30.0
    apertura_max_s: float = 300.0
    reserva_sonda_s: float = 15.0
    fallos_seguidos_local: int = 5
    reintento_compartido_s: float = 5.0

    def __post_init__(self) -> None:
        if self.fallos_seguidos < 1 or self.minimo_llamadas < 1 or self.cubetas < 1:
            raise ValueError("fallos_seguidos, minimo_llamadas and cubetas must be >= 1")
        if not 0 < self.tasa_fallos <= 1:
            raise ValueError(f"tasa_fallos must be in (0, 1], got {self.tasa_fallos}")
        if not 0 < self.apertura_base_s <= self.apertura_max_s:
            raise ValueError("need 0 < apertura_base_s <= apertura_max_s")
        if self.ventana_s <= 0 or self.reserva_sonda_s <= 0:
            raise ValueError("ventana_s and reserva_sonda_s must be > 0")

    @property
    def cubeta_ms(self) -> int:
        """Width of one rate bucket in milliseconds."""
        return max(1, int(self.ventana_s * 1000 / self.cubetas))
