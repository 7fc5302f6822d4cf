#!/usr/bin/env bash
# The README's first command, in the guest: `scripts/demo.sh --here` sets
# up its own veth pair, loads seed 003's tree under the daemon, offers 10 s
# of UDP and prints the classes' rates. Runs INSIDE the VM (the vm tier):
# it broke once unseen (a `read` at EOF under the demo's set -e ended it
# right after the daemon started, 2026-12-03 to 12-04), since no test ran it.
RUN_TOPO=none	# the demo makes and removes its own pair

test_the_demo_shapes_and_prints_the_classes() {
	local rc=0 row
	scripts/demo.sh --here > "$tmp/out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "exit $rc: $(tail -3 "$tmp/out" | tr '\n' ' ')"
	for row in "A 1:11" "B 1:12" "C 1:13" "parent 1:1"; do
		grep -Eq "^$row +[0-9]+M +[0-9]+M +[0-9.]+M +[0-9.]+M +[0-9.]+M$" "$tmp/out" ||
			fail "no row for $row: $(tail -8 "$tmp/out" | tr '\n' ' ')"
	done
	grep -q '^== daemon stopped, unloaded; ' "$tmp/out" || fail "no unload line: $(tail -2 "$tmp/out" | tr '\n' ' ')"
	note "parent $(awk '/^parent 1:1/ { print $NF }' "$tmp/out") of 20M"
}

. "$(dirname "$0")/../lib/runner.sh"
