"""OpenTelemetry in and out: runs exported as OTLP traces, OTLP traces ingested as runs."""
