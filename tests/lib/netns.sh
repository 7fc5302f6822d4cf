# Shared by the net and vm tiers: a sender and a receiver namespace joined
# by one veth pair, addresses from 198.18.0.0/15 and fd00::/8 only.
# Source it, then: topo_up PREFIX [TXQUEUES]; ...; topo_down (also on EXIT).
# Several pairs may be up at once (each pair's namespaces have the same
# addresses): topo_up selects the new one, topo_use PREFIX selects another,
# topo_down removes them all.
#
# Commands run in a namespace with nsenter --net, not `ip netns exec`:
# the latter remounts /sys in a private mount namespace, which hides the
# bpffs at /sys/fs/bpf where htbctl pins its maps.

TOPO_PREFIX= TOPO_ALL=
SND_IF= RCV_IF= SND_NS= RCV_NS=
SND_IP4=198.18.0.1 RCV_IP4=198.18.0.2
SND_IP6=fd00:18::1 RCV_IP6=fd00:18::2

in_snd() { nsenter --net=/run/netns/"$SND_NS" "$@"; }
in_rcv() { nsenter --net=/run/netns/"$RCV_NS" "$@"; }

topo_use() {	# prefix
	TOPO_PREFIX=$1
	SND_NS=${1}s RCV_NS=${1}r SND_IF=${1}-s RCV_IF=${1}-r
}

topo_down() {
	local p
	for p in $TOPO_ALL; do
		topo_use "$p"
		ip netns pids "$RCV_NS" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns pids "$SND_NS" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$SND_NS" 2>/dev/null
		ip netns del "$RCV_NS" 2>/dev/null
	done
	TOPO_PREFIX= TOPO_ALL=
}

topo_up() {	# prefix [txqueues]
	local p=$1 q=${2:-1}
	topo_use "$p"
	TOPO_ALL+=" $p"
	ip netns add "$SND_NS" && ip netns add "$RCV_NS" || return 1
	ip link add "$SND_IF" netns "$SND_NS" numtxqueues "$q" numrxqueues "$q" \
		type veth peer name "$RCV_IF" netns "$RCV_NS" numtxqueues "$q" numrxqueues "$q" || return 1
	in_snd ip link set lo up
	in_rcv ip link set lo up
	in_snd ip addr add "$SND_IP4/24" dev "$SND_IF"
	in_rcv ip addr add "$RCV_IP4/24" dev "$RCV_IF"
	in_snd ip -6 addr add "$SND_IP6/64" dev "$SND_IF" nodad
	in_rcv ip -6 addr add "$RCV_IP6/64" dev "$RCV_IF" nodad
	in_snd ip link set "$SND_IF" up
	in_rcv ip link set "$RCV_IF" up
}

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
skip() { echo "SKIP $*"; }
