"""The app's pages, for tests that visit every one."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    file: str
    url_path: str
    section: str


PAGES = [
    PageInfo("lessons/home.py", "", "home"),
    PageInfo("lessons/rnn.py", "rnn", "rnn"),
    PageInfo("lessons/qkv.py", "qkv", "qkv"),
    PageInfo("lessons/self_attention.py", "self-attention", "self_attention"),
    PageInfo("lessons/scaling.py", "scaling", "scaling"),
    PageInfo("lessons/causal.py", "causal", "causal"),
    PageInfo("lessons/glove.py", "glove", "glove"),
    PageInfo("lessons/transformer.py", "transformer", "transformer"),
    PageInfo("lessons/pretrained.py", "trained-model", "pretrained"),
]
