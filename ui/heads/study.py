"""The start-up work of "What heads do" that must know every section's cache, and the names the page, the frame's
start-up thread, dev.py's build step and the summary take from the lesson. It imports the sections; no section imports
it back (they read ui/heads/results.py: the model, the texts, the shared results and their cached calls, and the
stored defaults once they are on disk; ui/heads/waiting.py: what the page shows while the work runs).

DEFAULTS: what a learner sees before typing anything (their own heads at every choice of k, zero and mean, with the
default name; the lens on each preset prompt; each built-in paragraph read by the induction head), computed once per
machine by the sections' own cached functions and stored on disk (results.DEFAULTS_SOURCES keys it), so no student's
run computes them.
"""

from __future__ import annotations

from ui.heads.ordinary import name_read, paragraphs, picked_head
from ui.heads.results import (ALL_HEADS, BAND, BASE, BASE_PROGRESS, DEFAULTS_SOURCES, OWN_KS, PROGRESS, S,  # noqa: F401
                              STUDY_SOURCES, Band, Base, encode, from_start_up, lens_of, model, own_choices, own_losses,
                              own_name, stored, stored_folder, texts)
from ui.heads.waiting import band_or_progress, base_or_message  # noqa: F401 - the page's waiting boxes
from ui.shared.gpt_models import INSTALL_COMMAND  # noqa: F401
from ui.shared.startup import register_startup


def compute_defaults() -> dict:
    """-> {call: value} for what a learner sees before typing anything: their own heads at every OWN_KS (zero and
    mean) with the default name, the lens on each preset prompt, each built-in paragraph read by the induction head.
    Stored on disk (about 30 s of CPU once per machine), so no student's run computes them."""
    import scipy.stats  # noqa: F401, PLC0415 - the sections' intervals need it: imported here, not in a student's run

    def compute() -> dict:
        base, band, name = BASE.result(), BAND.result(), texts().copy_name
        found: dict = {}
        for heads in dict.fromkeys(own_choices(band).values()):
            found[("name", heads, name)] = own_name(heads, name)
            for mean in (False, True):
                found[("losses", heads, mean)] = own_losses(heads, mean)
        for _, text in texts().lens:
            ids = encode(text)
            found[("lens", ids)] = lens_of(ids)
        head = picked_head(base)[0]
        for paragraph in paragraphs():
            ids = encode(paragraph.text)
            found[("text", ids, paragraph.text, paragraph.name, head)] = name_read(ids, paragraph.text, paragraph.name,
                                                                                   head)
        return found

    return stored("defaults", compute, DEFAULTS_SOURCES)


DEFAULTS = register_startup("heads-defaults", compute_defaults)
