#!/usr/bin/env bash
# Integration test: see tests/integration/ipv6.py. Env BUILD = build dir.
exec /usr/bin/python3 "$(dirname "$0")/ipv6.py" "$@"
