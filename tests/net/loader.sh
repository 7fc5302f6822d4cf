#!/usr/bin/env bash
# htbctl load / show / set / reload / unload on a veth pair in namespaces
# (root). This kernel has no sch_fq, so loads use --no-qdisc, or
# HTBCTL_TEST_QDISC=pfifo to exercise the qdisc install/restore path with
# pfifo standing in for fq (tests/vm/loader_fq.sh runs the real fq).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tests/lib/netns.sh
OUT=${OUTPUT:-build}
B=$top/$OUT/htbctl
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'cleanup' EXIT

cleanup() {
	[ -n "$SND_IF" ] && rm -rf "/sys/fs/bpf/htbctl/$SND_IF" 2>/dev/null
	topo_down
	rmdir /sys/fs/bpf/htbctl 2>/dev/null
	rm -rf "$tmp"
}

if [ ! -x "$B" ]; then
	skip "loader: $B not built"
	exit 0
fi
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf || { skip "loader: no bpffs"; exit 0; }
fi

cat >"$tmp/a.ini" <<'EOF'
[device]
default = 1:30

[class 1:1]
rate = 100mbit

[class 1:10]
parent = 1:1
rate = 10mbit
ceil = 100mbit
match = dst 198.18.0.2/32

[class 1:20]
parent = 1:1
rate = 5mbit
match = udp dport 9

[class 1:30]
parent = 1:1
rate = 1mbit
ceil = 100mbit
EOF
# 1:10 changed (rate), 1:20 removed, 1:40 added, 1:1 and 1:30 unchanged
sed -e 's/^rate = 10mbit/rate = 20mbit/' -e 's/^\[class 1:20\]/[class 1:40]/' \
	-e 's/^match = udp dport 9$/match = udp dport 19/' "$tmp/a.ini" >"$tmp/b.ini"
printf '[device]\ndefault = 1:30\n[class 1:1]\nrate = bogus\n' >"$tmp/bad.ini"
chmod 644 "$tmp"/*.ini

h() { in_snd "$B" "$@"; }
pins() { echo "/sys/fs/bpf/htbctl/$SND_IF"; }
ok() {		# name cmd... : PASS if cmd succeeds
	local name=$1; shift
	if "$@" >"$tmp/out" 2>&1; then pass "$name"; else fail "$name: $(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"; fi
}
refused() {	# name pattern cmd... : PASS if cmd exits 1 and says pattern
	local name=$1 pat=$2; shift 2
	"$@" >"$tmp/out" 2>&1
	local rc=$?
	if [ $rc = 1 ] && grep -q -- "$pat" "$tmp/out"; then
		pass "$name"
	else
		fail "$name: rc=$rc, wanted '$pat': $(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"
	fi
}
jclass() {	# classid field -> value from show -j
	h -j show dev "$SND_IF" interval 0 |
		jq -r --arg c "$1" --arg f "$2" '.classes[] | select(.class == $c) | .[$f]'
}
snap() {	# file: qdiscs, classes and egress filters of the sender device
	{ in_snd tc qdisc show dev "$SND_IF"; in_snd tc -d class show dev "$SND_IF"
	  in_snd tc filter show dev "$SND_IF" egress; } 2>&1 |
		sed 's/direct_packets_stat [0-9]*//' >"$1"
}
nothing_left() {	# name: no clsact/filter of ours, no pins
	local name=$1
	if in_snd tc filter show dev "$SND_IF" egress 2>/dev/null | grep -q htb_egress; then
		fail "$name: a filter is still attached"
	elif in_snd tc qdisc show dev "$SND_IF" | grep -q clsact; then
		fail "$name: clsact is still there"
	elif [ -e "$(pins)" ]; then
		fail "$name: $(pins) still exists: $(ls "$(pins)" | tr '\n' ' ')"
	else
		pass "$name"
	fi
}
ping_rcv() { in_snd ping -c "${1:-5}" -i 0.01 -W 1 -q "$RCV_IP4" >/dev/null 2>&1; }

topo_up hn 1 || { fail "loader: topology"; exit 1; }

# ---- refusals before anything changes ----
refused "missing device" "no device 'nosuchdev0'" h load dev nosuchdev0 config "$tmp/a.ini" --no-qdisc
refused "non-root is refused" "needs root" \
	in_snd setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$B" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
refused "non-root show is refused" "needs root" \
	in_snd setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$B" show dev "$SND_IF"
refused "bad config refused at load" "rejected" h load dev "$SND_IF" config "$tmp/bad.ini" --no-qdisc
if [ "$(tests/net/../../"$OUT"/htbctl help >/dev/null 2>&1; echo $?)" = 0 ] &&
   ! in_snd tc qdisc add dev lo root fq 2>/dev/null; then
	snap "$tmp/s0"
	refused "load without fq in the kernel is refused" "no fq qdisc" \
		h load dev "$SND_IF" config "$tmp/a.ini"
	snap "$tmp/s1"
	if cmp -s "$tmp/s0" "$tmp/s1" && [ ! -e "$(pins)" ]; then
		pass "refused load changed nothing"
	else
		fail "refused load changed nothing: $(diff "$tmp/s0" "$tmp/s1" | tr '\n' ' ')"
	fi
else
	in_snd tc qdisc del dev lo root 2>/dev/null
	skip "load without fq: this kernel has sch_fq"
fi
refused "show before load" "not loaded" h show dev "$SND_IF"
refused "unload before load" "nothing to unload" h unload dev "$SND_IF"

# ---- load ----
ok "load --no-qdisc" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
if in_snd tc filter show dev "$SND_IF" egress | grep -q 'htb_egress.*direct-action'; then
	pass "filter attached direct-action on egress"
else
	fail "filter attached direct-action on egress: $(in_snd tc filter show dev "$SND_IF" egress | tr '\n' ' ')"
fi
missing=
for f in class_state class_conf runtime tree_conf cls_prio cls_mark cls_dst4 cls_src4 \
	 cls_dst6 cls_src6 cls_port cls_cgroup dev_stats meta cls_shadow htb_egress; do
	[ -e "$(pins)/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && pass "pins complete" || fail "pins complete: missing$missing"
if bpftool map dump pinned "$(pins)/class_state" | grep -q '"tokens"' &&
   bpftool map dump pinned "$(pins)/class_state" | grep -q '"ctokens"'; then
	pass "bpftool shows tokens and ctokens by name"
else
	fail "bpftool shows tokens and ctokens by name"
fi
refused "double load is refused" "already loaded" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc

# ---- traffic and show ----
ping_rcv 20
p10=$(jclass 1:10 packets)
b1=$(jclass 1:1 bytes)
[ "${p10:-0}" -ge 20 ] && [ "${b1:-0}" -gt 0 ] && pass "traffic is counted (1:10 $p10 pkt)" ||
	fail "traffic is counted: 1:10 packets=$p10, 1:1 bytes=$b1"
h show dev "$SND_IF" >"$tmp/show.txt" 2>&1
if grep -q '^class htb 1:10 parent 1:1 leaf prio 0 rate 10Mbit ceil 100Mbit burst' "$tmp/show.txt" &&
   grep -q 'Sent [0-9]* bytes [0-9]* pkt (dropped 0, overlimits 0)' "$tmp/show.txt" &&
   grep -q 'lended: [0-9]* borrowed: [0-9]* tokens: .* ctokens: ' "$tmp/show.txt" &&
   grep -q '^ rate [0-9.]*[KMG]*bit [0-9]*pps' "$tmp/show.txt"; then
	pass "show text"
else
	fail "show text: $(head -12 "$tmp/show.txt" | tr '\n' '|')"
fi
if h -j show dev "$SND_IF" interval 0 | jq -e '.classes | length == 4 and
	all(.[]; has("rate") and has("ceil") and has("burst") and has("cburst") and
	has("prio") and has("quantum") and has("bytes") and has("packets") and
	has("drops") and has("overlimits") and has("lends") and has("borrows") and
	has("tokens") and has("ctokens") and has("current_rate"))' >/dev/null; then
	pass "show -j"
else
	fail "show -j: $(h -j show dev "$SND_IF" interval 0 2>&1 | head -c 300)"
fi
# current rate: ping in the background while show samples
in_snd ping -c 40 -i 0.01 -q "$RCV_IP4" >/dev/null 2>&1 &
sleep 0.1
cr=$(h -j show dev "$SND_IF" interval 200ms | jq -r '.classes[] | select(.class=="1:10") | .current_pps')
wait
[ "${cr:-0}" -gt 10 ] && pass "current rate while traffic flows (${cr} pps)" ||
	fail "current rate while traffic flows: ${cr} pps"

# ---- set ----
ok "set hysteresis on" h set dev "$SND_IF" hysteresis on
if bpftool map dump pinned "$(pins)/runtime" | grep -q '"hysteresis": 1' &&
   [ "$(h -j show dev "$SND_IF" interval 0 | jq -r .hysteresis)" = true ]; then
	pass "hysteresis is on in the runtime map"
else
	fail "hysteresis is on in the runtime map"
fi
ok "set hysteresis off" h set dev "$SND_IF" hysteresis off
h set dev "$SND_IF" hysteresis maybe >"$tmp/out" 2>&1
[ $? = 2 ] && grep -q "expected on or off" "$tmp/out" && pass "set with a bad value is a usage error" ||
	fail "set with a bad value is a usage error: $(cat "$tmp/out")"

# ---- reload ----
b10=$(jclass 1:10 bytes); b30=$(jclass 1:30 bytes); t30=$(jclass 1:30 tokens)
ok "reload (1 changed, 1 added, 1 removed)" h reload dev "$SND_IF" config "$tmp/b.ini"
grep -q '4 classes (3 kept, 1 changed, 1 added, 1 removed)' "$tmp/out" &&
	pass "reload summary" || fail "reload summary: $(cat "$tmp/out")"
nb10=$(jclass 1:10 bytes); nb30=$(jclass 1:30 bytes)
[ "${nb10:-0}" -ge "${b10:-1}" ] && [ "${nb30:-0}" -ge "${b30:-1}" ] && [ "$b10" -gt 0 ] &&
	pass "counters survive the reload" ||
	fail "counters survive the reload: 1:10 $b10 -> $nb10, 1:30 $b30 -> $nb30"
[ "$(jclass 1:10 rate)" = 2500000 ] && pass "changed class takes the new rate" ||
	fail "changed class takes the new rate: $(jclass 1:10 rate)"
[ -z "$(jclass 1:20 class)" ] && [ "$(jclass 1:40 class)" = 1:40 ] &&
	pass "removed class gone, added class present" ||
	fail "removed class gone, added class present"
# the added class starts with full buckets
t40=$(jclass 1:40 tokens); bu40=$(h -j show dev "$SND_IF" interval 0 |
	jq -r '.classes[] | select(.class=="1:40") | (.burst * 1000000000 / .rate | floor)')
[ -n "$t40" ] && [ "$t40" -ge $((bu40 - 1)) ] && pass "added class starts full" ||
	fail "added class starts full: tokens $t40, buffer $bu40"
# classifier: udp dport 9 gone, dport 19 -> 1:40's index; dst -> 1:10's
i40=$(jclass 1:40 index); i10=$(jclass 1:10 index)
if bpftool -j map dump pinned "$(pins)/cls_port" |
	jq -e --argjson i "$i40" 'length == 1 and .[0].formatted.key.port == 19 and .[0].formatted.value == $i' >/dev/null &&
   bpftool -j map dump pinned "$(pins)/cls_dst4" |
	jq -e --argjson i "$i10" 'length == 1 and .[0].formatted.value == $i' >/dev/null; then
	pass "classifier entries follow the reload"
else
	fail "classifier entries follow the reload: $(bpftool -j map dump pinned "$(pins)/cls_port" | tr '\n' ' ')"
fi
ping_rcv 10
[ "$(jclass 1:10 bytes)" -gt "$nb10" ] && pass "traffic flows after the reload" ||
	fail "traffic flows after the reload"

# a bad file changes nothing
h -j show dev "$SND_IF" interval 0 | jq -c '[.classes[] | {class, rate, ceil, parent}], .generation' >"$tmp/before"
refused "bad reload is refused" "rejected; nothing changed" h reload dev "$SND_IF" config "$tmp/bad.ini"
h -j show dev "$SND_IF" interval 0 | jq -c '[.classes[] | {class, rate, ceil, parent}], .generation' >"$tmp/after"
cmp -s "$tmp/before" "$tmp/after" && pass "bad reload leaves the tree in force" ||
	fail "bad reload leaves the tree in force"
pb=$(jclass 1:10 packets); ping_rcv 5
[ "$(jclass 1:10 packets)" -ge $((pb + 5)) ] && pass "old tree still classifies after a bad reload" ||
	fail "old tree still classifies after a bad reload"

# back to a.ini: 1:20 returns (a new class again), in a freed slot
ok "reload back" h reload dev "$SND_IF" config "$tmp/a.ini"
[ "$(jclass 1:20 packets)" = 0 ] && [ -z "$(jclass 1:40 class)" ] &&
	pass "reload back: 1:20 new, 1:40 gone" || fail "reload back: 1:20 new, 1:40 gone"

# many reloads back and forth: the shadow and both generations stay right
okr=0
for i in 1 2 3 4 5 6; do
	[ $((i % 2)) = 1 ] && f=b || f=a
	h reload dev "$SND_IF" config "$tmp/$f.ini" >/dev/null 2>&1 || continue
	want=$([ $f = b ] && echo 19 || echo 9)
	idx=$([ $f = b ] && jclass 1:40 index || jclass 1:20 index)
	bpftool -j map dump pinned "$(pins)/cls_port" |
		jq -e --argjson i "$idx" --argjson p "$want" 'length == 1 and .[0].formatted.key.port == $p and .[0].formatted.value == $i' >/dev/null &&
		okr=$((okr + 1))
done
[ $okr = 6 ] && pass "6 reloads back and forth keep the maps right" || fail "6 reloads back and forth keep the maps right: $okr ok"
# a reload that did not finish (simulated: the RELOADING flag left in meta) makes the next
# one read the maps themselves instead of the shadow: still right
sed 's/^rate = 1mbit/rate = 2mbit/' "$tmp/a.ini" >"$tmp/c.ini"; chmod 644 "$tmp/c.ini"
rm -f "$(pins)/cls_shadow"
ok "reload after a shadow mismatch" h reload dev "$SND_IF" config "$tmp/c.ini"
[ "$(jclass 1:30 rate)" = 250000 ] && [ -e "$(pins)/cls_shadow" ] &&
	pass "reload without a shadow reads the maps and writes a new shadow" ||
	fail "reload without a shadow reads the maps and writes a new shadow"
ok "reload back to a.ini" h reload dev "$SND_IF" config "$tmp/a.ini"

# a config that does not fit the maps (capacity 1024 from a 4-class load)
if [ -x scripts/gen-config.sh ]; then
	scripts/gen-config.sh 1100 >"$tmp/big.ini"; chmod 644 "$tmp/big.ini"
	refused "config too large for the maps is refused" "does not fit the maps" \
		h reload dev "$SND_IF" config "$tmp/big.ini"
else
	skip "config too large: scripts/gen-config.sh missing"
fi

# ---- unload ----
ok "unload" h unload dev "$SND_IF"
nothing_left "unload leaves nothing"
if [ -n "$(ls /sys/fs/bpf/htbctl 2>/dev/null)" ]; then
	skip "empty /sys/fs/bpf/htbctl removed: other devices are loaded ($(ls /sys/fs/bpf/htbctl | tr '\n' ' '))"
elif [ -e /sys/fs/bpf/htbctl ]; then
	fail "empty /sys/fs/bpf/htbctl removed"
else
	pass "empty /sys/fs/bpf/htbctl removed"
fi
refused "second unload" "nothing to unload" h unload dev "$SND_IF"

# ---- load/unload cycles ----
okc=0
for i in 1 2 3 4 5; do
	h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc >/dev/null 2>&1 &&
		h unload dev "$SND_IF" >/dev/null 2>&1 && okc=$((okc + 1))
done
[ $okc = 5 ] && pass "5 load/unload cycles" || fail "5 load/unload cycles: $okc ok"
nothing_left "cycles leave nothing"

# ---- stale pins: clsact removed behind htbctl's back ----
h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc >/dev/null 2>&1
in_snd tc qdisc del dev "$SND_IF" clsact
refused "stale pins detected by show" "unload dev $SND_IF --force" h show dev "$SND_IF"
refused "stale pins block load" "no filter of htbctl is attached" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
refused "stale pins block plain unload" "--force" h unload dev "$SND_IF"
ok "unload --force" h unload dev "$SND_IF" --force
nothing_left "unload --force cleans up"

# ---- a crash in the middle of load ----
snap "$tmp/s0"
HTBCTL_TEST_FAIL=crash-attach h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc >/dev/null 2>&1
refused "crashed load leaves stale pins" "did not finish" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
ok "unload --force after a crash" h unload dev "$SND_IF" --force
snap "$tmp/s1"
cmp -s "$tmp/s0" "$tmp/s1" && [ ! -e "$(pins)" ] && pass "crash recovery restores the device" ||
	fail "crash recovery restores the device: $(diff "$tmp/s0" "$tmp/s1" | tr '\n' ' ')"

# ---- root qdisc replaced and restored (pfifo stands in for fq) ----
topo_down
topo_up hn 4 || { fail "loader: topology (4 queues)"; exit 1; }
in_snd tc qdisc add dev "$SND_IF" root handle 1: htb default 10
in_snd tc class add dev "$SND_IF" parent 1: classid 1:10 htb rate 50mbit ceil 100mbit
in_snd tc qdisc add dev "$SND_IF" parent 1:10 handle 10: tbf rate 10mbit burst 20k latency 20ms
snap "$tmp/s0"
export HTBCTL_TEST_QDISC=pfifo
for step in pins qdisc clsact attach; do
	HTBCTL_TEST_FAIL=$step h load dev "$SND_IF" config "$tmp/a.ini" >"$tmp/out" 2>&1
	rc=$?
	snap "$tmp/s1"
	if [ $rc = 1 ] && cmp -s "$tmp/s0" "$tmp/s1" && [ ! -e "$(pins)" ]; then
		pass "failure after '$step' rolls back"
	else
		fail "failure after '$step' rolls back: rc=$rc $(diff "$tmp/s0" "$tmp/s1" | tr '\n' ' ' | cut -c1-300)"
	fi
done
ok "load replacing an htb root (mq + pfifo per queue)" h load dev "$SND_IF" config "$tmp/a.ini"
n=$(in_snd tc qdisc show dev "$SND_IF" | grep -c '^qdisc pfifo .* parent 4854:')
in_snd tc qdisc show dev "$SND_IF" | grep -q '^qdisc mq 4854: root' && [ "$n" = 4 ] &&
	pass "mq with one leaf qdisc per tx queue" || fail "mq with one leaf qdisc per tx queue: $(in_snd tc qdisc show dev "$SND_IF" | tr '\n' ' ')"
ping_rcv 5
[ "$(jclass 1:10 packets)" -ge 5 ] && pass "traffic counted under the installed root" ||
	fail "traffic counted under the installed root"
ok "unload restores" h unload dev "$SND_IF"
snap "$tmp/s1"
cmp -s "$tmp/s0" "$tmp/s1" && pass "htb root tree restored exactly" ||
	fail "htb root tree restored exactly: $(diff "$tmp/s0" "$tmp/s1" | tr '\n' ' ' | cut -c1-300)"
# a root tree with filters cannot be put back: refused
in_snd tc filter add dev "$SND_IF" parent 1: protocol ip u32 match ip dst 198.18.0.2 flowid 1:10
refused "root with filters is refused" "could not be put back" h load dev "$SND_IF" config "$tmp/a.ini"
in_snd tc qdisc del dev "$SND_IF" root
unset HTBCTL_TEST_QDISC

# ---- a clsact that was already there stays, with its filter ----
in_snd tc qdisc add dev "$SND_IF" clsact
in_snd tc filter add dev "$SND_IF" egress pref 1 protocol ip u32 match ip dst 198.18.9.9 flowid 1:1
ok "load next to a foreign egress filter" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
ok "unload next to a foreign egress filter" h unload dev "$SND_IF"
if in_snd tc qdisc show dev "$SND_IF" | grep -q clsact &&
   in_snd tc filter show dev "$SND_IF" egress | grep -q u32 &&
   ! in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress; then
	pass "foreign clsact and filter left in place"
else
	fail "foreign clsact and filter left in place"
fi
in_snd tc qdisc del dev "$SND_IF" clsact
in_snd tc qdisc add dev "$SND_IF" ingress
refused "an ingress qdisc is refused" "ingress qdisc" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
in_snd tc qdisc del dev "$SND_IF" ingress

# ---- a device of the same name in another namespace ----
h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc >/dev/null 2>&1
ip netns add hnx && ip -n hnx link add "$SND_IF" type veth peer name hnx-p
ip -n hnx link set "$SND_IF" up
inx() { nsenter --net=/run/netns/hnx "$@"; }
refused "same name in another namespace: load refused" "another network namespace" \
	inx "$B" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
refused "same name in another namespace: unload refused" "another network namespace" \
	inx "$B" unload dev "$SND_IF"
in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress &&
	pass "the first namespace's load is untouched" || fail "the first namespace's load is untouched"
ip netns del hnx
h unload dev "$SND_IF" >/dev/null 2>&1

# ---- the device disappears under a load ----
h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc >/dev/null 2>&1
in_snd ip link del "$SND_IF"
refused "unload of a deleted device" "--force" h unload dev "$SND_IF"
ok "unload --force of a deleted device" h unload dev "$SND_IF" --force
[ ! -e "$(pins)" ] && pass "pins of a deleted device removed" || fail "pins of a deleted device removed"
exit 0
