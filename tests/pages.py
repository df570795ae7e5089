"""The app's pages, for tests that visit every one."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    file: str
    url_path: str
    section: str


PAGES = [
    PageInfo("lessons/home.py", "", "home"),
    PageInfo("lessons/rnn_bottleneck.py", "rnn", "rnn"),
    PageInfo("lessons/qkv_library.py", "qkv", "qkv"),
    PageInfo("lessons/self_attention.py", "self-attention", "self_attention"),
    PageInfo("lessons/scaling.py", "scaling", "scaling"),
    PageInfo("lessons/causal_mask.py", "causal", "causal"),
    PageInfo("lessons/glove_experiment.py", "glove", "glove"),
    PageInfo("lessons/transformer_block.py", "transformer", "transformer"),
    PageInfo("lessons/pretrained.py", "trained-model", "pretrained"),
]
