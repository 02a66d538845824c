#!/usr/bin/env bash
# Integration test: see tests/integration/check_config.py. Env BUILD = build dir.
# Prints "N passed, N failed" last.
exec /usr/bin/python3 "$(dirname "$0")/check_config.py" "$@"
