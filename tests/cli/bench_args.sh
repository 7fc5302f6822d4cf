#!/usr/bin/env bash
# build/bench/bench_prog refuses options it would not honour with one line
# and exit 2, before it loads anything: --hold profiles one case on one
# CPU, so the tables' options beside it would be ignored silently.
RUN_TOPO=none
needs() { echo "$OUT/bench/bench_prog"; }
bench() { "$OUT/bench/bench_prog" "$@"; }

test_hold_with_only() { refused_with 2 "not with --only" bench --hold 1 --only steps; }
test_hold_with_trials() { refused_with 2 "not with --only, --trials" bench --hold 1 --trials 3; }
test_hold_with_cpus() { refused_with 2 "not with --only" bench --cpus 1 --hold 1; }
test_hold_with_max_classes() { refused_with 2 "not with --only" bench --hold 1 --max-classes 10; }
test_hold_0() { refused_with 2 "--hold 0: seconds" bench --hold 0; }
test_tables_options_without_hold_reach_their_checks() { refused_with 2 "--cpus 0: this process" bench --only steps --cpus 0; }
test_only_unknown() { refused_with 2 "--only x: the tables are" bench --only x; }

. "$(dirname "$0")/../lib/runner.sh"
