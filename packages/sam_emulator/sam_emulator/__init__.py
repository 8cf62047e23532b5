"""A SAM template run on moto in one process, with what moto does not run.

Template provisioning, the functions' handlers loaded as Lambda loads them, SQS event source
mappings, EventBridge Pipes, schedules, DynamoDB TTL, the Lambda platform's own faults (deaths,
timeouts, throttling) and private PostgreSQL/Redis servers. It knows nothing of the application
it runs: everything it does is read from the template.
"""
