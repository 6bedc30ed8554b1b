# The Mnemo bot. It is installed with `pip install .`, the same install the README describes,
# so pyproject.toml stays the one list of dependencies. No secrets here: tokens come from
# .env at run time (see docker-compose.yml and .env.example).
#
# Two stages: the first installs into a virtual environment, the second copies only that
# environment onto a clean base, so no source tree, pip cache or build leftovers ship.

FROM python:3.11-slim AS build

# No .pyc files either: they make the image bigger and no start-up measurably faster.
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/mnemo

WORKDIR /src
# The dependencies first, in a layer of their own: a change to the code alone reinstalls
# only Mnemo (seconds), not the ~900 MB of libraries. The packages are empty here, and
# deleted with the build folder after: setuptools would otherwise keep the empty
# __init__.py it built, as it is newer than the real one copied in below.
COPY pyproject.toml README.md LICENSE ./
RUN mkdir adapters bot evaluation memory \
    && touch adapters/__init__.py bot/__init__.py evaluation/__init__.py memory/__init__.py \
    && /opt/mnemo/bin/pip install . \
    && /opt/mnemo/bin/pip uninstall --yes mnemo \
    && rm -rf build adapters bot evaluation memory
COPY adapters ./adapters
COPY bot ./bot
COPY evaluation ./evaluation
COPY memory ./memory
# pip and setuptools are not needed to run the bot.
RUN /opt/mnemo/bin/pip install --no-deps . \
    && /opt/mnemo/bin/pip uninstall --yes setuptools pip

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/mnemo/bin:$PATH

# A fixed uid, so files in the volumes keep one owner across image upgrades.
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/mnemo mnemo \
    && mkdir -p /data /matrix-store /config \
    && chown mnemo:mnemo /data /matrix-store

COPY --from=build /opt/mnemo /opt/mnemo

# /data: the database (the truth), the index (rebuildable) and downloaded models.
# /matrix-store: matrix-nio's sync token and E2EE keys; losing it loses encrypted history.
# /config: an optional mnemo.toml (read-only); every key can also come from the environment.
# The status file: rewritten by the running bot or worker, read by the HEALTHCHECK.
ENV MNEMO_STORAGE__DATA_DIR=/data \
    MNEMO_MATRIX__STORE_PATH=/matrix-store \
    MNEMO_EMBEDDING__CACHE_DIR=/data/models \
    FASTEMBED_CACHE_PATH=/data/models \
    HF_HOME=/data/models/huggingface \
    MNEMO_LOGGING__STATUS_FILE=/tmp/mnemo-status.json
VOLUME ["/data", "/matrix-store"]

# Healthy: the process rewrites its status file, its chat connection is up and its write
# queue moves (bot/health/status.py). A first start loads models: the start period covers it.
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["mnemo-healthcheck"]

USER mnemo
WORKDIR /config
ENTRYPOINT ["mnemo"]
CMD ["doctor"]
