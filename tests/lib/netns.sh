# Shared by every tier that moves packets (tests/lib/runner.sh, the
# scenarios, scripts/bench-load.sh, scripts/demo.sh): a sender and a
# receiver namespace joined by one veth pair, addresses from 198.18.0.0/15
# and fd00::/8 only, and iperf3 across it.
# Source it, then: topo_up PREFIX [TXQUEUES]; ...; topo_down (also on EXIT).
# Several pairs may be up at once (each pair's namespaces have the same
# addresses): topo_up selects the new one, topo_use PREFIX selects another,
# topo_down removes them all, and ends what still runs in them.
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

# Each `ip -batch` below is one process for what would be several: under
# the VM's emulation every process started costs about 0.3 s.

topo_down() {
	local p pids
	for p in $TOPO_ALL; do
		topo_use "$p"
		pids="$(ip netns pids "$RCV_NS" 2>/dev/null) $(ip netns pids "$SND_NS" 2>/dev/null)"
		[ -z "${pids// /}" ] || kill $pids 2>/dev/null
		printf 'netns del %s\n' "$SND_NS" "$RCV_NS" | ip -force -batch - 2>/dev/null
	done
	TOPO_PREFIX= TOPO_ALL=
}

topo_up() {	# prefix [txqueues]
	local p=$1 q=${2:-1}
	topo_use "$p"
	TOPO_ALL+=" $p"
	ip -batch - <<-EOF || return 1
	netns add $SND_NS
	netns add $RCV_NS
	link add $SND_IF netns $SND_NS numtxqueues $q numrxqueues $q type veth peer name $RCV_IF netns $RCV_NS numtxqueues $q numrxqueues $q
	EOF
	end_up "$SND_NS" "$SND_IF" "$SND_IP4" "$SND_IP6" && end_up "$RCV_NS" "$RCV_IF" "$RCV_IP4" "$RCV_IP6"
}
end_up() {	# namespace device ipv4 ipv6: one end of the pair addressed and up
	ip -n "$1" -batch - <<-EOF
	link set lo up
	addr add $3/24 dev $2
	addr add $4/64 dev $2 nodad
	link set $2 up
	EOF
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
# a client that comes first is refused. One `ss` per look for all ports:
# a program start costs 0.2-1 s under emulation (ss 1.2 s in the VM, one
# per port added seconds to every scenario step).
await_listen() {
	local p out missing t0=$SECONDS
	while :; do
		# "LISTEN 0 5 *:5201 *:*": a local port is ":PORT" and a blank
		out=$(in_rcv ss -Htln)
		missing=
		for p; do [[ $out == *":$p "* ]] || missing+=" $p"; done
		[ -z "$missing" ] && return 0
		[ $((SECONDS - t0)) -lt 10 ] || break
		sleep 0.2
	done
	echo "no listener on port(s)$missing after 10 s" >&2
	return 1
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
