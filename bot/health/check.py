"""``mnemo-healthcheck``: exit 0 if the running process's status file says it is healthy.

The container's HEALTHCHECK runs this every interval, so it reads one small file and imports
nothing heavy. The file is the one the process writes (``logging.status_file``, from
``MNEMO_LOGGING__STATUS_FILE``, or the path given as the argument).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bot.health.status import problem, read_status

VARIABLE = "MNEMO_LOGGING__STATUS_FILE"


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    location = arguments[0] if arguments else os.environ.get(VARIABLE)
    if not location:
        print(f"unhealthy: no status file (set {VARIABLE} or pass its path)")
        return 1
    try:
        status = read_status(Path(location))
    except (OSError, ValueError) as error:
        print(f"unhealthy: {location} cannot be read ({error}): not started yet, or stopped")
        return 1
    found = problem(status, time.time())
    if found is not None:
        print(f"unhealthy: {found}")
        return 1
    print("healthy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
