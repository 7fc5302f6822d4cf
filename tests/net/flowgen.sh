#!/usr/bin/env bash
# tests/tools/flowgen, the forwarding scenarios' sender and receiver: the
# sender's report, which the scenarios print to say when the VM did not
# run a sender (scenario 17's "senders: down skipped N%"), and the
# receiver's window, counted by arrival. The send cases: a sender at
# 1 Mbit/s of 1000-byte datagrams (125 a second) is stopped (SIGSTOP) for
# 600 ms in its second of three: 75 datagrams fall due in the stop (a few
# more if it runs long), of which it sends 20 ms of its rate (3) at once
# and skips the rest: 72 or more (70: a burst 15 ms longer fails), at most
# 120 (room for a busy host's own stalls; the sender runs a round every
# millisecond).

. tests/lib/forward.sh	# FG, fwd_ready

setup() { [ -x "$FG" ] || fail "no $FG (make tests builds it)"; }

# report FIELD: that field of the one target's line in $tmp/send
report() { awk -v f="$1" '$1 == "target" { for (i = 3; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$tmp/send"; }

# stop_for PID AT SECS: PID stopped (SIGSTOP) AT seconds from now for
# SECS, as a VM that does not run it.
stop_for() {
	sleep "$2"
	kill -STOP "$1"
	sleep "$3"
	kill -CONT "$1"
}

# send_stopped AT [OPTION...]: a 3 s sender at 1 Mbit/s of 1000-byte
# datagrams, stopped AT seconds in for 600 ms; its report in $tmp/send
send_stopped() {
	local at=$1 pid
	shift
	nsenter --net=/run/netns/"$SND_NS" "$FG" send --size 1000 --seconds 3 "$@" \
		"$RCV_IP4,9000,1,1m" > "$tmp/send" 2>&1 &
	pid=$!
	stop_for $pid "$at" 0.6
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

# recv_stopped AT: a receiver counting from 1 s to 2 s after ready (its
# report in $tmp/recv) and a 3 s sender at 1 Mbit/s of 1000-byte
# datagrams into it; the receiver stopped AT seconds after ready for
# 800 ms, as a VM that does not run it.
recv_stopped() {
	local at=$1 rpid spid
	nsenter --net=/run/netns/"$RCV_NS" "$FG" recv --port 9100 --flows 1 --seconds 3 --skip 1 --until 2 > "$tmp/recv" 2>&1 &
	rpid=$!
	fwd_ready "$tmp/recv" || fail "flowgen recv not ready after 30 s: $(oneline "$tmp/recv")"
	in_snd "$FG" send --size 1000 --seconds 3 "$RCV_IP4,9100,1,1m" > "$tmp/send" 2>&1 &
	spid=$!
	stop_for $rpid "$at" 0.8
	wait $spid || fail "flowgen send failed: $(oneline "$tmp/send")"
	wait $rpid || fail "flowgen recv failed: $(oneline "$tmp/recv")"
}

# stopped_counts_by_arrival AT: recv_stopped AT, then its window holds
# the window's 1 s at 1 Mbit/s, within 10% (a round of the sender is a
# millisecond; the host's own stalls), every datagram placed by its
# timestamp, and the first of the stop waited all of it to be read (less
# 100 ms).
stopped_counts_by_arrival() {
	local bps lag unstamped
	recv_stopped "$1"
	read -r bps lag unstamped <<<"$(awk '$3 == "packets" { bps = $8 }
		$1 == "read_lag" { lag = $3; u = $5 } END { print bps, lag, u }' "$tmp/recv")"
	[ -n "$bps" ] && [ -n "$unstamped" ] || fail "no report: $(oneline "$tmp/recv")"
	[ "$bps" -ge 900000 ] && [ "$bps" -le 1100000 ] || fail "$bps bit/s in the window, not 0.9-1.1 Mbit/s: $(oneline "$tmp/recv")"
	[ "$unstamped" = 0 ] || fail "$unstamped datagrams without a usable timestamp: $(oneline "$tmp/recv")"
	[ "${lag%.*}" -ge 700 ] || fail "read lag $lag ms, less than the 800 ms stop less 100: $(oneline "$tmp/recv")"
	note "$bps bit/s, read up to $lag ms late"
}

# A receiver counts by arrival (the kernel's receive timestamp), not by
# when it reads: stopped across its window's end (1.7 s to 2.5 s), it
# still counts the window's 1 s. A receiver that counted by the time read
# and closed its window when it woke (flowgen before e195862) got 0.7 s
# of datagrams over a 1.5 s window, 0.47 Mbit/s; one that counts by the
# time read within the fixed window, 0.78.
test_a_receiver_stopped_across_the_windows_end_counts_by_arrival() {
	stopped_counts_by_arrival 1.7
}

# ... and across its start (0.7 s to 1.5 s): what arrived before the
# window and was read in it is not the window's. Counting by the time
# read: 1.23 s of datagrams in a 1 s window, 1.23 Mbit/s.
test_a_receiver_stopped_across_the_windows_start_counts_by_arrival() {
	stopped_counts_by_arrival 0.7
}

. "$(dirname "$0")/../lib/runner.sh"
