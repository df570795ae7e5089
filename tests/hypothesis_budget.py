"""How many examples a hypothesis test draws: its own number in the full suite, a tenth of it (at least 5) under the
fast profile (tests/conftest.py). A test's explicit max_examples would override any profile, so tests write
``@settings(max_examples=examples(200))``."""

from hypothesis import settings


def examples(full: int) -> int:
    return full if settings.get_current_profile_name() != "fast" else max(5, full // 10)
