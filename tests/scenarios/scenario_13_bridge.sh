#!/usr/bin/env bash
# Scenario 13 (issue 22): a transparent bridge shaping both ports' egress,
# LibreQoS's layout. Subscribers and server on one subnet, their traffic
# tagged 802.1Q (VLAN 100) on their veths; the middle box is a Linux
# bridge of two ports that carries the tagged frames as they are, and
# htbctl classifies them by their inner addresses: download on the
# subscriber-side port by destination, upload on the upstream port by
# source, IPv4 and IPv6. The tree, traffic and bars are scenario 12's
# (tests/lib/forward.sh, fwd_subscribers), beside kernel HTB with
# fq_codel leaves on a second bridge at the same time.
. "$(dirname "$0")/../lib/shaping.sh"
. "$(dirname "$0")/../lib/router.sh"
. "$(dirname "$0")/../lib/forward.sh"
scenario_begin scenario13
# kernel HTB's u32 filters also as protocol 802.1q: the bridge forwards the
# frames with their tag in the skb's metadata, where tc's protocol is the
# tag's (htbctl reads the inner headers either way)
export HTB_TC_VLAN=1

bridge_up s13h 100 10 20 && bridge_up s13k 100 10 20 || { fail "scenario13: bridge setup"; exit 1; }
fwd_subscribers scenario13 s13h s13k "bridge (802.1Q)" &&
	pass "scenario13: a bridge, both ports, VLAN-tagged IPv4 and IPv6: within $FWD_TOL% of HTB and the ideal, B lossless, ping no later than HTB + fq_codel's request by request"
plot_bars "$tsv" "scenario 13: a bridge shaping both ports"
