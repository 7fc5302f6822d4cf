#!/usr/bin/env bash
# Prints a three-level config with N leaves for scale tests:
#   1:1 (100gbit) -> ceil(N/256) inner classes (256mbit each)
#   -> N leaves (1mbit, ceil 100mbit), one `match = dst A/32` each,
#   A counting up from 198.18.0.1 inside 198.18.0.0/15.
# The last leaf is the default class. One major holds 65535 class ids,
# so N is at most 65279 (65279 leaves + 255 inner + 1 top = 65535).
#   scripts/gen-config.sh N > big.ini
set -eu
n=${1:?usage: gen-config.sh N}
case $n in
''|*[!0-9]*) echo "gen-config.sh: N must be a number" >&2; exit 2 ;;
esac
mids=$(((n + 255) / 256))
if [ "$n" -lt 1 ] || [ $((1 + mids + n)) -gt 65535 ]; then
	echo "gen-config.sh: N must be 1..65279 (one major holds 65535 classes)" >&2
	exit 2
fi
awk -v n="$n" -v mids="$mids" 'BEGIN {
	first_leaf = 2 + mids
	printf "# %d leaves under %d inner classes (scripts/gen-config.sh)\n", n, mids
	printf "[device]\ndefault = 1:%x\nr2q = 10\n\n", first_leaf + n - 1
	printf "[class 1:1]\nrate = 100gbit\n\n"
	for (m = 0; m < mids; m++)
		printf "[class 1:%x]\nparent = 1:1\nrate = 256mbit\nceil = 10gbit\n\n", 2 + m
	for (i = 0; i < n; i++) {
		a = i + 1
		printf "[class 1:%x]\nparent = 1:%x\nrate = 1mbit\nceil = 100mbit\n", first_leaf + i, 2 + int(i / 256)
		printf "match = dst 198.%d.%d.%d/32\n\n", 18 + int(a / 65536), int(a / 256) % 256, a % 256
	}
}'
