#!/usr/bin/env bash
# The installed binary (build/htbctl) has no test hooks: no environment
# variable makes it fail a step or exit on purpose, or install another
# qdisc than fq, or run tc with the caller's environment; the test build (build/htbctl-test, tests/net's rollback
# and crash cases) has them. Checked on the binaries' text: a hook reads
# its variable by name.
RUN_TOPO=none
needs() { echo "$HTBCTL"; echo "$HTBCTL_TEST"; }

# names BINARY: the hook variables' names found in BINARY, one per line
names() { grep -a -o 'HTBCTL_TEST_[A-Z_]*' "$1" | sort -u; }

test_release_binary_reads_no_hook_variable() {
	local found
	found=$(names "$HTBCTL" | tr '\n' ' ')
	[ -z "$found" ] || fail "$HTBCTL names ${found% }"
}
# the check above could fail: the test build names every hook
test_test_build_has_the_hooks() {
	local found
	found=$(names "$HTBCTL_TEST" | tr '\n' ' ')
	[ "$found" = "HTBCTL_TEST_FAIL HTBCTL_TEST_QDISC HTBCTL_TEST_TOOL_ENV " ] ||
		fail "$HTBCTL_TEST names '${found% }', wanted HTBCTL_TEST_FAIL HTBCTL_TEST_QDISC HTBCTL_TEST_TOOL_ENV"
}

# htbctl reads its config and JSON itself: no config or JSON library is
# linked in (json-c served only a unit test, inih a parser now gone)
test_release_binary_links_no_parser_library() {
	local libs
	libs=$(ldd "$HTBCTL" | grep -oE 'lib(json-c|inih)[^ ]*' | tr '\n' ' ')
	[ -z "$libs" ] || fail "$HTBCTL links $libs"
}

. "$(dirname "$0")/../lib/runner.sh"
