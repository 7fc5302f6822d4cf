#!/usr/bin/env bash
# What htbctl echoes of its input reaches the terminal bounded and as text
# (issue 10): a 1 MB value, file name or device name gives a short line;
# terminal escapes, C1 controls and invalid UTF-8 are written as \xNN; with
# -j the {"error": ...} line on stdout is valid JSON. Needs no privileges:
# `check` reads only the file, and a device name is checked before
# anything else.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
HTBCTL=${HTBCTL:-$top/${OUTPUT:-build}/htbctl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ! -x "$HTBCTL" ]; then
	echo "FAIL messages: no htbctl binary at $HTBCTL (build it or set HTBCTL)"
	exit 1
fi

pass() { echo "PASS messages $1"; }
fail() { echo "FAIL messages $1: $2"; }

big=$(head -c 1048576 /dev/zero | tr '\0' x)
esc=$'\e]0;owned\a\e[2J\xc2\x9b'

# bounded NAME MAXBYTES CMD...: exit 1, every stderr line under MAXBYTES,
# no ESC, BEL or C1 control byte on stderr, and with -j valid JSON on stdout.
bounded() {
	local name=$1 max=$2 rc=0 longest
	shift 2
	"$HTBCTL" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/err")
	if [ $rc != 1 ]; then
		fail "$name" "exit $rc, wanted 1: $(head -c 200 "$tmp/err")"
	elif [ "$longest" -ge "$max" ]; then
		fail "$name" "a stderr line of $longest bytes"
	elif LC_ALL=C grep -q $'[\e\a]\\|\xc2\x9b' "$tmp/err"; then
		fail "$name" "raw control characters on stderr: $(head -c 200 "$tmp/err" | od -c | head -3 | tr '\n' ' ')"
	elif [ "$1" = -j ] && ! jq -e .error "$tmp/out" > /dev/null 2>&1; then
		fail "$name" "stdout is no JSON error: $(head -c 200 "$tmp/out")"
	else
		pass "$name"
	fi
}

conf() {	# name value: a config with value as [device] default
	printf '[device]\ndefault = %s\n' "$2" > "$tmp/$1.ini"
	echo "$tmp/$1.ini"
}

bounded "1 MB value" 400 check config "$(conf big "$big")"
bounded "1 MB rate" 400 check config "$(printf '[class 1:1]\nrate = %s\n' "$big" > "$tmp/r.ini"; echo "$tmp/r.ini")"
bounded "1 MB match" 400 check config \
	"$(printf '[class 1:1]\nrate = 1mbit\nmatch = dst %s\n' "$big" > "$tmp/m.ini"; echo "$tmp/m.ini")"
bounded "escapes in a value" 400 check config "$(conf esc "$esc")"
bounded "invalid UTF-8 in a value" 400 check config "$(conf utf "a"$'\xff\xfe'"b")"
bounded "escapes in a value, -j" 400 -j check config "$(conf esc "$esc")"
# the file's own name is echoed on every line
cp "$tmp/esc.ini" "$tmp/$esc.ini"
bounded "escapes in the file name" 600 check config "$tmp/$esc.ini"
bounded "100 kB file name" 1200 check config "$tmp/${big:0:100000}"
bounded "1 MB device name" 400 show dev "${big:0:100000}"
bounded "escapes in a device name" 400 show dev "$esc/x"
bounded "escapes in a device name, -j" 400 -j show dev "$esc/x"

# says NAME TEXT CONFIG: check's stderr has TEXT (fixed), the value shown
says() {
	"$HTBCTL" check config "$3" 2> "$tmp/err" > /dev/null
	grep -qF -- "$2" "$tmp/err" && pass "$1" || fail "$1" "$(head -c 300 "$tmp/err")"
}
says "a cut value says its length" "xxxx...' (1048576 bytes) for 'default'" "$tmp/big.ini"
says "an escaped value reads as \\xNN" \
	"invalid class id '\x1b]0;owned\x07\x1b[2J\xc2\x9b' for 'default'" "$tmp/esc.ini"
says "invalid UTF-8 reads as \\xNN" "invalid class id 'a\xff\xfeb'" "$tmp/utf.ini"
