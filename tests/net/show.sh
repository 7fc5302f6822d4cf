#!/usr/bin/env bash
# htbctl show's filters (root; --no-qdisc): class ID (the class and its
# ancestors), sort rate|drops|delay|borrowed (the largest first) and n N,
# in text and JSON; bad values refused with one line, changing nothing.

conf() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:2' parent=1:1 rate=50mbit
	ini 'class 1:10' parent=1:2 rate=20mbit "match=dst $RCV_IP4/32"
	ini 'class 1:20' parent=1:2 rate=10mbit "match=udp dport 9"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}
classes() { h -j show dev "$SND_IF" "$@" | jq -r '[.classes[].class] | join(" ")'; }

test_class_and_its_ancestors() {
	local got
	loaded
	got=$(classes interval 0 class 1:10)
	[ "$got" = "1:1 1:2 1:10" ] || fail "class 1:10 showed '$got'"
	got=$(classes interval 0 class 1:30)
	[ "$got" = "1:1 1:30" ] || fail "class 1:30 showed '$got'"
	h show dev "$SND_IF" interval 0 class 1:2 > "$tmp/t" || fail "text show failed"
	[ "$(grep -c '^class htb' "$tmp/t")" = 2 ] || fail "text: $(grep '^class htb' "$tmp/t" | tr '\n' ' ')"
}

test_sort_by_rate_and_n() {
	local got pp
	loaded
	in_snd ping -c 100 -i 0.005 -s 1000 -q "$RCV_IP4" > /dev/null 2>&1 &
	pp=$!
	sleep 0.2
	got=$(classes interval 200ms sort rate n 3)
	wait "$pp"
	set -- $got
	[ $# = 3 ] || fail "n 3 showed $# classes: $got"
	# 1:10 carries the pings, so do its ancestors 1:2 and 1:1: equal rates
	# fall back to tree order
	[ "$got" = "1:1 1:2 1:10" ] || fail "sort rate: '$got'"
	got=$(classes interval 0 n 2)
	[ "$got" = "1:1 1:2" ] || fail "n 2 in tree order: '$got'"
}

test_sort_by_borrowed() {
	local got
	ini device default=1:30 > "$tmp/c.ini"
	ini 'class 1:1' rate=100mbit >> "$tmp/c.ini"
	ini 'class 1:10' parent=1:1 rate=8kbit burst=1600b ceil=100mbit "match=dst $RCV_IP4/32" >> "$tmp/c.ini"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit >> "$tmp/c.ini"
	h load dev "$SND_IF" config "$tmp/c.ini" --no-qdisc > /dev/null 2>&1 || fail "load failed"
	in_snd ping -c 40 -i 0.01 -s 1000 -q "$RCV_IP4" > /dev/null 2>&1
	got=$(classes interval 0 sort borrowed n 1)
	[ "$got" = "1:10" ] || fail "the borrowing leaf is not first: '$got'"
	[ "$(jclass 1:10 borrows)" -gt 0 ] || fail "1:10 did not borrow"
}

test_bad_filters_refused() {
	loaded
	refused_with 2 "class '1:zz'" h show dev "$SND_IF" class 1:zz
	refused_with 1 'class 1:99: no such class' h show dev "$SND_IF" class 1:99
	refused_with 2 "sort 'size'" h show dev "$SND_IF" sort size
	refused_with 2 "n '0'" h show dev "$SND_IF" n 0
	refused_with 2 "n 'x'" h show dev "$SND_IF" n x
}

# Bash completion of class ids (htbctl help --bash) reads the loaded tree;
# bash replaces only what follows the word's last ':'.
test_completion_of_class_ids() {
	local got
	loaded
	"$HTBCTL" help --bash > "$tmp/c.bash"
	got=$(in_snd bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; _htbctl
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$tmp/c.bash" \
		"$HTBCTL show dev $SND_IF class 1:")
	[ "$got" = "1 10 2 20 30 " ] || fail "class 1: completed to '$got'"
}

. "$(dirname "$0")/../lib/runner.sh"
