import importlib.util
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Hypothesis budgets: "full" (the default, CI) keeps each test's own max_examples; "fast" (`python3 dev.py test
# --fast` sets HYPOTHESIS_PROFILE=fast) draws a tenth of them (tests/hypothesis_budget.examples), derandomized.
settings.register_profile("full", deadline=None)
settings.register_profile("fast", deadline=None, max_examples=10, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "full"))

# The fast loop installs no Playwright (requirements-fast.txt): its browser tests would fail to import, so they are not
# collected at all there; the full install (requirements-dev.txt, CI) has it and collects them.
if importlib.util.find_spec("playwright") is None:
    collect_ignore = ["browser"]


# Long families in files whose owners have not marked them yet (pytest.ini lists the markers): marked here, by file
# or by test name, so `-m "not slow"` leaves them out. Move a line into its file as a @pytest.mark when you touch it.
SLOW_FILES = {"test_bench_protocol.py"}  # live servers and websocket sessions
SLOW_TESTS = {"test_no_page_writes_into_a_shared_figure_dict",  # every page, every figure
              "test_presenter_spec_equals_the_old_go_figure_restyle_for_every_page_figure"}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in SLOW_FILES or item.originalname in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


PROCESS_MAIN = sys.modules["__main__"]  # (conftest is imported before any test or fixture runs)


@pytest.fixture(autouse=True)
def _main_module_back():
    """Streamlit's script runner installs the page it ran as sys.modules["__main__"] and leaves it there; a later test's
    "spawn" child would run that page again as its __mp_main__ (on an xdist worker that ran an AppTest first). The
    process's own __main__ is kept from before any test ran: an AppTest in a module-scoped fixture runs before this."""
    sys.modules["__main__"] = PROCESS_MAIN
    yield
    sys.modules["__main__"] = PROCESS_MAIN


@pytest.fixture(scope="session")
def glove():
    """The real GloVe 6B 50d vectors, loaded once for the whole test session."""
    from attention_core import load_glove

    return load_glove()
