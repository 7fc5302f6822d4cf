#!/usr/bin/env bash
# `htbctl check` against the config corpus (tests/config/), one case per
# file, named invalid/NAME or valid/NAME:
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
# Then the command line, files that are no config, and scale.
# The binary is $HTBCTL (default: build/htbctl, or $OUTPUT/htbctl).
RUN_TOPO=none
needs() { echo "$HTBCTL" jq; }
dir=tests/config

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
	rc=0
	"$HTBCTL" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# ---- the corpus: a case per file, made here from the file names (a name
# that cannot be part of a function name fails case corpus) ----
unnamed=()
for f in "$(dirname "$0")"/../config/{invalid,valid}/*.ini; do
	[ -f "$f" ] || continue
	kind=${f%/*} kind=${kind##*/} name=${f##*/} name=${name%.ini}
	if [[ $name =~ ^[A-Za-z0-9._-]+$ ]]; then
		eval "test_$kind/$name() { check_$kind $name; }"
	else
		unnamed+=("$kind/$name")
	fi
done
unset f kind name

check_invalid() {	# NAME
	local f=$dir/invalid/$1.ini first line msg want
	first=$(head -n1 "$f")
	[[ $first =~ ^#\ expect:\ ([0-9]+):\ (.+)$ ]] ||
		fail "first line is not '# expect: LINE: message'"
	line=${BASH_REMATCH[1]} msg=${BASH_REMATCH[2]}
	if [ "$line" = 0 ]; then
		want="$f: $msg"
	else
		want="$f:$line: $msg"
	fi
	run check config "$f"
	[ "$rc" = 1 ] || fail "exit status $rc, expected 1 ($(head -c 200 "$tmp/err"))"
	[ ! -s "$tmp/out" ] || fail "printed on stdout: $(head -c 200 "$tmp/out")"
	has_line "$want" "$tmp/err" || fail "expected '$want', got: $(head -n 3 "$tmp/err" | tr '\n' '|')"
}

normalize() {	# JSON file -> sorted, cgroup ids dropped
	jq -S 'del(.classes[].matches[] | select(.type == "cgroup") | .id)' "$1"
}

check_valid() {		# NAME
	local base=$dir/valid/$1 f=$dir/valid/$1.ini w nwant ngot
	run -j check config "$f"
	[ "$rc" = 0 ] || fail "exit status $rc: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	jq -e '[.classes[].matches[] | select(.type == "cgroup") | .id > 0] | all' \
		"$tmp/out" >/dev/null 2>&1 || fail "output is not JSON, or a cgroup id is 0"
	[ -f "$base.json" ] || fail "no expected $base.json"
	diff -u <(normalize "$base.json") <(normalize "$tmp/out") >"$tmp/diff" ||
		fail "JSON differs: $(grep '^[-+] ' "$tmp/diff" | head -n 6 | tr '\n' '|')"
	if [ -f "$base.warnings" ]; then
		while IFS= read -r w; do
			[ -n "$w" ] || continue
			grep -qF -- "$f:${w%%: *}: warning: ${w#*: }" "$tmp/err" ||
				fail "missing warning '$w'"
		done <"$base.warnings"
		nwant=$(grep -c . "$base.warnings")
		ngot=$(grep -c ': warning: ' "$tmp/err")
		[ "$nwant" = "$ngot" ] || fail "$ngot warnings, expected $nwant: $(tr '\n' '|' <"$tmp/err")"
	elif [ -s "$tmp/err" ]; then
		fail "unexpected stderr: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	fi
	if [ -f "$base.txt" ]; then
		run check config "$f"
		[ "$rc" = 0 ] && diff -u "$base.txt" "$tmp/out" >"$tmp/diff" ||
			fail "text output differs: $(grep '^[-+]' "$tmp/diff" | head -n 4 | tr '\n' '|')"
	fi
}

# every file has its case, and the invalid ones are many
test_corpus() {
	local n
	[ ${#unnamed[@]} = 0 ] || fail "files named unlike a case ([A-Za-z0-9._-]): ${unnamed[*]}"
	n=$(compgen -A function test_invalid/ | wc -l)
	[ "$n" -ge 40 ] || fail "only $n invalid configs, expected at least 40"
}

# ---- the command line ----
test_usage/no-args() { run check; [ "$rc" = 2 ] || fail "exit status $rc, expected 2"; }
test_usage/no-value() { run check config; [ "$rc" = 2 ] || fail "exit status $rc, expected 2"; }
test_usage/unknown-keyword() { run check file x.ini; [ "$rc" = 2 ] || fail "exit status $rc, expected 2"; }

# refused_file WANT FILE: check says WANT of FILE, exit 1
refused_file() {
	run check config "$2"
	[ "$rc" = 1 ] && grep -qF "$1" "$tmp/err" || fail "exit status $rc: $(tr '\n' '|' <"$tmp/err")"
}
test_file/missing() {
	refused_file "$tmp/no-such.ini: cannot open: No such file or directory" "$tmp/no-such.ini"
}
test_file/directory() { refused_file "$tmp: a directory, not a regular file" "$tmp"; }
# a FIFO without a writer: 7112e5f blocked in open() (a daemon there
# ignored its signals); now one line at once
test_file/fifo() {
	mkfifo "$tmp/fifo"
	rc=0
	timeout 10 "$HTBCTL" check config "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] && grep -qF "$tmp/fifo: a FIFO or pipe, not a regular file" "$tmp/err" ||
		fail "exit status $rc (124: it hung): $(tr '\n' '|' <"$tmp/err")"
}
test_file/device() { refused_file "/dev/zero: a character device, not a regular file" /dev/zero; }
# unreadable: root reads a file of mode 000 (CAP_DAC_OVERRIDE), so as root
# htbctl runs as nobody, without capabilities
test_file/unreadable() {
	local user=()
	[ "$EUID" != 0 ] || user=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	printf '[class 1:1]\nrate = 1mbit\n' >"$tmp/secret.ini"
	chmod 000 "$tmp/secret.ini"
	rc=0
	"${user[@]}" "$HTBCTL" check config "$tmp/secret.ini" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 1 ] && grep -qF "$tmp/secret.ini: cannot open: Permission denied" "$tmp/err" ||
		fail "exit status $rc: $(tr '\n' '|' <"$tmp/err")"
}
# warnings past 20 are counted, not printed (7112e5f printed one line per
# warning: a million for a generated config)
test_file/warnings-capped() {
	{ printf '[class 1:1]\nrate = 10mbit\n'
	  for i in $(seq 16 45); do printf '[class 1:%x]\nparent = 1:1\nrate = 10kbit\n' "$i"; done; } > "$tmp/warny.ini"
	run check config "$tmp/warny.ini"
	[ "$rc" = 0 ] && [ "$(grep -c 'warning: quantum' "$tmp/err")" = 20 ] &&
		grep -qF "$tmp/warny.ini: 10 more warnings not shown (30 in all)" "$tmp/err" ||
		fail "exit status $rc, $(grep -c warning "$tmp/err") warning lines: $(tail -1 "$tmp/err")"
}
# JSON mode failure: an error object on stdout for scripts (-s: jq 1.6
# -e passes an empty stdout)
test_json/error-object() {
	run -j check config "$dir/invalid/unknown-key.ini"
	[ "$rc" = 1 ] && jq -se '.[0].error' "$tmp/out" >/dev/null 2>&1 ||
		fail "exit status $rc, stdout: $(head -c 200 "$tmp/out")"
}

# ---- scale: 100000 leaves over two majors, checked quickly ----
# gen-config.sh N: 1 top class, ceil(N/256) inner classes, N leaves with one
# dst /32 each; ids 1:1 .. 1:ffff then 2:1 ... It takes about 0.7 s here
# (2 CPUs, busy): 5 s is a bound for a slow machine, not a benchmark.
n=100000 classes=$((1 + 391 + 100000))
# timed_check ARG...: check of $tmp/big.ini, its time in $ms
timed_check() {
	local start
	scripts/gen-config.sh $n >"$tmp/big.ini" || fail "scripts/gen-config.sh $n failed"
	start=$(date +%s%N)
	run "$@" check config "$tmp/big.ini"
	ms=$((($(date +%s%N) - start) / 1000000))
	[ "$rc" = 0 ] || fail "exit status $rc: $(head -n 3 "$tmp/err" | tr '\n' '|')"
	[ "$ms" -le 5000 ] || fail "took ${ms} ms (limit 5000)"
}
test_scale/100k-classes-text() {
	local lines
	timed_check
	lines=$(wc -l <"$tmp/out")
	[ "$lines" = $((1 + classes + n)) ] || fail "printed $lines lines"
	grep -q '^    class 2:8829 parent 1:188 ' "$tmp/out" || fail "no leaf 2:8829 under 1:188"
}
test_scale/100k-classes-json() {
	timed_check -j
	[ "$(jq -r '"\(.classes | length) \(.device.default) \(.classes[-1].classid) \(.classes[-1].matches[0].prefix)"' "$tmp/out")" = \
		"$classes 2:8829 2:8829 198.19.134.160/32" ] ||
		fail "unexpected document: $(head -c 200 "$tmp/out")"
}

. "$(dirname "$0")/../lib/runner.sh"
