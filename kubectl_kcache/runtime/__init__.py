"""What a long-running command (`monitor`, `reconcile`) is, apart from its own work: `process` (signals,
the heartbeat, liveness and readiness gathered from its parts) and `probes` (the one HTTP server)."""
