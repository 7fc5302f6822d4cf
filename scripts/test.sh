#!/usr/bin/env bash
# The README's test command: install what is needed, build, run every tier.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/setup.sh
make -j"$(nproc)" tests
exec tests/run.sh "$@"
