"""Lesson 6's sections (the GloVe experiment). Read page.py first: raw GloVe, random projections, the 3-D view and the
trained head; sentence.py is the learner's own sentence, training.py the "Train the head" button a class shares."""
