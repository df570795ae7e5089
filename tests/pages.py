"""The app's pages, for tests that visit every one."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    file: str
    url_path: str
    section: str


PAGES = [
    PageInfo("pages/home.py", "", "home"),
    PageInfo("pages/rnn_bottleneck.py", "rnn", "rnn"),
    PageInfo("pages/qkv_library.py", "qkv", "qkv"),
    PageInfo("pages/self_attention.py", "self-attention", "self_attention"),
    PageInfo("pages/scaling.py", "scaling", "scaling"),
    PageInfo("pages/causal_mask.py", "causal", "causal"),
    PageInfo("pages/glove_experiment.py", "glove", "glove"),
]
