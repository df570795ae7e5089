"""Numbers out of run records, shared by every phase's report: percentiles, latency summaries, table cells.

A leaf module (no bench imports), so the phases' reports (miss_report, guided) and the run report (report) can all
use it without importing each other.
"""

from __future__ import annotations

import statistics
from collections import Counter

KB = 1000  # sizes are reported in kB (1000 bytes), as the targets are written


def percentile(values: list[float], q: int) -> float | None:
    """values: (n,) -> the q-th percentile (q in 1..99), linear between ranks; None for no values."""
    if len(values) < 2:  # statistics.quantiles needs two points before Python 3.13
        return float(values[0]) if values else None
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def rounded(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def latency_summary(records: list[dict]) -> dict:
    """Run records -> n, p50 / p95 / p99 / max latency (runs without errors), bytes mean / max, errors."""
    lat = [r["latency_ms"] for r in records if not r["errors"]]
    sizes = [r["bytes"] for r in records]
    return {
        "n": len(records),
        "p50_ms": rounded(percentile(lat, 50)),
        "p95_ms": rounded(percentile(lat, 95)),
        "p99_ms": rounded(percentile(lat, 99)),
        "max_ms": rounded(max(lat)) if lat else None,
        "bytes_mean": round(mean(sizes)) if sizes else None,
        "bytes_max": max(sizes) if sizes else None,
        "errors": sum(len(r["errors"]) for r in records),
        "error_alerts": sum(r.get("error_alerts", 0) for r in records),
    }


def error_counts(records: list[dict]) -> dict[str, int]:
    """Run records -> how often each kind of error occurred (the text before its first " (")."""
    return dict(Counter(e.split(" (")[0] for r in records for e in r["errors"]))


def fmt(x, digits: int = 1) -> str:
    """A table cell: a float to ``digits`` decimals, anything else as text, "–" for nothing."""
    if x is None:
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def kb(n) -> str:
    return "–" if n is None else f"{n / KB:.1f}"
