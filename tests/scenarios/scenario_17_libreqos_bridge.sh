#!/usr/bin/env bash
# Scenario 17 (issue 27): an ISP's subscribers from LibreQoS's own files,
# on a bridge, both directions. ShapedDevices.csv holds 1,024 circuits
# (one IPv4 address each) under 64 access points under 4 sites of
# network.json; `htbctl import libreqos ... --upload-dev` turns them into
# one config, and the daemon shapes the bridge's subscriber-side port
# (download, by destination) and its upstream port (upload, the same
# matches mirrored to the source) from it. Every 32nd circuit is active,
# offered 1.5 times its plan (its Max) each way over four flows: the
# server's one socket sends every download, one process every upload
# (each datagram from its circuit's address); the others are idle.
# Pass: every active circuit within 3% of its Max in each direction (the
# nodes above leave room for all of them: nothing above is short), the
# idle ones receive nothing, each direction's whole within 1%. htbctl
# alone: kernel HTB beside it is scenario 13's job, and 2,048 linear u32
# filters would measure the emulator. CoDel is off in the imported config
# (rates are the subject; why, below).
. "$(dirname "$0")/../lib/shaping.sh"
. "$(dirname "$0")/../lib/router.sh"
. "$(dirname "$0")/../lib/forward.sh"
scenario_begin scenario17
DAEMON_WAIT=120	# two devices of 1,093 classes each under emulation
# 32 circuits at 1.5 and 0.75 Mbit/s at scale 1, 72 Mbit/s, counted
# twice: the one download sender forwards every datagram through two
# veths, a VLAN and the bridge in its own context, and at scale 1 it
# skipped 12-16% of them in VMs that carried 228 Mbit/s of UDP, 0-3% in
# ones that carried 400 (docs/log.md, "Scenario 17's load")
scenario_load 144

SITES=4 APS=16 SUBS=16 EVERY=32
NSUB=$((SITES * APS * SUBS))
# plans in kbit/s at this scale: Max down / up; Min a quarter of Max
DOWN=$(sk 1000) UP=$(sk 500)
# circuit i (from 0): fwd_sub_addr i, on the subscribers' VLAN device;
# the server reaches the /20 on its link

bridge_up s17h 100 10 || { fail "scenario17: bridge setup"; exit 1; }
fwd_use s17h
{ for ((i = 0; i < NSUB; i++)); do echo "addr add 198.18.$((16 + i / 250)).$((i % 250 + 1))/32 dev s17h-c.100"; done; } |
	ip -n "$FWD_C" -batch - || { fail "scenario17: subscriber addresses"; exit 1; }
in_u ip route add 198.18.16.0/20 dev s17h-u.100 || { fail "scenario17: the server's route"; exit 1; }

# LibreQoS's files, nodes with room for every circuit's Max under them
# (one awk: a program start is 60 ms in the VM, and one per field took
# four minutes)
lq=$work/libreqos
mkdir -p "$lq"
awk -v sites=$SITES -v aps=$APS -v subs=$SUBS -v down="$DOWN" -v up="$UP" -v dir="$lq" '
	function mbps(k) { return sprintf("%.6f", k / 1000) }
	function addr(i) { return "198.18." (16 + int(i / 250)) "." (i % 250 + 1) }
	BEGIN {
		csv = dir "/ShapedDevices.csv"; js = dir "/network.json"
		print "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment" > csv
		for (i = 0; i < sites * aps * subs; i++)
			printf "c%d,Subscriber %d,d%d,CPE %d,AP_%d_%d,,%s,,%s,%s,%s,%s,\n", i, i, i, i,
				int(i / (aps * subs)), int(i / subs) % aps, addr(i),
				mbps(down / 4), mbps(up / 4), mbps(down), mbps(up) > csv
		print "{" > js
		for (s = 0; s < sites; s++) {
			printf "\"Site_%d\": {\"downloadBandwidthMbps\": %s, \"uploadBandwidthMbps\": %s, \"type\": \"Site\", \"children\": {\n",
				s, mbps(down * subs * aps), mbps(up * subs * aps) > js
			for (a = 0; a < aps; a++)
				printf "\"AP_%d_%d\": {\"downloadBandwidthMbps\": %s, \"uploadBandwidthMbps\": %s, \"type\": \"AP\"}%s\n",
					s, a, mbps(down * subs), mbps(up * subs), (a < aps - 1 ? "," : "") > js
			printf "}}%s\n", (s < sites - 1 ? "," : "") > js
		}
		print "}" > js
	}' || { fail "scenario17: LibreQoS files"; exit 1; }

conf=$work/conf/libreqos.ini
t0=$SECONDS
"$HTBCTL" import libreqos "$lq/ShapedDevices.csv" "$lq/network.json" --upload-dev "$FWD_UP" \
	-o "$conf" 2> "$work/import.err" || { fail "scenario17: import libreqos: $(head -3 "$work/import.err" | tr '\n' ' ')"; exit 1; }
# Rates are this case's subject, not CoDel (scenarios 10 and 12-14 judge
# it beside kernel HTB's fq_codel): CoDel keeps a class's queue near its
# 5 ms target, and the senders, offering 1.5x through a VM that the host
# stops for tens of ms, leave a class idle once that queue drains. CI's
# run at d126cca (the download sender skipping 6.2%) fell up to 3.1%
# short a circuit, 2.1% in all; three of three runs here with the VM
# stopped 60 ms every 0.66 s, up to 4.9%, 1.4-2.3% in all. Without CoDel
# the class's queue (121 ms at a 1 Mbit/s Max) covers such a stall, and
# eight of eight such runs stayed within 0.9% (docs/log.md, "Scenario 17
# and the emulator's stalls"). sed says nothing when it finds no
# [device]: the line is looked for after.
sed -i '/^\[device\]/a aqm = off' "$conf" && grep -qx 'aqm = off' "$conf" ||
	{ fail "scenario17: no aqm = off in the imported config's [device]"; exit 1; }
n=$(grep -c '^\[class' "$conf")
step "imported: $n classes, $NSUB circuits, $((NSUB / EVERY)) active, in $((SECONDS - t0)) s"
cp "$lq"/* "$conf" "$RESULTS/" 2> /dev/null

# the class and the plan of each circuit, from the config as written:
# "ADDR CLASSID DOWN_CEIL UP_CEIL" (bit/s), through check -j
"$HTBCTL" -j check config "$conf" 2> "$work/check.err" |
	jq -r '.classes[] | select(.matches) | .matches[] as $m | select($m.type == "dst") |
		"\($m.prefix | rtrimstr("/32")) \(.classid) \(.ceil * 8) \(.upload.ceil * 8)"' \
	> "$work/plans" || { fail "scenario17: check -j of the import: $(head -2 "$work/check.err" | tr '\n' ' ')"; exit 1; }
[ "$(wc -l < "$work/plans")" = "$NSUB" ] ||
	{ fail "scenario17: $(wc -l < "$work/plans") circuits' addresses in the config, not $NSUB"; exit 1; }

down=() up=()
for ((i = 0; i < NSUB; i += EVERY)); do
	down+=("$(fwd_sub_addr $i),6000,4,$((DOWN * 3 / 2))k")
	up+=("$SRV4,6100,4,$((UP * 3 / 2))k,$(fwd_sub_addr $i)")
done

FWD_DIR=$work/fwd
mkdir -p "$FWD_DIR"
fwd_dev down
t0=$SECONDS
shape_with htbctl "$conf" || exit 1
step "htbctl under its daemon on $FWD_DOWN and $FWD_UP after $((SECONDS - t0)) s"
fwd_recv_up c:6000:4
fwd_recv_up u:6100:4
fwd_ready "$FWD_DIR/s17h.c.recv" "$FWD_DIR/s17h.u.recv" || { fail "scenario17: receivers"; exit 1; }
FWD_CPU0=$(cpu_ticks)
fwd_offer u "" "${down[@]}"
fwd_offer c "" "${up[@]}"
fwd_stop_receivers
# what the shaper counted per class (drops, borrowing), beside what the
# receivers got, for a failure's reading; and how much the senders could
# not send on time (flowgen skips credit older than 20 ms: the VM did not
# run them), which says a short circuit was never offered its Max
for d in "$FWD_DOWN" "$FWD_UP"; do in_snd "$HTBCTL" -j show dev "$d" interval 0 > "$RESULTS/s17h.$d.show.json" 2>&1; done
step "senders: $(awk '$3 ~ /,6000,/ { d += $5; ds += $11; dw += $13; dws += $15 }
	$3 ~ /,6100,/ { u += $5; us += $11; uw += $13; uws += $15 }
	END { printf "down skipped %.1f%% of their datagrams (%.1f%% in the window), up %.1f%% (%.1f%%)",
		100 * ds / (d + ds + !d), 100 * dws / (dw + !dw), 100 * us / (u + us + !u), 100 * uws / (uw + !uw) }' "$FWD_DIR/s17h.send")"
step "receivers read at most this long after arrival: down $(fwd_read_lag "$FWD_DIR/s17h.c.recv"), up $(fwd_read_lag "$FWD_DIR/s17h.u.recv"); the CPUs were $FWD_CPU_BUSY% busy"
unshape_htbctl
cp "$FWD_DIR"/s17h.* "$RESULTS/"

# per circuit and direction against its Max (the VLAN tag rides in the
# skb's metadata, outside what the shaper counts); down: the subscriber
# is the destination, up: the source
awk '{ print $1, $3 > "'"$work/want.down"'"; print $1, $4 > "'"$work/want.up"'" }' "$work/plans"
ok=1
for d in down up; do
	if [ $d = down ]; then f=2 r=c; else f=1 r=u; fi
	v=$(fwd_judge_subs "$work/want.$d" "$FWD_DIR/s17h.$r.recv" $f $NSUB $EVERY)
	read -r n bad idle min max sum wsum first <<<"$v"
	step "$d: $n active circuits from $min% to $max% of their Max, $bad beyond $FWD_TOL%; $idle idle ones received something; all $(mbit "$sum") of $(mbit "$wsum") Mbit/s"
	r=PASS
	if [ "$bad" != 0 ] || [ "$idle" != 0 ] || [ "$n" = 0 ] || ! within "$sum" "$wsum" 1; then
		r=FAIL ok=0
		fail "scenario17 $d: $bad of $n active circuits beyond $FWD_TOL% (first: ${first:-none}), $idle idle ones received traffic, all $(mbit "$sum") of $(mbit "$wsum") Mbit/s ($(rel_err "$sum" "$wsum")%)"
	fi
	summary_row scenario17 "LibreQoS import on a bridge, $d: $n of $NSUB circuits active, each at its Max, Mbit/s in all (min/max error %)" \
		"$(mbit "$wsum")" "$(mbit "$sum") ($min / $max)" - "$FWD_TOL% each, 1% all" $r
done
[ $ok = 1 ] && pass "scenario17: $NSUB LibreQoS circuits imported, on a bridge both ways: every active one within $FWD_TOL% of its Max in each direction"
