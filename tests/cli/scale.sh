#!/usr/bin/env bash
# tests/lib/scale.sh, the scenarios' sizing (issue 24): the scale a load
# gets from a capacity, a scale below the floor says SKIP, the rates of a
# config and of a tc script scaled, an unknown unit refused.
RUN_TOPO=none
needs() { :; }
. tests/lib/scale.sh
step() { :; }

scale_is() {	# want load_mbit capacity_mbit
	local got
	got=$(scale_for $(($2 * 1000000)) $(($3 * 1000000)))
	[ "$got" = "$1" ] || fail "a load of $2 on $3 Mbit/s: scale $got/1000, want $1"
}
test_scale_of_a_load() {
	scale_is 1000 47 155	# scenario 9's class start on an EPYC host's VM
	scale_is 354 47 50	# on a Xeon host's: a third of 50 is 16.65 of 47
	scale_is 1000 0 50	# no load of that kind: never scaled down for it
}
test_below_the_floor_says_skip() {
	local out
	out=$(SCENARIO=s SCENARIO_CAPACITY="20000000 400000000" bash -c \
		'. tests/lib/scale.sh; step() { :; }; scenario_load 47; echo RAN') || fail "exit $?"
	[[ $out == "SKIP s: this VM carries 20 Mbit/s"* ]] && [[ $out != *RAN* ]] ||
		fail "scale 0.141 ran or said: $out"
	out=$(SCENARIO=s SCENARIO_CAPACITY="50000000 400000000" bash -c \
		'. tests/lib/scale.sh; step() { :; }; scenario_load 47; echo "RAN $SCALE_PM $(sr 20) $(sk 500) $(sb 1000000)"')
	[ "$out" = "RAN 354 7080 177 354000" ] || fail "scale 0.354: $out"
}
test_config_and_tc_scaled() {
	SCALE_PM=500
	printf '[class 1:1]\nrate = 20mbit\nceil=1gbit # top\nquantum = 3000\n' > "$tmp/c.ini"
	[ "$(scale_config "$tmp/c.ini" | tr '\n' '|')" = "[class 1:1]|rate = 10000kbit|ceil = 500000kbit|quantum = 3000|" ] ||
		fail "config: $(scale_config "$tmp/c.ini" | tr '\n' '|')"
	echo 'tc class add dev eth0 parent 1: classid 1:1 htb rate 3mbit ceil 500kbit prio 1' > "$tmp/s.tc"
	[ "$(scale_tc "$tmp/s.tc")" = "tc class add dev eth0 parent 1: classid 1:1 htb rate 1500kbit ceil 250kbit prio 1" ] ||
		fail "tc: $(scale_tc "$tmp/s.tc")"
}
test_unknown_unit_refused() {
	printf '[class 1:1]\nrate = 20mbps\n' > "$tmp/c.ini"
	! scale_config "$tmp/c.ini" > /dev/null 2> "$tmp/err" || fail "20mbps scaled without a word"
	grep -q "unit 20mbps not scaled" "$tmp/err" || fail "said: $(oneline "$tmp/err")"
}

. "$(dirname "$0")/../lib/runner.sh"
