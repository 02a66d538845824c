#!/usr/bin/env bash
# Integration test: see tests/integration/acct.py (RADIUS accounting with
# radclient and a hashlib client). Env BUILD = build dir. The Python side
# kills its children (PR_SET_PDEATHSIG and on exit) and removes its temp
# dirs; prints "N passed, N failed" last.
exec /usr/bin/python3 "$(dirname "$0")/acct.py" "$@"
