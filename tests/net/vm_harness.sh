#!/usr/bin/env bash
# scripts/vm.sh on the host (root, qemu): what it does when the guest does
# not boot. VM_BOOT_TIMEOUT=1 is shorter than any boot (3-10 s), so every
# boot counts as hung: vm.sh must boot once more, then give up with 125
# without running the command.

vm() { scripts/vm.sh "$@" > "$tmp/out" 2> "$tmp/err"; }

test_a_hung_boot_is_booted_again_then_125() {
	local rc=0
	command -v qemu-system-x86_64 > /dev/null || fail "no qemu-system-x86_64 (scripts/setup.sh installs it)"
	VM_BOOT_TIMEOUT=1 vm run "touch $tmp/ran" || rc=$?
	[ "$rc" = 125 ] || fail "exit $rc, not 125: $(tail -2 "$tmp/err" | tr '\n' ' ')"
	grep -q 'did not reach init within VM_BOOT_TIMEOUT=1s (it takes 3-10 s); booting it again' "$tmp/err" ||
		fail "no retry said: $(head -2 "$tmp/err" | tr '\n' ' ')"
	grep -q 'did not reach init within VM_BOOT_TIMEOUT=1s, twice' "$tmp/err" || fail "no second hang said"
	[ ! -e "$tmp/ran" ] || fail "the command ran"
}

test_a_bad_boot_timeout_is_refused() {
	refused_with 125 "^vm.sh: VM_BOOT_TIMEOUT='soon' is not a positive whole number$" \
		env VM_BOOT_TIMEOUT=soon scripts/vm.sh run true
}

test_an_unknown_emulator_is_refused() {
	refused_with 125 "^vm.sh: VM_QEMU='newest' is neither backports nor system$" \
		env VM_QEMU=newest scripts/vm.sh run true
}

# The backports emulator (the default) is the one that runs: fetch names
# its version, not the machine's 7.2.
test_fetch_names_the_backports_emulator() {
	vm fetch || fail "fetch failed: $(tail -3 "$tmp/err" | tr '\n' ' ')"
	grep -Eq '^vm.sh: qemu: [0-9]+\.[0-9.]+ \(Debian [^)]*bpo12[^)]*\) \(VM_QEMU=backports\)$' "$tmp/err" ||
		fail "said: $(grep 'qemu' "$tmp/err" | tr '\n' ' ')"
	VM_QEMU=system vm fetch || fail "fetch (system) failed"
	grep -qx 'vm.sh: qemu: of the system (VM_QEMU=system)' "$tmp/err" || fail "system said: $(cat "$tmp/err")"
}

. "$(dirname "$0")/../lib/runner.sh"
