#!/usr/bin/env bash
# Integration test: see tests/integration/radsec.py (RADIUS over TLS with
# radsecproxy, eapol_test, radclient and Python TLS clients). Env BUILD =
# build dir. The Python side kills its children (PR_SET_PDEATHSIG and on
# exit) and removes its temp dirs; prints "N passed, N failed" last.
exec /usr/bin/python3 "$(dirname "$0")/radsec.py" "$@"
