#!/usr/bin/env bash
# Integration test: see tests/integration/tunnel_test.py. Env BUILD = build dir.
exec /usr/bin/python3 "$(dirname "$0")/tunnel_test.py" "$@"
