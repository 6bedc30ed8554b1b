#!/usr/bin/env bash
# Installs the Synapse homeserver that the Matrix integration tests start, into its own virtual
# environment (.venv-synapse): its pinned dependencies would clash with the project's.
# Tests find it there, or wherever MNEMO_SYNAPSE_PYTHON points.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv-synapse/bin/python ]; then
    python3 -m venv .venv-synapse
fi
if ! .venv-synapse/bin/python -c "import synapse" 2>/dev/null; then
    .venv-synapse/bin/python -m pip install --quiet --disable-pip-version-check "matrix-synapse>=1.100"
fi
.venv-synapse/bin/python -c "import synapse; print('synapse', synapse.__version__)"
