"""E9101: an SQS queue consumed by Lambda or a Pipe has no dead-letter queue."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import SQS_QUEUE, consumers, dead_letter_queues, path_to, redrive, resources


class ColaSinDlq(CloudFormationLintRule):
    """A consumed queue without RedrivePolicy retries a poison message until retention ends."""

    id = "E9101"
    shortdesc = "Consumed SQS queue without a DLQ"
    description = (
        "An SQS queue read by a Lambda event source mapping or a Pipe must have a RedrivePolicy "
        "(deadLetterTargetArn + maxReceiveCount); DLQs themselves are exempt."
    )
    source_url = (
        "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html"
    )
    tags = ("sqs", "dlq", "mensajeria")

    def match(self, cfn):
        template = cfn.template
        queues = resources(template, SQS_QUEUE)
        dlqs = dead_letter_queues(template)
        flagged = []
        for consumer in consumers(template, sqs=True):
            qid = consumer.source
            if qid not in queues or qid in dlqs or qid in flagged or redrive(template, queues[qid]):
                continue
            flagged.append(qid)
        return [
            RuleMatch(
                path_to(qid, "Properties") if "Properties" in queues[qid] else path_to(qid),
                f"Queue {qid} is consumed but has no RedrivePolicy: add one with deadLetterTargetArn "
                "(a DLQ with an ApproximateNumberOfMessagesVisible > 0 alarm) and maxReceiveCount "
                "(e.g. 4), or a poison message is retried until the retention period ends.",
            )
            for qid in flagged
        ]
