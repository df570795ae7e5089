"""Lesson "Watch a head form": a tiny GPT (2 layers of 2 attention heads, no MLP) trained live in NumPy on sequences
whose second half repeats the first. The loss sits on a plateau, then drops within a few hundred steps as an
induction head forms in layer 2 on top of a previous-token head in layer 1; one layer never gets there; switching the
previous-token head off undoes it; the step of the change varies from seed to seed. It comes after lesson 9, which
found induction heads in a trained GPT: this page shows where they come from. Every section is in ui/tiny_gpt/ and
asks its question before it shows what answers it.
"""

import streamlit as st

from ui.shared.common import page_header, translator, what_to_try
from ui.tiny_gpt.runs import S, formula
from ui.tiny_gpt.sections import (bridge_section, control_section, controls, curves_section, data_section,
                                  knockout_section, maps_section, seeds_section)

t = translator()
page_header(t, S, formula())
chosen = controls(t)  # None while a learner's own setting waits for its Train button
what_to_try(t, S)
if chosen is None:
    st.stop()
config, seed = chosen
data_section(t, config, seed)  # one sequence, and the heads before any training (nothing is trained yet)
run = curves_section(t, config, seed)  # the run is trained (or read from disk) once the learner has answered
if run is not None:
    maps_section(t, run)  # the step slider: the diagonal stripe appears
    control_section(t, run)  # one layer, the same budget
    knockout_section(t, run)  # the previous-token head off
seeds_section(t)  # the default model over 10 seeds
bridge_section(t, run)  # back to lesson 9's real heads, beside this run's
