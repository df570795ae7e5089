"""What heads do, tested: lesson 9's GPT with heads switched off, one head's output removed from another's keys,
its layers read through the unembedding, and attention weight set beside effect. Every section is in ui/heads/ and
asks its question before it shows what answers it."""

from ui.shared.common import page_header, translator, what_to_try
from ui.heads.sections import composition_section, influence_section, lens_section, switch_off_section
from ui.heads.study import S, band_or_progress, base_or_message
from ui.heads.referent import referent_section
from ui.heads.ordinary import ordinary_text_section

FORMULA = (r"h^{(\ell)}_{\text{off}}:\; z^{(\ell, h)} \leftarrow 0 \;\text{or}\; \bar z^{(\ell, h)},\qquad"
           r"\Delta\mathcal{L} = \mathcal{L}_{\text{off}} - \mathcal{L},\qquad"
           r"\text{lens}_\ell = \mathrm{RMSNorm}(x^{(\ell)})\,E^{\top}")

t = translator()
page_header(t, S, FORMULA)
base = base_or_message(t)  # the two sets' runs and the lighter studies; None (with a message) without the model
if base is not None:
    what_to_try(t, S)
    band = band_or_progress(t)  # the random-head band: None (with its progress) until the start-up work is done
    switch_off_section(t, base, band)
    composition_section(t, base)
    referent_section(t)  # does the model decide "it" at all? (its behaviour, then patching)
    lens_section(t, base)  # the learner's prompt picked here, read layer by layer
    influence_section(t, base, band)
    ordinary_text_section(t, base)  # lesson 9's induction head on a paragraph with a repeated name
