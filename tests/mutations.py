"""Mutation check of the page seam: does a one-line bug a learner would see fail the fast loop's page-seam tests?

    /work/main/.venv/bin/python -m tests.mutations            every mutation below (about a minute each)
    /work/main/.venv/bin/python -m tests.mutations -k spans   only the mutations whose name contains "spans"
    /work/main/.venv/bin/python -m tests.mutations --list     names only

Each mutation is an exact text replacement in ui/, charts/ or locales/ (one bug; a swap of two labels counts as one).
The tree is copied once to a temporary directory (never the working tree); each mutation is applied to the copy, the
page-seam tests of the fast loop run there (tests/test_page_seam_*.py under dev.py's FAST_MARKERS: a mutant caught only
by a `pages` or `slow` test is MISSED; the lesson's own file first, stopping at the first failure, whose name is shown),
and the file is restored. A mutation whose text (or whose lesson's seam file) no longer exists is reported as STALE (update it), not as caught.
The unmutated copy must pass first. Results go to docs/testing.md by hand."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the fast loop's markers, read from dev.py (not imported: it installs things): a mutant must fail the fast loop
FAST_MARKERS = re.search(r'^FAST_MARKERS = "(.+)"$', (ROOT / "dev.py").read_text(), re.M).group(1)
SEAM_TESTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_page_seam_*.py"))


@dataclass(frozen=True)
class Mutation:
    name: str
    lesson: str  # the seam test file to run first: tests/test_page_seam_<lesson>.py
    path: str
    edits: tuple[tuple[str, str], ...]  # (old, new): each old must occur exactly once in the file


MUTATIONS = [
    Mutation("en heat-map axes: 'query' and 'key' swapped", "self_attention", "locales/en/common.toml",
             (('axis_key = "key"', 'axis_key = "query"'), ('axis_query = "query"', 'axis_query = "key"'))),
    Mutation("ja heat-map axes: クエリ and キー swapped", "causal", "locales/ja/common.toml",
             (('axis_key = "キー"', 'axis_key = "クエリ"'), ('axis_query = "クエリ"', 'axis_query = "キー"'))),
    Mutation("ja token lines: クエリ and キー swapped (lesson 3)", "self_attention", "locales/ja/self_attention.toml",
             (('query_label = "クエリ"', 'query_label = "キー"'), ('key_label = "キー"', 'key_label = "クエリ"'))),
    Mutation("every attention heat map transposed (z[key][query])", "self_attention", "charts/matrix.py",
             (('"z": arr(z),', '"z": arr(z.T),'),)),
    Mutation("ja y-axis title moved above the axis but drawn empty", "causal", "charts/style.py",
             (("labels.append(dict(text=text, showarrow=False,", "labels.append(dict(text=\"\", showarrow=False,"),)),
    Mutation("heat maps: first query drawn at the bottom", "causal", "charts/matrix.py",
             (('"autorange": "reversed", "title": axis_title(axis_titles[1])',
               '"autorange": True, "title": axis_title(axis_titles[1])'),)),
    Mutation("lesson 8: word -> token spans shifted by one token", "pretrained", "ui/pretrained/page.py",
             (("return [(first, stop) for _, first, stop in self.words if stop > first]",
               "return [(first + 1, stop + 1) for _, first, stop in self.words if stop > first]"),)),
    Mutation("lesson 8: opened head outlines the row after the picked token", "pretrained", "ui/pretrained/view.py",
             (("show_plotly(upright_keys(outline_row(heat, sel)), key=\"pretrained_heat\")",
               "show_plotly(upright_keys(outline_row(heat, sel + 1)), key=\"pretrained_heat\")"),)),
    Mutation("lesson 4: scaling switch inverted", "scaling", "ui/scaling.py",
             (("return Controls(int(d), bool(scale),", "return Controls(int(d), not bool(scale),"),)),
    Mutation("lesson 4: histogram ignores the switch (always unscaled)", "scaling", "ui/scaling.py",
             (('hist = histogram_data(c.d, c.n_keys, c.seed, c.scale, c.tau)',
               'hist = histogram_data(c.d, c.n_keys, c.seed, False, c.tau)'),)),
    Mutation("lesson 5: masked-cell count off by one", "causal", "ui/causal.py",
             (('masked=mask_facts(res)["masked"], total=n * n', 'masked=mask_facts(res)["masked"] + 1, total=n * n'),)),
    Mutation("lesson 5: causal map draws the bidirectional weights", "causal", "ui/causal.py",
             (('weights_heatmap, res["causal"].weights, s.words, title=t("causal.causal_title")',
               'weights_heatmap, res["bidirectional"].weights, s.words, title=t("causal.causal_title")'),)),
    Mutation("lesson 3: token position off by one in the caption", "self_attention", "ui/self_attention.py",
             (("pos=sel + 1, top=tops(tokens, row)", "pos=sel, top=tops(tokens, row)"),)),
    Mutation("lesson 3: weights written to 0 decimals", "self_attention", "ui/self_attention.py",
             (('f"{md_escape(tokens[j])} {percent(row[j])}"', 'f"{md_escape(tokens[j])} {percent(row[j], 0)}"'),)),
    Mutation("lesson 3: two head titles swapped (en)", "self_attention", "locales/en/self_attention.toml",
             (('head_syntax = "Head 2: predicate → subject (hand-designed)"',
               'head_syntax = "Head 3: previous word (rule)"'),
              ('head_previous_word = "Head 3: previous word (rule)"',
               'head_previous_word = "Head 2: predicate → subject (hand-designed)"'))),
    Mutation("lesson 2: best book's share shown as a fraction, not %", "qkv", "ui/qkv.py",
             (("share=100 * found.weights[found.best]))", "share=found.weights[found.best]))"),)),
    Mutation("lesson 2: query row drawn last in the key map", "qkv", "ui/qkv.py",
             (('[c.query, *lib.keys], [t("qkv.query_row"), *titles]', '[c.query, *lib.keys], [*titles, t("qkv.query_row")]'),)),
    Mutation("lesson 1: pairs count without its thousands separator", "rnn", "ui/rnn.py",
             (("f\"{n} × {n} = {steps['pairs']:,}\"", "f\"{n} × {n} = {steps['pairs']}\""),)),
    Mutation("lesson 6: stated rank off by one", "glove", "ui/glove/page.py",
             (("rank=rank, n=n, weight=number(row[ti])", "rank=rank + 1, n=n, weight=number(row[ti])"),)),
    Mutation("lesson 7: positional-encoding map's axis titles swapped", "transformer", "ui/transformer.py",
             (('axis_titles=(t("transformer.axis_dim"), t("transformer.axis_position"))',
               'axis_titles=(t("transformer.axis_position"), t("transformer.axis_dim"))'),)),
    Mutation("lesson 7: feed-forward count reports attention's", "transformer", "ui/transformer.py",
             (('ffn=check.rows_changed("ffn")', 'ffn=check.rows_changed("attention")'),)),
    Mutation("lesson 9: n × n written as 2n", "summary", "ui/summary.py",
             (('n=f["n"], pairs=f["pairs"]', 'n=f["n"], pairs=2 * f["n"]'),)),
    Mutation("lesson 9: loss bars, the trained and untrained copy's numbers swapped", "gpt", "ui/gpt/circuits.py",
             (('{t(f"{S}.trained"): s.losses, t(f"{S}.untrained"): s.untrained_losses}',
               '{t(f"{S}.trained"): s.untrained_losses, t(f"{S}.untrained"): s.losses}'),)),
    Mutation("lesson 9: sink profile, the trained and untrained copy swapped", "gpt", "ui/gpt/sink.py",
             (("figure_spec(layer_profile, trained.mean(axis=1), control.mean(axis=1),",
               "figure_spec(layer_profile, control.mean(axis=1), trained.mean(axis=1),"),)),
    Mutation("lesson 9: ja labels 学習済み and 未学習 swapped", "gpt", "locales/ja/gpt.toml",
             (('\ntrained = "学習済み"', '\ntrained = "未学習の同型モデル"'),
              ('\nuntrained = "未学習の同型モデル"', '\nuntrained = "学習済み"'))),
    Mutation("lesson 9: the server's temperature applied after the softmax", "gpt", "attention_core/gpt/serving.py",
             (("probs = softmax(np.asarray(logits, dtype=np.float64), temperature=request.temperature)",
               "probs = softmax(np.asarray(logits, dtype=np.float64)) / request.temperature"),)),
    Mutation("lesson 9: next-token bars, the model's and the knobs' series swapped", "gpt", "ui/gpt/next_token.py",
             (('figure_spec(next_token_bars, labels, d["plain"], d["knobbed"],',
               'figure_spec(next_token_bars, labels, d["knobbed"], d["plain"],'),)),
    Mutation("lesson 9: next-token labels shifted by one rank", "gpt", "ui/gpt/next_token.py",
             (('labels = shown_tokens(d["top"], prompt.model)',
               'labels = shown_tokens(d["top"][1:] + d["top"][:1], prompt.model)'),)),
    Mutation("lesson 9: the picked induction head named head-first", "gpt", "ui/gpt/circuits.py",
             (('induction_numbers", head=f"L{s.picked[0]}H{s.picked[1]}"',
               'induction_numbers", head=f"L{s.picked[1]}H{s.picked[0]}"'),)),
    Mutation("lesson 9: the sink sentence gives the trained share for the untrained copy", "gpt", "ui/gpt/sink.py",
             (('untrained=f"{float(control.mean()):.0%}"', 'untrained=f"{share:.0%}"'),)),
    Mutation("lesson 11: ja labels 繰り返された and 繰り返されていない swapped", "tiny_gpt", "locales/ja/tiny_gpt.toml",
             (('\nrepeated = "繰り返されたトークン"', '\nrepeated = "繰り返されていないトークン"'),
              ('\nunrepeated = "繰り返されていないトークン"', '\nunrepeated = "繰り返されたトークン"'))),
    Mutation("lesson 11: the data sentence counts the vocabulary, not the sequence's tokens", "tiny_gpt",
             "ui/tiny_gpt/sections.py", (("period=int(seqs.period[i]), n=len(labels),",
                                          "period=int(seqs.period[i]), n=config.vocab,"),)),
    Mutation("lesson 11: the curve question graded 'plateau' whenever a head formed", "tiny_gpt",
             "ui/tiny_gpt/sections.py", (("return 2 if flat is not None and flat.length >= PLATEAU_STEPS else 1",
                                          "return 2"),)),
    Mutation("lesson 11: the summary's one-layer loss taken from the two-layer run", "summary_tiny_gpt", "ui/summary.py",
             (('one=f"{one.loss_repeated[-1]:.2f}"', 'one=f"{two.loss_repeated[-1]:.2f}"'),)),
    # issue 40, item 24: lesson 10's and 11's page mutants, each of which once passed every test of the fast loop
    Mutation("lesson 10: own heads set against the zeroed random band when mean-ablated (bands swapped)",
             "heads_meaning", "ui/heads/sections.py",
             (("draws = a.random_mean[row] if mean else a.random_zero[row]",
               "draws = a.random_zero[row] if mean else a.random_mean[row]"),)),
    Mutation("lesson 10: the switch-off chart's random band drawn mean-ablated under the 'zeroed' label",
             "heads_meaning", "ui/heads/sections.py",
             (("ablation_band, a.ks, a.random_zero,\n", "ablation_band, a.ks, a.random_mean,\n"),)),
    Mutation("lesson 10: mean-ablation's means taken from the scoring set (recomputes the band: minutes)",
             "heads_meaning", "ui/heads/results.py",
             (("return Base(picking, scoring, picking.trace.heads.mean(axis=1),",
               "return Base(picking, scoring, scoring.trace.heads.mean(axis=1),"),)),
    Mutation("lesson 10: ja labels zeroed and mean-ablated induction heads swapped", "heads_meaning",
             "locales/ja/heads.toml",
             (('\nseries_induction_zero = "上位 k 個のインダクションヘッド（0 にする）"',
               '\nseries_induction_zero = "上位 k 個のインダクションヘッド（平均に置き換え）"'),
              ('\nseries_induction_mean = "上位 k 個のインダクションヘッド（平均に置き換え）"',
               '\nseries_induction_mean = "上位 k 個のインダクションヘッド（0 にする）"'))),
    Mutation("lesson 10: ja labels keys-only and queries-only swapped", "heads_meaning", "locales/ja/heads.toml",
             (('\ncomp_keys = "キーからだけ取り除く"', '\ncomp_keys = "クエリからだけ取り除く"'),
              ('\ncomp_queries = "クエリからだけ取り除く"', '\ncomp_queries = "キーからだけ取り除く"'))),
    Mutation("lesson 10: the switch-off chart and numbers shown before the question is answered", "heads_meaning",
             "ui/heads/sections.py",
             (("total=a.picking_scores.size):\n        return\n", "total=a.picking_scores.size):\n        pass\n"),)),
    Mutation("lesson 10: the summary's claim reads the zeroed loss as the mean-ablated one", "summary_heads_fast",
             "ui/summary.py", (('mean_loss=f"{float(a.induction_mean[row].mean()):.2f}"',
                                'mean_loss=f"{float(a.induction_zero[row].mean()):.2f}"'),)),
    Mutation("lesson 10: the held-out paragraphs' token count is the paragraphs' count", "heads_meaning",
             "ui/heads/ordinary.py", (("k=top.k, tokens=top.n,", "k=top.k, tokens=score.paragraphs,"),)),
    Mutation("lesson 11: ja labels インダクション and 直前トークン swapped", "tiny_gpt", "locales/ja/tiny_gpt.toml",
             (('\nprev_series = "{head} 直前トークン"', '\nprev_series = "{head} インダクション"'),
              ('\nind_series = "{head} インダクション"', '\nind_series = "{head} 直前トークン"'))),
    Mutation("lesson 9 (Gemma): the prompt read without its start token", "gpt_gemma", "ui/gpt/page.py",
             (("ids = gemma_encode(text)[:MAX_PROMPT_TOKENS + 1]", "ids = gemma_encode(text)[1:MAX_PROMPT_TOKENS + 1]"),)),
    Mutation("lesson 9 (Gemma): the maps drawn from the untrained copy", "gpt_gemma", "ui/gpt/mask.py",
             (("attention = prompt_pass(prompt.ids, model_key=prompt.model).attention",
               "attention = prompt_pass(prompt.ids, False, model_key=prompt.model).attention"),)),
    Mutation("lesson 9 (Gemma): the seeds' caption and bars at T = 1 whatever the knobs", "gpt_gemma",
             "ui/gpt/next_token.py", (("    d = distribution(prompt.ids, setting, prompt.model)",
                                       "    d = distribution(prompt.ids, Knobs(1.0, 0, 1.0), prompt.model)"),)),
]


def copy_tree(dest: Path) -> Path:
    ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".hypothesis", ".pytest_cache", "test-artifacts")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def run_seam(tree: Path, first: str | None, python: str) -> tuple[bool, float, str]:
    """-> (passed, seconds, the last lines of pytest's output) of the page-seam tests in ``tree``."""
    files = SEAM_TESTS if first is None else [f"tests/test_page_seam_{first}.py",
                                              *[f for f in SEAM_TESTS if not f.endswith(f"_{first}.py")]]
    env = dict(os.environ, HYPOTHESIS_PROFILE="fast", PYTHONDONTWRITEBYTECODE="1")
    start = time.perf_counter()
    done = subprocess.run([python, "-m", "pytest", *files, "-m", FAST_MARKERS, "-x", "-q", "-p", "no:cacheprovider",
                           "-W", "ignore"],
                          cwd=tree, env=env, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    killer = [line.split(" - ")[0] for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return done.returncode == 0, time.perf_counter() - start, "\n".join(killer[:1] + lines[-2:])


def apply(tree: Path, m: Mutation) -> str | None:
    """Apply ``m`` in ``tree``; -> the file's original text, or None if an edit no longer matches (stale)."""
    path = tree / m.path
    if not path.exists():  # (the file moved or went: stale, like an edit that no longer matches)
        return None
    original = text = path.read_text()
    for old, new in m.edits:
        if text.count(old) != 1:
            return None
        text = text.replace(old, new)
    path.write_text(text)
    return original


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only mutations whose name contains this text")
    parser.add_argument("--list", action="store_true", help="print the mutations' names and exit")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs pytest")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if args.k.lower() in m.name.lower()]
    if args.list:
        print("\n".join(f"{m.name}  ({m.path})" for m in chosen))
        return 0
    with tempfile.TemporaryDirectory(prefix="mutations-") as tmp:
        tree = copy_tree(Path(tmp) / "tree")
        passed, seconds, tail = run_seam(tree, None, args.python)
        print(f"unmutated tree: {'passes' if passed else 'FAILS'} ({seconds:.0f} s)", flush=True)
        if not passed:
            print(tail)
            return 2
        caught, stale = 0, []
        for m in chosen:
            original = apply(tree, m) if (tree / f"tests/test_page_seam_{m.lesson}.py").exists() else None
            if original is None:
                stale.append(m.name)
                print(f"STALE   {m.name}", flush=True)
                continue
            try:
                passed, seconds, tail = run_seam(tree, m.lesson, args.python)
            finally:
                (tree / m.path).write_text(original)
            caught += not passed
            print(f"{'caught' if not passed else 'MISSED'}  {m.name}  ({m.path}, {seconds:.0f} s)"
                  + (f"\n        by {tail.splitlines()[0]}" if not passed else ""), flush=True)
        print(f"{caught} of {len(chosen) - len(stale)} mutations caught" + (f", {len(stale)} stale" if stale else ""))
        return 0 if caught == len(chosen) - len(stale) and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
