#!/usr/bin/env bash
# htbctl load/unload with the real fq (runs INSIDE the VM, whose kernel has
# sch_fq): scripts/vm.sh run "bash tests/vm/loader_fq.sh"
#   - fq as the root of a one-queue veth, with the parameters load derives
#     (docs/loader.md), and the device's default root back after unload;
#   - mq with one fq per TX queue on a 4-queue veth, and back;
#   - an htb tree (with a tbf child) replaced by fq and restored exactly;
#   - reload keeps the fq root; TCP through a 20 Mbit/s class is held there
#     (fq enforces the stamps).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/lib/netns.sh
OUT=${OUTPUT:-build}
B=$top/$OUT/htbctl
tmp=$(mktemp -d)
chmod 755 "$tmp"
srv=
cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null
	[ -n "$SND_IF" ] && "$B" unload dev "$SND_IF" --force >/dev/null 2>&1
	topo_down
	rm -rf "$tmp"
}
trap cleanup EXIT

[ -x "$B" ] || { skip "loader_fq: $B not built"; exit 0; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
if ! "$top/$OUT/htbctl" help >/dev/null 2>&1; then
	fail "loader_fq: htbctl does not run here"
	exit 1
fi

cat >"$tmp/a.ini" <<'EOF'
[device]
default = 1:30
limit = 200ms

[class 1:1]
rate = 100mbit

[class 1:10]
parent = 1:1
rate = 20mbit
ceil = 20mbit
match = dst 198.18.0.2/32

[class 1:30]
parent = 1:1
rate = 1mbit
ceil = 100mbit
EOF
sed 's/^rate = 1mbit/rate = 2mbit/' "$tmp/a.ini" >"$tmp/b.ini"
chmod 644 "$tmp"/*.ini

h() { in_snd "$B" "$@"; }
snap() {
	{ in_snd tc qdisc show dev "$SND_IF"; in_snd tc -d class show dev "$SND_IF"
	  in_snd tc filter show dev "$SND_IF" egress; } 2>&1 |
		sed 's/direct_packets_stat [0-9]*//; s/refcnt [0-9]*//' >"$1"
}
same() {	# name before after
	if cmp -s "$2" "$3" && [ ! -e "/sys/fs/bpf/htbctl/$SND_IF" ]; then
		pass "$1"
	else
		fail "$1: $(diff "$2" "$3" | tr '\n' ' ' | cut -c1-300)"
	fi
}

# ---- one TX queue: fq as root
topo_up vf 1 || { fail "loader_fq: topology"; exit 1; }
snap "$tmp/s0"
if h -j load dev "$SND_IF" config "$tmp/a.ini" >"$tmp/load.json" 2>"$tmp/err"; then
	pass "load installs fq ($(jq -r '"flow_limit \(.fq_flow_limit) limit \(.fq_limit) orphan_mask \(.fq_orphan_mask)"' "$tmp/load.json"))"
else
	fail "load installs fq: $(tr '\n' ' ' <"$tmp/err")"
fi
q=$(in_snd tc -d qdisc show dev "$SND_IF")
if grep -q '^qdisc fq 4854: root' <<<"$q"; then
	pass "fq 4854: is the root"
else
	fail "fq 4854: is the root: $(tr '\n' ' ' <<<"$q")"
fi
# flow_limit covers the largest leaf ceil x limit in minimum (42-byte)
# frames: 1:30's 100 Mbit/s x 200 ms = 2.5 MB = 59524 frames; horizon 10 s
fl=$(sed -n 's/.*flow_limit \([0-9]*\)p.*/\1/p' <<<"$q")
om=$(sed -n 's/.*orphan_mask \([0-9]*\).*/\1/p' <<<"$q")
if [ "${fl:-0}" = "$(jq -r .fq_flow_limit "$tmp/load.json")" ] && [ "${fl:-0}" = 59524 ] &&
   [ "${om:-0}" = "$(jq -r .fq_orphan_mask "$tmp/load.json")" ] && grep -q 'horizon 10s' <<<"$q"; then
	pass "fq parameters as derived (flow_limit $fl, orphan_mask $om, horizon 10s)"
else
	fail "fq parameters as derived: $(tr '\n' ' ' <<<"$q")"
fi

# ---- TCP through a 20 Mbit/s class, enforced by fq
if command -v iperf3 >/dev/null; then
	export TMPDIR=${TMPDIR:-/tmp}
	in_rcv iperf3 -s -1 -B "$RCV_IP4" >"$tmp/srv.log" 2>&1 &
	srv=$!
	for _ in $(seq 50); do in_rcv ss -ltn 2>/dev/null | grep -q ":5201" && break; sleep 0.1; done
	in_snd iperf3 -c "$RCV_IP4" -t 4 -J >"$tmp/cli.json" 2>"$tmp/err"
	wait "$srv" 2>/dev/null; srv=
	bps=$(jq -r '.end.sum_received.bits_per_second // 0' "$tmp/cli.json" 2>/dev/null)
	# goodput of 20 Mbit/s at the Ethernet level: 20 * 1448 / 1514 = 19.1
	if awk -v b="${bps:-0}" 'BEGIN { exit !(b > 17e6 && b < 20.5e6) }'; then
		pass "TCP held at the class rate by fq ($(awk -v b="$bps" 'BEGIN{printf "%.2f", b/1e6}') Mbit/s)"
	else
		fail "TCP held at the class rate by fq: $(awk -v b="${bps:-0}" 'BEGIN{printf "%.2f", b/1e6}') Mbit/s (want 17-20.5)"
	fi
else
	skip "TCP held at the class rate: no iperf3"
fi

# show on this kernel: batched BPF_F_LOCK reads, the TCP bytes in 1:10
b10=$(h -j show dev "$SND_IF" interval 0 2>"$tmp/err" |
	jq -r '.classes[] | select(.class == "1:10") | .bytes' 2>/dev/null)
[ "${b10:-0}" -gt 1000000 ] && pass "show counts the TCP bytes in 1:10 ($b10)" ||
	fail "show counts the TCP bytes in 1:10: ${b10:-none} $(tr '\n' ' ' <"$tmp/err")"
if h reload dev "$SND_IF" config "$tmp/b.ini" >"$tmp/out" 2>&1 &&
   h reload dev "$SND_IF" config "$tmp/a.ini" >>"$tmp/out" 2>&1 &&
   [ "$(h -j show dev "$SND_IF" interval 0 | jq -r '.classes[] | select(.class == "1:10") | .bytes')" -ge "${b10:-1}" ] &&
   in_snd tc qdisc show dev "$SND_IF" | grep -q '^qdisc fq 4854: root'; then
	pass "two reloads keep the fq root and the counters"
else
	fail "two reloads keep the fq root and the counters: $(tr '\n' ' ' <"$tmp/out")"
fi
if h unload dev "$SND_IF" >"$tmp/out" 2>&1; then pass "unload"; else fail "unload: $(cat "$tmp/out")"; fi
snap "$tmp/s1"
same "default root back after unload" "$tmp/s0" "$tmp/s1"
topo_down

# ---- four TX queues: mq + one fq per queue
topo_up vq 4 || { fail "loader_fq: topology (4 queues)"; exit 1; }
snap "$tmp/s0"
if h load dev "$SND_IF" config "$tmp/a.ini" >"$tmp/out" 2>&1; then
	n=$(in_snd tc qdisc show dev "$SND_IF" | grep -c '^qdisc fq .* parent 4854:')
	if in_snd tc qdisc show dev "$SND_IF" | grep -q '^qdisc mq 4854: root' && [ "$n" = 4 ]; then
		pass "mq with one fq per tx queue"
	else
		fail "mq with one fq per tx queue: $(in_snd tc qdisc show dev "$SND_IF" | tr '\n' ' ')"
	fi
else
	fail "load on 4 tx queues: $(tr '\n' ' ' <"$tmp/out")"
fi
h unload dev "$SND_IF" >/dev/null 2>&1
snap "$tmp/s1"
same "mq + fq removed, default root back" "$tmp/s0" "$tmp/s1"

# ---- an htb tree replaced by fq and restored
in_snd tc qdisc add dev "$SND_IF" root handle 1: htb default 10
in_snd tc class add dev "$SND_IF" parent 1: classid 1:10 htb rate 50mbit ceil 100mbit
in_snd tc class add dev "$SND_IF" parent 1: classid 1:20 htb rate 5mbit prio 2
in_snd tc qdisc add dev "$SND_IF" parent 1:20 handle 20: tbf rate 2mbit burst 10k latency 20ms
snap "$tmp/s0"
if h load dev "$SND_IF" config "$tmp/a.ini" >"$tmp/out" 2>&1 &&
   in_snd tc qdisc show dev "$SND_IF" | grep -q '^qdisc mq 4854: root'; then
	pass "load replaces an htb root"
else
	fail "load replaces an htb root: $(tr '\n' ' ' <"$tmp/out")"
fi
h unload dev "$SND_IF" >/dev/null 2>&1
snap "$tmp/s1"
same "htb tree restored exactly" "$tmp/s0" "$tmp/s1"
exit 0
