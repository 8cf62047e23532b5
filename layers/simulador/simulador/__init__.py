"""Sandbox providers: the payment gateway, the ERP and the e-mail providers as MercadoFresco sees them.

One request -> answer logic (:mod:`.proveedores`) serves two hosts: the local run's loopback
stand-ins (``tools/mercadofresco_local/proveedores.py``, state in memory) and the deployed
``simulador-*`` Lambda function URLs (``functions/simulador``, state and ``Idempotency-Key``
replays in a DynamoDB table, :mod:`.dynamodb`). So a test that passes locally exercised the
same answers a sandbox deploy gives.
"""

from __future__ import annotations

from simulador.proveedores import RUTAS, Almacen, Respuesta, Simulador

__all__ = ["RUTAS", "Almacen", "Respuesta", "Simulador"]
