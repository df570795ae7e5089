"""The lesson "What heads do": lesson 9's GPT tested causally. Read results.py first (the model, the texts, the two
sets of repeated random sequences and the start-up work stored on disk; study.py registers the start-up work that
calls every section, waiting.py is what the page shows while it runs), then sections.py in the page's order:
switch them off (and the learner's own heads), a head needs another, does the model decide "it" at all
(referent.py: its behaviour, then patching), reading the layers, weight is not influence, and on ordinary text
(ordinary.py: the induction head on a paragraph with a repeated name). The math is in
attention_core/smollm2/interventions.py and attention_core/gpt_studies/ (causal_study.py, referent_study.py,
ordinary_text.py)."""
