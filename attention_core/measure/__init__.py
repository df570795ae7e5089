"""The measurement toolkit both models' lessons share: how a claim about heads is scored.

Read head_stats.py first: split the items into a set to pick heads on and a set to score them on
(``split``, ``pick_on_score_on``), counts with a Wilson 95 % interval, the chance level of the best of N heads
(``best_of_n_chance``) and the rule baselines. Nothing here knows a model: it takes arrays of per-head outcomes.
"""
