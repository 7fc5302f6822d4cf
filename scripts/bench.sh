#!/usr/bin/env bash
# `make bench`: cost per packet of the egress program against a minimal EDT
# program (bench/bench_prog.c says exactly what is measured). Needs root.
# Also builds the lock-free variant (bench/bpf/htbctl_nolock.bpf.c) to show
# what the locks cost and what they protect. Results: $OUTPUT/bench/results.txt
#   scripts/bench.sh [bench_prog options]   e.g. --trials 3 --max-classes 10000
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
OUT=${OUTPUT:-build}
CLANG=${CLANG:-clang}
ARCH=$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root to load BPF programs" >&2
	exit 1
fi
[ -x "$OUT/bench/bench_prog" ] || { echo "bench: build first: make OUTPUT=$OUT bench" >&2; exit 1; }

nolock=$OUT/bench/htbctl_nolock.bpf.o
"$CLANG" -g -O2 -target bpf -D__TARGET_ARCH_"$ARCH" -D__BPF__ -Wall \
	-Iinclude -Ivmlinux -I"$OUT" -c bench/bpf/htbctl_nolock.bpf.c -o "$nolock"

{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r) $(git rev-parse --short HEAD 2>/dev/null || true)"
	echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
	"$OUT/bench/bench_prog" --nolock "$nolock" "$@"
} | tee "$OUT/bench/results.txt"
