#!/usr/bin/env bash
# The sharing loop of `htbctl daemon` on a veth in a namespace (root;
# --no-qdisc, no sch_fq here: the program stamps, nothing holds packets
# back, but the token state and so the loop's view are those of a shaped
# link). show says whether the loop runs and when it last ran; it gives
# backlogged borrowers limits in the ratio of their quanta; it follows a
# reload and an unload and load; a killed loop's lease runs out, a stopped
# one ends it at once; a plain load says that the daemon is needed. What
# the limits do to traffic is the VM's (tests/scenarios/scenario_9_sharing.sh).

# Parent 20 Mbit/s; A and B 2 Mbit/s each, ceil 20, quanta 1000 : 3000.
share_conf() {
	ini device default=1:30
	ini 'class 1:1' rate=20mbit
	ini 'class 1:10' parent=1:1 rate=2mbit ceil=20mbit quantum=1000 "match=udp dport 5201"
	ini 'class 1:20' parent=1:1 rate=2mbit ceil=20mbit quantum=3000 "match=udp dport 5202"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=20mbit
	[ $# = 0 ] || ini 'class 1:40' parent=1:1 rate=1mbit ceil=20mbit "match=udp dport 5204"
}
sharing() { h -j show dev "$SND_IF" 2> /dev/null | jq -r .sharing 2> /dev/null; }
sharing_is() { [ "$(sharing)" = "$1" ]; }
limit_of() {	# CLASS: its borrow limit in B/s
	h -j show dev "$SND_IF" 2> /dev/null |
		jq -r --arg c "$1" '.classes[] | select(.class == $c) | .borrow_limit // empty'
}
has_limit() { [ -n "$(limit_of "$1")" ]; }
dpid=
start_daemon() {
	share_conf "$@" > "$tmp/c.ini"
	nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/c.ini" \
		--no-qdisc >> "$tmp/log" 2>&1 &
	dpid=$!
	wait_for 10 sharing_is prio_quantum || fail "no sharing loop: $(oneline "$tmp/log")"
}
stop_daemon() { kill -"$1" "$dpid"; wait "$dpid" 2> /dev/null; dpid=; }	# SIGNAL
teardown() { [ -z "$dpid" ] || { kill "$dpid"; wait "$dpid"; } 2> /dev/null; }
# UDP floods to ports 5201 and 5202 for $1 seconds, 30 Mbit/s each
floods() {
	in_rcv timeout $(($1 + 5)) iperf3 -s -1 -p 5201 > /dev/null 2>&1 &
	in_rcv timeout $(($1 + 5)) iperf3 -s -1 -p 5202 > /dev/null 2>&1 &
	sleep 0.5
	in_snd iperf3 -c "$RCV_IP4" -p 5201 -u -b 30M -l 1400 -t "$1" > /dev/null 2>&1 &
	in_snd iperf3 -c "$RCV_IP4" -p 5202 -u -b 30M -l 1400 -t "$1" > /dev/null 2>&1 &
}

test_show_says_the_loop_runs() {
	start_daemon
	local age
	age=$(h -j show dev "$SND_IF" | jq -r .sharing_age_ns)
	[ "$age" -lt 100000000 ] || fail "the loop last ran $age ns ago"
	h show dev "$SND_IF" | grep -q 'spare bandwidth: by prio and quantum (the daemon.s sharing loop, last run' ||
		fail "show's text does not say the loop runs: $(h show dev "$SND_IF" | head -3 | tr '\n' ' ')"
	h show dev "$SND_IF" | grep -q ' share: may borrow ' || fail "no leaf shows its borrow limit"
	grep -q 'sharing spare bandwidth on .* by prio and quantum' "$tmp/log" ||
		fail "the daemon did not log its loop: $(oneline "$tmp/log")"
}

test_backlogged_borrowers_get_limits_by_quantum() {
	start_daemon
	floods 4
	sleep 2.5
	local a b
	a=$(limit_of 1:10) b=$(limit_of 1:20)
	# spare 16 Mbit/s by 1 : 3: A borrows 4, B 12 Mbit/s
	[ "$a" = 500000 ] && [ "$b" = 1500000 ] ||
		fail "limits A $a B $b B/s, not 500000 and 1500000"
	h -j show dev "$SND_IF" | jq -e '.classes[] | select(.class == "1:10") | .backlogged' > /dev/null ||
		fail "A is not backlogged"
	note "A may borrow 4 Mbit/s, B 12 Mbit/s"
}

test_a_killed_loops_lease_runs_out() {
	start_daemon
	stop_daemon KILL
	sharing_is prio_quantum || fail "the lease ended at once; it should run 1 s"
	wait_for 3 sharing_is fcfs || fail "the lease of a killed loop did not run out"
	h show dev "$SND_IF" | grep -q 'spare bandwidth: first come, first served' ||
		fail "show's text does not say borrowing is first come, first served"
}

test_a_stopped_loop_ends_its_lease() {
	start_daemon
	stop_daemon TERM
	sharing_is fcfs || fail "sharing is '$(sharing)' right after SIGTERM"
}

test_the_loop_follows_a_reload() {
	start_daemon
	share_conf new > "$tmp/new.ini"
	h reload dev "$SND_IF" config "$tmp/new.ini" > /dev/null 2>&1 || fail "reload failed"
	wait_for 2 has_limit 1:40 || fail "the new leaf 1:40 has no borrow limit"
	sharing_is prio_quantum || fail "the loop stopped after the reload"
}

test_the_loop_follows_unload_and_load() {
	start_daemon
	# --force: without it unload refuses while the daemon runs
	h unload dev "$SND_IF" --force > /dev/null 2>&1 || fail "unload failed"
	# the daemon loads again at its next check (2 s), the loop follows
	wait_for 8 sharing_is prio_quantum || fail "no sharing after the daemon loaded again: $(oneline "$tmp/log")"
}

test_load_says_the_daemon_shares() {
	share_conf > "$tmp/c.ini"
	h load dev "$SND_IF" config "$tmp/c.ini" --no-qdisc > /dev/null 2> "$tmp/err" || fail "load failed"
	grep -q 'note: spare bandwidth goes by prio and quantum while .htbctl daemon. runs' "$tmp/err" ||
		fail "load did not say the daemon shares: $(oneline "$tmp/err")"
	sharing_is fcfs || fail "sharing '$(sharing)' without a daemon"
	h unload dev "$SND_IF" > /dev/null
	ini 'class 1:1' rate=20mbit "match=udp dport 5201" > "$tmp/flat.ini"
	h load dev "$SND_IF" config "$tmp/flat.ini" --no-qdisc > /dev/null 2> "$tmp/err" || fail "load failed"
	! grep -q 'note:' "$tmp/err" || fail "a tree that cannot borrow got the note: $(oneline "$tmp/err")"
}

. "$(dirname "$0")/../lib/runner.sh"
