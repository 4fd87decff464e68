# OpenGuru application image: one image for every app role (web, worker, beat, migrate).
# The role is chosen by the command; the default command runs the ASGI web server.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=backend.config.settings.production \
    OPENGURU_DATA_DIR=/data

# git: cloning GitHub sources; ca-certificates: HTTPS to model providers and crawled sites.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# Unprivileged runtime user with a fixed uid/gid so volume ownership is stable across rebuilds.
RUN groupadd --system --gid 10001 openguru \
    && useradd --system --uid 10001 --gid openguru --create-home --home-dir /home/openguru \
        --shell /usr/sbin/nologin openguru

WORKDIR /app

# Dependencies first so code edits do not invalidate the (slow) pip layer.
COPY requirements.txt /app/requirements.txt
RUN pip install --no-cache-dir -r /app/requirements.txt

# Code stays root-owned (read-only for the runtime user); only /data is writable.
COPY . /app

# /data holds uploads (media/), collected static files (static/), the beat schedule, etc.
# Creating the folders here means a fresh named volume mounted on them inherits this ownership.
RUN mkdir -p /data/media /data/static \
    && chown -R openguru:openguru /data

USER openguru

EXPOSE 8000

# urllib with proxies disabled, so an outbound HTTP(S)_PROXY setting cannot break the probe.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request as u; r = u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:8000/healthz', timeout=8); sys.exit(0 if r.status == 200 else 1)"]

# uvicorn believes no forwarding header; the app trusts X-Forwarded-For only from OPENGURU_TRUSTED_PROXIES.
CMD ["uvicorn", "backend.config.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--workers", "2", "--no-proxy-headers"]
