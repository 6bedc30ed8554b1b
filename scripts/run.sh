#!/usr/bin/env bash
# Sets up Mnemo on a fresh machine and starts it. Without arguments it opens a chat in this
# terminal (`mnemo chat`); any arguments are passed to `mnemo` instead (for example:
# scripts/run.sh doctor, scripts/run.sh chat --user alice --room kitchen).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
if [ ! -f mnemo.toml ]; then
    cp mnemo.example.toml mnemo.toml
    echo "created mnemo.toml from mnemo.example.toml; edit it to point at your LLM" >&2
fi
if [ "$#" -eq 0 ]; then
    set -- chat
fi
exec .venv/bin/mnemo "$@"
