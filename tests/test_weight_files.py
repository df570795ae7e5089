"""attention_core/gpt/weight_files.py on its own (the models' files through it: test_gpt_weights, test_gemma_weights,
test_gguf_file, each against the gguf package's dequantizer)."""

import numpy as np
import pytest

from attention_core.gpt.weight_files import array_fields, fill_untrained, in_ram, installed_file, npy_allocator


class Missing(RuntimeError):
    pass


def test_a_package_that_is_not_installed_raises_the_models_own_error_with_the_hint():
    with pytest.raises(Missing, match="no-such-model-package is not installed: pip install it"):
        installed_file("no-such-model-package", ".gguf", Missing, "pip install it")


def test_a_file_the_package_does_not_hold_raises_with_the_hint():
    with pytest.raises(Missing, match=r"lists no file \*\.nothing-here: reinstall it: hint"):
        installed_file("numpy", ".nothing-here", Missing, "hint")


def test_a_file_the_package_holds_is_found_on_disk():
    import numpy

    path = installed_file("numpy", "numpy/__init__.py", Missing, "hint")
    assert path.samefile(numpy.__file__)


def test_the_untrained_copy_is_normal_with_unit_norm_gains_and_the_same_for_the_same_seed(tmp_path):
    shapes = {"embedding": (300, 64), "attn_norm": (2, 64), "attn_q": (2, 64, 64)}
    first = fill_untrained(shapes, seed=3, salt=23, init_std=0.02, allocate=in_ram)
    again = fill_untrained(shapes, seed=3, salt=23, init_std=0.02, allocate=npy_allocator(tmp_path))
    other = fill_untrained(shapes, seed=4, salt=23, init_std=0.02, allocate=in_ram)
    assert {name: a.shape for name, a in first.items()} == shapes
    assert np.all(first["attn_norm"] == 1.0)
    for name in ("embedding", "attn_q"):
        assert first[name].dtype == np.float32
        np.testing.assert_array_equal(first[name], np.load(tmp_path / f"{name}.npy"))  # written as drawn
        assert abs(float(first[name].std()) - 0.02) < 0.001 and abs(float(first[name].mean())) < 0.001
        assert not np.array_equal(first[name], other[name])
    assert all(np.array_equal(first[n], again[n]) for n in shapes)


def test_array_fields_are_every_field_but_the_config_in_order():
    from dataclasses import dataclass

    @dataclass
    class Weights:
        config: int
        embedding: np.ndarray
        output_norm: np.ndarray

    assert array_fields(Weights) == ["embedding", "output_norm"]
