#!/usr/bin/env bash
# Smoke test of the VM harness: the guest kernel has what the vm tier needs.
# Runs INSIDE the VM: scripts/vm.sh run "bash tests/vm/fq_smoke.sh"
# (on a kernel without sch_fq the fq cases fail, which is the point).
#
# Two namespaces joined by a veth pair (198.18.0.0/15 only), then: fq as
# root, mq with fq per queue on a 4-queue veth, kernel HTB as root, clsact
# with a classic and an eBPF cls_bpf filter, an iperf3 TCP flow through fq
# (prints the receiver's throughput), and fq's own maxrate pacing as proof
# that fq enforces departure times in this guest.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

ns=htbvm$$
A=$ns-snd B=$ns-rcv
va=vs$$ vb=vr$$ vq=vq$$
ipa=198.18.0.1 ipb=198.18.0.2
tmp=$(mktemp -d)
srv=

pass() { echo "PASS $1${2:+: $2}"; }
failed=0
fail() { echo "FAIL $1: $2"; failed=1; }
skip() { echo "SKIP $1: $2"; }
cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
inA() { ip netns exec "$A" "$@"; }
inB() { ip netns exec "$B" "$@"; }

echo "# kernel $(uname -r)"

# ---- topology
if ! { ip netns add "$A" && ip netns add "$B" &&
	ip link add "$va" netns "$A" type veth peer name "$vb" netns "$B" &&
	ip -n "$A" addr add $ipa/30 dev "$va" && ip -n "$B" addr add $ipb/30 dev "$vb" &&
	ip -n "$A" link set lo up && ip -n "$B" link set lo up &&
	ip -n "$A" link set "$va" up && ip -n "$B" link set "$vb" up; } 2>"$tmp/err"; then
	fail netns_veth "$(tr '\n' ' ' <"$tmp/err")"
	exit 1
fi
if inA ping -c 1 -W 5 -q $ipb >/dev/null 2>&1; then
	pass netns_veth
else
	fail netns_veth "no ping reply from $ipb"
	exit 1
fi

# ---- fq as root
if tc -n "$A" qdisc add dev "$va" root handle 1: fq 2>"$tmp/err"; then
	if tc -n "$A" qdisc show dev "$va" | grep -q '^qdisc fq 1: root'; then
		pass fq_root
	else
		fail fq_root "tc qdisc show: $(tc -n "$A" qdisc show dev "$va" | head -1)"
	fi
else
	fail fq_root "$(head -1 "$tmp/err")"
fi

# ---- mq + fq on a 4-queue veth
if ip -n "$A" link add "$vq" numtxqueues 4 numrxqueues 4 type veth peer name "${vq}p" numtxqueues 4 numrxqueues 4 2>"$tmp/err"; then
	ok=1
	tc -n "$A" qdisc add dev "$vq" root handle 1: mq 2>"$tmp/err" || ok=0
	for q in 1 2 3 4; do
		[ $ok = 1 ] || break
		tc -n "$A" qdisc add dev "$vq" parent 1:$q fq 2>"$tmp/err" || ok=0
	done
	n=$(tc -n "$A" qdisc show dev "$vq" | grep -c '^qdisc fq .* parent 1:')
	if [ $ok = 1 ] && [ "$n" = 4 ] && tc -n "$A" qdisc show dev "$vq" | grep -q '^qdisc mq 1: root'; then
		pass mq_fq "mq with 4 fq children"
	else
		fail mq_fq "$(head -1 "$tmp/err"); $n fq children"
	fi
else
	fail mq_fq "veth with 4 tx queues: $(head -1 "$tmp/err")"
fi

# ---- kernel HTB as root (for side-by-side comparisons)
if tc -n "$B" qdisc add dev "$vb" root handle 1: htb default 10 2>"$tmp/err" &&
	tc -n "$B" class add dev "$vb" parent 1: classid 1:10 htb rate 100mbit 2>"$tmp/err" &&
	tc -n "$B" qdisc show dev "$vb" | grep -q '^qdisc htb 1: root' &&
	tc -n "$B" class show dev "$vb" | grep -q 'class htb 1:10'; then
	pass htb_root
else
	fail htb_root "$(head -1 "$tmp/err")"
fi
tc -n "$B" qdisc del dev "$vb" root 2>/dev/null

# ---- clsact + cls_bpf: classic BPF (accept all), then an eBPF program in
# direct-action mode (TC_ACT_OK); traffic must still pass.
if tc -n "$A" qdisc add dev "$va" clsact 2>"$tmp/err" &&
	tc -n "$A" filter add dev "$va" egress bpf bytecode '1,6 0 0 4294967295,' 2>"$tmp/err" &&
	tc -n "$A" filter show dev "$va" egress | grep -q 'bpf' &&
	inA ping -c 1 -W 5 -q $ipb >/dev/null 2>"$tmp/err"; then
	pass clsact_cbpf
else
	fail clsact_cbpf "$(head -1 "$tmp/err")"
fi
tc -n "$A" filter del dev "$va" egress 2>/dev/null

# The eBPF object, prebuilt (clang in this guest takes ~20 s: libLLVM over
# 9p under emulation). Source, built with clang -O2 -target bpf; llvm-strip -g:
#   __attribute__((section("tc"), used)) int pass(void *skb) { return 0; }
#   char _license[] __attribute__((section("license"), used)) = "GPL";
base64 -d >"$tmp/pass.o.gz" <<'B64'
H4sICKxnDWsCA3Bhc3MubwCrd/VxY2JkZIABRobvDAgeAtxAYjtASXagyu1QsalQ2j3AhwEfYAdi
IQZmOF8ASksBsSADC1wcxmJiZtArSa0oYShILC5m0MvJKcuNT0xJKSrOTGeIz8lMTs0rTmUoSWbQ
Ky4pKklMAtKVuSCaUqAGxMxYxBdBaTM0cUYsfBBmQxN3wGEfCxpfmYB+ATRxDjS+NFQ/uh8CcNiH
7n4ekF6f//lAqgFZfAEsXgjo18OiBgQioLQHWjjB3C8BjTkAr0/jXZgCAAA=
B64
if ! gzip -dc "$tmp/pass.o.gz" >"$tmp/pass.o" 2>"$tmp/err"; then
	fail cls_bpf_da "cannot unpack the test object: $(head -1 "$tmp/err")"
elif tc -n "$A" filter add dev "$va" egress bpf da obj "$tmp/pass.o" sec tc 2>"$tmp/err" &&
	tc -n "$A" filter show dev "$va" egress | grep -q 'direct-action' &&
	inA ping -c 1 -W 5 -q $ipb >/dev/null 2>"$tmp/err"; then
	pass cls_bpf_da "eBPF TC_ACT_OK on clsact egress"
else
	fail cls_bpf_da "$(head -1 "$tmp/err")"
fi
tc -n "$A" filter del dev "$va" egress 2>/dev/null

# ---- iperf3 TCP through the veth, fq root on the sender
start_server() {
	inB iperf3 -s -1 -B $ipb >"$tmp/srv.log" 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		ss -N "$B" -ltn 2>/dev/null | grep -q "$ipb:5201" && return 0
		sleep 0.1
	done
	return 1
}
iperf_tcp() {	# seconds -> receiver bit/s on stdout, or nothing
	start_server || { echo "iperf3 server did not start: $(head -1 "$tmp/srv.log")" >"$tmp/err"; return 1; }
	inA iperf3 -c $ipb -t "$1" -J >"$tmp/cli.json" 2>"$tmp/err"
	wait "$srv" 2>/dev/null
	srv=
	jq -er '.end.sum_received.bits_per_second' "$tmp/cli.json" 2>>"$tmp/err" ||
		{ jq -r '.error // empty' "$tmp/cli.json" >>"$tmp/err" 2>/dev/null; return 1; }
}
mbit() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }

if ! command -v iperf3 >/dev/null; then
	skip iperf3_tcp "no iperf3"
	skip fq_maxrate "no iperf3"
	exit $failed
fi
if bps=$(iperf_tcp 3); then
	# Under qemu TCG this is ~1 Gbit/s; far below means the guest is broken.
	if awk -v b="$bps" 'BEGIN { exit !(b > 50e6) }'; then
		pass iperf3_tcp "$(mbit "$bps") Mbit/s receiver, unshaped veth, fq root, 3 s"
	else
		fail iperf3_tcp "only $(mbit "$bps") Mbit/s receiver"
	fi
else
	fail iperf3_tcp "$(head -2 "$tmp/err" | tr '\n' ' ')"
fi

# ---- fq paces: maxrate 50 Mbit/s per flow must hold the TCP flow near it
if tc -n "$A" qdisc change dev "$va" root handle 1: fq maxrate 50mbit 2>"$tmp/err" &&
	bps=$(iperf_tcp 3); then
	if awk -v b="$bps" 'BEGIN { exit !(b > 40e6 && b < 52e6) }'; then
		pass fq_maxrate "$(mbit "$bps") Mbit/s receiver at fq maxrate 50mbit"
	else
		fail fq_maxrate "$(mbit "$bps") Mbit/s receiver at fq maxrate 50mbit (want 40-52)"
	fi
else
	fail fq_maxrate "$(head -2 "$tmp/err" | tr '\n' ' ')"
fi
exit $failed
