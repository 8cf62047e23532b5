"""MercadoFresco's shared Lambda layer: the reliability mechanisms every function uses.

Subpackages, one capability each (importing this package imports no driver):

- ``idempotency``     the three-state idempotency record in DynamoDB
- ``retry``           backoff with full jitter, error classification, retry budget
- ``circuit_breaker`` the breaker whose state all concurrent consumers share in Valkey
- ``http``            the one HTTP client for external providers (timeouts, retries, breaker)
- ``consumer``        SQS consumer mechanics: envelopes, tolerant reader, DLQ with reason, deferral
- ``outbox``          the transactional outbox on PostgreSQL and its relay
- ``valkey``          the Valkey/Redis client (TLS, AUTH from Secrets Manager, short timeouts)
- ``aws``             boto3 clients built with the project's SDK retry policy
- ``errors``          the domain errors the state machine's Retry/Catch match by name
- ``dlq``             how a consumer attaches its failure reason to a dead letter
"""
