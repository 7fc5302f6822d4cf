#!/usr/bin/env bash
# Smoke test of the VM harness: the guest kernel has what the vm tier needs.
# Runs INSIDE the VM: scripts/vm.sh run "bash tests/vm/fq_smoke.sh [CASE...]"
# (on a kernel without sch_fq the fq cases fail, which is the point).
#
# On the runner's veth pair (tests/lib/runner.sh): fq as root, mq with fq
# per queue on a 4-queue veth, kernel HTB as root, clsact with a classic
# and an eBPF cls_bpf filter, an iperf3 TCP flow through fq (its receiver
# throughput on the PASS line), and fq's own maxrate pacing as proof that
# fq enforces departure times in this guest. The first case names the
# kernel; bpf_qdisc checks the BPF qdisc is there exactly when the kernel's
# config has it (7.2 of VM_KERNEL=backports does, 6.1 does not).

# err_line: the first line of what the last command said on stderr
err_line() { head -1 "$tmp/err"; }
ping_once() { in_snd ping -c 1 -W 5 -q "$RCV_IP4" > /dev/null 2> "$tmp/err"; }

test_netns_veth() {
	ping_once || fail "no ping reply from $RCV_IP4"
	note "kernel $(uname -r)"
}
# The BPF qdisc (CONFIG_NET_SCH_BPF, a bool, Linux 6.16 on; qdiscs written
# as BPF struct_ops): present exactly where the guest kernel's config says
# so. Debian 13's 7.2 (VM_KERNEL=backports) builds it in; Debian 12's 6.1
# has no such option, and the case says what it checked there.
test_bpf_qdisc() {
	local kver cfg opt n major
	kver=$(uname -r)
	major=${kver%%.*}
	cfg=${VM_MODROOT:-}/boot/config-$kver
	[ -r "$cfg" ] || fail "no config of kernel $kver at $cfg"
	opt=$(sed -n 's/^CONFIG_NET_SCH_BPF=//p' "$cfg")
	# symbols of net/sched/bpf_qdisc.c: bpf_qdisc_init, bpf_qdisc_reg ...
	n=$(grep -c ' bpf_qdisc_' /proc/kallsyms)
	if [ "$opt" = y ]; then
		[ "$n" -gt 0 ] || fail "kernel $kver: CONFIG_NET_SCH_BPF=y but no bpf_qdisc_ symbol in /proc/kallsyms"
		note "kernel $kver: BPF qdisc built in, $n bpf_qdisc_ symbols in /proc/kallsyms"
	else
		# Every kernel of the 7 series Debian ships has it; one without
		# it here is a wrong kernel or a wrong config file.
		[ "$major" -lt 7 ] || fail "kernel $kver has no CONFIG_NET_SCH_BPF=y (config says '${opt:-not set}')"
		[ "$n" = 0 ] || fail "kernel $kver: no CONFIG_NET_SCH_BPF but $n bpf_qdisc_ symbols in /proc/kallsyms"
		note "kernel $kver: no BPF qdisc (CONFIG_NET_SCH_BPF ${opt:-not set}; it came in 6.16), none in /proc/kallsyms"
	fi
}
test_fq_root() {
	in_snd tc qdisc add dev "$SND_IF" root handle 1: fq 2> "$tmp/err" || fail "$(err_line)"
	root_qdisc_is "fq 1:"
}
test_mq_fq() {
	local q n
	fresh_topo 4
	in_snd tc qdisc add dev "$SND_IF" root handle 1: mq 2> "$tmp/err" || fail "mq: $(err_line)"
	for q in 1 2 3 4; do
		in_snd tc qdisc add dev "$SND_IF" parent 1:$q fq 2> "$tmp/err" || fail "fq on queue $q: $(err_line)"
	done
	root_qdisc_is "mq 1:"
	n=$(grep -c '^qdisc fq .* parent 1:' "$tmp/qdiscs")
	[ "$n" = 4 ] || fail "$n fq children"
	note "mq with 4 fq children"
}
# kernel HTB as root (for side-by-side comparisons)
test_htb_root() {
	in_rcv tc qdisc add dev "$RCV_IF" root handle 1: htb default 10 2> "$tmp/err" &&
	in_rcv tc class add dev "$RCV_IF" parent 1: classid 1:10 htb rate 100mbit 2> "$tmp/err" ||
		fail "$(err_line)"
	in_rcv tc qdisc show dev "$RCV_IF" | grep -q '^qdisc htb 1: root' || fail "no htb root"
	in_rcv tc class show dev "$RCV_IF" | grep -q 'class htb 1:10' || fail "no class 1:10"
}

# clsact + cls_bpf: classic BPF (accept all), then an eBPF program in
# direct-action mode (TC_ACT_OK); traffic must still pass.
test_clsact_cbpf() {
	in_snd tc qdisc add dev "$SND_IF" clsact 2> "$tmp/err" &&
	in_snd tc filter add dev "$SND_IF" egress bpf bytecode '1,6 0 0 4294967295,' 2> "$tmp/err" ||
		fail "$(err_line)"
	in_snd tc filter show dev "$SND_IF" egress | grep -q bpf || fail "no bpf filter shown"
	ping_once || fail "no ping reply through the filter: $(err_line)"
}

# The eBPF object, prebuilt (clang in this guest takes ~20 s: libLLVM over
# 9p under emulation). Source, built with clang -O2 -target bpf; llvm-strip -g:
#   __attribute__((section("tc"), used)) int pass(void *skb) { return 0; }
#   char _license[] __attribute__((section("license"), used)) = "GPL";
pass_object() {	# -> $tmp/pass.o
	base64 -d <<'B64' | gzip -dc > "$tmp/pass.o" 2> "$tmp/err" || fail "cannot unpack the test object: $(err_line)"
H4sICKxnDWsCA3Bhc3MubwCrd/VxY2JkZIABRobvDAgeAtxAYjtASXagyu1QsalQ2j3AhwEfYAdi
IQZmOF8ASksBsSADC1wcxmJiZtArSa0oYShILC5m0MvJKcuNT0xJKSrOTGeIz8lMTs0rTmUoSWbQ
Ky4pKklMAtKVuSCaUqAGxMxYxBdBaTM0cUYsfBBmQxN3wGEfCxpfmYB+ATRxDjS+NFQ/uh8CcNiH
7n4ekF6f//lAqgFZfAEsXgjo18OiBgQioLQHWjjB3C8BjTkAr0/jXZgCAAA=
B64
}
test_cls_bpf_da() {
	pass_object
	in_snd tc qdisc add dev "$SND_IF" clsact 2> "$tmp/err" &&
	in_snd tc filter add dev "$SND_IF" egress bpf da obj "$tmp/pass.o" sec tc 2> "$tmp/err" ||
		fail "$(err_line)"
	in_snd tc filter show dev "$SND_IF" egress | grep -q direct-action || fail "no direct-action filter shown"
	ping_once || fail "no ping reply through the program: $(err_line)"
	note "eBPF TC_ACT_OK on clsact egress"
}

# ---- iperf3 TCP through the veth, fq root on the sender

need_iperf3() { command -v iperf3 > /dev/null || skip "no iperf3"; }
# fq_goodput FQ_OPTIONS...: $bps of a 3 s TCP flow, fq with them as root
fq_goodput() {
	need_iperf3
	in_snd tc qdisc add dev "$SND_IF" root handle 1: fq "$@" 2> "$tmp/err" || fail "fq $*: $(err_line)"
	bps=$(tcp_goodput 3 2> "$tmp/err") || fail "iperf3: $(head -2 "$tmp/err" | tr '\n' ' ')"
}
test_iperf3_tcp() {
	fq_goodput
	# Under qemu TCG this is ~1 Gbit/s; far below means the guest is broken.
	awk -v b="$bps" 'BEGIN { exit !(b > 50e6) }' || fail "only $(mbit "$bps") Mbit/s receiver"
	note "$(mbit "$bps") Mbit/s receiver, unshaped veth, fq root, 3 s"
}
# fq paces: maxrate 50 Mbit/s per flow must hold the TCP flow near it
test_fq_maxrate() {
	fq_goodput maxrate 50mbit
	awk -v b="$bps" 'BEGIN { exit !(b > 40e6 && b < 52e6) }' ||
		fail "$(mbit "$bps") Mbit/s receiver at fq maxrate 50mbit (want 40-52)"
	note "$(mbit "$bps") Mbit/s receiver at fq maxrate 50mbit"
}

. "$(dirname "$0")/../lib/runner.sh"
