"""Lesson "Attention as it is built today" (Gemma 3 270M). Read page.py first (the model, the learner's text, the
cached calls), then sections.py (one function a section, each asking its question before it shows the answer)."""
