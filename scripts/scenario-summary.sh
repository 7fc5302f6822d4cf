#!/usr/bin/env bash
# Prints the scenario suite's summary table from build/results/summary.tsv
# (rows appended by tests/lib/shaping.sh: summary_row).
#   scripts/scenario-summary.sh [--markdown] [FILE]
# --markdown prints it as the README's table.
md=0
[ "${1:-}" = --markdown ] && { md=1; shift; }
f=${1:-build/results/summary.tsv}
[ -s "$f" ] || { echo "no scenario results in $f"; exit 0; }
when="results of $(date -u -r "$f" '+%F %H:%M UTC'), host $(uname -r), $(nproc) cpus"
if [ $md = 1 ]; then
	echo "Scenario summary ($when; VM: Debian's kernel under qemu TCG):"
	echo
	echo "| scenario | case | expected | htbctl | kernel HTB | tolerance | verdict |"
	echo "|---|---|---|---|---|---|---|"
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$f"
	exit 0
fi
echo "=== scenario summary ($when)"
{
	printf 'scenario\tcase\texpected\thtbctl\tkernel HTB\ttolerance\tverdict\n'
	cat "$f"
} | column -t -s $'\t'
