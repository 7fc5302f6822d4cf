#!/usr/bin/env bash
# htbctl daemon on a veth in a namespace (root; --no-qdisc, no sch_fq here):
# it loads, applies a changed file (also one renamed over the old), keeps the
# tree in force when the file is bad, loads again when the attachment is
# removed behind its back, and leaves the device shaped on SIGTERM. Every
# case starts its own daemon on a fresh pair (tests/lib/runner.sh).

# daemon_conf RATE: the config on stdout, 1:10 (the receiver) at RATE
daemon_conf() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate="$1" "match=dst $RCV_IP4/32"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}
rate10() {
	h -j show dev "$SND_IF" interval 0 2> /dev/null |
		jq -r '.classes[] | select(.class == "1:10") | .rate' 2> /dev/null
}
rate_is_mbit() { [ "$(rate10)" = $(($1 * 125000)) ]; }
attached() { in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress; }

# start_daemon MBIT: a daemon on $tmp/c.ini (1:10 at MBIT) as $dpid, its
# output in $tmp/log, once its tree is in force. Started with nsenter
# itself (not in_snd, a function), so that $! is the daemon.
dpid=
start_daemon() {
	daemon_conf "${1}mbit" > "$tmp/c.ini"
	chmod 644 "$tmp/c.ini"
	nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/c.ini" --no-qdisc \
		>> "$tmp/log" 2>&1 &
	dpid=$!
	wait_for 10 rate_is_mbit "$1" || fail "the daemon did not load: $(oneline "$tmp/log")"
}
# stop_daemon SIGNAL: the daemon's exit status as $rc
stop_daemon() {
	kill -"$1" "$dpid"
	rc=0
	wait "$dpid" || rc=$?
	dpid=
}
teardown() {
	[ -z "$dpid" ] || { kill "$dpid"; wait "$dpid"; } 2> /dev/null
}
# a bad file, and the daemon's word that it did not apply it
bad_file() {
	printf '[device]\n[class 1:1]\nrate = nonsense\n' > "$tmp/c.ini"
	wait_for 5 grep -q 'not applied' "$tmp/log" || fail "the daemon said nothing of the bad file: $(oneline "$tmp/log")"
}

test_daemon_loads() {
	start_daemon 10
}
test_applies_changed_file() {
	start_daemon 10
	daemon_conf 20mbit > "$tmp/c.ini"
	wait_for 5 rate_is_mbit 20 || fail "rate $(rate10)"
}
test_applies_file_renamed_over_old() {
	start_daemon 10
	daemon_conf 30mbit > "$tmp/new.ini"
	chmod 644 "$tmp/new.ini"
	mv "$tmp/new.ini" "$tmp/c.ini"
	wait_for 5 rate_is_mbit 30 || fail "rate $(rate10)"
}
test_bad_file_leaves_tree_in_force() {
	start_daemon 10
	bad_file
	rate_is_mbit 10 || fail "rate $(rate10)"
	kill -0 "$dpid" 2> /dev/null || fail "the daemon exited: $(oneline "$tmp/log")"
}
test_next_good_file_applies() {
	start_daemon 10
	bad_file
	daemon_conf 40mbit > "$tmp/c.ini"
	wait_for 5 rate_is_mbit 40 || fail "rate $(rate10)"
}
test_attachment_removed_loaded_again() {
	start_daemon 10
	in_snd tc qdisc del dev "$SND_IF" clsact
	wait_for 8 attached && wait_for 3 rate_is_mbit 10 || fail "$(oneline "$tmp/log")"
}
test_sigterm_exits_0_device_stays_shaped() {
	start_daemon 10
	stop_daemon TERM
	[ $rc = 0 ] || fail "exit $rc"
	attached || fail "the filter is gone"
}
# a second daemon adopts the load and brings it to the file
test_new_daemon_adopts_load() {
	start_daemon 10
	stop_daemon TERM
	start_daemon 50
}
test_unload_after_daemon() {
	start_daemon 10
	stop_daemon INT
	ok h unload dev "$SND_IF"
}

. "$(dirname "$0")/../lib/runner.sh"
