"""Self-attention (lesson 3): hand-designed presets, rule-built heads, the lines to draw, the first pronoun.

Hand-designed presets store sparse SCORES (data/self_attention.toml) for two heads (coreference: only a pronoun
looks for its noun, and a syntax head: a predicate attends to its subject); every weight is computed here with
``softmax``, so the page shows numbers computed live. The previous-word head is built by rule as scores too, then goes through the same softmax.
Multi-head attention then mixes the heads: each head's output (n, d_v) from seeded random token vectors and W_V,
concatenated to (n, h d_v) and multiplied by a seeded random W_O to (n, d_model).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

from attention_core.attention import (
    SeedLike, as_generator, concat_heads_output, random_projection, softmax,
)
from attention_core.presets import Checker, bilingual, read_preset

HEADS = ("coreference", "syntax", "previous_word")
MULTI_HEAD_D_MODEL = 12  # the demo's d_model: 3 heads of d_v = 4
MULTI_HEAD_SEED = 0  # the seed of the demo's token vectors, W_V and W_O (untrained, labelled on the page)
# Words that refer back to a noun (English lower case; Japanese pronouns and demonstratives), for first_pronoun.
PRONOUNS = frozenset({
    "it", "he", "she", "they", "him", "her", "them", "its", "his", "hers", "their", "theirs", "itself", "himself",
    "herself", "themselves", "this", "that", "these", "those",
    "それ", "これ", "あれ", "彼", "彼女", "彼ら", "彼女ら", "それら", "これら", "あれら",
})


@dataclass(frozen=True)
class Link:
    source: int
    target: int
    score: float


@dataclass(frozen=True)
class SelfAttentionPreset:
    id: str
    label: str
    gloss: dict[str, str]
    tokens: tuple[str, ...]
    base_score: float
    self_score: float
    links: tuple[Link, ...]
    syntax_links: tuple[Link, ...]
    pronoun: int
    antecedent: int


@dataclass(frozen=True)
class SelfAttentionData:
    presets: tuple[SelfAttentionPreset, ...]
    rule_score: float
    default_preset: dict[str, str]  # UI language -> the id of the preset the page opens on

    def by_id(self, preset_id: str) -> SelfAttentionPreset:
        """preset id -> the preset (the first one if the id is unknown)."""
        return next((p for p in self.presets if p.id == preset_id), self.presets[0])

    def default_for(self, lang: str) -> str:
        """UI language -> the id of its default preset (English's for a language the file does not name)."""
        return self.default_preset.get(lang, self.default_preset["en"])


def first_pronoun(tokens) -> int | None:
    """tokens: (n,) -> the position of the first pronoun or demonstrative (PRONOUNS, ignoring case), None if none."""
    return next((i for i, tok in enumerate(tokens) if str(tok).casefold() in PRONOUNS), None)


def _index(check: Checker, obj: dict, key: str, path: str, n: int) -> int:
    value = check.get(obj, key, int, path)
    if not 0 <= value < n:
        check.fail(f"{path}.{key}", f"must be a token position from 0 to {n - 1}, got {value}")
    return value


def _number(check: Checker, obj: dict, key: str, path: str) -> float:
    value = check.get(obj, key, float, path)
    if not np.isfinite(value):
        check.fail(f"{path}.{key}" if path else key, "must be a finite number")
    return value


def _links(check: Checker, item: dict, key: str, path: str, n: int) -> tuple[list[Link], set]:
    links, seen = [], set()
    for k, raw in enumerate(check.table_list(item, key, path)):
        where = f"{path}.{key}[{k}]"
        link = Link(_index(check, raw, "from", where, n), _index(check, raw, "to", where, n), _number(check, raw, "score", where))
        if (link.source, link.target) in seen:
            check.fail(where, f"a second link from {link.source} to {link.target}")
        seen.add((link.source, link.target))
        links.append(link)
    return links, seen


def _validate_preset(item: dict, check: Checker, path: str) -> SelfAttentionPreset:
    tokens = check.get(item, "tokens", list, path)
    if not tokens or not all(isinstance(tok, str) and tok.strip() for tok in tokens):
        check.fail(f"{path}.tokens", "must be a non-empty list of non-empty strings")
    n = len(tokens)
    links, seen = _links(check, item, "links", path, n)
    syntax_links, _ = _links(check, item, "syntax_links", path, n)
    preset = SelfAttentionPreset(
        id=check.text(item, "id", path),
        label=check.text(item, "label", path),
        gloss=bilingual(check, item, "gloss", path),
        tokens=tuple(tokens),
        base_score=_number(check, item, "base_score", path),
        self_score=_number(check, item, "self_score", path),
        links=tuple(links),
        syntax_links=tuple(syntax_links),
        pronoun=_index(check, item, "pronoun", path, n),
        antecedent=_index(check, item, "antecedent", path, n),
    )
    if preset.pronoun != first_pronoun(preset.tokens):
        check.fail(f"{path}.pronoun", f"must be the first pronoun of the tokens, {first_pronoun(preset.tokens)}")
    if {link.source for link in preset.links} != {preset.pronoun}:
        check.fail(f"{path}.links", f"the coreference head links only the pronoun ({preset.pronoun}) to nouns")
    if (preset.pronoun, preset.antecedent) not in seen:
        check.fail(f"{path}.links", f"needs the coreference link from {preset.pronoun} (pronoun) to {preset.antecedent} (antecedent)")
    return preset


def _validate(parsed: dict, check: Checker) -> SelfAttentionData:
    rule_score = _number(check, parsed, "rule_score", "")
    presets = tuple(_validate_preset(item, check, f"presets[{i}]") for i, item in enumerate(check.table_list(parsed, "presets")))
    ids = [p.id for p in presets]
    if len(set(ids)) != len(ids):
        check.fail("presets[].id", "ids must be unique")
    default_preset = bilingual(check, parsed, "default_preset")
    for lang, preset_id in default_preset.items():
        if preset_id not in ids:
            check.fail(f"default_preset.{lang}", f"names no preset: {preset_id!r}")
    return SelfAttentionData(presets, rule_score, default_preset)


def load_self_attention(data_dir=None) -> SelfAttentionData:
    """-> the presets of data/self_attention.toml (file order), the rule heads' score, each language's default."""
    return read_preset("self_attention", _validate, data_dir)


def preset_scores(preset: SelfAttentionPreset, head: str = "coreference") -> np.ndarray:
    """preset with n tokens -> (n, n) scores of a hand-designed head ("coreference" or "syntax"): base everywhere,
    self_score on the diagonal, then that head's links."""
    if head not in ("coreference", "syntax"):
        raise ValueError(f"hand-designed heads are coreference and syntax, got {head!r}")
    n = len(preset.tokens)
    scores = np.full((n, n), preset.base_score, dtype=np.float64)
    np.fill_diagonal(scores, preset.self_score)
    for link in preset.links if head == "coreference" else preset.syntax_links:
        scores[link.source, link.target] = link.score
    return scores


def previous_word_scores(n: int, score: float) -> np.ndarray:
    """n -> (n, n) scores: ``score`` at (i, i - 1); the first token, with no previous word, at (0, 0)."""
    scores = np.zeros((n, n))
    if n:
        rows = np.arange(n)
        scores[rows, np.maximum(rows - 1, 0)] = score
    return scores


def preset_heads(preset: SelfAttentionPreset, rule_score: float) -> np.ndarray:
    """preset with n tokens -> (3, n, n) weights of the heads in HEADS order, every row a softmax."""
    n = len(preset.tokens)
    scores = np.stack([preset_scores(preset), preset_scores(preset, "syntax"), previous_word_scores(n, rule_score)])
    return softmax(scores, axis=-1)


@dataclass(frozen=True)
class MultiHeadParts:
    """Every array of one multi-head layer, for a page to show: h heads, n tokens, d_model features."""

    X: np.ndarray  # (n, d_model) token vectors (seeded random stand-ins)
    W_V: np.ndarray  # (h, d_model, d_v)
    head_outputs: np.ndarray  # (h, n, d_v): head k's weights @ (X @ W_V[k])
    concat: np.ndarray  # (n, h * d_v)
    W_O: np.ndarray  # (h * d_v, d_model)
    output: np.ndarray  # (n, d_model)


def multi_head_parts(weights, d_model: int = MULTI_HEAD_D_MODEL, seed: SeedLike = MULTI_HEAD_SEED) -> MultiHeadParts:
    """weights: (h, n, n) head weights -> MultiHeadParts with seeded random X (n, d_model), W_V (h, d_model, d_model // h)
    and W_O (d_model, d_model): untrained stand-ins, so the shapes and the mixing are real and the numbers arbitrary."""
    A = np.asarray(weights, dtype=np.float64)
    h, n, _ = A.shape
    if d_model % h:
        raise ValueError(f"d_model = {d_model} does not split into {h} heads")
    d_v = d_model // h
    rng = as_generator(seed)
    X = rng.normal(0.0, 1.0, size=(n, d_model))
    W_V = np.stack([random_projection(d_model, d_v, rng) for _ in range(h)])
    W_O = random_projection(h * d_v, d_model, rng)
    head_outputs = A @ (X @ W_V)  # (h, n, n) @ (h, n, d_v)
    concat, output = concat_heads_output(head_outputs, W_O)
    return MultiHeadParts(X, W_V, head_outputs, concat, W_O, output)


def mix_steps(parts: MultiHeadParts, row: int) -> np.ndarray:
    """parts with h heads of d_v and d_model = h * d_v -> (h + 2, h * d_v): token ``row``'s path through the mixing.

    Rows 0..h-1: head k's output in its own d_v columns (k * d_v ...), NaN elsewhere; row h: the concatenation;
    row h + 1: the output after W_O.
    """
    h, _, d_v = parts.head_outputs.shape
    if parts.output.shape[-1] != h * d_v:
        raise ValueError("mix_steps lays the output under the concatenation: it needs d_model = h * d_v")
    steps = np.full((h + 2, h * d_v), np.nan)
    for k in range(h):
        steps[k, k * d_v:(k + 1) * d_v] = parts.head_outputs[k, row]
    steps[h] = parts.concat[row]
    steps[h + 1] = parts.output[row]
    return steps


def lines_to_keep(weights_row, mass: float) -> np.ndarray:
    """weights_row: (n,) -> (n,) bool: the largest weights, thickest first, until their sum reaches ``mass`` of the row;
    every weight equal to the last one taken is taken too (equal weights are drawn alike)."""
    row = np.asarray(weights_row, dtype=np.float64)
    if not 0.0 < mass <= 1.0:
        raise ValueError(f"the cut-off mass must be in (0, 1], got {mass!r}")
    if not len(row):
        return np.zeros(0, dtype=bool)
    order = np.argsort(-row, kind="stable")
    reached = np.cumsum(row[order]) >= mass * row.sum() - 1e-12
    count = int(np.argmax(reached)) + 1 if reached.any() else len(row)
    last = row[order[count - 1]]
    return (row >= last) | np.isclose(row, last, rtol=1e-12, atol=0.0)


def top_targets(weights_row, count: int | None = None) -> list[int]:
    """weights_row: (n,) -> positions of the ``count`` largest weights (all n if None), largest first (ties: earlier first)."""
    row = np.asarray(weights_row, dtype=np.float64)
    return [int(i) for i in np.argsort(-row, kind="stable")[:count]]


def position_labels(tokens) -> list[str]:
    """tokens: (n,) -> (n,) unique labels "1:tok", "2:tok", ... (tokens may repeat; a digit first keeps CSV cells inert)."""
    return [f"{i + 1}:{tok}" for i, tok in enumerate(tokens)]


def matrix_csv(weights, tokens, corner: str = "query \\ key") -> str:
    """weights: (n, n), tokens: (n,) -> CSV text: header row (``corner``, key labels), one row per query, 6 decimals."""
    W = np.asarray(weights, dtype=np.float64)
    labels = position_labels(tokens)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([corner, *labels])
    for label, row in zip(labels, W):
        writer.writerow([label, *(f"{w:.6f}" for w in row)])
    return out.getvalue()
