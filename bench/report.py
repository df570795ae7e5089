"""The run report of `python -m bench`: the targets, per-page and class summaries, target checks, JSON and Markdown."""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import time
from collections import Counter
from pathlib import Path

from bench import guided, miss_report
from bench.server import ROOT
from bench.stats import KB, error_counts, fmt, kb, latency_summary, mean, rounded

# On 2 cores, one server process: a rerun, the bytes of an interaction, the cold start.
TARGET_RERUN_P95_MS = 60.0
TARGET_RERUN_VS_EMPTY = 2.0
TARGET_BYTES_PER_INTERACTION = 200 * KB
TARGET_COLD_START_S = 3.0
# The class on one process (two replicas: bench.replicas), a cache miss, a guided class.
TARGET_LOAD_STUDENTS = 40
TARGET_LOAD_DURATION_S = 60.0
TARGET_LOAD_RSS_MB = 600.0
LONG_ACTIONS = ("glove_train", "gpt_generate", "gpt_cache_measure", "tiny_train", "tiny_train_control")  # training,
# a streamed generation, a timing, a learner's own tiny GPT trained under its progress bar
TARGET_LOAD_P95_MS = 1000.0
SLOWEST_SHOWN = 12  # widgets listed by their p95 under load
TARGET_MISS_P95_MS = 150.0
TARGET_PRESENTER_RATIO = 1.2
TARGET_LONG_ACTION_MS = 2000.0
TARGET_GUIDED_P95_MS = 150.0


def run_meta(prog: str, argv: list[str], options: dict[str, str], note: str = "") -> dict:
    """What a report says about its run: when, the command, the machine, the versions, the commit."""
    import streamlit

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=5).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "command": " ".join([prog, *(shlex.quote(a) for a in argv)]),
        "cpus": os.cpu_count(),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "streamlit": streamlit.__version__,
        "commit": commit,
        "server_options": options,
        "note": note,
    }


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


def per_page_lines(load: dict) -> list[str]:
    """A load summary -> markdown: latency per page, then the slowest widgets by p95."""
    lines = ["", "Under load, per page (interactions only):", "",
             "| page | n | p50 (ms) | p95 (ms) | p99 (ms) | kB mean | errors |", "|---|---:|---:|---:|---:|---:|---:|"]
    for page, s in load["by_page"].items():
        lines.append(f"| {page} | {s['n']} | {fmt(s['p50_ms'])} | {fmt(s['p95_ms'])} | {fmt(s['p99_ms'])} "
                     f"| {kb(s['bytes_mean'])} | {s['errors']} |")
    slowest = sorted(load.get("by_widget", {}).items(), key=lambda kv: -(kv[1]["p95_ms"] or 0))[:SLOWEST_SHOWN]
    if slowest:
        lines += ["", f"The {len(slowest)} slowest widgets under load (by p95):", "",
                  "| page and widget | n | p50 (ms) | p95 (ms) | errors |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {name} | {s['n']} | {fmt(s['p50_ms'])} | {fmt(s['p95_ms'])} | {s['errors']} |"
                  for name, s in slowest]
    return lines


def widget_name(record: dict) -> str:
    """-> "<page> <widget key>" (a navigation or rerun: its kind instead of a key)."""
    return f"{record['page']} {record.get('widget') or record['kind']}"


def load_summary(load: dict) -> dict:
    records = load["records"]
    interactions = [r for r in records if r["kind"] != "open"]
    cfg = load["config"]
    measured_s = cfg["duration_s"] + cfg["ramp_s"]
    rss = [m["rss_mb"] for m in load["memory"]]
    private = [m["private_mb"] for m in load["memory"] if "private_mb" in m]
    cpu = [m["cpu_pct"] for m in load["memory"] if "cpu_pct" in m]
    long_actions = set(load.get("long_actions", ()))
    return {
        "students": cfg["students"],
        "duration_s": cfg["duration_s"],
        "think_s": cfg["think_s"],
        "runs": len(records),
        "runs_per_s": round(len(records) / measured_s, 2) if measured_s else None,
        "all": latency_summary(records),
        "interactions": latency_summary(interactions),
        "long_actions": sorted(long_actions),
        "interactions_short": latency_summary([r for r in interactions if r.get("widget") not in long_actions]),
        "interactions_long": latency_summary([r for r in interactions if r.get("widget") in long_actions]),
        "by_kind": {k: latency_summary([r for r in records if r["kind"] == k])
                    for k in sorted({r["kind"] for r in records})},
        "by_page": {p: latency_summary([r for r in interactions if r["page"] == p])
                    for p in sorted({r["page"] for r in interactions})},
        "by_widget": {name: latency_summary([r for r in interactions if widget_name(r) == name])
                      for name in sorted({widget_name(r) for r in interactions})},
        "errors": sum(len(r["errors"]) for r in records) + len(load["student_errors"]),
        "error_kinds": dict(Counter(error_counts(records)) + Counter(e["error"].split(":")[0] for e in load["student_errors"])),
        "rss_start_mb": rss[0] if rss else None,
        "rss_max_mb": max(rss) if rss else None,
        "rss_end_mb": rss[-1] if rss else None,
        "private_max_mb": max(private) if private else None,
        "server_cpu_pct_mean": round(mean(cpu)) if cpu else None,
        "generator_cpu_s": load.get("generator_cpu_s"),
        "wall_s": load.get("wall_s"),
        "memory": load["memory"],
    }


def check_targets(results: dict) -> list[dict]:
    """The targets against what this run measured (`ok` is None where it was not measured)."""
    checks = []
    single = results.get("single_user") or {}
    empty_p95 = ((single.get("empty") or {}).get("rerun") or {}).get("p95_ms")
    for page, s in (single.get("pages") or {}).items():
        p95 = s["rerun"]["p95_ms"]
        limit = TARGET_RERUN_P95_MS if empty_p95 is None else min(TARGET_RERUN_P95_MS, TARGET_RERUN_VS_EMPTY * empty_p95)
        checks.append({"target": f"{page}: rerun p95 <= min(60 ms, 2x empty)", "value": p95,
                       "limit": rounded(limit), "ok": None if p95 is None else p95 <= limit})
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
        checks += miss_report.check(results["miss"], TARGET_MISS_P95_MS, TARGET_PRESENTER_RATIO, TARGET_LONG_ACTION_MS)
    if results.get("guided"):
        checks += guided.check(results["guided"], TARGET_GUIDED_P95_MS)
    cold = (results.get("cold_start") or {}).get("app")
    if cold:
        checks.append({"target": f"cold start to first {cold['page']} run <= 3 s, without errors",
                       "value": cold["start_to_page_s"],
                       "limit": TARGET_COLD_START_S,
                       "ok": cold["start_to_page_s"] <= TARGET_COLD_START_S and not cold["errors"]})
    return checks


# --- Markdown ---------------------------------------------------------------------------------------

def _mark(ok) -> str:
    return {True: "pass", False: "FAIL", None: "not measured at target scale"}[ok]


def markdown(results: dict) -> str:
    meta = results["meta"]
    lines = [f"### Benchmark run {meta['started']}", ""]
    lines.append(f"`{meta['command']}` on {meta['cpus']} CPUs (load average {meta['loadavg']} at start), "
                 f"Python {meta['python']}, Streamlit {meta['streamlit']}, commit {meta['commit']}.")
    if meta.get("server_options"):
        lines.append("Server options: " + ", ".join(f"`{k}={v}`" for k, v in meta["server_options"].items()) + ".")
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
                f"| {name} | {fmt(s['open_ms'])} | {kb(s['open_bytes'])} | {fmt(s['rerun']['p50_ms'])} "
                f"| {fmt(s['rerun']['p95_ms'])} | {fmt(ratio, 2)} | {kb(s['rerun']['bytes_mean'])} "
                f"| {s['widget']['n']} | {fmt(s['widget']['p50_ms'])} | {fmt(s['widget']['p95_ms'])} "
                f"| {kb(s['widget']['bytes_mean'])} / {kb(s['widget']['bytes_max'])} | {rss_text} | {errors} |")
    if results.get("miss"):
        lines += miss_report.markdown(results["miss"])
    if results.get("guided"):
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
        lines.append(f"| {load['runs']} | {fmt(load['runs_per_s'], 2)} | {fmt(a['p50_ms'])} | {fmt(a['p95_ms'])} "
                     f"| {fmt(a['p99_ms'])} | {fmt(a['max_ms'])} | {kb(a['bytes_mean'])} "
                     f"| {load['errors']}{' (' + kinds + ')' if kinds else ''} "
                     f"| {fmt(load['rss_start_mb'])} / {fmt(load['rss_max_mb'])} / {fmt(load['rss_end_mb'])} |")
        lines += per_page_lines(load)
        mem = load["memory"]
        if mem:
            step = max(1, len(mem) // 12)
            shown = mem[::step] + ([mem[-1]] if (len(mem) - 1) % step else [])
            lines += ["", "Server RSS over time: " + ", ".join(f"{m['t']:.0f} s {m['rss_mb']:.0f} MB" for m in shown) + "."]
        if load.get("private_max_mb") is not None:
            lines += ["", f"Of that RSS, private (RssAnon) at most {load['private_max_mb']:.0f} MB; the rest is files "
                          "mapped read-only from the page cache (the GPT's float32 weights and its untrained copy), "
                          "shared by every server process on the machine."]
        if load.get("long_actions") and load["interactions_long"]["n"]:
            short, long_ = load["interactions_short"], load["interactions_long"]
            lines += ["", f"Without the long actions ({', '.join(load['long_actions'])}: {long_['n']} runs, p50 "
                          f"{fmt(long_['p50_ms'])} ms, p95 {fmt(long_['p95_ms'])} ms): {short['n']} runs, p50 "
                          f"{fmt(short['p50_ms'])} ms, p95 {fmt(short['p95_ms'])} ms, p99 {fmt(short['p99_ms'])} ms."]
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
            lines.append(f"| {c['target']} | {fmt(value, 2) if isinstance(value, float) else fmt(value)} "
                         f"| {fmt(limit)} | {_mark(c['ok'])} |")
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
