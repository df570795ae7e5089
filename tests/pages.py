"""The app's pages, for tests that visit every one. Tests name a page by its section (``page("qkv")``), never by
its file: a lesson file can be renamed here alone."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    file: str
    url_path: str
    section: str  # the locales/<lang>/<section>.toml that holds the page's title


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
    PageInfo("lessons/gpt.py", "gpt", "gpt"),
    PageInfo("lessons/heads.py", "heads", "heads"),
    PageInfo("lessons/modern.py", "modern", "modern"),
    PageInfo("lessons/tiny_gpt.py", "head-forms", "tiny_gpt"),
    PageInfo("lessons/summary.py", "summary", "summary"),
]
HOME = PAGES[0]  # the default page: what the frame draws when no page is named
SECTIONS = [p.section for p in PAGES]


def page(section: str) -> PageInfo:
    """The page whose section is ``section`` (KeyError with the known sections otherwise)."""
    for info in PAGES:
        if info.section == section:
            return info
    raise KeyError(f"no page {section!r}; known: {SECTIONS}")
