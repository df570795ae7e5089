"""ui.shared.common.csv_bytes: UTF-8 with a BOM, made once per distinct table, and never the CSV of another table."""

import numpy as np
import pandas as pd

from ui.shared.common import csv_bytes


def table(values, tokens=("猫", "it", "animal")) -> pd.DataFrame:
    frame = pd.DataFrame(np.asarray(values, dtype=float), columns=list(tokens))
    frame.insert(0, "トークン", list(tokens))
    return frame


def test_bytes_are_the_tables_csv_with_a_bom():
    t = table(np.eye(3))
    assert csv_bytes(t) == b"\xef\xbb\xbf" + t.to_csv(index=False).encode("utf-8")
    assert csv_bytes("a,b\n1,2\n") == "a,b\n1,2\n".encode("utf-8-sig")


def test_equal_tables_share_an_entry_and_different_ones_never_do():
    rng = np.random.default_rng(0)
    values = rng.random((3, 3))
    first = csv_bytes(table(values))
    assert csv_bytes(table(values.copy())) == first  # an equal table built again: the same CSV
    changed = values.copy()
    changed[2, 1] += 1e-9  # one number in the last digits
    assert csv_bytes(table(changed)) == table(changed).to_csv(index=False).encode("utf-8-sig") != first
    assert csv_bytes(table(values, ("a", "b", "c"))) != first  # other labels
