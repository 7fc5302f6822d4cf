#!/usr/bin/env bash
# htbctl load / show / set / reload / unload on a veth pair in namespaces
# (root). This kernel has no sch_fq, so loads use --no-qdisc, or
# build/htbctl-test with HTBCTL_TEST_QDISC=pfifo to exercise the qdisc install/restore path with
# pfifo standing in for fq (tests/vm/loader_fq.sh runs the real fq).
# Every case starts from an unshaped pair (tests/lib/runner.sh) with the
# configs of setup in its $tmp, and loads what it needs itself.

# loader_tree RATE_1:10 SECOND_LEAF ITS_UDP_PORT [RATE_1:30]: the tree the
# cases load, 1:1 with the leaves 1:10 (the receiver's address), a second
# (UDP to a port) and 1:30 (the default).
loader_tree() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate="$1" ceil=100mbit "match=dst $RCV_IP4/32"
	ini "class $2" parent=1:1 rate=5mbit "match=udp dport $3"
	ini 'class 1:30' parent=1:1 rate="${4:-1mbit}" ceil=100mbit
}

# a.ini; b.ini from it: 1:10 changed (rate), 1:20 removed, 1:40 added, 1:1
# and 1:30 unchanged; c.ini: only 1:30 changed; bad.ini does not resolve.
setup() {
	loader_tree 10mbit 1:20 9 > "$tmp/a.ini"
	loader_tree 20mbit 1:40 19 > "$tmp/b.ini"
	loader_tree 10mbit 1:20 9 2mbit > "$tmp/c.ini"
	loader_tree 10mbit 1:20 9 | sed '/^\[class 1:10\]/a aqm = off' > "$tmp/d.ini"
	{ ini device default=1:30; ini 'class 1:1' rate=bogus; } > "$tmp/bad.ini"
	chmod 644 "$tmp"/*.ini
}

load_a() { load_tree "$tmp/a.ini" --no-qdisc; }
reload_to() { h reload dev "$SND_IF" config "$tmp/$1.ini" > "$tmp/reload.out" 2>&1; }
as_nobody() { nobody "$HTBCTL" "$@"; }

# ---- refusals before anything changes

test_missing_device() {
	refused "no device 'nosuchdev0'" h load dev nosuchdev0 config "$tmp/a.ini" --no-qdisc
}
test_non_root_load_refused() {
	refused "needs root" as_nobody load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
test_non_root_show_refused() {
	refused "needs root" as_nobody show dev "$SND_IF"
}
# Root's uid with CAP_BPF and CAP_NET_ADMIN but not CAP_PERFMON (nor
# CAP_SYS_ADMIN, which implies it): the verifier refuses the program's
# packet reads without it, so load names it before changing anything.
test_load_without_perfmon_refused() {
	snap "$tmp/s0"
	refused "missing CAP_PERFMON" in_snd setpriv --bounding-set=-perfmon,-sys_admin \
		"$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	unchanged_since "$tmp/s0"
}
test_bad_config_refused_at_load() {
	refused "rejected" h load dev "$SND_IF" config "$tmp/bad.ini" --no-qdisc
}

# Without --no-qdisc, load wants fq; these two need a kernel without it.
need_no_fq() {
	in_snd tc qdisc add dev lo root fq 2> /dev/null || return 0
	in_snd tc qdisc del dev lo root
	skip "this kernel has sch_fq"
}
test_load_without_fq_refused() {
	need_no_fq
	refused "no fq qdisc" h load dev "$SND_IF" config "$tmp/a.ini"
}
test_refused_load_changes_nothing() {
	need_no_fq
	snap "$tmp/s0"
	h load dev "$SND_IF" config "$tmp/a.ini" > /dev/null 2>&1
	unchanged_since "$tmp/s0"
}

test_show_before_load() {
	refused "not loaded" h show dev "$SND_IF"
}
test_unload_before_load() {
	refused "nothing to unload" h unload dev "$SND_IF"
}

# ---- load

test_load_no_qdisc() {
	ok h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
test_filter_attached_direct_action() {
	load_a
	in_snd tc filter show dev "$SND_IF" egress > "$tmp/filters"
	grep -q 'htb_egress.*direct-action' "$tmp/filters" || fail "$(oneline "$tmp/filters")"
}
test_pins_complete() {
	local f missing=
	load_a
	for f in class_state class_conf class_share class_batch runtime tree_conf cls_prio cls_minor \
		 cls_mark cls_dscp cls_dst4 cls_src4 cls_dst6 cls_src6 cls_port cls_cgroup \
		 dev_stats flow_state meta cls_shadow htb_egress; do
		[ -e "$(pins)/$f" ] || missing+=" $f"
	done
	[ -z "$missing" ] || fail "missing$missing"
}
test_bpftool_shows_tokens_by_name() {
	load_a
	bpftool map dump pinned "$(pins)/class_state" > "$tmp/dump"
	grep -q '"tokens"' "$tmp/dump" && grep -q '"ctokens"' "$tmp/dump" ||
		fail "no tokens and ctokens in: $(oneline "$tmp/dump")"
}
test_double_load_refused() {
	load_a
	refused "already loaded" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}

# ---- traffic and show

test_traffic_counted() {
	local p10 b1
	load_a
	ping_rcv 20
	p10=$(jclass 1:10 packets) b1=$(jclass 1:1 bytes)
	[ "${p10:-0}" -ge 20 ] && [ "${b1:-0}" -gt 0 ] || fail "1:10 packets=$p10, 1:1 bytes=$b1"
	note "1:10 $p10 pkt"
}
test_show_text() {
	load_a
	ping_rcv
	h show dev "$SND_IF" > "$tmp/show.txt" 2>&1
	grep -q '^class htb 1:10 parent 1:1 leaf prio 0 rate 10Mbit ceil 100Mbit burst' "$tmp/show.txt" &&
	grep -q 'Sent [0-9]* bytes [0-9]* pkt (dropped 0, overlimits 0)' "$tmp/show.txt" &&
	grep -q 'lended: [0-9]* borrowed: [0-9]* tokens: .* ctokens: ' "$tmp/show.txt" &&
	grep -q '^ rate [0-9.]*[KMG]*bit [0-9]*pps' "$tmp/show.txt" &&
	grep -q 'limit 100ms aqm codel target 5ms interval 100ms ecn on flows on$' "$tmp/show.txt" &&
	grep -q '^ aqm: marked 0 dropped 0, queue delay [0-9.]*[mun]*s, sparse [0-9]* pkt$' "$tmp/show.txt" ||
		fail "$(head -12 "$tmp/show.txt" | tr '\n' '|')"
}
test_show_json() {
	load_a
	h -j show dev "$SND_IF" interval 0 > "$tmp/show.json" 2>&1
	jq -e '.classes | length == 4 and
		all(.[]; has("rate") and has("ceil") and has("burst") and has("cburst") and
		has("prio") and has("quantum") and has("bytes") and has("packets") and
		has("drops") and has("overlimits") and has("lends") and has("borrows") and
		has("tokens") and has("ctokens") and has("current_rate")) and
		all(.[] | select(.leaf); .aqm == "codel" and .target == 5000000 and
		.interval == 100000000 and .ecn == true and .flows == true and
		has("ecn_marks") and has("aqm_drops") and has("queue_delay") and
		has("sparse_packets"))' "$tmp/show.json" > /dev/null ||
		fail "$(head -c 300 "$tmp/show.json")"
}
# show samples the current rate while a ping runs in the background
test_current_rate_while_traffic_flows() {
	local pps
	load_a
	in_snd ping -c 40 -i 0.01 -q "$RCV_IP4" > /dev/null 2>&1 &
	sleep 0.1
	pps=$(h -j show dev "$SND_IF" interval 200ms | jq -r '.classes[] | select(.class=="1:10") | .current_pps')
	wait
	[ "${pps:-0}" -gt 10 ] || fail "${pps:-no} pps"
	note "$pps pps"
}

# ---- set

hysteresis_shown() { h -j show dev "$SND_IF" interval 0 | jq -r .hysteresis; }
test_set_hysteresis_on() {
	load_a
	ok h set dev "$SND_IF" hysteresis on
}
test_hysteresis_on_in_runtime_map() {
	load_a
	h set dev "$SND_IF" hysteresis on > /dev/null
	bpftool map dump pinned "$(pins)/runtime" | grep -q '"hysteresis": 1' ||
		fail "runtime map: $(bpftool map dump pinned "$(pins)/runtime" | tr '\n' ' ')"
	[ "$(hysteresis_shown)" = true ] || fail "show -j says hysteresis $(hysteresis_shown)"
}
test_set_hysteresis_off() {
	load_a
	h set dev "$SND_IF" hysteresis on > /dev/null
	ok h set dev "$SND_IF" hysteresis off
	[ "$(hysteresis_shown)" = false ] || fail "show -j says hysteresis $(hysteresis_shown)"
}
test_set_bad_value_is_usage_error() {
	local rc=0
	load_a
	h set dev "$SND_IF" hysteresis maybe > "$tmp/out" 2>&1 || rc=$?
	[ $rc = 2 ] && grep -q "expected on or off" "$tmp/out" || fail "exit $rc: $(oneline "$tmp/out")"
}

# ---- reload: from a.ini to b.ini (1 changed, 1 added, 1 removed)

test_reload() {
	load_a
	ok h reload dev "$SND_IF" config "$tmp/b.ini"
}
test_reload_summary() {
	load_a
	reload_to b
	grep -q '4 classes (3 kept, 1 changed, 1 added, 1 removed)' "$tmp/reload.out" ||
		fail "$(oneline "$tmp/reload.out")"
}
test_counters_survive_reload() {
	local b10 b30 nb10 nb30
	load_a
	ping_rcv 20
	b10=$(jclass 1:10 bytes) b30=$(jclass 1:30 bytes)
	reload_to b || fail "reload: $(oneline "$tmp/reload.out")"
	nb10=$(jclass 1:10 bytes) nb30=$(jclass 1:30 bytes)
	[ "${nb10:-0}" -ge "${b10:-1}" ] && [ "${nb30:-0}" -ge "${b30:-1}" ] && [ "$b10" -gt 0 ] ||
		fail "1:10 $b10 -> $nb10, 1:30 $b30 -> $nb30"
}
# an AQM setting is the class's conf, not its state: tokens and counters stay
test_reload_aqm_off_keeps_state() {
	local b10 t10 nb10
	load_a
	ping_rcv 20
	b10=$(jclass 1:10 bytes) t10=$(jclass 1:10 t_c)
	reload_to d || fail "reload: $(oneline "$tmp/reload.out")"
	grep -q '4 classes (4 kept, 1 changed, 0 added, 0 removed)' "$tmp/reload.out" ||
		fail "$(oneline "$tmp/reload.out")"
	nb10=$(jclass 1:10 bytes)
	[ "$(jclass 1:10 aqm)" = off ] && [ "$(jclass 1:10 t_c)" = "$t10" ] &&
	[ "$nb10" = "$b10" ] && [ "$b10" -gt 0 ] ||
		fail "1:10 aqm $(jclass 1:10 aqm), bytes $b10 -> $nb10, t_c $t10 -> $(jclass 1:10 t_c)"
}
test_changed_class_takes_new_rate() {
	load_a
	reload_to b
	[ "$(jclass 1:10 rate)" = 2500000 ] || fail "rate of 1:10: $(jclass 1:10 rate)"
}
test_removed_class_gone_added_present() {
	load_a
	reload_to b
	[ -z "$(jclass 1:20 class)" ] && [ "$(jclass 1:40 class)" = 1:40 ] ||
		fail "classes: $(h -j show dev "$SND_IF" interval 0 | jq -c '[.classes[].class]')"
}
test_added_class_starts_full() {
	local tokens buffer
	load_a
	reload_to b
	tokens=$(jclass 1:40 tokens)
	buffer=$(h -j show dev "$SND_IF" interval 0 |
		jq -r '.classes[] | select(.class=="1:40") | (.burst * 1000000000 / .rate | floor)')
	[ -n "$tokens" ] && [ "$tokens" -ge $((buffer - 1)) ] || fail "tokens $tokens, buffer $buffer"
}
# classifier: udp dport 9 gone, dport 19 -> 1:40's index; dst -> 1:10's
test_classifier_follows_reload() {
	local i40 i10
	load_a
	reload_to b
	i40=$(jclass 1:40 index) i10=$(jclass 1:10 index)
	bpftool -j map dump pinned "$(pins)/cls_port" |
		jq -e --argjson i "$i40" 'length == 1 and .[0].formatted.key.port == 19 and .[0].formatted.value.slot == [$i, $i]' > /dev/null ||
		fail "cls_port: $(bpftool -j map dump pinned "$(pins)/cls_port" | tr '\n' ' ')"
	bpftool -j map dump pinned "$(pins)/cls_dst4" |
		jq -e --argjson i "$i10" 'length == 1 and .[0].formatted.value.slot == [$i, $i]' > /dev/null ||
		fail "cls_dst4: $(bpftool -j map dump pinned "$(pins)/cls_dst4" | tr '\n' ' ')"
}
# priority == class id in two majors: the load's most common leaf major
# goes to cls_minor by minor, the other to cls_prio; reloads that remove,
# add, and make major 2 the most common keep major 1 in cls_minor and
# classify by the tree in force
test_priority_classifies_across_majors() {
	local probe=(prio=1:10 prio=1:20 prio=2:10 prio=1:40 prio=2:20 prio=1:99) got
	two_majors() {
		ini device default=1:30
		ini 'class 1:1' rate=100mbit
		for c in "$@"; do
			ini "class $c" parent=${c%%:*}:1 rate=10mbit
		done
		ini 'class 2:1' rate=100mbit
	}
	two_majors 1:10 1:20 1:30 2:10 > "$tmp/m1.ini"
	two_majors 1:10 1:30 1:40 2:10 2:20 > "$tmp/m2.ini"
	two_majors 1:30 2:10 2:20 2:40 2:50 > "$tmp/m3.ini"
	load_tree "$tmp/m1.ini" --no-qdisc
	probes() { echo $(in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$SND_IF" "${probe[@]}"); }
	got=$(probes)
	[ "$got" = "1:10 1:20 2:10 1:30 1:30 1:30" ] || fail "loaded: $got"
	bpftool -j map dump pinned "$(pins)/cls_minor" |
		jq -e '[.[] | select(.formatted.value.slot != [4294967295, 4294967295])] | length == 3' > /dev/null ||
		fail "cls_minor does not hold 1:10, 1:20 and 1:30 alone"
	[ "$(bpftool -j map dump pinned "$(pins)/cls_prio" | jq length)" = 1 ] ||
		fail "cls_prio: $(bpftool -j map dump pinned "$(pins)/cls_prio" | tr '\n' ' ')"
	h reload dev "$SND_IF" config "$tmp/m2.ini" > "$tmp/r.out" 2>&1 || fail "reload: $(oneline "$tmp/r.out")"
	got=$(probes)
	[ "$got" = "1:10 1:30 2:10 1:40 2:20 1:30" ] || fail "after the first reload: $got"
	h reload dev "$SND_IF" config "$tmp/m3.ini" > "$tmp/r.out" 2>&1 || fail "reload: $(oneline "$tmp/r.out")"
	got=$(probes)
	[ "$got" = "1:30 1:30 2:10 1:30 2:20 1:30" ] || fail "after the second reload: $got"
	bpftool -j map dump pinned "$(pins)/tree_conf" |
		jq -e 'all(.[]; .formatted.value.prio_major == 1)' > /dev/null ||
		fail "tree_conf's prio_major is no longer the load's"
}
# cls_minor reaches the load's highest minor (here past the class slots);
# a minor a reload adds past it goes to cls_prio and still classifies
test_priority_past_the_array() {
	local got
	{ ini device default=1:30
	  ini 'class 1:1' rate=100mbit
	  ini 'class 1:30' parent=1:1 rate=10mbit
	  ini 'class 1:fff0' parent=1:1 rate=10mbit; } > "$tmp/hi.ini"
	{ cat "$tmp/hi.ini"; ini 'class 1:fff8' parent=1:1 rate=10mbit; } > "$tmp/hi2.ini"
	load_tree "$tmp/hi.ini" --no-qdisc
	got=$(bpftool -j map show pinned "$(pins)/cls_minor" | jq .max_entries)
	[ "$got" = $((0xfff1)) ] || fail "cls_minor has $got entries, not up to 1:fff0"
	h reload dev "$SND_IF" config "$tmp/hi2.ini" > "$tmp/r.out" 2>&1 || fail "reload: $(oneline "$tmp/r.out")"
	got=$(echo $(in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$SND_IF" prio=1:fff0 prio=1:fff8 prio=1:fff1))
	[ "$got" = "1:fff0 1:fff8 1:30" ] || fail "classes: $got"
	[ "$(bpftool -j map dump pinned "$(pins)/cls_prio" | jq length)" = 1 ] ||
		fail "cls_prio: $(bpftool -j map dump pinned "$(pins)/cls_prio" | tr '\n' ' ')"
}
# match = dscp: the DS field classifies, IPv4 and IPv6, after mark and
# before the prefixes; the map holds one entry per value
test_dscp_match_classifies() {
	local got
	{ ini device default=1:30
	  ini 'class 1:1' rate=100mbit
	  ini 'class 1:10' parent=1:1 rate=10mbit 'match=dscp ef,va' 'match=dst 198.18.5.0/24'
	  ini 'class 1:20' parent=1:1 rate=10mbit 'match=dscp af41' 'match=mark 7'
	  ini 'class 1:30' parent=1:1 rate=10mbit; } > "$tmp/dscp.ini"
	load_tree "$tmp/dscp.ini" --no-qdisc
	got=$(echo $(in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$SND_IF" dscp=46 dscp=44 \
		dscp=34 dscp=0 dscp=34,dst=198.18.5.1 dscp=46,mark=7 dst=fd00:18::2,dscp=34 \
		dst=fd00:18::2))
	[ "$got" = "1:10 1:10 1:20 1:30 1:20 1:20 1:20 1:30" ] || fail "classes: $got"
	[ "$(bpftool -j map dump pinned "$(pins)/cls_dscp" | jq length)" = 3 ] ||
		fail "cls_dscp: $(bpftool -j map dump pinned "$(pins)/cls_dscp" | tr '\n' ' ')"
}
test_traffic_flows_after_reload() {
	local before
	load_a
	reload_to b
	before=$(jclass 1:10 bytes)
	ping_rcv 10
	[ "$(jclass 1:10 bytes)" -gt "$before" ] || fail "1:10 bytes stayed at $before"
}

# ---- a bad file changes nothing

tree_state() {	# file: the classes and the generation from show -j
	h -j show dev "$SND_IF" interval 0 | jq -c '[.classes[] | {class, rate, ceil, parent}], .generation' > "$1"
}
test_bad_reload_refused() {
	load_a
	refused "rejected; nothing changed" h reload dev "$SND_IF" config "$tmp/bad.ini"
}
test_bad_reload_leaves_tree_in_force() {
	load_a
	tree_state "$tmp/before"
	reload_to bad
	tree_state "$tmp/after"
	cmp -s "$tmp/before" "$tmp/after" || fail "$(oneline "$tmp/before") -> $(oneline "$tmp/after")"
}
test_old_tree_classifies_after_bad_reload() {
	local before
	load_a
	reload_to bad
	before=$(jclass 1:10 packets)
	ping_rcv 5
	[ "$(jclass 1:10 packets)" -ge $((before + 5)) ] || fail "1:10 packets $before -> $(jclass 1:10 packets)"
}

# ---- back to a.ini: 1:20 returns, a new class again (in a freed slot)

test_reload_back() {
	load_a
	reload_to b
	ok h reload dev "$SND_IF" config "$tmp/a.ini"
}
has_packets() { [ "$(jclass "$1" packets)" -ge 1 ]; }
test_reload_back_makes_removed_class_new() {
	load_a
	# One datagram to 1:20 (udp dport 9), which its new self must not
	# count. To the receiver's IPv6 address: 1:10 takes its IPv4 one
	# whatever the port. It leaves once the neighbour is resolved.
	in_snd bash -c "echo x > /dev/udp/$RCV_IP6/9"
	wait_for 3 has_packets 1:20 || fail "the datagram to port 9 was not counted in 1:20"
	reload_to b && reload_to a || fail "reload: $(oneline "$tmp/reload.out")"
	[ "$(jclass 1:20 packets)" = 0 ] && [ -z "$(jclass 1:40 class)" ] ||
		fail "1:20 packets $(jclass 1:20 packets), 1:40 '$(jclass 1:40 class)'"
}
# many reloads back and forth: the shadow and both generations stay right
test_six_reloads_keep_maps_right() {
	local i f port leaf idx good=0
	load_a
	for i in 1 2 3 4 5 6; do
		if [ $((i % 2)) = 1 ]; then f=b port=19 leaf=1:40; else f=a port=9 leaf=1:20; fi
		reload_to $f || continue
		idx=$(jclass $leaf index)
		bpftool -j map dump pinned "$(pins)/cls_port" |
			jq -e --argjson i "$idx" --argjson p "$port" \
				'length == 1 and .[0].formatted.key.port == $p and .[0].formatted.value.slot == [$i, $i]' > /dev/null &&
			good=$((good + 1))
	done
	[ $good = 6 ] || fail "$good of 6 reloads left the maps right"
}

# a reload that changes no classifier entry keeps the shadow (the same map,
# retagged) and the next reload still diffs against it, and rightly
shadow_id() { bpftool -j map show pinned "$(pins)/cls_shadow" | jq -r .id; }
test_rate_only_reload_retags_shadow() {
	local before idx
	load_a
	before=$(shadow_id)
	reload_to c || fail "reload to c.ini: $(oneline "$tmp/reload.out")"
	[ "$(shadow_id)" = "$before" ] || fail "cls_shadow rewritten: map $before, now $(shadow_id)"
	h -v reload dev "$SND_IF" config "$tmp/b.ini" > "$tmp/v.out" 2>&1 ||
		fail "reload to b.ini: $(oneline "$tmp/v.out")"
	grep -q "classifier maps: shadow, diff" "$tmp/v.out" ||
		fail "the next reload did not trust the shadow: $(oneline "$tmp/v.out")"
	idx=$(jclass 1:40 index)
	bpftool -j map dump pinned "$(pins)/cls_port" |
		jq -e --argjson i "$idx" 'length == 1 and .[0].formatted.key.port == 19 and
			.[0].formatted.value.slot == [$i, $i]' > /dev/null ||
		fail "cls_port after the reload to b.ini: $(bpftool -j map dump pinned "$(pins)/cls_port")"
}

# ---- a reload that did not finish (simulated: the shadow removed) makes
# the next one read the maps themselves instead of the shadow: still right

lose_shadow() { load_a; rm -f "$(pins)/cls_shadow"; }
test_reload_after_shadow_mismatch() {
	lose_shadow
	ok h reload dev "$SND_IF" config "$tmp/c.ini"
}
test_reload_without_shadow_writes_new_one() {
	lose_shadow
	reload_to c || fail "reload: $(oneline "$tmp/reload.out")"
	[ "$(jclass 1:30 rate)" = 250000 ] || fail "rate of 1:30: $(jclass 1:30 rate)"
	[ -e "$(pins)/cls_shadow" ] || fail "no new cls_shadow"
}
test_reload_back_after_shadowless_reload() {
	lose_shadow
	reload_to c || fail "reload to c.ini: $(oneline "$tmp/reload.out")"
	ok h reload dev "$SND_IF" config "$tmp/a.ini"
}

# a config that does not fit the maps (capacity 1024 from a 4-class load)
test_config_too_large_for_maps_refused() {
	[ -x scripts/gen-config.sh ] || fail "scripts/gen-config.sh is missing"
	scripts/gen-config.sh 1100 > "$tmp/big.ini"
	chmod 644 "$tmp/big.ini"
	load_a
	refused "does not fit the maps" h reload dev "$SND_IF" config "$tmp/big.ini"
}

# ---- unload

unload_a() { load_a; h unload dev "$SND_IF" > "$tmp/unload.out" 2>&1; }
test_unload() {
	load_a
	ok h unload dev "$SND_IF"
}
test_unload_leaves_nothing() {
	unload_a
	nothing_left
}
test_empty_pin_dir_removed() {
	unload_a
	[ -z "$(ls /sys/fs/bpf/htbctl 2> /dev/null)" ] ||
		skip "other devices are loaded: $(ls /sys/fs/bpf/htbctl | tr '\n' ' ')"
	[ ! -e /sys/fs/bpf/htbctl ] || fail "/sys/fs/bpf/htbctl is still there"
}
test_second_unload_refused() {
	unload_a
	refused "nothing to unload" h unload dev "$SND_IF"
}

five_cycles() {	# -> how many of 5 load/unload cycles succeeded
	local i good=0
	for i in 1 2 3 4 5; do
		h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > /dev/null 2>&1 &&
			h unload dev "$SND_IF" > /dev/null 2>&1 && good=$((good + 1))
	done
	echo $good
}
test_five_load_unload_cycles() {
	local good
	good=$(five_cycles)
	[ "$good" = 5 ] || fail "$good of 5 cycles"
}
test_cycles_leave_nothing() {
	five_cycles > /dev/null
	nothing_left
}

# ---- stale pins: clsact removed behind htbctl's back

make_stale() { load_a; in_snd tc qdisc del dev "$SND_IF" clsact; }
test_stale_pins_detected_by_show() {
	make_stale
	refused "unload dev $SND_IF --force" h show dev "$SND_IF"
}
test_stale_pins_block_load() {
	make_stale
	refused "no filter of htbctl is attached" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
test_stale_pins_block_plain_unload() {
	make_stale
	refused "--force" h unload dev "$SND_IF"
}
test_unload_force() {
	make_stale
	ok h unload dev "$SND_IF" --force
}
test_unload_force_cleans_up() {
	make_stale
	h unload dev "$SND_IF" --force > /dev/null 2>&1
	nothing_left
}

# ---- the pin directory removed by hand: unload --force finds htbctl's
# filter by its program (named htb_egress, with htbctl's maps)

orphan_filter() { load_a; rm -rf "$(pins)"; }
has_our_filter() { in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress; }
test_orphaned_filter_removed_by_unload_force() {
	orphan_filter
	ok h unload dev "$SND_IF" --force
	grep -q "removed 1 filter of htbctl's that no pins named" "$tmp/out" || fail "$(oneline "$tmp/out")"
	! has_our_filter || fail "the filter is still attached"
}
test_orphaned_filter_blocks_load() {
	orphan_filter
	refused "already runs htbctl's program (filter pref 1) without pins.*--force' removes it" \
		h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
# A program of someone else's at egress: edt_baseline, built beside htbctl's.
other_bpf_filter() {
	in_snd tc qdisc add dev "$SND_IF" clsact &&
	in_snd tc filter add dev "$SND_IF" egress pref 1 bpf da obj "$OUT/edt_baseline.bpf.o" sec tc ||
		fail "could not attach $OUT/edt_baseline.bpf.o"
}
test_orphan_removal_leaves_other_programs() {
	other_bpf_filter
	orphan_filter
	h unload dev "$SND_IF" --force > "$tmp/out" 2>&1
	in_snd tc filter show dev "$SND_IF" egress > "$tmp/filters"
	grep -q edt_ "$tmp/filters" && ! grep -q htb_egress "$tmp/filters" ||
		fail "filters: $(oneline "$tmp/filters")"
}
test_unload_force_of_nothing_refused() {
	other_bpf_filter
	refused "nothing to unload" h unload dev "$SND_IF" --force
}

# ---- a crash in the middle of load

crash_load() {
	HTBCTL_TEST_FAIL=crash-attach in_snd "$HTBCTL_TEST" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > /dev/null 2>&1
}
test_crashed_load_leaves_stale_pins() {
	crash_load
	refused "did not finish" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
test_unload_force_after_crash() {
	crash_load
	ok h unload dev "$SND_IF" --force
}
test_crash_recovery_restores_device() {
	snap "$tmp/s0"
	crash_load
	h unload dev "$SND_IF" --force > /dev/null 2>&1
	unchanged_since "$tmp/s0"
}

# ---- root qdisc replaced and restored (pfifo stands in for fq)

# A 4-queue device with an htb root tree; $tmp/s0 is its snapshot.
htb_root_device() {
	fresh_topo 4
	in_snd tc qdisc add dev "$SND_IF" root handle 1: htb default 10 &&
	in_snd tc class add dev "$SND_IF" parent 1: classid 1:10 htb rate 50mbit ceil 100mbit &&
	in_snd tc qdisc add dev "$SND_IF" parent 1:10 handle 10: tbf rate 10mbit burst 20k latency 20ms ||
		fail "could not build the htb root tree"
	snap "$tmp/s0"
	# this kernel has no sch_fq: the test build installs pfifo instead
	export HTBCTL_TEST_QDISC=pfifo
	HTBCTL=$HTBCTL_TEST
}
load_over_htb() {
	htb_root_device
	load_tree "$tmp/a.ini"
}
rolls_back() {	# step: a load that fails after it changes nothing
	local rc=0
	htb_root_device
	HTBCTL_TEST_FAIL=$1 h load dev "$SND_IF" config "$tmp/a.ini" > "$tmp/out" 2>&1 || rc=$?
	[ $rc = 1 ] || fail "exit $rc, wanted 1: $(oneline "$tmp/out")"
	unchanged_since "$tmp/s0"
}
test_failure_after_pins_rolls_back() { rolls_back pins; }
test_failure_after_qdisc_rolls_back() { rolls_back qdisc; }
test_failure_after_clsact_rolls_back() { rolls_back clsact; }
test_failure_after_attach_rolls_back() { rolls_back attach; }
test_load_replacing_htb_root() {
	htb_root_device
	ok h load dev "$SND_IF" config "$tmp/a.ini"
}
test_mq_with_leaf_per_tx_queue() {
	load_over_htb
	root_qdisc_is "mq 4854:"
	[ "$(leaf_qdiscs pfifo)" = 4 ] || fail "$(leaf_qdiscs pfifo) pfifo leaves: $(oneline "$tmp/qdiscs")"
}
test_traffic_counted_under_installed_root() {
	load_over_htb
	ping_rcv 5
	[ "$(jclass 1:10 packets)" -ge 5 ] || fail "1:10 packets: $(jclass 1:10 packets)"
}
test_unload_restores() {
	load_over_htb
	ok h unload dev "$SND_IF"
}
test_htb_root_tree_restored_exactly() {
	load_over_htb
	h unload dev "$SND_IF" > /dev/null 2>&1
	unchanged_since "$tmp/s0"
}
# Someone put another root in place of htbctl's: unload leaves it, and
# says so without also saying it restored the saved one.
test_unload_force_says_only_what_it_did() {
	load_over_htb
	in_snd tc qdisc replace dev "$SND_IF" root handle 7: pfifo &&
		in_snd tc qdisc del dev "$SND_IF" clsact || fail "could not replace the root"
	h unload dev "$SND_IF" --force > "$tmp/out" 2>&1
	grep -q "left in place" "$tmp/out" && ! grep -q "restored" "$tmp/out" ||
		fail "$(oneline "$tmp/out")"
}
# a root tree with filters cannot be put back: refused
test_root_with_filters_refused() {
	htb_root_device
	in_snd tc filter add dev "$SND_IF" parent 1: protocol ip u32 match ip dst "$RCV_IP4" flowid 1:10
	refused "could not be put back" h load dev "$SND_IF" config "$tmp/a.ini"
}

# ---- a clsact that was already there stays, with its filter

foreign_filter() {
	in_snd tc qdisc add dev "$SND_IF" clsact &&
	in_snd tc filter add dev "$SND_IF" egress pref 1 protocol ip u32 match ip dst 198.18.9.9 flowid 1:1 ||
		fail "could not add the foreign filter"
}
test_load_next_to_foreign_filter() {
	foreign_filter
	ok h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
test_unload_next_to_foreign_filter() {
	foreign_filter
	load_a
	ok h unload dev "$SND_IF"
}
# one filter is one, not the entries of its dump (u32: three)
test_foreign_filter_counted_once() {
	foreign_filter
	load_a
	grep -q "egress already has 1 filter;" "$tmp/load.out" || fail "$(oneline "$tmp/load.out")"
}
test_foreign_bpf_filter_counted_once() {
	other_bpf_filter
	load_a
	grep -q "egress already has 1 filter;" "$tmp/load.out" || fail "$(oneline "$tmp/load.out")"
}
test_foreign_clsact_and_filter_left_in_place() {
	foreign_filter
	unload_a
	in_snd tc qdisc show dev "$SND_IF" | grep -q clsact || fail "clsact is gone"
	in_snd tc filter show dev "$SND_IF" egress > "$tmp/filters"
	grep -q u32 "$tmp/filters" && ! grep -q htb_egress "$tmp/filters" || fail "filters: $(oneline "$tmp/filters")"
}
test_ingress_qdisc_refused() {
	in_snd tc qdisc add dev "$SND_IF" ingress
	refused "ingress qdisc" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}

# ---- a device of the same name in another namespace (htx, which
# teardown removes)

teardown() { ip netns del htx 2> /dev/null; }
in_htx() { nsenter --net=/run/netns/htx "$@"; }
same_name_elsewhere() {
	load_a
	ip netns add htx && ip -n htx link add "$SND_IF" type veth peer name htx-p &&
		ip -n htx link set "$SND_IF" up || fail "no second $SND_IF in namespace htx"
}
test_same_name_elsewhere_load_refused() {
	same_name_elsewhere
	refused "another network namespace" in_htx "$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
}
test_same_name_elsewhere_unload_refused() {
	same_name_elsewhere
	refused "another network namespace" in_htx "$HTBCTL" unload dev "$SND_IF"
}
test_first_namespace_load_untouched() {
	same_name_elsewhere
	in_htx "$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > /dev/null 2>&1
	in_htx "$HTBCTL" unload dev "$SND_IF" > /dev/null 2>&1
	in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress || fail "the filter is gone"
}

# ---- the device disappears under a load

lose_device() { load_a; in_snd ip link del "$SND_IF"; }
test_unload_of_deleted_device_refused() {
	lose_device
	refused "--force" h unload dev "$SND_IF"
}
test_pins_of_deleted_device_removed() {
	lose_device
	h unload dev "$SND_IF" --force > /dev/null 2>&1
	[ ! -e "$(pins)" ] || fail "$(pins) is still there"
}
test_unload_force_of_deleted_device() {
	lose_device
	ok h unload dev "$SND_IF" --force
}

. "$(dirname "$0")/../lib/runner.sh"
