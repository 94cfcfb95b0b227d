"""The infer stage on a Ray cluster: `run.py` (entry from the Run), `driver.py` (the one store
writer: hands chunks to workers, records every outcome, replaces dead workers), `worker.py` (a
model replica with its own frame decoding), `limiter.py` (one cluster-wide bound and rate for API
models), `cluster.py` (start, join or reach a cluster). docs/scale-out.md."""
