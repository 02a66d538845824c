#!/usr/bin/env bash
# Integration test: see tests/integration/logging_test.py. Env BUILD = build dir.
exec /usr/bin/python3 "$(dirname "$0")/logging_test.py" "$@"
