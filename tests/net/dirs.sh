#!/usr/bin/env bash
# One config, two directions (docs/loader.md "Directions"), on the runner's
# veth pair (root; this kernel has no sch_fq, so loads use --no-qdisc, or
# build/htbctl-test with pfifo standing in for fq):
# - a host: downloads on the sender device's ingress through an ifb htbctl
#   creates, uploads on the same device's egress;
# - a router: downloads on the sender device's egress, uploads on a second
#   veth pair's egress that the case creates ($UP_IF, 198.18.1.0/24).
# The VM scenario 16 measures the ifb's shaping against kernel HTB's.

IFB= UP_IF= UP_PEER=

# host_conf [KEY=VALUE...]: the host's tree: 1:10 is the sender's own
# address (dst in download, src in upload), 1:30 the default.
host_conf() {
	ini device default=1:30 direction=ingress upload_dev="$SND_IF" "$@"
	ini 'class 1:1' rate=100mbit upload_rate=20mbit
	ini 'class 1:10' parent=1:1 rate=50mbit upload_rate=10mbit "match=dst $SND_IP4/32" \
		'match=tcp dport 8080'
	ini 'class 1:30' parent=1:1 rate=10mbit upload_rate=5mbit
}

# router_conf: the subscriber (the receiver) is 1:10 by its address.
router_conf() {
	ini device default=1:30 upload_dev="$UP_IF"
	ini 'class 1:1' rate=100mbit upload_rate=20mbit
	ini 'class 1:10' parent=1:1 rate=50mbit upload_rate=10mbit "match=dst $RCV_IP4/32"
	ini 'class 1:30' parent=1:1 rate=10mbit upload_rate=5mbit
}

setup() {
	IFB=ifb-$SND_IF UP_IF=${RUN_PAIR}-u UP_PEER=${RUN_PAIR}-v
	host_conf > "$tmp/host.ini"
	host_conf | sed 's/upload_rate = 5mbit/upload_rate = 6mbit/' > "$tmp/host2.ini"
	# host2's change and a match more: classifier entries to take back
	sed 's|^match = tcp dport 8080$|&\nmatch = tcp dport 9090|' "$tmp/host2.ini" > "$tmp/host3.ini"
	host_conf | sed '/^upload_dev/d' > "$tmp/ingress.ini"
	host_conf | sed '/^direction/d' > "$tmp/same-dev.ini"
	host_conf | sed "s/^upload_dev = .*/upload_dev = ${RUN_PAIR}-nx/" > "$tmp/no-up.ini"
	chmod 644 "$tmp"/*.ini
}

# The pins a failed case may leave besides the pair's own (which the
# runner removes): the ifb's and the second device's; the devices go with
# their namespace.
dpid=
teardown() {
	local d
	[ -z "$dpid" ] || { kill "$dpid"; wait "$dpid"; } 2> /dev/null
	for d in "$IFB" "$UP_IF"; do
		[ -z "$d" ] || [ ! -e "/sys/fs/bpf/htbctl/$d" ] || rm -rf "/sys/fs/bpf/htbctl/$d"
	done
}

# up_pair: the router's upstream port, a second pair the case made.
up_pair() {
	ip -batch - <<-EOF || fail "no second veth pair"
	link add $UP_IF netns $SND_NS type veth peer name $UP_PEER netns $RCV_NS
	EOF
	end_up "$SND_NS" "$UP_IF" 198.18.1.1 fd00:19::1 &&
		end_up "$RCV_NS" "$UP_PEER" 198.18.1.2 fd00:19::2 || fail "second pair not up"
}

load_host() { load_tree "$tmp/host.ini" --no-qdisc; }

# dsnap FILE: what the device and its namespace hold of tc and links, for
# "nothing changed": snap's egress view, its ingress filters and qdiscs,
# and the namespace's devices.
dsnap() {
	snap "$1.e"
	{ cat "$1.e"; in_snd tc filter show dev "$SND_IF" ingress
	  in_snd ip -br link show | awk '{ print $1 }' | sort; } > "$1" 2>&1
}
dunchanged_since() {
	dsnap "$tmp/now"
	cmp -s "$1" "$tmp/now" ||
		fail "changed: $(diff "$1" "$tmp/now" | tr '\n' ' ' | cut -c1-300)"
	for d in "$SND_IF" "$IFB" "$UP_IF"; do
		[ ! -e "/sys/fs/bpf/htbctl/$d" ] || fail "/sys/fs/bpf/htbctl/$d is still there"
	done
}

# jdir DIRECTION CLASS FIELD: one class's field in that direction's block
# of `show -j` (an array of both devices).
jdir() {
	h -j show dev "$SND_IF" interval 0 | jq -r --arg d "$1" --arg c "$2" --arg f "$3" \
		'.[] | select(.direction == $d) | .classes[] | select(.class == $c) | .[$f]'
}

# ---- a host: ingress through an ifb, upload on the same device

test_host_load() {
	ok h load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
	grep -q "^$IFB: loaded download (the ingress of $SND_IF)" "$tmp/out" &&
		grep -q "^$SND_IF: loaded upload" "$tmp/out" || fail "summary: $(oneline "$tmp/out")"
}
test_host_devices_and_filters() {
	load_host
	in_snd ip -d link show "$IFB" > "$tmp/l" 2>&1 && grep -q "ifb" "$tmp/l" &&
		grep -q "state UNKNOWN\|,UP" "$tmp/l" || fail "no ifb up: $(oneline "$tmp/l")"
	in_snd tc filter show dev "$SND_IF" ingress | grep -q htb_redirect ||
		fail "no redirect on $SND_IF ingress"
	in_snd tc filter show dev "$IFB" egress | grep -q htb_egress || fail "nothing on $IFB egress"
	in_snd tc filter show dev "$SND_IF" egress | grep -q htb_egress ||
		fail "nothing on $SND_IF egress"
	[ -e "/sys/fs/bpf/htbctl/$IFB/htb_redirect" ] && [ -e "/sys/fs/bpf/htbctl/$SND_IF/meta" ] ||
		fail "pins: $(ls /sys/fs/bpf/htbctl | tr '\n' ' ')"
}
test_host_show_labels_both() {
	load_host
	h -j show dev "$SND_IF" interval 0 > "$tmp/j" || fail "show failed"
	[ "$(jq -r '[.[] | "\(.dev)/\(.direction)/\(.partner)"] | join(" ")' "$tmp/j")" = \
	  "$IFB/download/$SND_IF $SND_IF/upload/$IFB" ] || fail "$(jq -c '[.[] | {dev, direction, partner}]' "$tmp/j")"
	[ "$(jq -r '.[0].ingress_of' "$tmp/j")" = "$SND_IF" ] || fail "ingress_of: $(jq -c '.[0].ingress_of' "$tmp/j")"
	# each direction its own rates: 1:10 50 Mbit down, 10 up
	[ "$(jq -r '.[0].classes[] | select(.class == "1:10") | .rate' "$tmp/j")" = 6250000 ] &&
	[ "$(jq -r '.[1].classes[] | select(.class == "1:10") | .rate' "$tmp/j")" = 1250000 ] ||
		fail "rates of 1:10: $(jq -c '[.[].classes[] | select(.class == "1:10") | .rate]' "$tmp/j")"
	h show dev "$SND_IF" interval 0 > "$tmp/t"
	grep -q "^ direction download: the ingress of $SND_IF, upload on $SND_IF" "$tmp/t" &&
		grep -q "^ direction upload, download on $IFB" "$tmp/t" || fail "text: $(grep direction "$tmp/t" | tr '\n' '|')"
}
# pings to the sender: the request is download (dst), the reply upload
# (the mirrored match: src)
test_host_traffic_classified_both_ways() {
	local down up
	load_host
	in_rcv ping -c 5 -i 0.05 -W 1 -q "$SND_IP4" > "$tmp/p" 2>&1 || fail "ping: $(oneline "$tmp/p")"
	down=$(jdir download 1:10 packets) up=$(jdir upload 1:10 packets)
	[ "$down" -ge 5 ] && [ "$up" -ge 5 ] || fail "1:10 packets: download $down, upload $up"
	note "1:10: $down packets in, $up out"
}
test_host_mirrored_port_match() {
	load_host
	got=$(echo $(in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$SND_IF" \
		proto=tcp,src=198.18.0.9,dst=198.18.0.8,sport=8080,dport=5000 \
		proto=tcp,src=198.18.0.9,dst=198.18.0.8,sport=5000,dport=8080))
	[ "$got" = "1:10 1:30" ] || fail "upload: sport 8080 and dport 8080 went to '$got', wanted '1:10 1:30'"
}
test_host_metrics_label_direction() {
	load_host
	h metrics dev "$SND_IF" > "$tmp/m" || fail "metrics failed"
	grep -q "^htbctl_classes{device=\"$IFB\",direction=\"download\"} 3$" "$tmp/m" &&
		grep -q "^htbctl_classes{device=\"$SND_IF\",direction=\"upload\"} 3$" "$tmp/m" ||
		fail "$(grep '^htbctl_classes' "$tmp/m" | tr '\n' '|')"
	[ "$(grep -c '^# TYPE htbctl_classes ' "$tmp/m")" = 1 ] || fail "a family twice"
	grep -q "^htbctl_class_rate_bytes_per_second{device=\"$SND_IF\",direction=\"upload\",class=\"1:1\",parent=\"root\",leaf=\"false\"} 2500000$" \
		"$tmp/m" || fail "upload rate of 1:1: $(grep 'rate_bytes_per_second.*1:1"' "$tmp/m" | tr '\n' '|')"
}
test_host_top_heads_each_direction() {
	load_host
	h top dev "$SND_IF" interval 100ms > "$tmp/t" || fail "top failed"
	grep -q "^htbctl top: dev $IFB (download, the ingress of $SND_IF), 3 classes" "$tmp/t" &&
		grep -q "^htbctl top: dev $SND_IF (upload), 3 classes" "$tmp/t" ||
		fail "$(grep '^htbctl top' "$tmp/t" | tr '\n' '|')"
}
test_host_set_both() {
	load_host
	ok h set dev "$SND_IF" hysteresis on
	grep -q "^$IFB: hysteresis on" "$tmp/out" && grep -q "^$SND_IF: hysteresis on" "$tmp/out" ||
		fail "$(oneline "$tmp/out")"
	[ "$(h -j show dev "$SND_IF" interval 0 | jq -c '[.[].hysteresis]')" = '[true,true]' ] ||
		fail "hysteresis: $(h -j show dev "$SND_IF" interval 0 | jq -c '[.[].hysteresis]')"
}
test_host_reload_both() {
	load_host
	ok h reload dev "$SND_IF" config "$tmp/host2.ini"
	grep -q "^$IFB: reloaded download .*0 changed" "$tmp/out" &&
		grep -q "^$SND_IF: reloaded upload .*1 changed" "$tmp/out" || fail "$(oneline "$tmp/out")"
	[ "$(jdir upload 1:30 rate)" = 750000 ] && [ "$(jdir download 1:30 rate)" = 1250000 ] ||
		fail "1:30 rates: upload $(jdir upload 1:30 rate), download $(jdir download 1:30 rate)"
}
test_host_reload_to_other_devices_refused() {
	load_host
	refused "a reload changes the trees, not the devices" \
		h reload dev "$SND_IF" config "$tmp/ingress.ini"
}
test_host_unload_leaves_nothing() {
	dsnap "$tmp/s0"
	load_host
	ok h unload dev "$SND_IF"
	grep -q "^$SND_IF: unloaded upload" "$tmp/out" && grep -q "^$IFB: unloaded download" "$tmp/out" ||
		fail "$(oneline "$tmp/out")"
	dunchanged_since "$tmp/s0"
}
test_unload_by_the_ifb_name() {
	dsnap "$tmp/s0"
	load_host
	ok h unload dev "$IFB"
	dunchanged_since "$tmp/s0"
}
test_ingress_only() {
	dsnap "$tmp/s0"
	load_tree "$tmp/ingress.ini" --no-qdisc
	in_rcv ping -c 3 -i 0.05 -W 1 -q "$SND_IP4" > /dev/null 2>&1 || fail "no ping through the ifb"
	h -j show dev "$SND_IF" interval 0 > "$tmp/j"
	[ "$(jq -r '.dev + " " + .direction' "$tmp/j")" = "$IFB download" ] || fail "$(head -c 200 "$tmp/j")"
	[ "$(jq -r '.classes[] | select(.class == "1:10") | .packets' "$tmp/j")" -ge 3 ] ||
		fail "1:10 counted $(jq -r '.classes[] | select(.class == "1:10") | .packets' "$tmp/j")"
	ok h unload dev "$SND_IF"
	dunchanged_since "$tmp/s0"
}
# with fq's stand-in on both (the test build): installed on the ifb and
# the device, the device's own root put back
test_host_with_root_qdiscs() {
	dsnap "$tmp/s0"
	HTBCTL_TEST_QDISC=pfifo ok in_snd "$HTBCTL_TEST" load dev "$SND_IF" config "$tmp/host.ini"
	in_snd tc qdisc show dev "$IFB" | grep -q "^qdisc pfifo .* root" &&
		in_snd tc qdisc show dev "$SND_IF" | grep -q "^qdisc pfifo .* root" ||
		fail "roots: $(in_snd tc qdisc show | tr '\n' ' ')"
	ok h unload dev "$SND_IF"
	dunchanged_since "$tmp/s0"
}

# ---- all or nothing: a failure at any step of either device

# rolls_back STEP: a load failing after STEP leaves everything as it was
rolls_back() {
	local rc=0
	dsnap "$tmp/s0"
	HTBCTL_TEST_FAIL=$1 in_snd "$HTBCTL_TEST" load dev "$SND_IF" config "$tmp/host.ini" \
		--no-qdisc > "$tmp/out" 2>&1 || rc=$?
	[ $rc = 1 ] && grep -q "failing after step '$1'" "$tmp/out" ||
		fail "exit $rc, wanted 1: $(oneline "$tmp/out")"
	dunchanged_since "$tmp/s0"
}
test_failure_after_download_ifb_rolls_back() { rolls_back download-ifb; }
test_failure_after_download_pins_rolls_back() { rolls_back download-pins; }
test_failure_after_download_attach_rolls_back() { rolls_back download-attach; }
test_failure_after_download_redirect_rolls_back() { rolls_back download-redirect; }
test_failure_after_upload_pins_rolls_back() {
	rolls_back upload-pins
	grep -q "the download direction on $IFB was removed again" "$tmp/out" || fail "$(oneline "$tmp/out")"
}
test_failure_after_upload_attach_rolls_back() { rolls_back upload-attach; }

# dstate: both directions as show -j has them (trees, configs,
# generations, a reload left unfinished) and where tcp port 9090 goes
dstate() {
	h -j show dev "$SND_IF" interval 0 | jq -c '[.[] | {dev, config, generation,
		reload_interrupted, classes: [.classes[] | {class, rate, ceil}]}]'
	for d in "$IFB" "$SND_IF"; do
		in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$d" \
			proto=tcp,src=198.18.0.9,dst=198.18.0.8,sport=9090,dport=9090
	done
}
# reloads: each direction's reload count (runtime.gen; gen & 1 is the
# tree in force), download then upload
reloads() {
	local d
	for d in "$IFB" "$SND_IF"; do
		bpftool -j map dump pinned "/sys/fs/bpf/htbctl/$d/runtime" |
			jq -r '.[0].formatted.value.gen // .[0].value.gen'
	done
}
# reload_cancelled STEP: a reload of both directions failing after STEP
# leaves both as they were, and the next reload goes through; a direction
# switched back after its flip counts on (a CPU's batch of bytes is marked
# with the count: a count reused would read it with another tree's units)
reload_cancelled() {
	local rc=0 g0 g1
	load_host
	dstate > "$tmp/before"
	reloads > "$tmp/gen.before"
	grep -q '1:30' "$tmp/before" || fail "port 9090 before: $(oneline "$tmp/before")"
	HTBCTL_TEST_FAIL=$1 in_snd "$HTBCTL_TEST" reload dev "$SND_IF" config "$tmp/host3.ini" \
		> "$tmp/out" 2>&1 || rc=$?
	[ $rc = 1 ] && grep -q "failing after step '$1'" "$tmp/out" &&
		grep -q "neither $IFB nor $SND_IF changed" "$tmp/out" ||
		fail "exit $rc, wanted 1: $(oneline "$tmp/out")"
	dstate > "$tmp/after"
	cmp -s "$tmp/before" "$tmp/after" ||
		fail "changed: $(diff "$tmp/before" "$tmp/after" | tr '\n' ' ' | cut -c1-400)"
	reloads | paste - <(cat "$tmp/gen.before") | while read -r g1 g0; do
		[ "$g1" -ge "$g0" ] && [ $(( (g1 - g0) % 2 )) = 0 ] ||
			echo "runtime.gen $g0 -> $g1"
	done > "$tmp/gen.bad"
	[ ! -s "$tmp/gen.bad" ] || fail "$(oneline "$tmp/gen.bad")"
	[ "$1" != download-flip ] && [ "$1" != upload-flip ] ||
		[ $(( $(reloads | paste -sd+) )) -gt $(( $(paste -sd+ "$tmp/gen.before") )) ] ||
		fail "a flip switched back without counting on: $(reloads | tr '\n' ' ')"
	ok h reload dev "$SND_IF" config "$tmp/host3.ini"
	[ "$(jdir upload 1:30 rate)" = 750000 ] && [ "$(dstate | tail -n 2 | tr '\n' ' ')" = "1:10 1:10 " ] ||
		fail "the reload after: upload 1:30 $(jdir upload 1:30 rate), port 9090 $(dstate | tail -n 2 | tr '\n' ' ')"
}
test_reload_failing_in_download_prepare_changes_neither() { reload_cancelled download-prepare; }
test_reload_failing_in_upload_prepare_changes_neither() { reload_cancelled upload-prepare; }
test_reload_failing_at_download_flip_changes_neither() { reload_cancelled download-flip; }
test_reload_failing_at_upload_flip_changes_neither() { reload_cancelled upload-flip; }

# a crash half-way: unload refuses the stale half, --force takes both
crash_in() {
	HTBCTL_TEST_FAIL=crash-$1 in_snd "$HTBCTL_TEST" load dev "$SND_IF" config "$tmp/host.ini" \
		--no-qdisc > /dev/null 2>&1
	[ $? = 9 ] || fail "the load did not crash"
}
# the redirect removed behind htbctl's back: stale, and --force cleans up
test_redirect_gone_is_stale() {
	dsnap "$tmp/s0"
	load_host
	in_snd tc qdisc del dev "$SND_IF" clsact || fail "could not remove clsact"
	refused "the redirect of $SND_IF's ingress (pref 1) is gone" h show dev "$SND_IF"
	refused "the redirect of $SND_IF's ingress" h load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
	ok h unload dev "$SND_IF" --force
	dunchanged_since "$tmp/s0"
}
test_crash_in_upload_then_force() {
	dsnap "$tmp/s0"
	crash_in upload-attach
	refused "did not finish" h unload dev "$SND_IF"
	[ -e "/sys/fs/bpf/htbctl/$IFB/meta" ] || fail "the refused unload took the download"
	ok h unload dev "$SND_IF" --force
	dunchanged_since "$tmp/s0"
}
test_crash_in_redirect_then_force() {
	dsnap "$tmp/s0"
	crash_in download-redirect
	refused "did not finish" h load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
	ok h unload dev "$SND_IF" --force
	dunchanged_since "$tmp/s0"
}

# ---- refused before anything changes

refused_unchanged() {	# PATTERN CMD...
	dsnap "$tmp/s0"
	refused "$@"
	dunchanged_since "$tmp/s0"
}
test_missing_upload_dev_refused() {
	refused_unchanged "upload_dev ${RUN_PAIR}-nx: no such device" \
		h load dev "$SND_IF" config "$tmp/no-up.ini" --no-qdisc
}
test_upload_on_the_download_device_refused() {
	refused_unchanged "direction = ingress" \
		h load dev "$SND_IF" config "$tmp/same-dev.ini" --no-qdisc
}
test_ifb_name_taken_refused() {
	in_snd ip link add "$IFB" type veth peer name "${RUN_PAIR}-t" || fail "no veth named $IFB"
	refused_unchanged "device $IFB exists and htbctl did not create it" \
		h load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
	in_snd ip link show "$IFB" > /dev/null 2>&1 || fail "the foreign $IFB is gone"
}
test_ingress_qdisc_refused() {
	in_snd tc qdisc add dev "$SND_IF" ingress || fail "no ingress qdisc"
	refused_unchanged "has an ingress qdisc" h load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
}
test_non_root_refused() {
	refused_unchanged "needs root" nobody "$HTBCTL" load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
}
test_second_load_refused() {
	load_host
	refused "htbctl is already loaded on $IFB" \
		h load dev "$SND_IF" config "$tmp/host.ini" --no-qdisc
}

# ---- the daemon keeps both shaped, shares on both, reloads both

test_daemon_both_directions() {
	mkdir "$tmp/d" && cp "$tmp/host.ini" "$tmp/d/c.ini" && chmod 755 "$tmp/d" || fail "no config dir"
	nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/d/c.ini" \
		--no-qdisc >> "$tmp/log" 2>&1 &
	dpid=$!
	wait_for 15 grep -q "sharing spare bandwidth on $IFB by prio" "$tmp/log" &&
		wait_for 5 grep -q "sharing spare bandwidth on $SND_IF by prio" "$tmp/log" ||
		fail "no sharing loop on both: $(oneline "$tmp/log")"
	[ "$(h -j show dev "$SND_IF" interval 0 | jq -c '[.[].sharing]')" = '["prio_quantum","prio_quantum"]' ] ||
		fail "sharing: $(h -j show dev "$SND_IF" interval 0 | jq -c '[.[].sharing]')"
	refused "the htbctl daemon for $SND_IF" h unload dev "$IFB"
	cp "$tmp/host2.ini" "$tmp/d/c.ini.new" && mv "$tmp/d/c.ini.new" "$tmp/d/c.ini"
	wait_for 10 eval '[ "$(jdir upload 1:30 rate)" = 750000 ]' ||
		fail "the daemon did not reload the upload: $(jdir upload 1:30 rate), $(oneline "$tmp/log")"
	sleep 2.5	# a check of the attachment ran: both stay loaded, no reload
	! grep -q "loading again" "$tmp/log" || fail "the daemon loaded again: $(oneline "$tmp/log")"
	kill -TERM "$dpid"
	wait "$dpid" || fail "the daemon exited $? on SIGTERM"
	dpid=
	in_snd tc filter show dev "$SND_IF" ingress | grep -q htb_redirect &&
		in_snd tc filter show dev "$IFB" egress | grep -q htb_egress || fail "not left shaped"
}

# ---- a router: both directions on egress

test_router_both_egress() {
	up_pair
	router_conf > "$tmp/r.ini"
	load_tree "$tmp/r.ini" --no-qdisc
	in_snd tc filter show dev "$UP_IF" egress | grep -q htb_egress || fail "nothing on $UP_IF"
	! in_snd ip link show "$IFB" > /dev/null 2>&1 || fail "an ifb without direction = ingress"
	h -j show dev "$SND_IF" interval 0 > "$tmp/j"
	[ "$(jq -r '[.[] | .dev + "/" + .direction] | join(" ")' "$tmp/j")" = \
	  "$SND_IF/download $UP_IF/upload" ] || fail "$(jq -c '[.[] | {dev, direction}]' "$tmp/j")"
	# the subscriber's address: dst on its port, src upstream
	got=$(for d in "$SND_IF" "$UP_IF"; do
		in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$d" dst=$RCV_IP4 src=$RCV_IP4
	      done | tr '\n' ' ')
	got=${got% }
	[ "$got" = "1:10 1:30 1:30 1:10" ] || fail "classes '$got', wanted '1:10 1:30 1:30 1:10'"
	ok h unload dev "$UP_IF"
	[ ! -e "/sys/fs/bpf/htbctl/$SND_IF" ] && [ ! -e "/sys/fs/bpf/htbctl/$UP_IF" ] ||
		fail "unload by the upload device left pins: $(ls /sys/fs/bpf/htbctl 2>&1 | tr '\n' ' ')"
}

. "$(dirname "$0")/../lib/runner.sh"
