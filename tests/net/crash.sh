#!/usr/bin/env bash
# load, reload and unload killed at every bpf and netlink syscall in turn
# (strace's fault injection: SIGKILL as the Nth call of one syscall
# begins, so every call is a kill point once, before it runs; htbctl's own
# process, not the probe children it forks). After each kill, and after
# the next command, the attached program must classify every probe packet
# by the old tree or every one by the new tree (tests/bpf/clsprobe asks
# the kernel), and show must say whether a reload was interrupted and which
# tree is in force. Two reloads: one that changes a rate and adds a class,
# and one that moves matches between classes, adds a more specific prefix
# in a new class, drops one, and removes a class.

KILL_SYSCALLS="bpf sendto sendmsg recvmsg recvfrom"

# The probes, and the class each tree puts them in (clsprobe's fields).
PROBES=(dst=198.18.9.9,dport=10194 dst=198.18.5.7 dst=198.18.5.200
	dst=198.18.6.1 dst=198.18.7.70 dst=198.18.7.1 dst=198.18.8.1
	prio=1:11 mark=5 dst=198.18.9.1 prio=1:13 prio=1:14)
IN_A="1:10 1:10 1:10 1:11 1:10 1:11 1:30 1:11 1:13 1:30 1:13 1:30"
IN_SMALL="1:14 1:10 1:10 1:11 1:10 1:11 1:30 1:11 1:13 1:14 1:13 1:14"
IN_MOVED="1:11 1:11 1:12 1:10 1:11 1:11 1:30 1:11 1:30 1:30 1:30 1:30"

tree_a() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=10mbit 'match=udp dport 10194' \
		'match=dst 198.18.5.0/24' 'match=dst 198.18.7.64/26'
	ini 'class 1:11' parent=1:1 rate=10mbit 'match=dst 198.18.6.0/24' \
		'match=dst 198.18.7.0/24'
	ini 'class 1:13' parent=1:1 rate=10mbit 'match=mark 5'
	ini 'class 1:30' parent=1:1 rate=10mbit
}
# A with 1:10 faster and a new class 1:14 for 198.18.9.0/24.
tree_small() {
	tree_a | sed '/^\[class 1:10\]/,/^\[/ s/^rate = 10mbit/rate = 20mbit/'
	ini 'class 1:14' parent=1:1 rate=10mbit 'match=dst 198.18.9.0/24'
}
# The port and 198.18.5.0/24 move to 1:11, 198.18.6.0/24 to 1:10; a new
# 1:12 takes 198.18.5.128/25 (inside the /24 1:11 now has); the /26 goes
# (198.18.7.70 falls to the /24 of 1:11); 1:13 is removed.
tree_moved() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=10mbit 'match=dst 198.18.6.0/24'
	ini 'class 1:11' parent=1:1 rate=10mbit 'match=udp dport 10194' \
		'match=dst 198.18.5.0/24' 'match=dst 198.18.7.0/24'
	ini 'class 1:12' parent=1:1 rate=10mbit 'match=dst 198.18.5.128/25'
	ini 'class 1:30' parent=1:1 rate=10mbit
}

setup() {
	CLSPROBE=${HTBCTL%/htbctl}/tests/bpf/clsprobe
	[ -x "$CLSPROBE" ] || fail "$CLSPROBE not built (make tests)"
	command -v strace > /dev/null || fail "strace is missing (scripts/setup.sh installs it)"
	tree_a > "$tmp/a.ini"
	tree_small > "$tmp/small.ini"
	tree_moved > "$tmp/moved.ini"
}

# The classes the attached program gives the probes, space-separated.
classes_now() { echo $(in_snd "$CLSPROBE" "$SND_IF" "${PROBES[@]}" 2>&1); }
attached() { in_snd tc filter show dev "$SND_IF" egress 2> /dev/null | grep -q htb_egress; }

# calls SYSCALL CMD...: how often CMD makes SYSCALL.
calls() {
	local sc=$1
	shift
	in_snd strace -qq -o "$tmp/trace" -e trace="$sc" "$@" > /dev/null 2>&1
	grep -c "^$sc(" "$tmp/trace"
}
# killed SYSCALL N CMD...: CMD, killed as its Nth SYSCALL begins.
killed() {
	local sc=$1 n=$2
	shift 2
	in_snd strace -qq -o "$tmp/strace.out" -e trace="$sc" \
		-e inject="$sc:signal=KILL:when=$n" "$@" > "$tmp/killed.out" 2>&1
	# The checks look at the device without the lock: nothing of the
	# killed command may still be running when they start. (One run in
	# about eight saw the probes' tree change between two checks after a
	# finished reload; not traced: a process outliving the kill would
	# explain it, and this wait rules that out.)
	wait_for 5 no_process "$*" || fail "$* killed at $sc #$n still runs"
	return 0
}
no_process() { ! pgrep -f -x -- "$1" > /dev/null; }

# fresh CONFIG: CONFIG loaded on a device with nothing of htbctl before.
fresh() {
	h unload dev "$SND_IF" --force > /dev/null 2>&1
	load_tree "$1" --no-qdisc
}

# After a reload from a.ini to NEW was killed (or not): the probes go by
# one tree, and show says which, and whether the reload finished.
check_reload_state() {	# new.ini expected-classes where
	local new=$1 want_new=$2 at=$3 got tree cfg
	got=$(classes_now)
	case $got in
	"$IN_A") tree=$tmp/a.ini ;;
	"$want_new") tree=$tmp/$new ;;
	*) fail "$at: the probes went by neither tree: $got" ;;
	esac
	h -j show dev "$SND_IF" interval 0 > "$tmp/show.json" 2> "$tmp/show.err" ||
		fail "$at: show failed: $(oneline "$tmp/show.err")"
	cfg=$(jq -r .config "$tmp/show.json")
	[ "$cfg" = "$tree" ] || fail "$at: show names $cfg in force, the probes say $tree"
	interrupted=$(jq -r ".reload_interrupted // false" "$tmp/show.json")
}

# at_every_kill PREPARE AFTER CMD...: for every bpf and netlink call CMD
# makes: PREPARE, CMD killed as that call begins, AFTER "SYSCALL #N".
# Sets kills to the number of kill points.
at_every_kill() {
	local prep=$1 after=$2 sc n max
	shift 2
	kills=0
	for sc in $KILL_SYSCALLS; do
		$prep
		max=$(calls "$sc" "$@")
		for ((n = 1; n <= max; n++)); do
			$prep
			killed "$sc" "$n" "$@"
			$after "$sc #$n"
			kills=$((kills + 1))
		done
	done
	note "$kills kill points"
}

fresh_a() { fresh "$tmp/a.ini"; }
nothing_loaded() { h unload dev "$SND_IF" --force > /dev/null 2>&1; }

# After reload a.ini -> $new was killed: the state check, then the next
# reload finishes the change.
new= want=
reload_after_kill() {	# where
	local interrupted got
	check_reload_state "$new" "$want" "reload killed at $1"
	ok h reload dev "$SND_IF" config "$tmp/$new"
	check_reload_state "$new" "$want" "reload after a kill at $1"
	got=$(classes_now)
	[ "$got" = "$want" ] || fail "after the kill at $1 and a reload: $got"
	[ "$interrupted" = false ] || fail "show still says interrupted after a reload"
}
reload_killed_everywhere() {	# new.ini expected-classes
	new=$1 want=$2
	fresh_a
	[ "$(classes_now)" = "$IN_A" ] || fail "a.ini classifies $(classes_now), not $IN_A"
	at_every_kill fresh_a reload_after_kill "$HTBCTL" reload dev "$SND_IF" config "$tmp/$new"
	[ $kills -gt 20 ] || fail "only $kills kill points"
}

test_reload_small_killed_everywhere() {
	reload_killed_everywhere small.ini "$IN_SMALL"
}
test_reload_moving_matches_killed_everywhere() {
	reload_killed_everywhere moved.ini "$IN_MOVED"
}

# show says that a reload was interrupted, and which tree is in force.
test_show_names_an_interrupted_reload() {
	local n interrupted
	fresh_a
	n=$(calls bpf "$HTBCTL" reload dev "$SND_IF" config "$tmp/moved.ini")
	fresh_a
	killed bpf $((n - 1)) "$HTBCTL" reload dev "$SND_IF" config "$tmp/moved.ini"
	check_reload_state moved.ini "$IN_MOVED" "reload killed at its last bpf call but one"
	[ "$interrupted" = true ] || fail "show -j says reload_interrupted $interrupted"
	h show dev "$SND_IF" interval 0 > "$tmp/show.txt" 2>&1
	grep -q "reload to $tmp/moved.ini did not finish" "$tmp/show.txt" ||
		fail "show's text does not say so: $(oneline "$tmp/show.txt")"
}

# After a killed load or unload: either the tree classifies (all of it) or
# nothing of htbctl is attached; unload --force then leaves nothing, and a
# load after it works.
classified_or_detached() {	# where
	local got
	if attached; then
		got=$(classes_now)
		[ "$got" = "$IN_A" ] || fail "$1: attached, and the probes go $got"
	fi
	nothing_loaded
	nothing_left
	load_tree "$tmp/a.ini" --no-qdisc
	got=$(classes_now)
	[ "$got" = "$IN_A" ] || fail "load after the kill at $1: $got"
}
test_load_killed_everywhere() {
	at_every_kill nothing_loaded classified_or_detached \
		"$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	[ $kills -gt 20 ] || fail "only $kills kill points"
}
test_unload_killed_everywhere() {
	at_every_kill fresh_a classified_or_detached "$HTBCTL" unload dev "$SND_IF"
	[ $kills -gt 5 ] || fail "only $kills kill points"
}

. "$(dirname "$0")/../lib/runner.sh"
