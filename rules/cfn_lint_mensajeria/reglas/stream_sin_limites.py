"""E9108: a stream source (Pipe or Lambda mapping) without retry limits or a DLQ."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import as_int, consumers

_STREAM_PARAMS = ("DynamoDBStreamParameters", "KinesisStreamParameters")


def _settings(consumer) -> tuple[dict, bool]:
    """(retry settings, has a DLQ) of a stream consumer, whichever spelling it uses."""
    if consumer.kind == "pipe":
        source = consumer.mapping.get("SourceParameters") or {}
        params = next((source[k] for k in _STREAM_PARAMS if isinstance(source.get(k), dict)), {})
        return params, bool((params.get("DeadLetterConfig") or {}).get("Arn"))
    dest = ((consumer.mapping.get("DestinationConfig") or {}).get("OnFailure") or {}).get("Destination")
    return consumer.mapping, bool(dest)


class StreamSinLimites(CloudFormationLintRule):
    """Stream sources retry a failing record forever by default and block the shard."""

    id = "E9108"
    shortdesc = "Stream source without retry limits or DLQ"
    description = (
        "A DynamoDB/Kinesis stream read by a Pipe or Lambda needs MaximumRetryAttempts, "
        "MaximumRecordAgeInSeconds (both default to infinite) and a dead-letter destination."
    )
    source_url = "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-dynamodb.html"
    tags = ("pipes", "streams", "mensajeria")

    def match(self, cfn):
        matches = []
        for consumer in consumers(cfn.template, sqs=False):
            settings, has_dlq = _settings(consumer)
            missing = [
                k
                for k in ("MaximumRetryAttempts", "MaximumRecordAgeInSeconds")
                if as_int(settings.get(k)) in (None, -1)
            ]
            if not has_dlq:
                missing.append("a DLQ (DeadLetterConfig / DestinationConfig.OnFailure)")
            if missing:
                message = (
                    f"Stream consumer {consumer.resource} on {consumer.source} lacks {', '.join(missing)}: "
                    "set them (e.g. MaximumRetryAttempts 3, MaximumRecordAgeInSeconds 3600, an SQS DLQ), or one "
                    "failing record is retried forever and blocks its shard."
                )
                matches.append(RuleMatch(list(consumer.path), message))
        return matches
