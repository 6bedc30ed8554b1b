# The Mnemo bot. It is installed with `pip install .`, the same install the README describes,
# so pyproject.toml stays the one list of dependencies. No secrets here: tokens come from
# .env at run time (see docker-compose.yml and .env.example).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY adapters ./adapters
COPY bot ./bot
COPY memory ./memory
RUN pip install . \
    && cd / && rm -rf /src

# A fixed uid, so files in the volumes keep one owner across image upgrades.
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/mnemo mnemo \
    && mkdir -p /data /matrix-store /config \
    && chown mnemo:mnemo /data /matrix-store

# /data: the database (the truth), the index (rebuildable) and downloaded models.
# /matrix-store: matrix-nio's sync token and E2EE keys; losing it loses encrypted history.
# /config: an optional mnemo.toml (read-only); every key can also come from the environment.
ENV MNEMO_STORAGE__DATA_DIR=/data \
    MNEMO_MATRIX__STORE_PATH=/matrix-store \
    MNEMO_EMBEDDING__CACHE_DIR=/data/models \
    FASTEMBED_CACHE_PATH=/data/models \
    HF_HOME=/data/models/huggingface
VOLUME ["/data", "/matrix-store"]

USER mnemo
WORKDIR /config
ENTRYPOINT ["mnemo"]
CMD ["doctor"]
