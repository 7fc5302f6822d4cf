#!/usr/bin/env bash
# What htbctl echoes of its input reaches the terminal bounded and as text
# (issue 10): a 1 MB value, file name or device name gives a short line;
# terminal escapes, C1 controls and invalid UTF-8 are written as \xNN; with
# -j the {"error": ...} line on stdout is valid JSON. Needs no privileges:
# `check` reads only the file, and a device name is checked before
# anything else.
RUN_TOPO=none
needs() { echo "$HTBCTL" jq; }

big=$(head -c 1048576 /dev/zero | tr '\0' x)
esc=$'\e]0;owned\a\e[2J\xc2\x9b'

# bounded MAXBYTES CMD...: exit 1, every stderr line under MAXBYTES, no
# ESC, BEL or C1 control byte on stderr, and with -j valid JSON on stdout.
bounded() {
	local max=$1 rc=0 longest
	shift
	"$HTBCTL" "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/err")
	[ $rc = 1 ] || fail "exit $rc, wanted 1: $(head -c 200 "$tmp/err")"
	[ "$longest" -lt "$max" ] || fail "a stderr line of $longest bytes"
	! LC_ALL=C grep -q $'[\e\a]\\|\xc2\x9b' "$tmp/err" ||
		fail "raw control characters on stderr: $(head -c 200 "$tmp/err" | od -c | head -3 | tr '\n' ' ')"
	[ "$1" != -j ] || jq -se '.[0].error' "$tmp/out" > /dev/null 2>&1 ||
		fail "stdout is no JSON error: $(head -c 200 "$tmp/out")"
}

conf() {	# name value: a config with value as [device] default
	printf '[device]\ndefault = %s\n' "$2" > "$tmp/$1.ini"
	echo "$tmp/$1.ini"
}

# says TEXT CONFIG: check's stderr has TEXT (fixed), the value shown
says() {
	"$HTBCTL" check config "$2" 2> "$tmp/err" > /dev/null
	grep -qF -- "$1" "$tmp/err" || fail "$(head -c 300 "$tmp/err")"
}

test_big_value() { bounded 400 check config "$(conf big "$big")"; }
test_big_rate() {
	printf '[class 1:1]\nrate = %s\n' "$big" > "$tmp/r.ini"
	bounded 400 check config "$tmp/r.ini"
}
test_big_match() {
	printf '[class 1:1]\nrate = 1mbit\nmatch = dst %s\n' "$big" > "$tmp/m.ini"
	bounded 400 check config "$tmp/m.ini"
}
test_escapes_in_value() { bounded 400 check config "$(conf esc "$esc")"; }
test_invalid_utf8_in_value() { bounded 400 check config "$(conf utf "a"$'\xff\xfe'"b")"; }
test_escapes_in_value_json() { bounded 400 -j check config "$(conf esc "$esc")"; }
# the file's own name is echoed on every line
test_escapes_in_file_name() {
	conf esc "$esc" > /dev/null
	cp "$tmp/esc.ini" "$tmp/$esc.ini"
	bounded 600 check config "$tmp/$esc.ini"
}
test_100kB_file_name() { bounded 1200 check config "$tmp/${big:0:100000}"; }
test_100kB_device_name() { bounded 400 show dev "${big:0:100000}"; }
test_escapes_in_device_name() { bounded 400 show dev "$esc/x"; }
test_escapes_in_device_name_json() { bounded 400 -j show dev "$esc/x"; }

test_cut_value_says_its_length() {
	says "xxxx...' (1048576 bytes) for 'default'" "$(conf big "$big")"
}
test_escaped_value_reads_as_xNN() {
	says "invalid class id '\x1b]0;owned\x07\x1b[2J\xc2\x9b' for 'default'" "$(conf esc "$esc")"
}
test_invalid_utf8_reads_as_xNN() {
	says "invalid class id 'a\xff\xfeb'" "$(conf utf "a"$'\xff\xfe'"b")"
}

. "$(dirname "$0")/../lib/runner.sh"
