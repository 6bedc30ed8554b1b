#!/usr/bin/env bash
# Sets up everything the tests need on a fresh machine (Python and the package registries),
# then runs the quality gates and the whole test suite. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
# The Matrix integration tests start a real Synapse from its own virtual environment.
bash scripts/install-synapse.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy
echo "== pytest"
.venv/bin/python -m pytest "$@"
# The plumbing against a real model server (llama.cpp and a 0.5B model, CPU): only where
# ../shared/llm is there to start it (CI has it beside the repository).
if [ -d ../shared/llm ]; then
    echo "== pytest -m real_llm (../shared/llm)"
    .venv/bin/python -m pytest -m real_llm "$@"
fi
# The compose stack for real (tests/deploy): the images built, `docker compose up` in a Docker
# daemon the test starts itself (as root; it installs docker.io and debootstrap where missing).
echo "== pytest -m docker (tests/deploy)"
.venv/bin/python -m pytest -m docker "$@"
