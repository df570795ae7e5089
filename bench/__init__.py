"""Benchmarks for the app: a load generator speaking Streamlit's websocket protocol (see docs/performance.md).

Nothing here runs in the test suite's timing. Entry points: `python -m bench` (the phases), `python -m
bench.replicas` (HAProxy), `python -m bench.soak`, `python -m bench.first_load`, and the micro-benchmarks
`python -m bench.bench_rnn`, `bench.bench_scaling`, `bench.bench_training`, `bench.bench_gpt`.
"""
