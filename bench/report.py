"""Numbers out of run records: percentiles, per-page summaries, target checks, JSON and Markdown."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

KB = 1000  # sizes are reported in kB (1000 bytes), as the targets are written

# Issue 7's targets (2 cores, one server process).
TARGET_RERUN_P95_MS = 60.0
TARGET_RERUN_VS_EMPTY = 2.0
TARGET_BYTES_PER_INTERACTION = 200 * KB
TARGET_LOAD_STUDENTS = 40
TARGET_LOAD_DURATION_S = 60.0
TARGET_LOAD_RSS_MB = 600.0
TARGET_COLD_START_S = 3.0
# Issue 11's targets (2 cores): one process under 40 random students (was 300 ms in issue 7, for one
# process: issue 11 moved 300 ms to two replicas, bench.replicas), a cache miss, a guided class.
TARGET_LOAD_P95_MS = 1000.0
TARGET_MISS_P95_MS = 150.0
TARGET_PRESENTER_RATIO = 1.2
TARGET_LONG_ACTION_MS = 2000.0
TARGET_GUIDED_P95_MS = 150.0


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between ranks; nan for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _r(x: float, digits: int = 1) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(x, digits)


def latency_summary(records: list[dict]) -> dict:
    lat = [r["latency_ms"] for r in records if not r["errors"]]
    sizes = [r["bytes"] for r in records]
    return {
        "n": len(records),
        "p50_ms": _r(percentile(lat, 50)),
        "p95_ms": _r(percentile(lat, 95)),
        "p99_ms": _r(percentile(lat, 99)),
        "max_ms": _r(max(lat)) if lat else None,
        "bytes_mean": round(sum(sizes) / len(sizes)) if sizes else None,
        "bytes_max": max(sizes) if sizes else None,
        "errors": sum(len(r["errors"]) for r in records),
        "error_alerts": sum(r["error_alerts"] for r in records),
    }


def error_counts(records: list[dict]) -> dict[str, int]:
    return dict(Counter(e.split(" (")[0] for r in records for e in r["errors"]))


def page_summary(records: list[dict]) -> dict:
    """Single-user records of one page -> open / rerun-at-defaults / widget-change summaries."""
    by_kind = {k: [r for r in records if r["kind"] == k] for k in ("open", "rerun", "widget")}
    opened = by_kind["open"][0] if by_kind["open"] else None
    return {
        "open_ms": opened["latency_ms"] if opened else None,
        "open_bytes": opened["bytes"] if opened else None,
        "rerun": latency_summary(by_kind["rerun"]),
        "widget": latency_summary(by_kind["widget"]),
        "widgets_changed": sorted({r["widget"] for r in by_kind["widget"] if r["widget"]}),
        "errors": error_counts(records),
        "error_alerts": sum(r["error_alerts"] for r in records),
    }


def load_summary(load: dict) -> dict:
    records = load["records"]
    interactions = [r for r in records if r["kind"] != "open"]
    cfg = load["config"]
    measured_s = cfg["duration_s"] + cfg["ramp_s"]
    rss = [m["rss_mb"] for m in load["memory"]]
    cpu = [m["cpu_pct"] for m in load["memory"] if "cpu_pct" in m]
    return {
        "students": cfg["students"],
        "duration_s": cfg["duration_s"],
        "think_s": cfg["think_s"],
        "runs": len(records),
        "runs_per_s": round(len(records) / measured_s, 2) if measured_s else None,
        "all": latency_summary(records),
        "interactions": latency_summary(interactions),
        "by_kind": {k: latency_summary([r for r in records if r["kind"] == k])
                    for k in sorted({r["kind"] for r in records})},
        "by_page": {p: latency_summary([r for r in interactions if r["page"] == p])
                    for p in sorted({r["page"] for r in interactions})},
        "errors": sum(len(r["errors"]) for r in records) + len(load["student_errors"]),
        "error_kinds": dict(Counter(error_counts(records)) + Counter(e["error"].split(":")[0] for e in load["student_errors"])),
        "rss_start_mb": rss[0] if rss else None,
        "rss_max_mb": max(rss) if rss else None,
        "rss_end_mb": rss[-1] if rss else None,
        "server_cpu_pct_mean": round(sum(cpu) / len(cpu)) if cpu else None,
        "generator_cpu_s": load.get("generator_cpu_s"),
        "wall_s": load.get("wall_s"),
        "memory": load["memory"],
    }


def check_targets(results: dict) -> list[dict]:
    """Issue 7's targets against what this run measured (`ok` is None where it was not measured)."""
    checks = []
    single = results.get("single_user") or {}
    empty_p95 = ((single.get("empty") or {}).get("rerun") or {}).get("p95_ms")
    for page, s in (single.get("pages") or {}).items():
        p95 = s["rerun"]["p95_ms"]
        limit = TARGET_RERUN_P95_MS if empty_p95 is None else min(TARGET_RERUN_P95_MS, TARGET_RERUN_VS_EMPTY * empty_p95)
        checks.append({"target": f"{page}: rerun p95 <= min(60 ms, 2x empty)", "value": p95,
                       "limit": _r(limit), "ok": None if p95 is None else p95 <= limit})
        sizes = [x for x in (s["rerun"]["bytes_max"], s["widget"]["bytes_max"]) if x is not None]
        biggest = max(sizes) if sizes else None
        checks.append({"target": f"{page}: bytes per interaction <= 200 kB", "value": biggest,
                       "limit": TARGET_BYTES_PER_INTERACTION,
                       "ok": None if biggest is None else biggest <= TARGET_BYTES_PER_INTERACTION})
    load = results.get("concurrent")
    if load:
        full = load["students"] >= TARGET_LOAD_STUDENTS and load["duration_s"] >= TARGET_LOAD_DURATION_S
        scale = "" if full else f" (measured at {load['students']} students x {load['duration_s']:g} s)"
        p95 = load["interactions"]["p95_ms"]
        checks.append({"target": f"40 students: p95 <= {TARGET_LOAD_P95_MS:g} ms" + scale, "value": p95, "limit": TARGET_LOAD_P95_MS,
                       "ok": None if p95 is None or not full else p95 <= TARGET_LOAD_P95_MS})
        checks.append({"target": "40 students: no errors" + scale, "value": load["errors"], "limit": 0,
                       "ok": None if not full else load["errors"] == 0})
        checks.append({"target": "40 students: RSS <= 600 MB" + scale, "value": load["rss_max_mb"],
                       "limit": TARGET_LOAD_RSS_MB,
                       "ok": None if load["rss_max_mb"] is None or not full else load["rss_max_mb"] <= TARGET_LOAD_RSS_MB})
    if results.get("miss"):
        from bench import miss_report

        checks += miss_report.check(results["miss"], TARGET_MISS_P95_MS, TARGET_PRESENTER_RATIO, TARGET_LONG_ACTION_MS)
    if results.get("guided"):
        from bench import guided

        checks += guided.check(results["guided"], TARGET_GUIDED_P95_MS)
    cold = (results.get("cold_start") or {}).get("app")
    if cold:
        checks.append({"target": f"cold start to first {cold['page']} run <= 3 s, without errors",
                       "value": cold["start_to_page_s"],
                       "limit": TARGET_COLD_START_S,
                       "ok": cold["start_to_page_s"] <= TARGET_COLD_START_S and not cold["errors"]})
    return checks


# --- Markdown ---------------------------------------------------------------------------------------

def _fmt(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _kb(n) -> str:
    return "–" if n is None else f"{n / KB:.1f}"


def _mark(ok) -> str:
    return {True: "pass", False: "FAIL", None: "not measured at target scale"}[ok]


def markdown(results: dict) -> str:
    meta = results["meta"]
    lines = [f"### Benchmark run {meta['started']}", ""]
    lines.append(f"`{meta['command']}` on {meta['cpus']} CPUs (load average {meta['loadavg']} at start), "
                 f"Python {meta['python']}, Streamlit {meta['streamlit']}, commit {meta['commit']}.")
    if meta.get("server_options"):
        lines.append("Server options: " + ", ".join(f"`{k}={v}`" for k, v in meta["server_options"].items()) + ".")
    if meta.get("gc_freeze"):
        lines.append("Servers started through bench/frozen_launch.py (import-time objects frozen out of the GC).")
    if meta.get("note"):
        lines += ["", f"**{meta['note']}**"]
    cold = results.get("cold_start") or {}
    if cold:
        lines += ["", "#### Cold start (process spawn -> first completed run)", "",
                  "| app | page | websocket accepted (s) | first run (s) | spawn -> page done (s) | errors |",
                  "|---|---|---:|---:|---:|---|"]
        for name, c in cold.items():
            lines.append(f"| {name} | {c['page']} | {c['websocket_ready_s']:.2f} | {c['first_run_s']:.2f} "
                         f"| {c['start_to_page_s']:.2f} | {', '.join(c['errors']) or '0'} |")
    single = results.get("single_user")
    if single:
        empty = single.get("empty")
        lines += ["", "#### One student alone (per page)", "",
                  "Rerun = the page at its default settings run again (R); widget = one widget changed to a new "
                  "valid value. kB = protobuf bytes the browser received for that run (mean / max).", "",
                  "| page | open (ms) | open kB | rerun p50 (ms) | rerun p95 (ms) | p95 / empty p95 | rerun kB | "
                  "widget n | widget p50 (ms) | widget p95 (ms) | widget kB mean / max | RSS before / peak / after (MB) "
                  "| errors |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        empty_p95 = empty["rerun"]["p95_ms"] if empty else None
        rows = ([("empty page (floor)", empty)] if empty else []) + list(single["pages"].items())
        for name, s in rows:
            ratio = (s["rerun"]["p95_ms"] / empty_p95) if empty_p95 and s["rerun"]["p95_ms"] else None
            errors = ", ".join(f"{k} x{v}" for k, v in s["errors"].items()) or "0"
            rss = s.get("rss_mb")
            rss_text = f"{rss['before']:.0f} / {rss['peak']:.0f} / {rss['after']:.0f}" if rss else "–"
            lines.append(
                f"| {name} | {_fmt(s['open_ms'])} | {_kb(s['open_bytes'])} | {_fmt(s['rerun']['p50_ms'])} "
                f"| {_fmt(s['rerun']['p95_ms'])} | {_fmt(ratio, 2)} | {_kb(s['rerun']['bytes_mean'])} "
                f"| {s['widget']['n']} | {_fmt(s['widget']['p50_ms'])} | {_fmt(s['widget']['p95_ms'])} "
                f"| {_kb(s['widget']['bytes_mean'])} / {_kb(s['widget']['bytes_max'])} | {rss_text} | {errors} |")
    if results.get("miss"):
        from bench import miss_report

        lines += miss_report.markdown(results["miss"])
    if results.get("guided"):
        from bench import guided

        lines += guided.markdown(results["guided"])
    load = results.get("concurrent")
    if load:
        lines += ["", f"#### {load['students']} concurrent students, {load['duration_s']:g} s "
                      f"(one interaction every ~{load['think_s']:g} s each)", "",
                  "| runs | runs/s | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) | kB/run mean | errors | "
                  "RSS start / max / end (MB) |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        a = load["interactions"]
        kinds = ", ".join(f"{k} x{v}" for k, v in load["error_kinds"].items())
        lines.append(f"| {load['runs']} | {_fmt(load['runs_per_s'], 2)} | {_fmt(a['p50_ms'])} | {_fmt(a['p95_ms'])} "
                     f"| {_fmt(a['p99_ms'])} | {_fmt(a['max_ms'])} | {_kb(a['bytes_mean'])} "
                     f"| {load['errors']}{' (' + kinds + ')' if kinds else ''} "
                     f"| {_fmt(load['rss_start_mb'])} / {_fmt(load['rss_max_mb'])} / {_fmt(load['rss_end_mb'])} |")
        lines += ["", "Under load, per page (interactions only):", "",
                  "| page | n | p50 (ms) | p95 (ms) | p99 (ms) | kB mean | errors |", "|---|---:|---:|---:|---:|---:|---:|"]
        for page, s in load["by_page"].items():
            lines.append(f"| {page} | {s['n']} | {_fmt(s['p50_ms'])} | {_fmt(s['p95_ms'])} | {_fmt(s['p99_ms'])} "
                         f"| {_kb(s['bytes_mean'])} | {s['errors']} |")
        mem = load["memory"]
        if mem:
            step = max(1, len(mem) // 12)
            shown = mem[::step] + ([mem[-1]] if (len(mem) - 1) % step else [])
            lines += ["", "Server RSS over time: " + ", ".join(f"{m['t']:.0f} s {m['rss_mb']:.0f} MB" for m in shown) + "."]
        if load.get("server_cpu_pct_mean") is not None:
            lines += ["", f"Server CPU: {load['server_cpu_pct_mean']}% of one core on average; the load generator "
                          f"itself used {load['generator_cpu_s']} CPU s in {load['wall_s']} s."]
    targets = results.get("targets") or []
    if targets:
        lines += ["", "#### Targets", "", "| target | measured | limit | result |", "|---|---:|---:|---|"]
        for c in targets:
            value, limit = c["value"], c["limit"]
            if "bytes" in c["target"]:
                value, limit = (None if value is None else f"{value / KB:.1f} kB"), f"{limit / KB:.0f} kB"
            lines.append(f"| {c['target']} | {_fmt(value, 2) if isinstance(value, float) else _fmt(value)} "
                         f"| {_fmt(limit)} | {_mark(c['ok'])} |")
    return "\n".join(lines) + "\n"


def write(results: dict, out_dir: Path, latest_dir: Path | None = None) -> tuple[Path, Path]:
    """results.json and summary.md into out_dir (and copies as latest.json / latest.md in latest_dir)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "results.json", out_dir / "summary.md"
    json_path.write_text(json.dumps(results, indent=1, default=str))
    md_path.write_text(markdown(results))
    if latest_dir is not None:
        (latest_dir / "latest.json").write_text(json_path.read_text())
        (latest_dir / "latest.md").write_text(md_path.read_text())
    return json_path, md_path
