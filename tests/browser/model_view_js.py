"""JavaScript that measures lesson 8's model view as drawn on its canvas (shared by tests/browser and bench/)."""

# The first head's map (L0H0) as drawn: scan the canvas for the first row holding a run of saturated (viridis) pixels
# (axis labels are grey), then measure the run of map pixels across that row and down that column, up to the gap
# before the next map. -> {w, h} in CSS px, or null before the cells are drawn.
FIRST_MAP_PX = """() => {
  const c = document.querySelector("[data-testid='stVegaLiteChart'] canvas");
  if (!c || c.width === 0) return null;
  const scale = c.width / c.getBoundingClientRect().width;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const cell = (x, y) => { const i = 4 * (y * c.width + x);
    return d[i + 3] > 200 && Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) > 40; };
  for (let y = 0; y < c.height; y++) {
    let x0 = -1, run = 0;
    for (let x = 0; x < c.width && run < 8; x++) { if (cell(x, y)) { if (x0 < 0) x0 = x; run++; } else { x0 = -1; run = 0; } }
    if (run < 8) continue;
    const ym = y + 2, xm = x0 + 2;
    let x1 = x0; while (x1 < c.width && cell(x1, ym)) x1++;
    let y1 = y; while (y1 < c.height && cell(xm, y1)) y1++;
    return {w: (x1 - x0) / scale, h: (y1 - y) / scale};
  }
  return null;
}"""


def model_view_messages(pg) -> list[tuple[int, int, dict]]:
    """Record every model view the page's websocket delivers -> a list that fills with (spec bytes, data bytes, spec).
    Call before the page is opened."""
    import json

    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    seen = []

    def on_frame(payload):
        if not isinstance(payload, bytes):
            return
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            return
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        if kind and "vega" in kind:
            chart = getattr(element, kind)
            data = len(chart.data.data) + sum(len(d.data.data) for d in chart.datasets)
            seen.append((len(chart.spec.encode()), data, json.loads(chart.spec)))

    pg.on("websocket", lambda ws: ws.on("framereceived", on_frame) if "/_stcore/stream" in ws.url else None)
    return seen
