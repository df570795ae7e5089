"""Lesson "Attention as it is built today": Gemma 3 270M (loaded once per process, shared read-only), its install
hint, the licence notice, the learner's text, and every cached call the sections make (a text's pass is st.cache_data
per text; the long text's window reading and the Japanese head study are kept on disk, computed once per machine)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from attention_core import gemma
from attention_core.gemma.weights import INSTALL_HINT, GemmaUnavailable, untrained_weights
from attention_core.gpt.disk_cache import load_or_compute, weights_digest
from attention_core.gpt_studies import modern as study
from attention_core.measure.head_stats import split
from attention_core.presets import read_preset
from ui.shared.common import BOX_CHARS, MAX_CHARS, md_escape
from ui.shared.gpt_models import gemma_model, model as smollm2_model, shown_token as smollm2_token

S = "modern"
MAX_TEXT_TOKENS = 64  # a learner's text is cut here (with a notice): a pass over it stays under a second of CPU
UNTRAINED_SEED = 0
TERMS_URL = "https://ai.google.dev/gemma/prohibited_use_policy"  # the use restrictions the app's terms carry
SHOWN = str.maketrans({" ": "·", "\n": "⏎", "\t": "⇥"})


@dataclass(frozen=True)
class ModernTexts:
    text: dict  # {lang: the text offered first}
    japanese: str
    head_sentences: tuple[str, ...]
    long_text: str


def _validate(data: dict, check) -> ModernTexts:
    text = check.get(data, "text", dict)
    sentences = check.get(check.get(data, "heads", dict), "sentences", list, "heads")
    if len(sentences) < 4 or not all(isinstance(s, str) and s.strip() for s in sentences):
        check.fail("heads.sentences", "must be at least 4 sentences")
    return ModernTexts({lang: check.text(text, lang, "text") for lang in ("en", "ja")},
                       check.text(data, "japanese"), tuple(sentences), check.text(data, "long_text").strip())


@st.cache_data(show_spinner=False)
def texts() -> ModernTexts:
    return read_preset(S, _validate)


# ---------------------------------------------------------------- the model

model = gemma_model  # -> (weights, tokenizer) of Gemma 3 270M, once per process (shared with lesson 9)


def model_or_message(t) -> bool:
    """True when Gemma is installed (and the licence notice is shown); otherwise the page says how to install it."""
    try:
        with st.spinner(t(f"{S}.loading")):
            model()
    except GemmaUnavailable as exc:
        st.error(t(f"{S}.missing", command=INSTALL_HINT, detail=md_escape(str(exc))), icon=":material/download:")
        return False
    st.caption(t("common.gemma_notice", terms=TERMS_URL))
    return True


def shown(token_id: int) -> str:
    """A Gemma token as the learner reads it ('·' for a space, a control token by its name)."""
    return model()[1].pieces([int(token_id)])[0].translate(SHOWN)


def readable_ids(t, text: str, key: str) -> tuple[int, ...] | None:
    """The learner's text -> its Gemma ids (start token first), cut to MAX_CHARS characters and MAX_TEXT_TOKENS tokens
    with a notice; None after a warning when it is empty or only whitespace."""
    if len(text) > MAX_CHARS:
        st.info(t("common.text_cut", n=f"{len(text):,}", limit=MAX_CHARS), icon=":material/content_cut:")
        text = text[:MAX_CHARS]
    if not text.strip():
        st.warning(t(f"{S}.{key}_empty"))
        return None
    ids = tuple(model()[1].encode(text))
    if len(ids) > MAX_TEXT_TOKENS:
        st.info(t(f"{S}.cut_tokens", n=len(ids), limit=MAX_TEXT_TOKENS), icon=":material/content_cut:")
        ids = ids[:MAX_TEXT_TOKENS]
    return ids


def text_box(t) -> tuple[int, ...] | None:
    """The page's control: the learner's text (default: data/modern.toml's for the page's language) -> ids or None."""
    text = st.text_input(t(f"{S}.text"), value=texts().text[t.lang], max_chars=BOX_CHARS, key="modern_text",
                         bind="query-params")
    ids = readable_ids(t, text, "text")
    if ids is not None:
        st.caption(t(f"{S}.tokens", text=md_escape(model()[1].decode(ids)), n=len(ids), tokens=" | ".join(md_escape(shown(i)) for i in ids)))
    return ids


# ---------------------------------------------------------------- cached computations

@st.cache_data(show_spinner=False, max_entries=32)
def text_numbers(ids: tuple[int, ...]) -> study.TextNumbers:
    weights = model()[0]
    return study.text_numbers(weights, ids, rope_layer=weights.config.global_layers[0])


@st.cache_data(show_spinner=False, max_entries=32)
def smollm2_cache_bytes(text: str) -> tuple[int, float] | None:
    """-> (tokens, bytes per token of SmolLM2's KV cache after a prefill of the text), None without SmolLM2."""
    try:
        weights, tokenizer = smollm2_model()
    except Exception:  # noqa: BLE001 - lesson 9's model is optional here: the config's number is shown instead
        return None
    from attention_core.smollm2 import prefill

    ids = tokenizer.encode(text)
    if not ids:
        return None
    _, cache = prefill(weights, ids)
    return len(ids), (cache.keys.nbytes + cache.values.nbytes) / cache.length


@st.cache_data(show_spinner=False, max_entries=32)
def smollm2_pieces(text: str) -> list[str] | None:
    """-> SmolLM2's tokens of the text as lesson 9 shows them (bytes in hex where a piece is not whole characters)."""
    try:
        tokenizer = smollm2_model()[1]
    except Exception:  # noqa: BLE001 - lesson 9's model is optional here
        return None
    return [smollm2_token(int(i)) for i in tokenizer.encode(text)]


def _digest() -> str:
    return weights_digest(gemma.gguf_path())


@st.cache_data(show_spinner=False)
def window_summary() -> dict:
    """The long text's window reading (one pass of ~700 tokens, ~5 s of CPU): kept on disk, once per machine."""
    long_text = texts().long_text
    weights = model()[0]

    def compute():
        return study.window_summary(gemma.forward(weights, gemma.encode(long_text), all_logits=False).attention,
                                    weights.config.window)

    return load_or_compute("modern-window", {"text": long_text}, compute, sources=(study,), digest=_digest())


@st.cache_data(show_spinner=False)
def japanese_heads() -> dict:
    """The previous-token head in Japanese, picked on every other sentence and scored on the rest, in Gemma and in its
    untrained copy: kept on disk, once per machine."""
    sentences = texts().head_sentences
    weights = model()[0]

    def compute():
        ids = [gemma.encode(s) for s in sentences]
        halves = split(len(ids))
        trained = [o.attention for o in gemma.forward_many(weights, ids)]
        untrained = [o.attention for o in gemma.forward_many(untrained_weights(weights.config, UNTRAINED_SEED), ids)]
        result = study.previous_token_study(trained, untrained, halves.pick_idx, halves.score_idx)
        return {**result, "rule": halves.rule}

    return load_or_compute("modern-japanese-heads", {"sentences": list(sentences), "seed": UNTRAINED_SEED}, compute,
                           sources=(study,), digest=_digest())
