"""Benchmarks for the app: a load generator speaking Streamlit's websocket protocol (see docs/performance.md).

Nothing here runs in the test suite's timing; `python -m bench` and `python -m bench.replicas` are the
entry points.
"""
