"""Operator commands for the on-call: DLQ tools and the circuit breaker."""
