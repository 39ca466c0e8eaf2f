"""Operations telemetry: request IDs, JSON logs, Prometheus metrics and the per-process flusher thread."""
