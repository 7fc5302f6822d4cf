#!/usr/bin/env bash
# Scenario 12 (issue 22): a router shaping both directions, over IPv4 and
# IPv6 at once. Subscribers A and B behind a router, a server upstream; the
# router shapes its subscriber-side device (download, classes by
# destination address) and its upstream device (upload, by source). Every
# packet is forwarded: none has a socket where it is shaped. The tree, the
# traffic (thousands of flows, a ping in the loaded class) and the bars are
# tests/lib/forward.sh's (fwd_subscribers): each class within 3% of kernel
# HTB and of the fluid ideal, B (under its rate) lossless, the ping no
# later than HTB + fq_codel's (fwd_judge_ping). htbctl on one router and
# kernel HTB with fq_codel leaves on another, side by side at the same
# time.
# docs/log.md, "2026-12-03: The flow tag in the VM, before and after", has
# what htbctl got here before the flow tag.
. "$(dirname "$0")/../lib/shaping.sh"
. "$(dirname "$0")/../lib/router.sh"
. "$(dirname "$0")/../lib/forward.sh"
scenario_begin scenario12

router_up s12h 10 20 && router_up s12k 10 20 || { fail "scenario12: router setup"; exit 1; }
fwd_subscribers scenario12 s12h s12k router &&
	pass "scenario12: a router, both directions, IPv4 and IPv6: within $FWD_TOL% of HTB and the ideal, B lossless, ping no later than HTB + fq_codel's request by request"
plot_bars "$tsv" "scenario 12: a router shaping both directions"
