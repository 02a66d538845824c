#!/usr/bin/env bash
# Integration test: see tests/integration/dynauth.py (RFC 5176 Disconnect/CoA
# towards a NAS written on hashlib, the control socket, subscriber del and
# disable). Env BUILD = build dir; loopback only, children killed on exit.
exec /usr/bin/python3 "$(dirname "$0")/dynauth.py" "$@"
