"""Chart builders: arrays in, plain Plotly figure dicts out (charts.dicts). No Streamlit here.

One builder per kind of chart, shared by every page that draws that kind.
"""

from charts.matrix import attention_heatmap
from charts.bars import weight_bars

__all__ = ["attention_heatmap", "weight_bars"]
