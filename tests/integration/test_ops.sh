#!/usr/bin/env bash
# Integration test: see tests/integration/ops.py (notify socket, watchdog,
# --user/--group). Env BUILD = build dir. The Python side kills its
# children and removes its temp dirs; prints "N passed, N failed" last.
exec /usr/bin/python3 "$(dirname "$0")/ops.py" "$@"
