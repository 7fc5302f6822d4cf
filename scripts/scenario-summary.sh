#!/usr/bin/env bash
# Prints the scenario suite's summary table from build/results/summary.tsv
# (rows appended by tests/lib/shaping.sh: summary_row).
f=${1:-build/results/summary.tsv}
[ -s "$f" ] || { echo "no scenario results in $f"; exit 0; }
echo "=== scenario summary ($(date -u +%F), kernel in VM, host $(uname -r), $(nproc) cpus)"
{
	printf 'scenario\tcase\texpected\thtbctl\tkernel HTB\ttolerance\tverdict\n'
	cat "$f"
} | column -t -s $'\t'
