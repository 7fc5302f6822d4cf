#!/usr/bin/env bash
# tests/lib/forward.sh's counters of what the senders did (tests/tools/
# flowgen's "target" lines, each after its SRC, - for none), on made-up
# reports: what a class sent, and the share of the receivers' window it
# skipped after stalls, which the forwarding scenarios take off the ideal;
# and what the receivers say of how late they read.
RUN_TOPO=none
needs() { :; }
HTBCTL=${HTBCTL:-build/htbctl}
. tests/lib/forward.sh

# a sender's report: 2 IPv4 targets from the socket's sources, one IPv6
# from none, one IPv4 with a source of its own
report() {
	FWD_DIR=$tmp
	# (in the window: 800 due, 40 skipped; 400 and 0; 80 and 5)
	cat > "$tmp/h.send" <<-EOT
	198.18.1.2 target 198.18.2.2,5201,10,8m sent_packets 900 sent_bytes 1260000 errors 0 skipped 100 window_due 800 window_skipped 40
	198.18.1.3 target 198.18.2.3,5201,10,4m sent_packets 500 sent_bytes 700000 errors 0 skipped 0 window_due 400 window_skipped 0
	- target fd00::2,5201,10,800k sent_packets 90 sent_bytes 126000 errors 5 skipped 5 window_due 80 window_skipped 5
	- target 198.18.2.4,5201,10,1m,198.18.1.4 sent_packets 70 sent_bytes 98000 errors 0 skipped 30 window_due 100 window_skipped 20
	EOT
}

# skipped_is SHARE PREFIX BY ADDR4 ADDR6: fwd_class_skipped says SHARE
skipped_is() {
	local want=$1 got
	shift
	got=$(fwd_class_skipped "$@")
	[ "$got" = "$want" ] || fail "skipped share of $*: $got, not $want"
}
# sent_is N PREFIX ROLE BY ADDR4 ADDR6: fwd_class_loss counts N sent
sent_is() {
	local want=$1 got
	shift
	got=$(fwd_class_loss "$@" 2> /dev/null | cut -d' ' -f1)
	[ "$got" = "$want" ] || fail "sent by $*: $got, not $want"
}

test_skipped_share_by_source() {
	report
	# the window's counts (40 of 800), not the run's (100 of 1000)
	skipped_is 0.050000 h src 198.18.1.2 -
	skipped_is 0.000000 h src 198.18.1.3 -
}
test_a_targets_own_source_is_its_source() {
	# TARGET's fifth field, the datagrams' source, before the socket's
	report
	skipped_is 0.200000 h src 198.18.1.4 -
	sent_is 70 h c src 198.18.1.4 -
}
test_skipped_share_by_destination_both_families() {
	report
	# (40 + 5) of (800 + 80) due in the window
	skipped_is 0.051136 h dst 198.18.2.2 fd00::2
}
test_no_ipv6_address_matches_no_source() {
	# a class without IPv6 (-) is not the targets sent from no source (-)
	report
	skipped_is 0.000000 h src 198.18.9.9 -
	sent_is 0 h c src 198.18.9.9 -
}
test_htb_at_htbctls_offer() {
	# HTB got 650 kbit/s of an ideal of 650, htbctl's ideal is 620 (its
	# senders skipped more): HTB's at htbctl's offer is 620 (and no file
	# named after a number: awk's > in printf's arguments is a redirection)
	cd "$tmp" || fail "no $tmp"
	[ "$(fwd_at_offer 650000 620000 650000)" = 620000 ] || fail "$(fwd_at_offer 650000 620000 650000)"
	[ "$(fwd_at_offer 650000 620000 0)" = 650000 ] || fail "without HTB's ideal: $(fwd_at_offer 650000 620000 0)"
	[ -z "$(ls "$tmp" | grep -E '^[0-9]+$')" ] || fail "files written: $(ls "$tmp")"
}
test_less_takes_the_share_off() {
	[ "$(fwd_less 1000000 0.1)" = 900000 ] || fail "$(fwd_less 1000000 0.1)"
	[ "$(fwd_less 1000000 0)" = 1000000 ] || fail "$(fwd_less 1000000 0)"
}

# The receivers' read lag (flowgen recv's last line): the longest of
# them, and their unstamped datagrams summed; "-" when none reports one.
test_read_lag_takes_the_longest_and_sums_unstamped() {
	local got
	printf 'ready\n198.18.2.2 198.18.1.2 packets 1 bytes 1400 bps 1244 total_packets 1 total_bytes 1400\nread_lag max_ms 12.5 unstamped 0\n' > "$tmp/a.recv"
	printf 'ready\nread_lag max_ms 103.0 unstamped 2\n' > "$tmp/b.recv"
	printf 'read_lag max_ms 9.9 unstamped 1\n' > "$tmp/c.recv"
	got=$(fwd_read_lag "$tmp/a.recv" "$tmp/b.recv" "$tmp/c.recv")
	[ "$got" = "103.0 ms (3 unstamped)" ] || fail "read lag: '$got', not '103.0 ms (3 unstamped)'"
	printf 'ready\n' > "$tmp/d.recv"
	got=$(fwd_read_lag "$tmp/d.recv")
	[ "$got" = "- ms" ] || fail "no read_lag line: '$got', not '- ms'"
}

. "$(dirname "$0")/../lib/runner.sh"
