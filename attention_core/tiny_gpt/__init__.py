"""A tiny GPT trained live: a 2-layer attention-only transformer that forms an induction head (lesson "Watch a head
form"). Read model.py first: the whole model (forward, the backward pass by hand, Adam) in one short file; then
data.py (the sequences whose second half can only be predicted by copying), measure.py (the heads' previous-token and
induction scores, the losses, a head switched off) and train.py (a run and its snapshots).
"""

from attention_core.tiny_gpt.data import Sequences, batch, eval_set, sequences
from attention_core.tiny_gpt.measure import (Measures, formation_step, induction_scores, measure, plateau_loss,
                                             previous_token_scores)
from attention_core.tiny_gpt.model import NAMES, Adam, Config, forward, grads, init, loss, shapes, token_losses
from attention_core.tiny_gpt.train import Cancelled, Run, train

__all__ = ["NAMES", "Adam", "Cancelled", "Config", "Measures", "Run", "Sequences", "batch", "eval_set", "forward",
           "formation_step", "grads", "induction_scores", "init", "loss", "measure", "plateau_loss",
           "previous_token_scores", "sequences", "shapes", "token_losses", "train"]
