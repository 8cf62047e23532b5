"""The lesson's nouns: orders, order requests, the order-state projection, idempotency keys.

The mechanism packages (``idempotency``, ``retry``, ``circuit_breaker``, ``http``, ``consumer``,
``outbox``) know nothing of an order; this package is where MercadoFresco's own words live, in
the lesson's Spanish. Like ``outbox``, this ``__init__`` imports no driver: the modules that
write to PostgreSQL (``pedidos``, ``solicitudes``, ``proyeccion``) are imported by name.
"""
