#!/usr/bin/env bash
# htbctl daemon on a veth in a namespace (root; --no-qdisc, no sch_fq here):
# (started with nsenter directly, so that $! is the daemon itself)
# it loads, applies a changed file (also one renamed over the old), keeps the
# tree in force when the file is bad, loads again when the attachment is
# removed behind its back, and leaves the device shaped on SIGTERM.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/lib/netns.sh
OUT=${OUTPUT:-build}
B=$top/$OUT/htbctl
tmp=$(mktemp -d)
chmod 755 "$tmp"
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	[ -n "$SND_IF" ] && in_snd "$B" unload dev "$SND_IF" --force >/dev/null 2>&1
	topo_down
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -x "$B" ] || { skip "daemon: $B not built"; exit 0; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

conf() {	# rate of 1:10 -> the config on stdout
	printf '[device]\ndefault = 1:30\n[class 1:1]\nrate = 100mbit\n'
	printf '[class 1:10]\nparent = 1:1\nrate = %s\nmatch = dst 198.18.0.2/32\n' "$1"
	printf '[class 1:30]\nparent = 1:1\nrate = 1mbit\nceil = 100mbit\n'
}
rate10() { in_snd "$B" -j show dev "$SND_IF" interval 0 2>/dev/null |
	jq -r '.classes[] | select(.class == "1:10") | .rate' 2>/dev/null; }
wait_for() {	# seconds cmd... : poll until cmd succeeds
	local t=$(( $1 * 10 )); shift
	while [ $t -gt 0 ]; do "$@" && return 0; sleep 0.1; t=$((t - 1)); done
	return 1
}
rate_is() { [ "$(rate10)" = "$1" ]; }

topo_up hd 1 || { fail "daemon: topology"; exit 1; }
conf 10mbit >"$tmp/c.ini"; chmod 644 "$tmp/c.ini"
nsenter --net=/run/netns/"$SND_NS" "$B" daemon dev "$SND_IF" config "$tmp/c.ini" --no-qdisc >"$tmp/log" 2>&1 &
dpid=$!
wait_for 10 rate_is 1250000 && pass "daemon loads" || fail "daemon loads: $(tr '\n' ' ' <"$tmp/log")"

conf 20mbit >"$tmp/c.ini"
wait_for 5 rate_is 2500000 && pass "daemon applies a changed file" ||
	fail "daemon applies a changed file: rate $(rate10)"

conf 30mbit >"$tmp/new.ini"; chmod 644 "$tmp/new.ini"; mv "$tmp/new.ini" "$tmp/c.ini"
wait_for 5 rate_is 3750000 && pass "daemon applies a file renamed over the old one" ||
	fail "daemon applies a file renamed over the old one: rate $(rate10)"

printf '[device]\n[class 1:1]\nrate = nonsense\n' >"$tmp/c.ini"
sleep 1
if rate_is 3750000 && kill -0 "$dpid" 2>/dev/null && grep -q 'not applied' "$tmp/log"; then
	pass "a bad file leaves the tree in force"
else
	fail "a bad file leaves the tree in force: rate $(rate10): $(tail -3 "$tmp/log" | tr '\n' ' ')"
fi

conf 40mbit >"$tmp/c.ini"
wait_for 5 rate_is 5000000 && pass "and the next good file applies" ||
	fail "and the next good file applies: rate $(rate10)"

in_snd tc qdisc del dev "$SND_IF" clsact
if wait_for 8 sh -c "nsenter --net=/run/netns/$SND_NS tc filter show dev $SND_IF egress | grep -q htb_egress" &&
   wait_for 3 rate_is 5000000; then
	pass "attachment removed behind its back: loaded again"
else
	fail "attachment removed behind its back: loaded again: $(tail -3 "$tmp/log" | tr '\n' ' ')"
fi

kill -TERM "$dpid"
wait "$dpid"; rc=$?
dpid=
if [ $rc = 0 ] && in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress; then
	pass "SIGTERM: exits 0, device stays shaped"
else
	fail "SIGTERM: exits 0, device stays shaped: rc=$rc"
fi

# a second daemon adopts the load and brings it to the file
conf 50mbit >"$tmp/c.ini"
nsenter --net=/run/netns/"$SND_NS" "$B" daemon dev "$SND_IF" config "$tmp/c.ini" --no-qdisc >"$tmp/log2" 2>&1 &
dpid=$!
wait_for 10 rate_is 6250000 && pass "a new daemon adopts the load" ||
	fail "a new daemon adopts the load: $(tr '\n' ' ' <"$tmp/log2")"
kill -INT "$dpid"; wait "$dpid"; dpid=
in_snd "$B" unload dev "$SND_IF" >/dev/null 2>&1 && pass "unload after the daemon" ||
	fail "unload after the daemon"
exit 0
