"""The Lambda platform's own faults, as the local run raises them to a function's caller.

A caller of a Lambda function (a Step Functions ``lambda:invoke`` task, an SQS event source
mapping, a Pipe, a schedule) sees these errors when the *platform* fails, not the handler.
Each class carries ``error_type``: the name AWS reports, which ``moto_lambda.Registry.invoke``
puts in the errored result's ``errorType`` so the state machine's ``Retry``/``Catch`` match it
exactly as on AWS:

- :class:`LambdaTimeout` — ``Sandbox.Timedout``. AWS Lambda developer guide, "Configure Lambda
  function timeout": the invocation is stopped when it runs past ``Timeout``; AWS Step Functions
  developer guide, "Error handling in Step Functions" (error names) lists ``Sandbox.Timedout``
  for a Lambda task whose function timed out.
- :class:`LambdaCrashed` — ``Lambda.Unknown``. Same Step Functions page: "Lambda.Unknown" is
  the error when the function's runtime process died (out of memory, crash) without an
  error payload.
- :class:`LambdaThrottled` — ``Lambda.TooManyRequestsException``. Lambda developer guide,
  "Lambda function scaling" / "Configuring reserved concurrency": invocations beyond a
  function's ``ReservedConcurrentExecutions`` are throttled (HTTP 429,
  ``TooManyRequestsException``); Step Functions reports it as ``Lambda.TooManyRequestsException``;
  an SQS event source mapping leaves a throttled batch in the queue, to be received again
  after the visibility timeout ("Using Lambda with Amazon SQS", scaling and throttling).

:class:`ProcessKilled` is different: it is raised *inside* the handler's thread, at the
invocation's next I/O boundary, to emulate a runtime process that is gone (see
:mod:`sam_emulator.deaths`). It derives from ``BaseException`` so that handler code,
which catches ``Exception``, cannot swallow it; the local run converts it to the
caller-visible :class:`LambdaCrashed` or :class:`LambdaTimeout`.
"""

from __future__ import annotations


class PlatformFault(Exception):
    """A Lambda platform error as the caller sees it; ``error_type`` is AWS's name for it."""

    error_type = "Lambda.ServiceException"


class LambdaTimeout(PlatformFault):
    """The invocation ran past the function's ``Timeout`` and was stopped."""

    error_type = "Sandbox.Timedout"


class LambdaCrashed(PlatformFault):
    """The function's process died mid-invocation (no error payload)."""

    error_type = "Lambda.Unknown"


class LambdaThrottled(PlatformFault):
    """No concurrency left for the function (reserved concurrency reached)."""

    error_type = "Lambda.TooManyRequestsException"


class ProcessKilled(BaseException):
    """Raised inside a dead invocation at its next I/O boundary; handler code cannot catch it."""

    def __init__(self, fault: type[PlatformFault], detail: str = "") -> None:
        super().__init__(detail or fault.error_type)
        self.fault = fault
        self.error_type = fault.error_type
