"""`kubectl kcache monitor`: a read-only process that keeps a snapshot current from watches, re-evaluates the
doctor's checks, the fleet status and the serving pods' hit rate on change (coalesced), and serves them as
Prometheus metrics, the doctor's HTML page, and health endpoints; with --events it also records Kubernetes
Events when a finding appears or clears (its only writes).

Modules: `source` (the one adapter over the informer code), `evaluate` (one pass over a snapshot), `metrics`
(Prometheus text), `events` (the Event recorder), `run` (the loop, its readiness and its routes; the process,
its liveness and the HTTP server are `runtime`'s).
"""
