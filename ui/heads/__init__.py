"""The lesson "What heads do": lesson 9's GPT tested causally. Read study.py first (the model, the texts, the two
sets of repeated random sequences and the start-up work stored on disk), then sections.py in the page's order:
switch them off (and the learner's own heads), a head needs another, reading the layers, weight is not influence.
The math is in attention_core/gpt/interventions.py and causal_study.py."""
