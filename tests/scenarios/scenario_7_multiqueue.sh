#!/usr/bin/env bash
# Scenario 7: a veth with 4 TX queues. htbctl load must install mq with one
# fq per TX queue, and scenario 3's guarantees must still hold: classes
# share token state across CPUs and queues.
. "$(dirname "$0")/../lib/shaping.sh"
scenario_begin scenario7 s7q:4
if shape_htbctl configs/seed003.ini >/dev/null 2>&1; then
	q=$(in_snd tc qdisc show dev "$SND_IF")
	nfq=$(grep -c '^qdisc fq ' <<<"$q")
	if grep -q '^qdisc mq ' <<<"$q" && [ "$nfq" = 4 ]; then
		pass "scenario7: mq root with $nfq fq children"
	else
		fail "scenario7: expected mq + 4 fq, got: $(tr '\n' ';' <<<"$q")"
	fi
	unshape_htbctl
else
	fail "scenario7: htbctl load on a 4-queue veth failed"
fi
scenario_end
TXQ=4 SCENARIO_NAME=scenario7 exec bash tests/scenarios/scenario_3_guarantee.sh
