#!/usr/bin/env bash
# Integration test: see tests/integration/radius11_test.py. Env BUILD = build dir.
exec /usr/bin/python3 "$(dirname "$0")/radius11_test.py" "$@"
