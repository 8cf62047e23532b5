"""The most one message or event may weigh, per AWS destination, written once (checked 2026-12-04).

Since 2026-01-29 SQS, EventBridge and Lambda's asynchronous invocations (SQS event source mappings
included) take payloads up to 1 MiB; SNS still takes 256 KiB, and a Step Functions execution's
input 256 KiB. What enforces each:

- SQS: a dead letter's copy (``mercadofresco.consumer.queues``) keeps the whole body when body and
  attributes fit, and every queue of ``template.yaml`` sets ``MaximumMessageSize`` to this limit
  (a queue created before 2026 keeps 256 KiB until its attribute is set; a test keeps them equal).
- EventBridge: the outbox relay (``mercadofresco.outbox.config``) keeps its calls within the
  workflow's input, smaller than what EventBridge now takes.
- SNS: nothing here cuts for it; a queue the confirmation topic feeds receives at most this much,
  so a dead letter of such a message always fits SQS's limit whole.
"""

from __future__ import annotations

# SQS: the body plus every message attribute's name, type and value (MaximumMessageSize's ceiling).
SQS_MESSAGE_MAX_BYTES = 1_048_576
# EventBridge PutEvents: the entries of one call together (and so one entry).
EVENTBRIDGE_PUT_EVENTS_MAX_BYTES = 1_048_576
# SNS Publish: the message plus its attributes.
SNS_MESSAGE_MAX_BYTES = 262_144
# Step Functions: an execution's input (and any state's data).
STEP_FUNCTIONS_INPUT_MAX_BYTES = 262_144
