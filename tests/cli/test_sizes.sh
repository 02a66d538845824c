#!/usr/bin/env bash
# Size sweeps of every twag command with input of variable length, each
# result checked against an independent implementation (sizes_test.py).
exec /usr/bin/python3 "$(dirname "$0")/sizes_test.py" "$@"
