import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def glove():
    """The real GloVe 6B 50d vectors, loaded once for the whole test session."""
    from attention_core import load_glove

    return load_glove()
