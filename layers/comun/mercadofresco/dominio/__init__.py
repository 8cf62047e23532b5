"""The lesson's nouns: orders, order requests, the order-state projection, idempotency keys, values, flow errors.

The mechanism packages (``idempotency``, ``retry``, ``circuit_breaker``, ``http``, ``consumer``,
``outbox``) know nothing of an order; this package is where MercadoFresco's own words live, in
the lesson's Spanish. Like ``outbox``, this ``__init__`` imports no driver: the modules that
write to PostgreSQL (``pedidos``, ``solicitudes``, ``proyeccion``) are imported by name, like ``claves``
(the idempotency keys), ``valores`` (an order's values) and ``errores`` (the workflow's own error names).
"""
