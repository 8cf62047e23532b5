"""Least privilege proven by execution: record the AWS requests a run makes, evaluate them against the roles.

- :mod:`registro`: the recorder (a botocore hook; :func:`sam_emulator.principal.acting_as` names the principal);
- :mod:`acciones`: an API call as IAM sees it (action, ARN, condition keys);
- :mod:`evaluador`: AWS's policy evaluation logic for the operators the template uses;
- :mod:`roles`: each function's and the state machine's policies from the transformed template;
- :mod:`comprobacion`: requests x roles -> denied requests and permissions never used.
"""
