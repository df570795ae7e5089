"""The lesson "Watch a head form": a tiny GPT (attention_core.tiny_gpt) trained live, its induction head forming.
Read runs.py first (the runs shared by every session, on disk or the learner's own), then sections.py in the page's
order."""
