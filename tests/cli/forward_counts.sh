#!/usr/bin/env bash
# tests/lib/forward.sh's counters of what the senders did (tests/tools/
# flowgen's "target" lines, each after its SRC, - for none), on made-up
# reports: what a class sent, and the share it skipped after stalls,
# which the forwarding scenarios take off the ideal.
RUN_TOPO=none
needs() { :; }
HTBCTL=${HTBCTL:-build/htbctl}
. tests/lib/forward.sh

# a sender's report: 2 IPv4 targets with sources, one IPv6 without
report() {
	FWD_DIR=$tmp
	cat > "$tmp/h.send" <<-EOT
	198.18.1.2 target 198.18.2.2,5201,10 sent_packets 900 sent_bytes 1260000 errors 0 skipped 100
	198.18.1.3 target 198.18.2.3,5201,10 sent_packets 500 sent_bytes 700000 errors 0 skipped 0
	- target fd00::2,5201,10 sent_packets 90 sent_bytes 126000 errors 5 skipped 5
	EOT
}

test_skipped_share_by_source() {
	report
	[ "$(fwd_class_skipped h src 198.18.1.2 -)" = 0.100000 ] || fail "$(fwd_class_skipped h src 198.18.1.2 -)"
	[ "$(fwd_class_skipped h src 198.18.1.3 -)" = 0.000000 ] || fail "$(fwd_class_skipped h src 198.18.1.3 -)"
}
test_skipped_share_by_destination_both_families() {
	report
	# (100 + 5) of (1000 + 100) due
	[ "$(fwd_class_skipped h dst 198.18.2.2 fd00::2)" = 0.095455 ] ||
		fail "$(fwd_class_skipped h dst 198.18.2.2 fd00::2)"
}
test_no_ipv6_address_matches_no_source() {
	# a class without IPv6 (-) is not the targets sent from no source (-)
	report
	[ "$(fwd_class_skipped h src 198.18.9.9 -)" = 0.000000 ] || fail "$(fwd_class_skipped h src 198.18.9.9 -)"
	[ "$(fwd_class_loss h c src 198.18.9.9 - 2> /dev/null | cut -d' ' -f1)" = 0 ] ||
		fail "sent $(fwd_class_loss h c src 198.18.9.9 - 2> /dev/null)"
}
test_less_takes_the_share_off() {
	[ "$(fwd_less 1000000 0.1)" = 900000 ] || fail "$(fwd_less 1000000 0.1)"
	[ "$(fwd_less 1000000 0)" = 1000000 ] || fail "$(fwd_less 1000000 0)"
}

. "$(dirname "$0")/../lib/runner.sh"
