"""Lesson 8's sections (inside a trained model). Read page.py first: the model, the learner's sentence, predictions,
"find the head" and the sink; then measures.py (the head catalogue and the minimal pairs, scored on held-out
sentences) and view.py (all 72 heads at a glance)."""
