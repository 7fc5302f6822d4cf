#!/usr/bin/env bash
# tests/tools/tsprobe refuses bad numbers with one line naming the argument
# and exit 2, before it sends anything (the scenarios rely on its numbers:
# a negative TSPROBE_START_NS read as a huge time would sleep for ever).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
TP=$top/${OUTPUT:-build}/tests/tools/tsprobe
if [ ! -x "$TP" ]; then
	echo "FAIL tsprobe_args: no tsprobe binary at $TP (make builds it)"
	exit 1
fi

check() {	# name want_in_stderr cmd...
	local name=$1 want=$2 err rc
	shift 2
	err=$("$@" 2>&1 >/dev/null); rc=$?
	if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ $err == *"$want"* ]]; then
		echo "PASS tsprobe_args $name"
	else
		echo "FAIL tsprobe_args $name: exit $rc, stderr '$err'"
	fi
}

for v in -5 ' 5' abc '' 0x 18446744073709551616; do
	check "TSPROBE_START_NS='$v'" "TSPROBE_START_NS '$v'" \
		env TSPROBE_START_NS="$v" "$TP" send 198.18.0.2 7000 1 1000 200
done
check "port ' -1'" "PORT ' -1'" "$TP" recv ' -1' 1 1
check "port ' 7000' (blank first)" "PORT ' 7000'" "$TP" recv ' 7000' 1 1
check "port 65536" "PORT '65536'" "$TP" recv 65536 1 1
check "count 0" "COUNT '0'" "$TP" recv 7000 0 1
