#!/usr/bin/env bash
# CLI tests: published vectors through the twag command line, cross-checks
# against independent implementations (osmo-auc-gen, Python cryptography),
# and bad input (exit status 2, one line naming the option).
exec /usr/bin/python3 "$(dirname "$0")/cli_test.py" "$@"
