#!/usr/bin/env bash
# Before/after in one run: builds REV's bench_prog in a scratch worktree and
# runs it and this tree's, one after the other, each with its own EDT
# baseline measured beside it (their ratios are what compares).
#   scripts/bench-compare.sh REV [bench_prog options]    (root)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ $# -ge 1 ] || { echo "usage: $0 REV [bench_prog options]" >&2; exit 2; }
rev=$1; shift
[ "$(id -u)" = 0 ] || { echo "bench-compare: needs root to load BPF programs" >&2; exit 1; }
wt=$(mktemp -d /tmp/htbctl-bench.XXXXXX)
trap 'git worktree remove --force "$wt" 2>/dev/null; rm -rf "$wt"' EXIT
git worktree add -q --detach "$wt" "$rev"
make -s -C "$wt" -j"$(nproc)" build/bench/bench_prog >/dev/null
make -s -j"$(nproc)" build/bench/bench_prog >/dev/null
echo "### before: $(git rev-parse --short "$rev")"
"$wt/build/bench/bench_prog" "$@"
echo "### after: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (+ changes)')"
build/bench/bench_prog "$@"
