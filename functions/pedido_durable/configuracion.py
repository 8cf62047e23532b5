"""What the durable order saga reads from its environment, once, at the cold start.

The time bounds are the state machine's, from the same ``Mappings.Plazos`` entries (the template
component sets them with ``!FindInMap``), so both engines wait and lease alike:

- ``IDEMPOTENCY_LEASE_S`` (the layer reads it): the lease of ``cobro:``/``reembolso:{pedido_id}``,
  ``Plazos.CobroFunction.LeaseS``; it must outlive this function's ``Timeout``, which is
  ``Plazos.CobroFunction.TimeoutS`` because the charge runs inside this function's invocation;
- ``RECLAMO_LEASE_S``: the lease of the claim ``pedido:{pedido_id}``, ``Plazos.ReclamoFunction.LeaseS``,
  above the execution's bound (``DurableConfig.ExecutionTimeout`` = ``Plazos.ProcesarPedido.TimeoutSeconds``);
- ``RECONSULTA_WAIT_S``: the wait before asking again about an unknown outcome,
  ``Plazos.ProcesarPedido.EsperarFinBloqueo``, past the charge's lease.

The relations between them are the template's to keep (rule E9114 checks the state machine's; the
durable function's component adds its own), as no handler reads a lease (the idempotency store does).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

VARIABLES = {
    "reclamo_lease_s": "RECLAMO_LEASE_S",
    "reconsulta_wait_s": "RECONSULTA_WAIT_S",
    "cola_stock_url": "COLA_STOCK_URL",
    "cola_pedidos_url": "COLA_PEDIDOS_URL",
    "cola_pedidos_fallidos_url": "COLA_PEDIDOS_FALLIDOS_URL",
    "tema_pedido_confirmado_arn": "TEMA_PEDIDO_CONFIRMADO_ARN",
    "bus": "EVENT_BUS_NAME",
    "nombre_funcion": "AWS_LAMBDA_FUNCTION_NAME",  # set by Lambda: the DLQ's mf-funcion names this function
}


@dataclass(frozen=True, slots=True)
class Configuracion:
    """The saga's resources and time bounds; every one required (a missing one fails the cold start)."""

    reclamo_lease_s: int
    reconsulta_wait_s: int
    cola_stock_url: str
    cola_pedidos_url: str
    cola_pedidos_fallidos_url: str
    tema_pedido_confirmado_arn: str
    bus: str
    nombre_funcion: str

    def __post_init__(self) -> None:
        if self.reclamo_lease_s <= 0 or self.reconsulta_wait_s <= 0:
            raise ValueError("RECLAMO_LEASE_S and RECONSULTA_WAIT_S must be positive seconds")

    @classmethod
    def from_env(cls) -> Configuracion:
        valores: dict[str, str] = {}
        for campo, variable in VARIABLES.items():
            valor = os.environ.get(variable, "").strip()
            if not valor:
                raise ValueError(f"environment variable {variable} ({campo} of the order saga) is not set")
            valores[campo] = valor
        try:
            plazos = {c: int(valores.pop(c)) for c in ("reclamo_lease_s", "reconsulta_wait_s")}
        except ValueError as exc:
            raise ValueError(f"RECLAMO_LEASE_S and RECONSULTA_WAIT_S must be whole seconds: {exc}") from None
        return cls(**plazos, **valores)
