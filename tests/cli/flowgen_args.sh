#!/usr/bin/env bash
# tests/tools/flowgen refuses a window it cannot count with one line
# naming it and exit 2, before it sends or binds anything: send's --skip
# and --until (the report's window, a receiver's) as recv's.
RUN_TOPO=none
needs() { echo "$OUT/tests/tools/flowgen"; }
flowgen() { "$OUT/tests/tools/flowgen" "$@"; }

test_send_skip_past_the_run() {
	refused_with 2 "--skip 5 must be less than --seconds 3" flowgen send --seconds 3 --skip 5 198.18.0.2,9000,1,1m
}
test_send_until_before_skip() {
	refused_with 2 "--until 0.5 must be more than --skip 1" flowgen send --skip 1 --until 0.5 198.18.0.2,9000,1,1m
}
test_send_until_past_the_run() {
	refused_with 2 "--until 4 must be more than --skip 0 and at most --seconds 3" \
		flowgen send --seconds 3 --until 4 198.18.0.2,9000,1,1m
}
test_recv_until_before_skip() {
	refused_with 2 "--until 2 must be more than --skip 3" flowgen recv --port 9000 --flows 1 --skip 3 --until 2
}

. "$(dirname "$0")/../lib/runner.sh"
