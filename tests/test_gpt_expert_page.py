"""AppTest: lesson 9's claims as an expert read them (issue 33, item 10), each number re-derived here with loops over
the core's forward pass: the tired/wide flip count beside its same-referent null, the featured head checked on
held-out pairs, what the model answers about "it", and the KV cache at the model's full context."""

from __future__ import annotations

import functools
import itertools
import tomllib

import numpy as np
import pytest

from attention_core import gpt
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
    tokens = gpt.default_model()[1].token_strings(list(ids_of(stem + words[0])))
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
        logits = gpt.forward(gpt.default_model()[0], list(ids_of(stem + w + PAIR["question"])), all_logits=False).logits
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
