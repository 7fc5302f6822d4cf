#!/usr/bin/env bash
# Scenario 17: an ISP's subscribers from LibreQoS's own files, on a
# bridge, both directions, kept current while traffic flows.
# ShapedDevices.csv holds 1,024 circuits under 64 access points under 4
# sites of network.json, as a UISP integration writes them: Min = 0.98 x
# Max, so the Mins of an AP's 16 circuits add up to four times its
# bandwidth and the import cuts them as LibreQoS does (to 10 kbit/s at
# this scale, one warning per AP); every fourth circuit has a second
# device, every circuit an IPv6 delegation. `htbctl import libreqos ...
# --upload-dev` turns them into one config, and the daemon shapes the
# bridge's subscriber-side port (download, by destination) and its
# upstream port (upload, the same matches mirrored to the source) from
# it. Every 32nd circuit is active, offered 1.5 times its plan (its Max)
# each way over four flows: the server's one socket sends every download,
# one process every upload (each datagram from its circuit's address);
# the others are idle. Mid-run the CRM's next export arrives (rows in
# another order, 8 idle circuits gone, 8 new ones, 32 idle ones with a
# new Max), is re-imported with --keep-ids onto the config in force, and
# the daemon reloads it. Pass: the import cut the Mins; the reload
# changed exactly those circuits and kept every active one's class; every
# active circuit within 3% of what the imported tree gives it in each
# direction over the whole window (its Max: each AP has room for its one
# active circuit, each site for its eight), the idle ones receive
# nothing, each direction's whole within 1%. htbctl alone: kernel HTB
# beside it is scenario 13's job, and 2,048 linear u32 filters would
# measure the emulator. CoDel is off in the imported config (rates are the
# subject; why, below).
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
# plans in kbit/s at this scale: Max down / up; Min 0.98 of Max
DOWN=$(sk 1000) UP=$(sk 500)
# circuit i (from 0): fwd_sub_addr i, on the subscribers' VLAN device;
# the server reaches the /20 on its link

bridge_up s17h 100 10 || { fail "scenario17: bridge setup"; exit 1; }
fwd_use s17h
{ for ((i = 0; i < NSUB; i++)); do echo "addr add 198.18.$((16 + i / 250)).$((i % 250 + 1))/32 dev s17h-c.100"; done; } |
	ip -n "$FWD_C" -batch - || { fail "scenario17: subscriber addresses"; exit 1; }
in_u ip route add 198.18.16.0/20 dev s17h-u.100 || { fail "scenario17: the server's route"; exit 1; }

# LibreQoS's files, nodes with room for every active circuit's Max under
# them: an AP 4 Maxes, a site 64 (one awk: a program start is 60 ms in the
# VM, and one per field took four minutes). gen 2: the CRM's next export,
# the rows reversed, circuits 1..8 (idle) gone, c2000..c2007 new, 32 idle
# ones (i % 32 == 16) with a Max 10% higher; $lq/changed: their ids.
lq=$work/libreqos
mkdir -p "$lq"
lq_files() {	# GEN CSV
	awk -v sites=$SITES -v aps=$APS -v subs=$SUBS -v down="$DOWN" -v up="$UP" -v dir="$lq" \
		-v gen="$1" -v csv="$2" '
	function mbps(k) { return sprintf("%.6f", k / 1000) }
	function addr(i) { return "198.18." (16 + int(i / 250)) "." (i % 250 + 1) }
	function row(i, ap, d, u,    r) {
		r = sprintf("c%d,Subscriber %d,d%d,CPE %d,%s,,%s,fd00:17:%x::/56,%s,%s,%s,%s,", i, i, i, i, ap,
			addr(i), i, mbps(d * 0.98), mbps(u * 0.98), mbps(d), mbps(u))
		if (i % 4 == 1)	# a second device, an address no traffic uses
			r = r "\n" sprintf("c%d,Subscriber %d,e%d,Router %d,%s,,198.19.%d.%d,,%s,%s,%s,%s,", i, i, i, i, ap,
				int(i / 250), i % 250 + 1, mbps(d * 0.98), mbps(u * 0.98), mbps(d), mbps(u))
		return r
	}
	BEGIN {
		js = dir "/network.json"; n = 0
		for (i = 0; i < sites * aps * subs; i++) {
			if (gen == 2 && i >= 1 && i <= 8) { print "c" i > (dir "/changed"); continue }
			k = (gen == 2 && i % 32 == 16) ? 1.1 : 1
			if (k != 1) print "c" i > (dir "/changed")
			rows[n++] = row(i, "AP_" int(i / (aps * subs)) "_" (int(i / subs) % aps), down * k, up * k)
		}
		for (i = 2000; gen == 2 && i < 2008; i++) {
			rows[n++] = sprintf("c%d,New %d,d%d,CPE %d,AP_3_15,,198.19.200.%d,,0.1,0.1,%s,%s,", i, i, i, i, i - 1999, mbps(down), mbps(up))
			print "c" i > (dir "/changed")
		}
		print "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment" > csv
		for (j = 0; j < n; j++)
			print rows[gen == 2 ? n - 1 - j : j] > csv
		if (gen == 2)
			exit
		print "{" > js
		for (s = 0; s < sites; s++) {
			printf "\"Site_%d\": {\"downloadBandwidthMbps\": %s, \"uploadBandwidthMbps\": %s, \"type\": \"Site\", \"children\": {\n",
				s, mbps(down * 4 * aps), mbps(up * 4 * aps) > js
			for (a = 0; a < aps; a++)
				printf "\"AP_%d_%d\": {\"downloadBandwidthMbps\": %s, \"uploadBandwidthMbps\": %s, \"type\": \"AP\"}%s\n",
					s, a, mbps(down * 4), mbps(up * 4), (a < aps - 1 ? "," : "") > js
			printf "}}%s\n", (s < sites - 1 ? "," : "") > js
		}
		print "}" > js
	}'
}
lq_files 1 "$lq/ShapedDevices.csv" && lq_files 2 "$lq/ShapedDevices.next.csv" ||
	{ fail "scenario17: LibreQoS files"; exit 1; }

conf=$work/conf/libreqos.ini
# lq_import CSV OUT [--keep-ids FILE]: the import, CoDel off (below)
lq_import() {
	local csv=$1 out=$2; shift 2
	"$HTBCTL" import libreqos "$csv" "$lq/network.json" --upload-dev "$FWD_UP" "$@" \
		-o "$out" 2> "$work/import.err" || { fail "scenario17: import libreqos: $(head -3 "$work/import.err" | tr '\n' ' ')"; return 1; }
	sed -i '/^\[device\]/a aqm = off' "$out" && grep -qx 'aqm = off' "$out" ||
		{ fail "scenario17: no aqm = off in the imported config's [device]"; return 1; }
}
t0=$SECONDS
lq_import "$lq/ShapedDevices.csv" "$conf" || exit 1
cuts=$(grep -c "the Download/Upload Min of its 16 circuits add up to .* each cut to 0.01/0.01 Mbps" "$work/import.err")
[ "$cuts" = $((SITES * APS)) ] ||
	{ fail "scenario17: the Mins of $cuts APs cut, not $((SITES * APS)): $(head -2 "$work/import.err" | tr '\n' ' ')"; exit 1; }
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
# [device]: the line is looked for after (lq_import).
n=$(grep -c '^\[class' "$conf")
step "imported: $n classes, $NSUB circuits, $((NSUB / EVERY)) active, the Mins of $cuts APs cut, in $((SECONDS - t0)) s"
cp "$lq"/* "$conf" "$RESULTS/" 2> /dev/null

# the class and the plan of each circuit, from the config as written:
# "ADDR CLASSID DOWN_CEIL UP_CEIL" (bit/s), through check -j
"$HTBCTL" -j check config "$conf" 2> "$work/check.err" |
	jq -r '.classes[] | select(.matches) | .matches[] as $m | select($m.type == "dst" and ($m.prefix | startswith("198.18."))) |
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
# the next export, a third into the receivers' window: imported onto the
# config in force and renamed over it, as a CRM job would
sleep $((FWD_SKIP + (FWD_SECS - FWD_SKIP) / 3))
lq_import "$lq/ShapedDevices.next.csv" "$conf.next" --keep-ids "$conf" && mv "$conf.next" "$conf" &&
	step "re-imported mid-run: $(grep -c . "$lq/changed") circuits changed ($(grep -o 'import: [0-9]* of them kept.*' "$work/import.err"))"
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
reloads=$(grep -o 'reloaded [a-z]* *[0-9]* classes ([^)]*)' "$(daemon_log)" | tr '\n' ';')
unshape_htbctl
cp "$FWD_DIR"/s17h.* "$RESULTS/"
# the reload: the classes of the removed and new circuits (8 each) and
# the 32 changed ones, on each of the two devices; every active circuit
# in the class it had
step "the daemon: $reloads"
want_reload="1086 kept, 32 changed, 8 added, 8 removed"
ok=1
if [ "$(grep -o "$want_reload" <<<"$reloads" | wc -l)" != 2 ]; then
	ok=0
	fail "scenario17: the re-import's reloads were not '$want_reload' on both devices: ${reloads:-none}"
fi
"$HTBCTL" -j check config "$conf" 2> /dev/null | jq -r '.classes[] | .classid as $c | .matches[]? |
	select(.type == "dst" and (.prefix | startswith("198.18."))) | "\(.prefix | rtrimstr("/32")) \($c)"' |
	sort > "$work/plans.after"
moved=$(for ((i = 0; i < NSUB; i += EVERY)); do echo "$(fwd_sub_addr $i)"; done |
	awk 'NR == FNR { a[$1] = 1; next } $1 in a { print }' - "$work/plans" | awk '{ print $1, $2 }' | sort |
	comm -23 - "$work/plans.after" | wc -l)
if [ "$moved" != 0 ]; then
	ok=0
	fail "scenario17: $moved active circuits changed class in the re-import"
fi

# per circuit and direction against its Max (the VLAN tag rides in the
# skb's metadata, outside what the shaper counts); down: the subscriber
# is the destination, up: the source
awk '{ print $1, $3 > "'"$work/want.down"'"; print $1, $4 > "'"$work/want.up"'" }' "$work/plans"
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
	summary_row scenario17 "LibreQoS import on a bridge, re-imported mid-run, $d: $n of $NSUB circuits active, each at its Max, Mbit/s in all (min/max error %)" \
		"$(mbit "$wsum")" "$(mbit "$sum") ($min / $max)" - "$FWD_TOL% each, 1% all" $r
done
[ $ok = 1 ] && pass "scenario17: $NSUB LibreQoS circuits imported (Mins cut), re-imported mid-run with --keep-ids, on a bridge both ways: every active one within $FWD_TOL% of its Max in each direction"
