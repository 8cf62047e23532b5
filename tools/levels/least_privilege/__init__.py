"""Least privilege proven by execution: record the AWS requests a run makes, decide them as AWS would.

- :mod:`registro`: the recorder (a botocore hook; :func:`sam_emulator.principal.acting_as` names the
  principal; what AWS does with no code calling is reported by the emulator);
- :mod:`acciones`: an API call as IAM sees it (action, ARN, condition keys), and what AWS requests
  because of it (KMS for an encrypted resource, a service's delivery, Lambda's log writes);
- :mod:`evaluador`: the decision, by ``@cloud-copilot/iam-simulate`` (:mod:`simulador` runs it,
  :mod:`limites` keeps out where it departs from AWS's documented rules);
- :mod:`roles` and :mod:`recursos`: each principal's role and each resource's own policy (and key) from
  the transformed template, resolved with the run's ids;
- :mod:`comprobacion`: requests x account -> denied requests and grants never used.
"""
