#!/usr/bin/env bash
# Scenario 15 (issue 22): an ISP-shaped tree at scale on a router. 1,024
# subscriber classes under 64 access points under 4 sites (three levels
# below the root, 1,093 classes), each subscriber a /32 of its own; the
# router shapes its subscriber-side device (download, classes by
# destination address). Every eighth subscriber is active (128, two under
# each access point), offered 1.5 times its 100 kbit/s plan (its ceil;
# its rate, the guaranteed minimum, is a quarter of it) over four flows by
# the server's one socket; the others are idle.
# Pass: every active subscriber within 3% of the fluid ideal (its plan:
# nothing above it is short), the idle ones receive nothing, and the
# whole within 1%. htbctl alone (under its daemon): kernel HTB beside it
# is scenarios 12-14's job, and 1,024 linear u32 filters would measure
# the emulator.
. "$(dirname "$0")/../lib/shaping.sh"
. "$(dirname "$0")/../lib/router.sh"
. "$(dirname "$0")/../lib/forward.sh"
scenario_begin scenario15
DAEMON_WAIT=60	# a load of 1,093 classes under emulation
scenario_load 20	# 128 subscribers at 150 kbit/s; rates at scale 1

SITES=4 APS=16 SUBS=16 EVERY=8 PLAN=$(sb 100000) OFFER=$(sb 150000)
NSUB=$((SITES * APS * SUBS))

router_up s15h 10 || { fail "scenario15: router setup"; exit 1; }
fwd_use s15h
{ for ((i = 0; i < NSUB; i++)); do echo "addr add $(fwd_sub_addr $i)/32 dev s15h-c"; done; } |
	ip -n "$FWD_C" -batch - || { fail "scenario15: subscriber addresses"; exit 1; }
in_g ip route add 198.18.16.0/20 dev "$FWD_DOWN" && in_u ip route add 198.18.16.0/20 via 198.18.2.1 ||
	{ fail "scenario15: routes"; exit 1; }

# The tree: sites 1:1SS, access points 1:2AA, subscribers 1:1000 + i,
# LibreQoS-style: a subscriber's rate its guaranteed minimum (a quarter of
# its plan: 16 of them fit their access point's rate), its ceil the plan,
# a 4 KB bucket: htbctl's default (one 64 KB GSO packet and more) would
# let a 100 kbit/s class run 15% over its plan for the whole window.
conf=$work/conf/isp.ini
{ ini device default=1:ffff
  ini 'class 1:1' rate=$(sr 41)kbit
  ini 'class 1:ffff' parent=1:1 rate=$(sr 1)kbit ceil=$(sr 41)kbit
  for ((s = 0; s < SITES; s++)); do
	ini "class 1:$(printf %x $((0x100 + s)))" parent=1:1 rate=$(sr 10)kbit ceil=$(sr 40)kbit
	for ((a = 0; a < APS; a++)); do
		ap=$(printf %x $((0x200 + s * APS + a)))
		ini "class 1:$ap" parent=1:$(printf %x $((0x100 + s))) rate=$(sk 600)kbit ceil=$(sr 10)kbit
		for ((u = 0; u < SUBS; u++)); do
			i=$(((s * APS + a) * SUBS + u))
			ini "class 1:$(printf %x $((0x1000 + i)))" parent=1:$ap rate=$((PLAN / 4000))kbit \
				ceil=$((PLAN / 1000))kbit burst=4kb cburst=4kb quantum=1514 \
				"match=dst $(fwd_sub_addr $i)/32"
		done
	done
  done; } > "$conf"
n=$(grep -c '^\[class' "$conf")
step "tree: $n classes, $NSUB subscribers, $((NSUB / EVERY)) active"

targets=() offers=()
for ((i = 0; i < NSUB; i += EVERY)); do
	targets+=("$(fwd_sub_addr $i),6000,4,$OFFER")
	offers+=("1:$(printf %x $((0x1000 + i)))=$(fwd_wire "$OFFER" 0)bit")
done
# (check's warnings, one per class with a bucket under a GSO packet, to a file)
"$HTBCTL" -j simulate config "$conf" offer "${offers[@]}" 2> "$work/simulate.err" |
	jq -er '.classes[] | "\(.classid) \(.gets)"' > "$work/ideal" || { fail "scenario15: no fluid ideal"; exit 1; }

FWD_DIR=$work/fwd
mkdir -p "$FWD_DIR"
fwd_dev down
t0=$SECONDS
shape_with htbctl "$conf" || exit 1
step "htbctl under its daemon with $n classes after $((SECONDS - t0)) s"
fwd_recv_up c:6000:4
fwd_ready "$FWD_DIR/s15h.c.recv" || { fail "scenario15: receiver"; exit 1; }
fwd_offer u "" "${targets[@]}"
fwd_stop_receivers
unshape_htbctl
cp "$FWD_DIR"/s15h.* "$RESULTS/"

# per subscriber: measured wire bit/s against the ideal (its class
# 1:1000 + i; simulate's bytes/s)
awk -v nsub=$NSUB '{ want[$1] = $2 * 8 }
	END { for (i = 0; i < nsub; i++) print "198.18." (16 + int(i / 250)) "." (i % 250 + 1), want[sprintf("1:%x", 4096 + i)] }' \
	"$work/ideal" > "$work/want"
fwd_judge_subs "$work/want" "$FWD_DIR/s15h.c.recv" 2 $NSUB $EVERY > "$work/verdict"
read -r n bad idle min max sum wsum first < "$work/verdict"
step "$n active subscribers: error from $min% to $max% of the ideal, $bad beyond $FWD_TOL%; $idle idle ones received something; all $(mbit "$sum") of $(mbit "$wsum") Mbit/s"
v=PASS
if [ "$bad" != 0 ] || [ "$idle" != 0 ] || ! within "$sum" "$wsum" 1 || [ "$n" = 0 ]; then
	v=FAIL
	fail "scenario15: $bad of $n active subscribers beyond $FWD_TOL% (first: ${first:-none}), $idle idle ones received traffic, all $(mbit "$sum") of $(mbit "$wsum") Mbit/s ($(rel_err "$sum" "$wsum")%)"
fi
summary_row scenario15 "1,093 classes, 128 of 1,024 subscribers active: each at its rate, Mbit/s in all (min/max error %)" \
	"$(mbit "$wsum")" "$(mbit "$sum") ($min / $max)" - "$FWD_TOL% each, 1% all" $v
[ $v = PASS ] && pass "scenario15: 1,024 subscribers under 64 access points and 4 sites: every active one within $FWD_TOL% of its rate"
