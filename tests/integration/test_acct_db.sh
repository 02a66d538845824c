#!/usr/bin/env bash
# Integration test: see tests/integration/acct_db.py. Env BUILD = build dir.
exec /usr/bin/python3 "$(dirname "$0")/acct_db.py" "$@"
