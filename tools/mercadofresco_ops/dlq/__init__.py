"""``mf-dlq``: the DLQ runbook's tools (inspect, classify, reprocess at a bounded rate, verify).

The classifier and the message parsing are pure functions over message dicts (as SQS
returns them); the CLI is a thin sampler/mover around them. See ``runbooks/dlq.md``.
"""
