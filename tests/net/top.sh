#!/usr/bin/env bash
# htbctl top (root; --no-qdisc): without a terminal one frame, the busiest
# class first, its current rate, bar and drops; under tmux (a real
# terminal: send-keys, capture-pane) the view redraws in place, follows
# the traffic and quits on q, leaving the terminal as it was.

conf() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=2mbit ceil=4mbit "match=dst $RCV_IP4/32"
	ini 'class 1:20' parent=1:1 rate=10mbit "match=udp dport 9"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}
pings() { in_snd ping -c "$1" -i 0.005 -s 1000 -q "$RCV_IP4" > /dev/null 2>&1; }
teardown() {
	tmux -L "htbtop$$" kill-server 2> /dev/null
	return 0
}

test_one_frame_without_a_terminal() {
	local pp first
	loaded
	pings 200 &
	pp=$!
	sleep 0.3
	h top dev "$SND_IF" interval 500ms < /dev/null > "$tmp/top" 2> "$tmp/err" ||
		fail "top failed: $(oneline "$tmp/err")"
	wait "$pp"
	grep -q "^htbctl top: dev $SND_IF, 4 classes, every 500ms, by current rate$" "$tmp/top" ||
		fail "header: $(head -1 "$tmp/top")"
	! grep -q $'\e' "$tmp/top" || fail "terminal escapes without a terminal"
	first=$(awk '$1 ~ /^1:/ { print $1; exit }' "$tmp/top")
	# 1:1 carries the pings too; the leaf that does comes next
	[ "$first" = 1:1 ] || fail "first row $first: $(oneline "$tmp/top")"
	awk '$1 == "1:10" { found = 1; if ($5 == "0bit") exit 1 } END { exit !found }' "$tmp/top" ||
		fail "1:10 without a current rate: $(grep '^1:10' "$tmp/top")"
	grep -q '^1:10 .*#' "$tmp/top" || fail "no bar for 1:10: $(grep '^1:10' "$tmp/top")"
}

test_sort_and_n() {
	loaded
	h top dev "$SND_IF" sort delay n 2 < /dev/null > "$tmp/top" 2> "$tmp/err" || fail "top failed"
	[ "$(grep -c '^1:' "$tmp/top")" = 2 ] || fail "n 2: $(grep '^1:' "$tmp/top" | tr '\n' ' ')"
	# the device's classes in the header, the rows below it as shown
	# (7112e5f said "2 classes" here)
	grep -q "^htbctl top: dev $SND_IF, 4 classes," "$tmp/top" && grep -q "; 2 shown$" "$tmp/top" ||
		fail "header: $(head -2 "$tmp/top" | tr '\n' ' ')"
	refused_with 2 "interval '10ms'" h top dev "$SND_IF" interval 10ms
	refused_with 2 "sort 'x'" h top dev "$SND_IF" sort x
	h unload dev "$SND_IF" > /dev/null
	refused_with 1 'not loaded' h top dev "$SND_IF"
}

# tmux: a 120x30 terminal running top in the sender's namespace.
tm() { tmux -L "htbtop$$" "$@"; }
pane() { tm capture-pane -p -t top; }
test_live_view_under_tmux() {
	local before after
	command -v tmux > /dev/null || fail "no tmux (scripts/setup.sh installs it)"
	loaded
	tm new-session -d -s top -x 120 -y 30 \
		"nsenter --net=/run/netns/$SND_NS $HTBCTL top dev $SND_IF interval 200ms; echo TOP-EXITED \$?; sleep 30" ||
		fail "no tmux session"
	wait_for 10 sh -c "tmux -L htbtop$$ capture-pane -p -t top | grep -q '(q quits)'" ||
		fail "no view: $(pane | head -3 | tr '\n' ' ')"
	before=$(pane | awk '$1 == "1:10" { print $5 }')
	pings 300 &
	wait_for 10 sh -c "tmux -L htbtop$$ capture-pane -p -t top | awk '\$1 == \"1:10\" && \$5 != \"0bit\" { f = 1 } END { exit !f }'" ||
		fail "the view did not follow the traffic: $(pane | grep '^1:10')"
	after=$(pane | awk '$1 == "1:10" { print $5 }')
	wait
	[ "$(pane | grep -c '^htbctl top:')" = 1 ] || fail "not redrawn in place: $(pane | grep -c '^htbctl top:') headers"
	tm send-keys -t top q
	wait_for 5 sh -c "tmux -L htbtop$$ capture-pane -p -t top | grep -q 'TOP-EXITED 0'" ||
		fail "q did not quit: $(pane | tail -3 | tr '\n' ' ')"
	note "1:10 current rate $before then $after"
}

# Starts top in a tmux session NAME of COLSxROWS, with ENV before it;
# TOP-EXITED and its status follow when it ends.
top_in_tmux() {	# name cols rows [VAR=VALUE ...]
	local name=$1 cols=$2 rows=$3
	shift 3
	tm new-session -d -s "$name" -x "$cols" -y "$rows" \
		"sleep 0.5; env $* nsenter --net=/run/netns/$SND_NS $HTBCTL top dev $SND_IF interval 200ms; echo TOP-EXITED \$?; sleep 30" ||
		fail "no tmux session"
}
quit_top() {	# name
	tm send-keys -t "$1" q
	wait_for 5 sh -c "tmux -L htbtop$$ capture-pane -p -t $1 | grep -q 'TOP-EXITED 0'" ||
		fail "q did not quit: $(tm capture-pane -p -t "$1" | tail -3 | tr '\n' ' ')"
}

# TERM=dumb cannot move the cursor: frames follow one another, without an
# escape (7112e5f cleared the screen and hid the cursor with escapes).
test_a_dumb_terminal_gets_no_escapes() {
	local frames
	command -v tmux > /dev/null || fail "no tmux (scripts/setup.sh installs it)"
	loaded
	wait_for 5 sh -c "! tmux -L htbtop$$ ls > /dev/null 2>&1" || fail "a tmux server stays"
	top_in_tmux dumb 120 30 TERM=dumb
	# the pane's raw output, from before top starts
	tm pipe-pane -t dumb -o "cat > '$tmp/raw'" || fail "no pipe-pane"
	wait_for 10 sh -c "[ \$(cat '$tmp/raw' 2> /dev/null | grep -c 'htbctl top:') -ge 2 ]" ||
		fail "not two frames: $(tr -d '\r' < "$tmp/raw" | head -3 | tr '\n' ' ')"
	quit_top dumb
	frames=$(grep -c 'htbctl top:' "$tmp/raw")
	! grep -q $'\e' "$tmp/raw" || fail "escapes with TERM=dumb: $(grep -c $'\e' "$tmp/raw") lines"
	note "$frames frames, no escape"
}

# A 60-column terminal: every line cut to it, none wrapped onto the next
# (7112e5f wrote rows of 103 characters: each took two lines).
test_lines_cut_to_the_width() {
	local odd
	command -v tmux > /dev/null || fail "no tmux (scripts/setup.sh installs it)"
	loaded
	wait_for 5 sh -c "! tmux -L htbtop$$ ls > /dev/null 2>&1" || fail "a tmux server stays"
	top_in_tmux narrow 60 30
	wait_for 10 sh -c "tmux -L htbtop$$ capture-pane -p -t narrow | grep -q '^1:30'" ||
		fail "no view: $(tm capture-pane -p -t narrow | head -3 | tr '\n' ' ')"
	tm capture-pane -p -t narrow > "$tmp/pane"
	quit_top narrow
	head -1 "$tmp/pane" | grep -q '^htbctl top: dev' || fail "first line: $(head -1 "$tmp/pane")"
	odd=$(grep -v -e '^$' -e '^htbctl top:' -e '^ sending' -e '^CLASS' -e '^1:' "$tmp/pane")
	[ -z "$odd" ] || fail "wrapped lines: $(printf '%s' "$odd" | head -2 | tr '\n' '|')"
	[ "$(grep -c '^1:' "$tmp/pane")" = 4 ] || fail "rows: $(grep -c '^1:' "$tmp/pane")"
	awk 'length($0) > 60 { exit 1 }' "$tmp/pane" || fail "a line over 60 columns"
}

# SIGTERM and SIGHUP end top with the terminal as it was (7112e5f died
# with the terminal raw: no echo, no line editing).
test_a_signal_restores_the_terminal() {
	local sig pid
	command -v tmux > /dev/null || fail "no tmux (scripts/setup.sh installs it)"
	loaded
	# the previous case's tmux server (one socket for the file) may still be going
	wait_for 5 sh -c "! tmux -L htbtop$$ ls > /dev/null 2>&1" || fail "a tmux server stays"
	for sig in TERM HUP; do
		# a session of its own for each signal (a server killed just before
		# may still be going when the next starts)
		tm new-session -d -s "t$sig" -x 120 -y 30 \
			"nsenter --net=/run/netns/$SND_NS $HTBCTL top dev $SND_IF interval 200ms; echo TOP-EXITED \$?; stty -a | tr ' ' '\n' | grep -x -- '-\?icanon'; sleep 30" ||
			fail "no tmux session"
		wait_for 10 sh -c "tmux -L htbtop$$ capture-pane -p -t t$sig | grep -q '(q quits)'" ||
			fail "no view: $(tm capture-pane -p -t "t$sig" | head -3 | tr '\n' ' ')"
		pid=$(pgrep -f "^$HTBCTL top dev $SND_IF" | head -1)
		[ -n "$pid" ] || fail "no top process"
		kill -"$sig" "$pid"
		wait_for 5 sh -c "tmux -L htbtop$$ capture-pane -p -t t$sig | grep -qx -- '-\?icanon'" ||
			fail "SIG$sig did not end top: $(tm capture-pane -p -t "t$sig" | tail -3 | tr '\n' ' ')"
		tm capture-pane -p -t "t$sig" | grep -qx 'icanon' ||
			fail "after SIG$sig the terminal is raw: $(tm capture-pane -p -t "t$sig" | grep -A1 TOP-EXITED | tr '\n' ' ')"
	done
}

. "$(dirname "$0")/../lib/runner.sh"
