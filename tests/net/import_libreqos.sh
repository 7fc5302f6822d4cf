#!/usr/bin/env bash
# htbctl import libreqos (issue 27) on this kernel (root): the generated
# 10,000-circuit set (tests/lib/libreqos.sh) loads on the case's device as
# imported, and the program puts packets to circuits' addresses (IPv4 and
# IPv6, hosts and prefixes) in the circuits' classes and a packet to no
# circuit in the default class, asked of the kernel (tests/bpf/clsprobe).
. tests/lib/libreqos.sh

test_loads_and_classifies_10000() {
	local t0 t1 probe want got
	lqos_generate "$tmp" 10000
	"$HTBCTL" import libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" -o "$tmp/c.ini" 2> "$tmp/err" ||
		fail "import: $(oneline "$tmp/err")"
	t0=$(date +%s%N)
	load_tree "$tmp/c.ini" --no-qdisc
	t1=$(date +%s%N)
	# the class of each circuit, from the comment above its [class]
	awk '/^# circuit / { k = $0; sub(/.*" \(/, "", k); sub(/\)$/, "", k); next }
	     /^\[class / { c = $2; sub(/\]/, "", c); if (k != "") print k, c; k = "" }' "$tmp/c.ini" > "$tmp/classes"
	# every 97th circuit: its addresses, each probed at its prefix's first
	# address. clsprobe sees a class by its counters, and a packet that
	# costs a leaf less than 20 us at its rate waits in the CPU's batch
	# (include/htb/batch.h) without moving them: the probes go to circuits
	# whose Min is at most 20 Mbit/s (2500000 bytes/s), where one costs more.
	jq -r 'select(input_line_number % 97 == 1 and .down[0] <= 2500000) | .id as $id | .ips[]
		| "\($id) \(sub("/[0-9]+$"; ""))"' "$tmp/expected.jsonl" > "$tmp/probes"
	[ "$(wc -l < "$tmp/probes")" -gt 100 ] && grep -q ':' "$tmp/probes" || fail "too few probes: $(wc -l < "$tmp/probes")"
	want=$(awk 'NR == FNR { cls[$1] = $2; next } { print cls[$1] }' "$tmp/classes" "$tmp/probes"; echo 1:2)
	probe=$(awk '{ printf "dst=%s ", $2 }' "$tmp/probes"; echo dst=203.0.113.9)
	got=$(in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$SND_IF" $probe 2> "$tmp/err") ||
		fail "clsprobe: $(oneline "$tmp/err")"
	paste -d ' ' <(echo "$want") <(echo "$got") <(awk '{ print $2 }' "$tmp/probes") > "$tmp/cmp"
	[ "$got" = "$want" ] || fail "classes differ (want got address): $(awk '$1 != $2' "$tmp/cmp" | head -4 | tr '\n' ' ')"
	note "$(wc -l < "$tmp/probes") addresses of $(grep -c '^\[class' "$tmp/c.ini") classes classified as imported; load $(( (t1 - t0) / 1000000 )) ms"
}

. "$(dirname "$0")/../lib/runner.sh"
