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

# ---- traffic across the pair

# iperf_server LIFETIME PORT [iperf3 options]: a one-off iperf3 server in
# the receiver namespace, run in the foreground (callers background it),
# that is killed after LIFETIME seconds whatever happens: a server whose
# client never came would otherwise wait for ever.
iperf_server() {
	local life=$1 port=$2; shift 2
	in_rcv timeout -k 2 "$life" iperf3 -s -1 -p "$port" "$@"
}

# iperf_client LIFETIME iperf3 options: the same bound for a client (its
# control connection must open within 5 s).
iperf_client() {
	local life=$1; shift
	in_snd timeout -k 2 "$life" iperf3 --connect-timeout 5000 "$@"
}

# await_listen PORT...: returns once the receiver listens on every TCP
# port, 1 after 10 s. A server takes a while to start under emulation and
# a client that comes first is refused.
await_listen() {
	local p i
	for p; do
		for ((i = 0; i < 50; i++)); do
			[ -n "$(in_rcv ss -Htln "sport = :$p")" ] && break
			sleep 0.2
		done
		[ $i -lt 50 ] || { echo "no listener on port $p after 10 s" >&2; return 1; }
	done
}

# tcp_goodput SECONDS: one TCP flow from sender to receiver (port 5201);
# prints the receiver's bit/s, or says why not on stderr and returns 1.
tcp_goodput() {
	local d rc=0
	d=$(mktemp -d)
	# iperf3 keeps a file in $TMPDIR, which the VM's environment lacks
	export TMPDIR=${TMPDIR:-/tmp}
	iperf_server $(($1 + 30)) 5201 > "$d/server" 2>&1 &
	await_listen 5201 || { cat "$d/server" >&2; rm -rf "$d"; return 1; }
	iperf_client $(($1 + 20)) -c "$RCV_IP4" -t "$1" -J > "$d/client.json" 2>&1
	wait $! 2>/dev/null
	jq -er '.end.sum_received.bits_per_second' "$d/client.json" 2>/dev/null ||
		{ rc=1; jq -r '.error // empty' "$d/client.json" 2>/dev/null >&2 || head -2 "$d/client.json" >&2; }
	rm -rf "$d"
	return $rc
}
