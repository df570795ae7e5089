"""A tiny GPT trained live: a 2-layer attention-only transformer that forms an induction head (lesson "Watch a head
form"). Read model.py first: the whole model (forward, the backward pass by hand, Adam) in one short file; then
data.py (the sequences whose second half can only be predicted by copying), measure.py (the heads' previous-token and
induction scores, the losses, heads switched off), train.py (a run and its snapshots) and store.py (runs kept on
disk, shared by every server process).
"""

from attention_core.tiny_gpt.data import Sequences, batch, eval_set, sequences
from attention_core.tiny_gpt.measure import (Measures, attention_maps, formation_step, induction_scores, measure,
                                             plateau_loss, previous_token_scores)
from attention_core.tiny_gpt.model import (NAMES, Adam, Buffers, Config, forward, grads, init, loss, shapes,
                                           token_losses)
from attention_core.tiny_gpt.store import cache_root, cached_run, load_run, run_path, save_run
from attention_core.tiny_gpt.train import Cancelled, Run, initial_params, train

__all__ = ["NAMES", "Adam", "Buffers", "Cancelled", "Config", "Measures", "Run", "Sequences", "attention_maps",
           "batch", "cache_root", "cached_run", "eval_set", "formation_step", "forward", "grads", "induction_scores",
           "init", "initial_params", "load_run", "loss", "measure", "plateau_loss", "previous_token_scores", "run_path", "save_run",
           "sequences", "shapes", "token_losses", "train"]
