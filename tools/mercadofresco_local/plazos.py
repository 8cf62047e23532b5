"""What the application derives from a function's bounds, for the emulator's hooks.

:class:`sam_emulator.runtime.LocalRuntime` knows nothing of the layer: the local run hands it
these two functions (its ``comprimir_funcion`` and ``entornos_nuevos``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sam_emulator.functions import Function


def comprimir_plazos(funcion: Function, compresion: float) -> None:
    """Divide the bounds a compressed ``Wait`` must keep its ratio to: leases, HTTP timeouts, the breaker's periods.

    The workflow waits past a lease (``EsperarFinBloqueo``) and runs under ``TimeoutSeconds``;
    both are compressed (:class:`MotoServer` ``comprimir_esperas``), so the leases they outlast
    are too: a declared ``IDEMPOTENCY_LEASE_S`` becomes ``ceil(lease / compresion)``. A live
    invocation must still end well inside its compressed lease, so every ``*_TIMEOUT_S`` HTTP
    timeout is divided too. The function's own ``Timeout``
    (and ``FUNCTION_TIMEOUT_S``) stays real: the layer keeps fixed margins before it (the relay's
    5 s, the consumers' "too little time left"), and a timeout at a chosen point is what the
    chaos plan injects anyway (:mod:`sam_emulator.deaths`).
    """
    from mercadofresco.circuit_breaker.config import PERIODS, BreakerConfig, env_variable
    from mercadofresco.idempotency.config import ENV_LEASE_S

    entorno = funcion.environment
    # Only a lease the template declares (Mappings.Plazos, through the environment): it is the value
    # the Waits were checked against (rule E9114, which also requires one on every function a Wait
    # asks again). Deriving one here would be a second derivation, free to differ from the layer's.
    if ENV_LEASE_S in entorno:
        entorno[ENV_LEASE_S] = str(max(1, math.ceil(float(entorno[ENV_LEASE_S]) / compresion)))
    for clave, valor in list(entorno.items()):
        if clave.endswith("_TIMEOUT_S") and clave != "FUNCTION_TIMEOUT_S":
            entorno[clave] = f"{float(valor) / compresion:.3f}"
    # The breaker's open period is a wait too: a compensation retried on CircuitoAbierto (compressed Retry
    # and EsperarFinBloqueo) must still outlast it, as in AWS. Its rate window stays: it measures traffic,
    # whose rate is not compressed.
    interruptor = BreakerConfig.from_env(entorno)
    for periodo in PERIODS:
        if periodo != "window_s":
            entorno[env_variable(periodo)] = f"{getattr(interruptor, periodo) / compresion:.3f}"


def entornos_nuevos() -> None:
    """Forget the layer's per-execution-environment caches, as new Lambda containers would.

    A second local run in the same process (the e2e suite) has another moto port and another
    database schema: the layer's one public reset forgets its clients, secret provider,
    configuration and pools (closed first).
    """
    from mercadofresco.process_cache import reset_environment

    reset_environment()
