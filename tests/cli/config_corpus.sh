#!/usr/bin/env bash
# `htbctl check` against the config corpus (tests/config/), one line per
# case: "PASS name" or "FAIL name: why".
#
#   tests/config/invalid/NAME.ini  first line "# expect: LINE: message"
#       exit status 1, nothing on stdout, and "FILE:LINE: message" (or
#       "FILE: message" for LINE 0) somewhere on stderr; message may be the
#       start of the full text, and "{*}" in it matches any characters.
#   tests/config/valid/NAME.ini    exit status 0, and
#       NAME.json      the resolved config (`-j`), compared after jq -S;
#                      cgroup ids vary by machine: checked nonzero, then dropped
#       NAME.warnings  optional: one "LINE: message" per expected warning;
#                      without it stderr must be empty
#       NAME.txt       optional: the text output, compared exactly
#
# The binary is $HTBCTL (default: build/htbctl, or $OUTPUT/htbctl).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
HTBCTL=${HTBCTL:-$top/${OUTPUT:-build}/htbctl}
dir=$top/tests/config
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$HTBCTL" ]; then
	echo "FAIL config_corpus: no htbctl binary at $HTBCTL (build it or set HTBCTL)"
	exit 1
fi
if ! command -v jq >/dev/null; then
	echo "FAIL config_corpus: jq is not installed"
	exit 1
fi

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

# Does a line of FILE contain TEXT? "{*}" in TEXT stands for any characters
# (for paths that differ between machines).
has_line() {	# TEXT FILE
	awk -v want="$1" 'BEGIN { n = split(want, part, /\{\*\}/) }
	{
		s = $0
		for (i = 1; i <= n; i++) {
			k = index(s, part[i])
			if (!k)
				next
			s = substr(s, k + length(part[i]))
		}
		found = 1
	}
	END { exit !found }' "$2"
}

run() {		# args... -> $tmp/out, $tmp/err, $rc
	"$HTBCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# ---- invalid configs ----
ninvalid=0
for f in "$dir"/invalid/*.ini; do
	[ -f "$f" ] || continue
	ninvalid=$((ninvalid + 1))
	name=invalid/$(basename "$f" .ini)
	first=$(head -n1 "$f")
	if ! [[ $first =~ ^#\ expect:\ ([0-9]+):\ (.+)$ ]]; then
		fail "$name" "first line is not '# expect: LINE: message'"
		continue
	fi
	line=${BASH_REMATCH[1]} msg=${BASH_REMATCH[2]}
	if [ "$line" = 0 ]; then
		want="$f: $msg"
	else
		want="$f:$line: $msg"
	fi
	run check config "$f"
	if [ "$rc" != 1 ]; then
		fail "$name" "exit status $rc, expected 1 ($(head -c 200 "$tmp/err"))"
	elif [ -s "$tmp/out" ]; then
		fail "$name" "printed on stdout: $(head -c 200 "$tmp/out")"
	elif ! has_line "$want" "$tmp/err"; then
		fail "$name" "expected '$want', got: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	else
		pass "$name"
	fi
done
if [ "$ninvalid" -lt 40 ]; then
	fail invalid_corpus "only $ninvalid invalid configs, expected at least 40"
fi

# ---- valid configs ----
normalize() {	# JSON file -> sorted, cgroup ids dropped
	jq -S 'del(.classes[].matches[] | select(.type == "cgroup") | .id)' "$1"
}

for f in "$dir"/valid/*.ini; do
	[ -f "$f" ] || continue
	base=${f%.ini}
	name=valid/$(basename "$base")
	run -j check config "$f"
	if [ "$rc" != 0 ]; then
		fail "$name" "exit status $rc: $(head -n 3 "$tmp/err" | tr '\n' '|')"
		continue
	fi
	if ! jq -e '[.classes[].matches[] | select(.type == "cgroup") | .id > 0] | all' \
		"$tmp/out" >/dev/null 2>&1; then
		fail "$name" "output is not JSON, or a cgroup id is 0"
		continue
	fi
	if [ ! -f "$base.json" ]; then
		fail "$name" "no expected $base.json"
		continue
	fi
	if ! diff -u <(normalize "$base.json") <(normalize "$tmp/out") >"$tmp/diff"; then
		fail "$name" "JSON differs: $(grep '^[-+] ' "$tmp/diff" | head -n 6 | tr '\n' '|')"
		continue
	fi
	why=
	if [ -f "$base.warnings" ]; then
		while IFS= read -r w; do
			[ -n "$w" ] || continue
			grep -qF -- "$f:${w%%: *}: warning: ${w#*: }" "$tmp/err" ||
				why="missing warning '$w'"
		done <"$base.warnings"
		nwant=$(grep -c . "$base.warnings")
		ngot=$(grep -c ': warning: ' "$tmp/err")
		[ -n "$why" ] || [ "$nwant" = "$ngot" ] ||
			why="$ngot warnings, expected $nwant: $(tr '\n' '|' <"$tmp/err")"
	elif [ -s "$tmp/err" ]; then
		why="unexpected stderr: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	fi
	if [ -z "$why" ] && [ -f "$base.txt" ]; then
		run check config "$f"
		if [ "$rc" != 0 ] || ! diff -u "$base.txt" "$tmp/out" >"$tmp/diff"; then
			why="text output differs: $(grep '^[-+]' "$tmp/diff" | head -n 4 | tr '\n' '|')"
		fi
	fi
	if [ -n "$why" ]; then
		fail "$name" "$why"
	else
		pass "$name"
	fi
done

# ---- the command line ----
run check
[ "$rc" = 2 ] && pass usage/no-args || fail usage/no-args "exit status $rc, expected 2"
run check config
[ "$rc" = 2 ] && pass usage/no-value || fail usage/no-value "exit status $rc, expected 2"
run check file x.ini
[ "$rc" = 2 ] && pass usage/unknown-keyword || fail usage/unknown-keyword "exit status $rc, expected 2"

missing=$tmp/no-such.ini
run check config "$missing"
if [ "$rc" = 1 ] && grep -qF "$missing: cannot open: No such file or directory" "$tmp/err"; then
	pass file/missing
else
	fail file/missing "exit status $rc: $(tr '\n' '|' <"$tmp/err")"
fi
run check config "$tmp"
if [ "$rc" = 1 ] && grep -qF "$tmp: a directory, not a regular file" "$tmp/err"; then
	pass file/directory
else
	fail file/directory "exit status $rc: $(tr '\n' '|' <"$tmp/err")"
fi
# a FIFO without a writer: 7112e5f blocked in open() (a daemon there
# ignored its signals); now one line at once
mkfifo "$tmp/fifo"
rc=0
timeout 10 "$HTBCTL" check config "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" || rc=$?
if [ "$rc" = 1 ] && grep -qF "$tmp/fifo: a FIFO or pipe, not a regular file" "$tmp/err"; then
	pass file/fifo
else
	fail file/fifo "exit status $rc (124: it hung): $(tr '\n' '|' <"$tmp/err")"
fi
run check config /dev/zero
if [ "$rc" = 1 ] && grep -qF "/dev/zero: a character device, not a regular file" "$tmp/err"; then
	pass file/device
else
	fail file/device "exit status $rc: $(tr '\n' '|' <"$tmp/err")"
fi
# unreadable: only meaningful without CAP_DAC_OVERRIDE
if [ "$(id -u)" != 0 ]; then
	printf '[class 1:1]\nrate = 1mbit\n' >"$tmp/secret.ini"
	chmod 000 "$tmp/secret.ini"
	run check config "$tmp/secret.ini"
	if [ "$rc" = 1 ] && grep -qF "$tmp/secret.ini: cannot open: Permission denied" "$tmp/err"; then
		pass file/unreadable
	else
		fail file/unreadable "exit status $rc: $(tr '\n' '|' <"$tmp/err")"
	fi
fi
# warnings past 20 are counted, not printed (7112e5f printed one line per
# warning: a million for a generated config)
{ printf '[class 1:1]\nrate = 10mbit\n'
  for i in $(seq 16 45); do printf '[class 1:%x]\nparent = 1:1\nrate = 10kbit\n' "$i"; done; } > "$tmp/warny.ini"
run check config "$tmp/warny.ini"
if [ "$rc" = 0 ] && [ "$(grep -c 'warning: quantum' "$tmp/err")" = 20 ] &&
   grep -qF "$tmp/warny.ini: 10 more warnings not shown (30 in all)" "$tmp/err"; then
	pass file/warnings-capped
else
	fail file/warnings-capped "exit status $rc, $(grep -c warning "$tmp/err") warning lines: $(tail -1 "$tmp/err")"
fi
# JSON mode failure: an error object on stdout for scripts
run -j check config "$dir/invalid/unknown-key.ini"
if [ "$rc" = 1 ] && jq -e '.error' "$tmp/out" >/dev/null 2>&1; then
	pass json/error-object
else
	fail json/error-object "exit status $rc, stdout: $(head -c 200 "$tmp/out")"
fi

# ---- scale: 100000 leaves over two majors, checked quickly ----
# gen-config.sh N: 1 top class, ceil(N/256) inner classes, N leaves with one
# dst /32 each; ids 1:1 .. 1:ffff then 2:1 ...
gen=$top/scripts/gen-config.sh
if [ -x "$gen" ]; then
	n=100000 classes=$((1 + 391 + 100000))
	"$gen" $n >"$tmp/big.ini"
	start=$(date +%s%N)
	run check config "$tmp/big.ini"
	ms=$((($(date +%s%N) - start) / 1000000))
	lines=$(wc -l <"$tmp/out")
	if [ "$rc" != 0 ]; then
		fail scale/100k-classes-text "exit status $rc: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	elif [ "$lines" != $((1 + classes + n)) ]; then
		fail scale/100k-classes-text "printed $lines lines"
	elif ! grep -q '^    class 2:8829 parent 1:188 ' "$tmp/out"; then
		fail scale/100k-classes-text "no leaf 2:8829 under 1:188"
	elif [ "$ms" -gt 5000 ]; then
		fail scale/100k-classes-text "took ${ms} ms (limit 5000)"
	else
		pass scale/100k-classes-text
	fi
	start=$(date +%s%N)
	run -j check config "$tmp/big.ini"
	ms=$((($(date +%s%N) - start) / 1000000))
	if [ "$rc" != 0 ]; then
		fail scale/100k-classes-json "exit status $rc: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	elif [ "$ms" -gt 5000 ]; then
		fail scale/100k-classes-json "took ${ms} ms (limit 5000)"
	elif [ "$(jq -r '"\(.classes | length) \(.device.default) \(.classes[-1].classid) \(.classes[-1].matches[0].prefix)"' "$tmp/out")" != \
		"$classes 2:8829 2:8829 198.19.134.160/32" ]; then
		fail scale/100k-classes-json "unexpected document: $(head -c 200 "$tmp/out")"
	else
		pass scale/100k-classes-json
	fi
fi
exit 0
