#!/usr/bin/env bash
# tests/tools/flowgen, the forwarding scenarios' sender: its report, which
# the scenarios print to say when the VM did not run a sender (scenario
# 17's "senders: down skipped N%"). A sender at 1 Mbit/s of 1000-byte
# datagrams (125 a second) is stopped (SIGSTOP) for 600 ms in its second
# of three: 75 datagrams fall due in the stop (a few more if it runs
# long), of which it sends 20 ms of its rate (3) at once and skips the
# rest: 72 or more (70: a burst 15 ms longer fails), at most 120 (room for
# a busy host's own stalls; the sender runs a round every millisecond).

FG=${FLOWGEN:-$(dirname "$HTBCTL")/tests/tools/flowgen}

setup() { [ -x "$FG" ] || fail "no $FG (make tests builds it)"; }

# report FIELD: that field of the one target's line in $tmp/send
report() { awk -v f="$1" '$1 == "target" { for (i = 3; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$tmp/send"; }

# send_stopped AT [OPTION...]: a 3 s sender at 1 Mbit/s of 1000-byte
# datagrams, stopped AT seconds in for 600 ms; its report in $tmp/send
send_stopped() {
	local at=$1 pid
	shift
	nsenter --net=/run/netns/"$SND_NS" "$FG" send --size 1000 --seconds 3 "$@" \
		"$RCV_IP4,9000,1,1m" > "$tmp/send" 2>&1 &
	pid=$!
	sleep "$at"
	kill -STOP $pid
	sleep 0.6
	kill -CONT $pid
	wait $pid || fail "flowgen send failed: $(oneline "$tmp/send")"
}

test_a_stall_is_skipped_beyond_20_ms() {
	local s p e
	send_stopped 1
	s=$(report skipped) p=$(report sent_packets) e=$(report errors)
	[ -n "$s" ] && [ -n "$p" ] && [ -n "$e" ] || fail "no report: $(oneline "$tmp/send")"
	[ "$s" -ge 70 ] && [ "$s" -le 120 ] || fail "skipped $s datagrams, not 70-120: $(oneline "$tmp/send")"
	# what 3 s at 125 a second asked for: the last round runs at 3 s
	[ $((p + e + s)) = 375 ] ||
		fail "sent $p, refused $e and skipped $s, not 375 in all: $(oneline "$tmp/send")"
	# without --skip and --until the window is the whole run
	[ "$(report window_due)" = 375 ] && [ "$(report window_skipped)" = "$s" ] ||
		fail "window_due $(report window_due), window_skipped $(report window_skipped): not the run's 375 and $s"
	note "sent $p, skipped $s"
}

# The window a receiver counts (--skip 1.5 --until 3): a stop before it
# (at 0.5 s, 600 ms) is in the run's skips, not the window's, which are
# at most 25 (200 ms of the host's own stalls); the window asked for 1.5 s
# at 125 a second: 187 or 188, a few fewer if the round that opens it
# runs late.
test_a_stall_before_the_window_is_not_in_it() {
	local s ws wd
	send_stopped 0.5 --skip 1.5
	s=$(report skipped) ws=$(report window_skipped) wd=$(report window_due)
	[ -n "$s" ] && [ -n "$ws" ] && [ -n "$wd" ] || fail "no report: $(oneline "$tmp/send")"
	[ "$s" -ge 70 ] || fail "skipped $s in all, not 70 or more: $(oneline "$tmp/send")"
	[ "$ws" -le 25 ] || fail "skipped $ws in the window, more than 25: $(oneline "$tmp/send")"
	[ "$wd" -ge 180 ] && [ "$wd" -le 188 ] || fail "window_due $wd, not 180-188: $(oneline "$tmp/send")"
	note "skipped $s, in the window $ws of $wd"
}

. "$(dirname "$0")/../lib/runner.sh"
