"""What the miss phase (bench.miss) measured: per-widget and overall summaries of its records, presenter on / off
ratios, the Markdown tables for the report, and the checks against the targets."""

from __future__ import annotations

from bench.stats import fmt, kb, mean, percentile, rounded


def summarize(records: list[dict]) -> dict:
    ok = [r for r in records if not r["errors"]]
    lat = [r["latency_ms"] for r in ok]
    cpu = [r["cpu_ms"] for r in ok if r["cpu_ms"] is not None]
    sizes = [r["bytes"] for r in records]
    return {
        "n": len(records),
        "p50_ms": rounded(percentile(lat, 50)),
        "p95_ms": rounded(percentile(lat, 95)),
        "max_ms": rounded(max(lat)) if lat else None,
        "cpu_ms_mean": rounded(mean(cpu)),
        "cpu_ms_total": rounded(sum(cpu)) if cpu else None,
        "bytes_mean": round(mean(sizes)) if sizes else None,
        "errors": sum(len(r["errors"]) for r in records),
        "fragment_runs": sum(bool(r.get("fragment")) for r in records),
    }


def miss_summary(off: dict | None, on: dict | None, long_actions: tuple[str, ...] = ()) -> dict:
    """Per-widget and overall numbers of the two passes; long actions (e.g. training) apart."""
    out: dict = {"long_actions": list(long_actions), "widgets": [], "overall": {}, "pages": {}}
    passes = {"off": off, "on": on}
    keys: dict[tuple[str, str], str] = {}
    for p in passes.values():
        for r in (p or {}).get("records", []):
            keys.setdefault((r["page"], r["widget"]), r["kind"])
    for (page, widget), kind in keys.items():
        row = {"page": page, "widget": widget, "kind": kind, "long": widget in long_actions}
        for name, p in passes.items():
            recs = [r for r in (p or {}).get("records", []) if r["page"] == page and r["widget"] == widget]
            row[name] = summarize(recs) if p else None
        out["widgets"].append(row)
    for name, p in passes.items():
        if not p:
            continue
        recs = p["records"]
        out["overall"][name] = summarize([r for r in recs if r["widget"] not in long_actions])
        out["overall"][name + "_long"] = summarize([r for r in recs if r["widget"] in long_actions])
        out["pages"][name] = p["pages"]
    if off and on:
        out.update(presenter_ratios(off["records"], on["records"], long_actions))
    return out


def _numbered(records: list[dict]) -> dict[tuple[str, str, int], dict]:
    """(page, widget, i) -> the i-th change of that widget: the same value in both passes."""
    count: dict[tuple[str, str], int] = {}
    out = {}
    for r in records:
        k = (r["page"], r["widget"])
        count[k] = count.get(k, 0) + 1
        out[(*k, count[k])] = r
    return out


def presenter_ratios(off: list[dict], on: list[dict], long_actions: tuple[str, ...] = ()) -> dict:
    """Presenter on / off over the changes both passes made (same page, widget and turn), without errors:
    the ratio of total server CPU and of median latency; plus what only one pass could change."""
    a, b = _numbered(off), _numbered(on)
    both = [k for k in a if k in b and k[1] not in long_actions and not a[k]["errors"] and not b[k]["errors"]]
    cpu_off = sum(a[k]["cpu_ms"] or 0 for k in both)
    cpu_on = sum(b[k]["cpu_ms"] or 0 for k in both)
    p50_off = percentile([a[k]["latency_ms"] for k in both], 50)
    p50_on = percentile([b[k]["latency_ms"] for k in both], 50)
    only = lambda x, y: sorted({f"{k[0]} {k[1]}" for k in x if k not in y})  # noqa: E731
    return {
        "presenter_pairs": len(both),
        "presenter_cpu_ratio": round(cpu_on / cpu_off, 2) if cpu_off else None,
        "presenter_p50_ratio": round(p50_on / p50_off, 2) if both and p50_off else None,
        "only_presenter_off": only(a, b),
        "only_presenter_on": only(b, a),
    }


def markdown(summary: dict) -> list[str]:
    f = fmt
    lines = ["", "#### One student, a cache miss per interaction (every lesson widget, presenter mode off / on)", "",
             "Each change sends a value the server has not seen; two fresh servers, presenter off and on, get the same "
             "change one after the other (alternating which goes first). "
             "CPU = the server process's CPU time around the interaction (/proc, 10 ms ticks: a mean over n).", "",
             "| page | widget | kind | n | p50 off (ms) | p95 off (ms) | CPU off (ms) | p50 on (ms) | p95 on (ms) "
             "| CPU on (ms) | kB mean | errors |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in summary["widgets"]:
        o, n = row.get("off") or {}, row.get("on") or {}
        errors = (o.get("errors") or 0) + (n.get("errors") or 0)
        name = row["widget"] + (" (long action)" if row["long"] else "")
        lines.append(f"| {row['page']} | {name} | {row['kind']} | {o.get('n', n.get('n'))} | {f(o.get('p50_ms'))} "
                     f"| {f(o.get('p95_ms'))} | {f(o.get('cpu_ms_mean'))} | {f(n.get('p50_ms'))} | {f(n.get('p95_ms'))} "
                     f"| {f(n.get('cpu_ms_mean'))} | {kb(o.get('bytes_mean', n.get('bytes_mean')))} | {errors} |")
    lines += ["", "| pass | misses | p50 (ms) | p95 (ms) | max (ms) | CPU mean (ms) | errors | fragment runs |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in summary["overall"].items():
        if s["n"]:
            title = {"off": "presenter off", "on": "presenter on", "off_long": "long actions, presenter off",
                     "on_long": "long actions, presenter on"}[name]
            lines.append(f"| {title} | {s['n']} | {f(s['p50_ms'])} | {f(s['p95_ms'])} | {f(s['max_ms'])} "
                         f"| {f(s['cpu_ms_mean'])} | {s['errors']} | {s['fragment_runs']} |")
    if summary.get("presenter_cpu_ratio") is not None:
        lines += ["", f"Presenter on / off, over the {summary['presenter_pairs']} changes both passes made (same page, "
                      f"widget, turn and value): server CPU {f(summary['presenter_cpu_ratio'], 2)}x, "
                      f"p50 latency {f(summary.get('presenter_p50_ratio'), 2)}x."]
        for name in ("off", "on"):
            if summary.get(f"only_presenter_{name}"):
                lines.append(f"Changed only with presenter mode {name} (the widget was not on screen in the other "
                             f"pass, or ran out of values there): {', '.join(summary[f'only_presenter_{name}'])}.")
    failed = [f"{page} (presenter {name}): {', '.join(info.get('open_errors', []) + info.get('reopen_errors', []))}"
              for name, pages in summary["pages"].items() for page, info in pages.items()
              if info.get("open_errors") or info.get("reopen_errors")]
    if failed:
        lines += ["", "Page opens that failed: " + "; ".join(failed) + "."]
    notes = []
    for name, pages in summary["pages"].items():
        for page, info in pages.items():
            if info.get("exhausted") and name == "off":
                notes.append(f"{page}: out of unseen values: {', '.join(info['exhausted'])}")
    if notes:
        lines += ["", "Widgets that ran out of unseen values before the last round (fewer n): " + "; ".join(notes) + "."]
    return lines


def check(summary: dict, target_p95_ms: float, target_ratio: float, long_limit_ms: float) -> list[dict]:
    checks = []
    for name in ("off", "on"):
        s = summary["overall"].get(name)
        if s and s["n"]:
            checks.append({"target": f"cache miss, presenter {name}: p95 <= {target_p95_ms:g} ms", "value": s["p95_ms"],
                           "limit": target_p95_ms, "ok": s["p95_ms"] is not None and s["p95_ms"] <= target_p95_ms
                           and s["errors"] == 0})
        long = summary["overall"].get(name + "_long")
        if long and long["n"]:
            checks.append({"target": f"long action ({', '.join(summary['long_actions'])}), presenter {name}: "
                                     f"max <= {long_limit_ms / 1000:g} s", "value": long["max_ms"],
                           "limit": long_limit_ms, "ok": long["max_ms"] is not None and long["max_ms"] <= long_limit_ms})
    ratio = summary.get("presenter_cpu_ratio")
    if ratio is not None:
        checks.append({"target": f"presenter mode: server CPU per miss <= {target_ratio:g}x off", "value": ratio,
                       "limit": target_ratio, "ok": ratio <= target_ratio})
    return checks

