"""Lesson 4, why divide by sqrt(d_k): random q . k has variance d; unscaled, softmax saturates and the gradient dies."""

from ui import scaling
from ui.shared.common import guarded_fragment, page_header, translator, what_to_try

FORMULA = (r"\operatorname{Var}(q \cdot k) = d_k \qquad "
           r"\mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}\,\tau}\right)")


@guarded_fragment
def experiment() -> None:
    """The controls, the histogram, one query's weights; the question; then the d animation and the table that
    answer it: a control change or an answer reruns only this."""
    controls = scaling.controls(t)
    what_to_try(t, "scaling", **scaling.try_values(controls))
    scaling.section_histogram(t, controls)
    scaling.section_weights(t, controls)
    if scaling.section_question(t):
        scaling.section_animation(t, controls)
        scaling.section_table(t)


t = translator()
page_header(t, "scaling", FORMULA)
experiment()
scaling.section_temperature(t)
