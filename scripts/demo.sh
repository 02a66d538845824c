#!/usr/bin/env bash
# The main job until the gateway exists: the CLI's help and a worked example.
set -eu
build=${1:-build}
"$build/twag" --help
