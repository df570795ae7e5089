"""Shared look: colour-blind-safe scales readable on light and dark themes, fonts, margins."""

SEQUENTIAL = "Viridis"  # perceptually uniform, colour-blind safe
DIVERGING = "RdBu"
MASKED_GREY = "rgba(128,128,128,0.35)"
ACCENT = "#E69F00"  # Okabe-Ito orange, for the selected/highlighted thing
SECOND = "#0072B2"  # Okabe-Ito blue
THIRD = "#009E73"  # Okabe-Ito green
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def base_layout(title: str | None = None, height: int = 420) -> dict:
    """The layout every figure starts from."""
    return dict(
        title=dict(text=title) if title else None,
        height=height,
        margin=dict(l=60, r=20, t=50 if title else 20, b=60),
        font=dict(size=14),
    )


def text_width_px(text: str, size: float = 14) -> float:
    """An upper estimate of the width in px of ``text`` at font ``size`` (wide East Asian characters count double)."""
    import unicodedata

    return sum(size * (1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.62) for ch in str(text))
