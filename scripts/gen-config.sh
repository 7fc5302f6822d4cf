#!/usr/bin/env bash
# Prints a three-level config with N leaves for scale tests:
#   1:1 (100gbit, or the sum of its children's rates above that)
#   -> ceil(N/256) inner classes (256mbit each)
#   -> N leaves (1mbit, ceil 100mbit), one `match = dst A/32` each,
#   A counting up from 198.18.0.1 inside 198.18.0.0/15 (131071 addresses
#   after 198.18.0.0, so N is at most 131071).
# Class ids are handed out in file order, 1:1, 1:2, ... 1:ffff, then
# 2:1 ... 2:ffff, 3:1 ...: up to N = 65279 (65535 classes) every class is
# in major 1, as one tc HTB qdisc would hold them; above that the leaves
# go on in majors 2 and 3 (docs/config.md: a class id's major is part of
# its name). The last leaf is the default class.
#   scripts/gen-config.sh N > big.ini
set -eu
n=${1:?usage: gen-config.sh N}
case $n in
''|*[!0-9]*) echo "gen-config.sh: N must be a number" >&2; exit 2 ;;
esac
if [ "${#n}" -gt 6 ] || [ "$n" -lt 1 ] || [ "$n" -gt 131071 ]; then
	echo "gen-config.sh: N must be 1..131071 (one dst /32 per leaf in 198.18.0.0/15)" >&2
	exit 2
fi
mids=$(((n + 255) / 256))
awk -v n="$n" -v mids="$mids" '
# the id of the k-th class of the file (k from 0)
function id(k) { return sprintf("%x:%x", 1 + int(k / 65535), 1 + k % 65535) }
BEGIN {
	first_leaf = 1 + mids
	printf "# %d leaves under %d inner classes (scripts/gen-config.sh)\n", n, mids
	printf "[device]\ndefault = %s\nr2q = 10\n\n", id(first_leaf + n - 1)
	if (mids * 256 <= 100000)
		printf "[class %s]\nrate = 100gbit\n\n", id(0)
	else
		printf "[class %s]\nrate = %dmbit\n\n", id(0), mids * 256
	for (m = 0; m < mids; m++)
		printf "[class %s]\nparent = %s\nrate = 256mbit\nceil = 10gbit\n\n", id(1 + m), id(0)
	for (i = 0; i < n; i++) {
		a = i + 1
		printf "[class %s]\nparent = %s\nrate = 1mbit\nceil = 100mbit\n", id(first_leaf + i), id(1 + int(i / 256))
		printf "match = dst 198.%d.%d.%d/32\n\n", 18 + int(a / 65536), int(a / 256) % 256, a % 256
	}
}'
