"""E9102: a dead-letter queue has no ApproximateNumberOfMessagesVisible > 0 alarm."""

from __future__ import annotations

from cfnlint.rules import CloudFormationLintRule, RuleMatch

from cfn_lint_mensajeria.recursos import ALARM, as_int, dead_letter_queues_with_units, path_to, props, ref_id, resources

_METRIC = "ApproximateNumberOfMessagesVisible"


def _metrics(alarm: dict) -> list[dict]:
    """The metric definitions an alarm watches (plain or metric-math form)."""
    p = props(alarm)
    found = [p] if "MetricName" in p else []
    for query in p.get("Metrics") or []:
        metric = ((query or {}).get("MetricStat") or {}).get("Metric")
        if isinstance(metric, dict):
            found.append(metric)
    return found


def _fires_on_first_message(alarm: dict) -> bool:
    p = props(alarm)
    op, threshold = p.get("ComparisonOperator"), p.get("Threshold")
    threshold = as_int(threshold) if not isinstance(threshold, float) else threshold
    return (op == "GreaterThanThreshold" and threshold == 0) or (
        op == "GreaterThanOrEqualToThreshold" and threshold == 1
    )


def watched_dlqs(template: dict) -> set[str]:
    """Queues with an alarm that fires on the first visible message and notifies someone."""
    watched = set()
    for alarm in resources(template, ALARM).values():
        if not _fires_on_first_message(alarm) or not props(alarm).get("AlarmActions"):
            continue
        for metric in _metrics(alarm):
            if metric.get("MetricName") != _METRIC or metric.get("Namespace") != "AWS/SQS":
                continue
            for dim in metric.get("Dimensions") or []:
                if isinstance(dim, dict) and dim.get("Name") == "QueueName":
                    watched.add(ref_id(dim.get("Value")))
    return watched


class DlqSinAlarma(CloudFormationLintRule):
    """Nobody looks at a DLQ nobody is told about: it is paid work left undone."""

    id = "E9102"
    shortdesc = "DLQ without a visible-messages alarm"
    description = (
        "Every dead-letter queue needs an AWS::CloudWatch::Alarm on AWS/SQS "
        "ApproximateNumberOfMessagesVisible > 0 (dimension QueueName) with an AlarmActions target."
    )
    source_url = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html"
    tags = ("sqs", "dlq", "alarm", "mensajeria")

    def match(self, cfn):
        template = cfn.template
        watched = watched_dlqs(template)
        return [
            RuleMatch(
                path_to(qid),
                f"DLQ {qid} (dead letters from {', '.join(sorted(set(sources)))}) has no alarm: add an "
                "AWS::CloudWatch::Alarm on AWS/SQS ApproximateNumberOfMessagesVisible, dimension QueueName "
                f"!GetAtt {qid}.QueueName, GreaterThanThreshold 0, Period 300, AlarmActions to the alerts topic.",
            )
            for qid, sources in sorted(dead_letter_queues_with_units(cfn).items())
            if qid not in watched
        ]
