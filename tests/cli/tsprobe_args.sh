#!/usr/bin/env bash
# tests/tools/tsprobe refuses bad numbers with one line naming the argument
# and exit 2, before it sends anything (the scenarios rely on its numbers:
# a negative TSPROBE_START_NS read as a huge time would sleep for ever).
RUN_TOPO=none
needs() { echo "$OUT/tests/tools/tsprobe"; }

# tsprobe ARG...: the built probe, with TSPROBE_START_NS=$start if set
tsprobe() { env ${start+TSPROBE_START_NS="$start"} "$OUT/tests/tools/tsprobe" "$@"; }
# bad_start VALUE: a send with TSPROBE_START_NS=VALUE is refused
bad_start() {
	local start=$1
	refused_with 2 "TSPROBE_START_NS '$1'" tsprobe send 198.18.0.2 7000 1 1000 200
}

test_start_negative() { bad_start -5; }
test_start_blank_first() { bad_start ' 5'; }
test_start_letters() { bad_start abc; }
test_start_empty() { bad_start ''; }
test_start_bare_0x() { bad_start 0x; }
test_start_2_to_64() { bad_start 18446744073709551616; }
test_port_negative() { refused_with 2 "PORT ' -1'" tsprobe recv ' -1' 1 1; }
test_port_blank_first() { refused_with 2 "PORT ' 7000'" tsprobe recv ' 7000' 1 1; }
test_port_65536() { refused_with 2 "PORT '65536'" tsprobe recv 65536 1 1; }
test_count_0() { refused_with 2 "COUNT '0'" tsprobe recv 7000 0 1; }

. "$(dirname "$0")/../lib/runner.sh"
