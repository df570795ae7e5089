"""AppTest: lesson 9's claims as an expert read them (issue 33, item 10), each number re-derived here with loops over
the core's forward pass: the tired/wide flip count beside its same-referent null, the featured head checked on
held-out pairs, what the model answers about "it", and the KV cache at the model's full context."""

from __future__ import annotations

import functools
import itertools
import re
import tomllib

import numpy as np
import pytest

from attention_core import smollm2
from tests.test_gpt_page import DATA, answered, full_pass, ids_of, shown, strings

pytestmark = pytest.mark.pages

PAIR = tomllib.loads(DATA.read_text(encoding="utf-8"))["minimal_pair"]


@functools.lru_cache(maxsize=None)
def referents():
    """Each last word's heads' preferred noun (loops), the flips per pair of words, the featured head's held-out
    record and the model's answer to the question after each sentence."""
    first = PAIR["text"]
    stem = first[: len(first) - len(first.split()[-1])]
    words = [first.split()[-1], *PAIR["first_referent"], PAIR["other_word"], *PAIR["second_referent"]]
    k = 1 + len(PAIR["first_referent"])
    tokens = smollm2.default_model()[1].token_strings(list(ids_of(stem + words[0])))
    animal, street = tokens.index("Ġanimal"), tokens.index("Ġstreet")
    weights = {w: full_pass(ids_of(stem + w)).attention[:, :, -1] for w in words}
    prefer = {w: [[int(a[layer, head, street] > a[layer, head, animal]) for head in range(9)] for layer in range(30)]
              for w, a in weights.items()}

    def flips(a, b):
        return sum(prefer[a][layer][head] != prefer[b][layer][head] for layer in range(30) for head in range(9))

    same = [flips(a, b) for a, b in itertools.combinations(words[:k], 2)]
    growth = weights[words[k]][:, :, street] - weights[words[0]][:, :, street]
    layer, head = np.unravel_index(int(np.argmax(growth)), growth.shape)
    grows = sum(int(weights[b][layer, head, street] > weights[a][layer, head, street])
                for a, b in zip(words[1:k], words[k + 1:]))
    a_id, s_id = ids_of(" animal")[0], ids_of(" street")[0]
    names = []
    for w in words:
        logits = smollm2.forward(smollm2.default_model()[0], list(ids_of(stem + w + PAIR["question"])), all_logits=False).logits
        names.append(bool(logits[-1][a_id] > logits[-1][s_id]))
    return {"words": words, "k": k, "same": same, "to_sleepy": flips(words[0], words[1]),
            "pair": flips(words[0], words[k]), "head": f"L{layer}H{head}", "grows": grows, "held": k - 1,
            "names": (sum(names[:k]), sum(names[k:]))}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_flip_count_stands_beside_its_same_referent_null(lang):
    r = referents()
    at = answered(lang)
    line = [m for m in shown(at) if f"**{r['pair']} " in m or f"{r['pair']} 個**" in m]
    assert len(line) == 1
    mean = np.mean(r["same"])
    assert f"**{mean:.0f}**" in line[0] and f"{min(r['same'])}" in line[0] and f"{max(r['same'])}" in line[0]
    assert f"{len(r['same'])}" in line[0] and f"{r['to_sleepy']}" in line[0]
    assert len(r["same"]) == 28 and mean > 0.5 * r["pair"]  # held: the null is of the same size as the count


def test_the_question_asks_what_the_page_has_not_said():
    r = referents()
    at = answered("en")
    answer = 1 if r["to_sleepy"] == 0 else (2 if r["to_sleepy"] < 10 else 3)
    assert answer == 3  # dozens of heads flip between two words with the same referent
    # answered "None" (answer_all picks the first option): told that the answer is "Dozens", and why
    assert [w.value for w in at.warning if "“Dozens" in w.value and strings("en")["it"]["predict_why"] in w.value]


def test_the_featured_head_is_checked_on_held_out_pairs():
    r = referents()
    at = answered("en")
    line = [m for m in shown(at) if f"{r['head']}:" in m and "Picked as the largest" in m]
    assert len(line) == 1 and f"grows in {r['grows']} of them" in line[0] and f"on {r['held']} other pairs" in line[0]


def test_the_model_answers_animal_whatever_the_adjective():
    r = referents()
    at = answered("en")
    k, n = r["k"], len(r["words"])
    assert r["names"] == (k, n - k)  # held: "animal" for every adjective, the street's too
    line = [m for m in shown(at) if "asked afterwards" in m]
    assert len(line) == 1 and f"for {k} of {k} last words" in line[0] and f"for {n - k} of {n - k} that fit" in line[0]


# --- what changed from lesson 7, and rotary positions at work ------------------------------------------------------


def test_the_page_says_what_changed_from_lesson_7_with_the_files_sizes():
    import gguf

    from attention_core.smollm2.weights import gguf_path

    reader = gguf.GGUFReader(str(gguf_path()))
    shapes = {x.name: [int(d) for d in x.shape] for x in reader.tensors}
    ff = shapes["blk.0.ffn_gate.weight"][1]  # the file stores (in, out) dims
    kv = shapes["blk.0.attn_k.weight"][1] // 64
    assert "output.weight" not in shapes  # tied: the next-token scores use the embedding itself
    at = answered("en")
    line = [m for m in shown(at) if "lesson 7's" in m]
    assert len(line) == 1 and all(w in line[0] for w in ("RoPE", "RMSNorm", "SwiGLU", "grouped-query", "tied"))
    assert f"{ff:,} units" in line[0] and f"share {kv} key/value heads" in line[0]
    assert "same formula as every lesson" not in " ".join(shown(at))


def layer0_scores(ids, offset):
    """Layer 0's scores, float64, written here: RMSNorm of the embeddings, q and k, adjacent pairs turned by
    position * 100000^(-2i/64), query head h against key/value head h // 3."""
    w = smollm2.default_model()[0]
    x = w.embedding[list(ids)].astype(np.float64)
    x = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * w.attn_norm[0]
    pos = np.arange(offset, offset + len(ids), dtype=np.float64)[:, None] * 100000.0 ** (-np.arange(0, 64, 2) / 64)

    def turn(v, heads):
        v = v.reshape(len(ids), heads, 32, 2)
        c, s = np.cos(pos)[:, None, :], np.sin(pos)[:, None, :]
        return np.stack([v[..., 0] * c - v[..., 1] * s, v[..., 0] * s + v[..., 1] * c], axis=-1).reshape(len(ids),
                                                                                                           heads, 64)

    q, k = turn(x @ w.attn_q[0], 9), turn(x @ w.attn_k[0], 3)
    return np.stack([q[:, h] @ k[:, h // 3].T / 8 for h in range(9)])


def test_rotary_positions_make_a_score_depend_on_the_distance_only():
    from tests.test_gpt_page import PROMPT

    ids = ids_of(PROMPT)
    base = layer0_scores(ids, 0)
    assert np.abs(layer0_scores(ids, 1000) - base).max() < 1e-9  # held exactly (float64): RoPE's property
    at = answered("en")
    line = [m for m in shown(at) if m.startswith("Rotary positions at work")]
    assert len(line) == 1 and f"(up to {np.abs(base).max():.1f})" in line[0]
    diff = float(re.search(r"at most \*\*([0-9.e+-]+)\*\*", line[0]).group(1))
    assert diff < 1e-5 * np.abs(base).max()  # what the page reports is float32 rounding
    shifted = full_pass(tuple([ids_of("\n")[0]] * 7) + ids).attention
    plain = full_pass(ids).attention
    before = np.mean([plain[16, 0, i, i - 1] for i in range(1, len(ids))])
    after = np.mean([shifted[16, 0, 7 + i, 6 + i] for i in range(1, len(ids))])
    assert f"head L16H0 puts {after:.2f}" in line[0] and f"(without them: {before:.2f})" in line[0]


# --- the smaller claims -------------------------------------------------------------------------------------------


def test_entropy_is_read_as_a_number_of_equally_likely_tokens():
    from tests.test_gpt_page import PROMPT, softmax

    p = softmax(full_pass(ids_of(PROMPT)).logits[-1])
    h = float(-(p[p > 0] * np.log(p[p > 0])).sum())
    at = answered("en")
    assert [m for m in shown(at) if f"e^{h:.2f} = {np.exp(h):.1f} equally likely tokens" in m]


def test_the_first_copy_paradox_is_said_with_its_numbers():
    from tests.test_gpt_circuits_page import repeated_study

    _, _, first, _ = repeated_study()
    uniform = np.log(49152)
    assert first > uniform  # held: worse than a uniform guess
    at = answered("en")
    line = [m for m in shown(at) if "confident wrong bet" in m]
    assert len(line) == 1 and f"({first:.1f} nats)" in line[0] and f"({uniform:.1f})" in line[0]


def test_the_sinks_telling_control_is_a_random_first_token():
    from tests.test_gpt_page import PROMPT

    ids = ids_of(PROMPT)
    rng = np.random.default_rng(0)  # the page's control: seed 0, an ordinary token (17 ..) that is not the first
    token = int(rng.integers(17, 49152))
    while token == ids[0]:
        token = int(rng.integers(17, 49152))
    attention = full_pass((token,) + ids[1:]).attention
    n = len(ids)
    share = np.mean([[np.mean([attention[layer, head, i, 0] for i in range(1, n)]) for head in range(9)]
                     for layer in range(30)])
    even = np.mean([1 / (i + 1) for i in range(1, n)])
    assert share > 1.5 * even  # held: the sink stays on position 0 whatever the word
    at = answered("en")
    line = [m for m in shown(at) if m.startswith("The telling control")]
    assert len(line) == 1 and f"**{share:.0%}**" in line[0]
    assert smollm2.default_model()[1].decode([token]).replace(" ", "·") in line[0]


def test_the_chat_template_changes_what_the_model_writes_first():
    from tests.test_gpt_page import PROMPT, softmax

    enc = smollm2.default_model()[1].encode
    system = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
    chat = ([1] + enc("system\n" + system) + [2] + enc("\n") + [1] + enc("user\n") + list(ids_of(PROMPT)) + [2]
            + enc("\n") + [1] + enc("assistant\n"))  # ChatML, as the model's template writes it
    p_chat = softmax(full_pass(tuple(chat)).logits[-1])
    p_raw = softmax(full_pass(ids_of(PROMPT)).logits[-1])
    assert int(np.argmax(p_chat)) != int(np.argmax(p_raw))  # held: the first token changes
    top = smollm2.default_model()[1].decode([int(np.argmax(p_chat))]).replace(" ", "·")
    at = answered("en")
    line = [m for m in shown(at) if "chat format" in m]
    assert len(line) == 1 and f"become `{top}`" in line[0] and f"(the first at {p_chat.max() * 100:.1f} %)" in line[0]


def test_the_4_bit_caveat_says_what_the_file_holds():
    import gguf

    from attention_core.smollm2.weights import gguf_path

    kinds = {x.name: x.tensor_type.name for x in gguf.GGUFReader(str(gguf_path())).tensors}
    matrices = {k for n, k in kinds.items() if n.startswith("blk.") and not n.endswith("norm.weight")}
    assert matrices == {"Q4_1"} and kinds["token_embd.weight"] == "Q8_0"  # 16 levels a block of 32; 256
    card = [i.value for i in answered("en").info if "SmolLM2-135M-Instruct" in i.value][0]
    assert "16 levels in each block of 32 numbers (the embedding to one of 256)" in card
    assert "robust" not in card  # no claim the page does not measure
