"""The lesson's shared results and its cached calls: lesson 9's model, the texts of data/heads.toml, the two sets of
repeated random sequences run once per process, and the start-up work every section reads (the sections import this
module; ui/heads/study.py, which registers the start-up work that must know every section's cache, imports them).

Start-up work (registered after lesson 9's, so it never delays another lesson's start-up), in two parts:
- BASE: the two sets' runs (every process: the traces stay in memory for the learner's own heads), then, stored on
  disk beside the GPT's float32 cache: K-composition, the lens on the held-out prompts (trained and untrained
  copy) and the sink on ordinary sentences;
- BAND: the induction heads switched off against RANDOM_DRAWS random k-head sets, and every head alone switched off
  (hundreds of runs: minutes of CPU the first time the machine serves the lesson, then read from disk).
Each disk folder is keyed by the model file's SHA-256 and by the source files that compute it (disk_cache.result_path,
as lessons 9 and 11 key theirs: an edited study is computed again, never read stale) and written atomically
(float_cache.built_once). What a learner sees before typing is stored too, by ui/heads/study.py's DEFAULTS (it calls
the sections' cached functions), and read back here (from_start_up) from its folder on disk.
"""

from __future__ import annotations

import pickle
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from attention_core.gpt_studies import causal_study as cs
from attention_core.gpt_studies import heads as head_scores
from attention_core.gpt.disk_cache import result_path, weights_digest
from attention_core.gpt.float_cache import built_once
from attention_core.gpt_studies import ordinary_text
from attention_core.smollm2 import interventions, model as gpt_model, tokenizer as gpt_tokenizer
from attention_core.presets import bilingual, read_preset
from ui.shared.gpt_models import INSTALL_COMMAND, model, shown_token, untrained  # the GPT lesson 9 loads too
from ui.shared.common import md_escape
from ui.shared.startup import register_startup

S = "heads"
SEQUENCES = 8  # repeated random sequences in each set (picking, scoring), as lesson 9
PERIOD = 20  # random tokens per copy
MAX_PROMPT_TOKENS = 64  # the lens reads the learner's prompt up to this length
MAX_NAME_TOKENS = 12
ALL_HEADS = [(layer, head) for layer in range(30) for head in range(9)]
OWN_KS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 270)  # the learner's "top k heads off" choices: the band's ks, then doubling


# ---------------------------------------------------------------- the model and the texts

@dataclass(frozen=True)
class HeadsTexts:
    copy_name: str
    copy_template: str
    lens: tuple[tuple[dict, str], ...]  # ({lang: label}, text)
    held_out: tuple[str, ...]
    sink: tuple[str, ...]


def _validate(data: dict, check) -> HeadsTexts:
    copy = check.get(data, "copy", dict)
    template = check.text(copy, "template", "copy")
    if template.count("{name}") != 2:
        check.fail("copy.template", "must hold {name} twice")
    lens = tuple((bilingual(check, p, "label", f"lens[{i}]"), check.text(p, "text", f"lens[{i}]"))
                 for i, p in enumerate(check.table_list(data, "lens")))
    held_out = tuple(check.get(check.get(data, "held_out", dict), "prompts", list, "held_out"))
    if set(held_out) & {text for _, text in lens}:
        check.fail("held_out.prompts", "a held-out prompt may not be one the learner picks")
    sink = tuple(check.get(check.get(data, "sink", dict), "texts", list, "sink"))
    return HeadsTexts(check.text(copy, "default_name", "copy"), template, lens, held_out, sink)


@st.cache_data(show_spinner=False)
def texts() -> HeadsTexts:
    return read_preset("heads", _validate)


@st.cache_data(show_spinner=False, max_entries=512)
def encode(text: str) -> tuple[int, ...]:
    return tuple(model()[1].encode(text))


def readable_ids(t, text: str, limit: int, empty_key: str, too_long_key: str) -> tuple[int, ...] | None:
    """-> the text's token ids, or None after a warning: empty or only whitespace (lesson 9's rule: its prompt_picker),
    or more than ``limit`` tokens."""
    ids = encode(text) if text.strip() else ()
    if not ids:
        st.warning(t(empty_key))
        return None
    if len(ids) > limit:
        st.warning(t(too_long_key, n=len(ids), limit=limit))
        return None
    return ids


def shown(ids) -> str:
    """ids -> their tokens joined, escaped for markdown."""
    return md_escape("".join(shown_token(int(i)) for i in ids))


def head_label(head) -> str:
    return f"L{int(head[0])}H{int(head[1])}"


# ---------------------------------------------------------------- stored on disk beside the GPT's cache

_ROOT = Path(__file__).resolve().parents[2]
# the code and data that make the stored results: an edit of any of them computes them again
STUDY_SOURCES = (cs, head_scores, interventions, gpt_model, gpt_tokenizer, Path(__file__), _ROOT / "data" / "heads.toml")
# what a learner sees before typing: computed by ui/heads/study.py from the sections' cached functions
DEFAULTS_SOURCES = (*STUDY_SOURCES, ordinary_text, _ROOT / "ui" / "heads" / "ordinary.py",
                    _ROOT / "ui" / "heads" / "study.py", _ROOT / "data" / "heads_ordinary.toml")


def stored_folder(name: str, sources=STUDY_SOURCES) -> Path:
    """-> the folder of stored result `name`: <results of these weights>/heads-<name>-<digest of the sources>."""
    from attention_core.smollm2.weights import gguf_path

    return result_path(f"heads-{name}", {}, weights_digest(gguf_path()), sources).with_suffix("")


def stored(name: str, compute, sources=STUDY_SOURCES):
    """-> compute()'s result, kept in stored_folder(name, sources)/result.pkl (built once, renamed into place whole);
    computed without storing when no folder is writable."""
    final = stored_folder(name, sources)
    box = {}

    def write(folder: Path) -> None:
        box["value"] = compute()
        with open(folder / "result.pkl", "wb") as fh:
            pickle.dump(box["value"], fh, protocol=pickle.HIGHEST_PROTOCOL)

    folder = built_once(final, write)
    if "value" in box:
        return box["value"]
    if folder is None:
        return compute()
    with open(folder / "result.pkl", "rb") as fh:
        return pickle.load(fh)


# ---------------------------------------------------------------- the start-up work

@dataclass(frozen=True)
class Base:
    picking: cs.SetRun
    scoring: cs.SetRun
    means: np.ndarray  # (L, H, n, hd) every head's mean output over the picking set (mean-ablation's values)
    composition: cs.Composition
    trained: tuple  # cs.Reading per held-out prompt
    untrained: tuple
    sink: cs.SinkReading


@dataclass(frozen=True)
class Band:
    ablation: cs.AblationStudy
    single: np.ndarray  # (L, H) the loss's rise with that head alone switched off


class Progress:
    """How far a piece of start-up work is: done of total steps, the step being run and how long since it began (read
    by the page while the start-up thread writes it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.done, self.total, self.stage = 0, 0, ""
        self._began: float | None = None

    def __call__(self, done: int, total: int, stage: str = "") -> None:
        with self._lock:
            if self._began is None:
                self._began = time.monotonic()  # the first report: the work's steps begin now
            self.done, self.total, self.stage = done, total, stage or self.stage

    def read(self) -> tuple[int, int]:
        with self._lock:
            return self.done, self.total

    def elapsed(self) -> float | None:
        """-> seconds since the first report (None before it)."""
        with self._lock:
            return None if self._began is None else time.monotonic() - self._began


PROGRESS = Progress()  # the band's runs
BASE_STEPS = ("model", "sets", "composition", "lens", "sink")  # the base's steps, as the page names them
BASE_PROGRESS = Progress()


def _sets():
    return head_scores.induction_sets(count=SEQUENCES, length=PERIOD)


def _readings(weights, prompts) -> tuple:
    tokenizer = model()[1]
    return tuple(cs.read_layers(weights, tokenizer.encode(p)) for p in prompts)


def _step(stage: str) -> None:
    BASE_PROGRESS(BASE_STEPS.index(stage), len(BASE_STEPS), stage)


def compute_base() -> Base:
    _step("model")  # (a new server builds the model's float32 copy first)
    weights, tokenizer = model()
    _step("sets")
    sets = _sets()
    picking, scoring = cs.run_set(weights, sets.picking, PERIOD), cs.run_set(weights, sets.scoring, PERIOD)
    data = texts()

    def light():
        _step("composition")
        composition = cs.composition_study(weights, picking, scoring, PERIOD)
        _step("lens")
        readings = _readings(weights, data.held_out), _readings(untrained(), data.held_out)
        _step("sink")
        return (composition, *readings, cs.sink_reading(weights, [tokenizer.encode(text) for text in data.sink]))

    composition, trained, untrained_readings, sink = stored("base", light)
    BASE_PROGRESS(len(BASE_STEPS), len(BASE_STEPS))
    return Base(picking, scoring, picking.trace.heads.mean(axis=1), composition, trained, untrained_readings, sink)


def compute_band() -> Band:
    weights = model()[0]
    c = weights.config
    runs = len(cs.KS) * (4 + 2 * cs.RANDOM_DRAWS) + c.n_layer * c.n_head

    def both():  # (only when it is not on disk: reading it needs no run of the base)
        base = BASE.result()
        PROGRESS(0, runs)  # the runs begin: the page times them from here
        ablation = cs.ablation_study(weights, base.picking, base.scoring, PERIOD,
                                     progress=lambda done, _: PROGRESS(done, runs))
        first = len(cs.KS) * (4 + 2 * cs.RANDOM_DRAWS)
        single = cs.single_head_effects(weights, base.scoring, PERIOD,
                                        progress=lambda done, _: PROGRESS(first + done, runs))
        return Band(ablation, single)

    return stored("band", both)


BASE = register_startup("heads-base", compute_base)
BAND = register_startup("heads-band", compute_band)


BAND_WAIT = 3.0  # seconds a page waits for a result read from disk after a restart (0.3-0.5 s here)


# ---------------------------------------------------------------- the learner's own requests

@st.cache_data(show_spinner=False, max_entries=64)
def own_losses(heads: tuple, mean: bool) -> np.ndarray:
    """The learner's heads switched off (zero, or their mean over the picking set) -> (S,) the scoring set's
    second-copy loss per sequence."""
    found = from_start_up(("losses", heads, mean))
    if found is not None:
        return found
    base = BASE.result()
    return cs.switched_off_losses(model()[0], base.scoring.trace, PERIOD, heads, base.means if mean else None)


@st.cache_data(show_spinner=False, max_entries=64)
def own_name(heads: tuple, name: str) -> cs.CopiedName | None:
    """-> the made-up name copied in the template with the heads zeroed (None: not found twice as tokens)."""
    found = from_start_up(("name", heads, name))
    if found is not None:
        return found
    ids = encode(texts().copy_template.replace("{name}", name))
    return cs.copied_name(model()[0], ids, encode(" " + name), heads)  # (a name's own length: only zeroing applies)


@st.cache_data(show_spinner=False, max_entries=64)
def lens_of(ids: tuple[int, ...]) -> tuple[cs.Reading, cs.Reading]:
    """-> the lens readings of a prompt on the trained model and on its untrained copy."""
    found = from_start_up(("lens", ids))
    if found is not None:
        return found
    return cs.read_layers(model()[0], list(ids)), cs.read_layers(untrained(), list(ids))


# ---------------------------------------------------------------- what a learner sees before typing: at start-up

def own_choices(band: Band) -> dict[int, tuple]:
    """-> {k: the top k induction heads (picked on the picking set), sorted} for every k the slider offers."""
    ranked = cs.top_heads(band.ablation.picking_scores, len(ALL_HEADS))
    return {k: tuple(sorted(ranked[:k])) for k in OWN_KS}


class StoredDefaults:
    """What the start-up work stored for the calls a learner makes before typing (ui/heads/study.py's DEFAULTS:
    {call: value}), read from its folder once it is on disk; None for any call until then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: Path | None = None
        self._found: dict | None = None

    def get(self, call: tuple):
        if self._found is None:
            with self._lock:
                if self._found is None:
                    self._folder = self._folder or stored_folder("defaults", DEFAULTS_SOURCES)
                    if not (self._folder / "result.pkl").is_file():
                        return None
                    with open(self._folder / "result.pkl", "rb") as fh:
                        self._found = pickle.load(fh)
        return self._found.get(call)


STORED_DEFAULTS = StoredDefaults()


def from_start_up(call: tuple):
    """-> the value the start-up work stored for this call, or None (not one of those calls, or not on disk yet)."""
    return STORED_DEFAULTS.get(call)
