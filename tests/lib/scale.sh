# The scenarios' rates, sized to what this VM carries (sourced by
# tests/lib/shaping.sh).
#
# Under TCG the VM's capacity is the host CPU's: 155 Mbit/s of 3-stream
# UDP on the AMD EPYC hosts the cases were sized on, about 50 on an Intel
# Xeon host, where a case sized for the first fell short for both shapers
# (docs/vm.md). tests/run.sh measures the capacity once (tests/lib/
# capacity.sh) and passes SCENARIO_CAPACITY="UDP_BPS TCP_BPS" into each
# scenario's VM. A scenario states its heaviest offered load:
#     scenario_load UDP_MBIT [TCP_MBIT]
# and every rate it writes goes through sr (Mbit/s) or sk (kbit/s), which
# print kbit/s scaled by SCALE_PM/1000, where
#     SCALE = min(1, SCENARIO_SHARE_PM/1000 * capacity / load)
# for UDP and for TCP alike. SCENARIO_SHARE_PM is 333, a third: the heaviest case
# (scenario 9's class start offers 47 Mbit/s of UDP, 30% of 155) passes on
# the EPYC hosts at scale 1, and a third leaves a slower VM the same
# headroom.
# Bars are ratios (to the fluid ideal, to kernel HTB in the same run), so
# they hold at any scale; a case's absolute numbers (bursts in bytes,
# delays in ms) are not scaled, which is why a scale below
# SCENARIO_MIN_SCALE_PM (250) is too far from what the case was built for: the
# scenario says SKIP (a failure under CI=true) instead of measuring.
# Without SCENARIO_CAPACITY (a scenario run by hand) the scale is 1.

SCENARIO_SHARE_PM=${SCENARIO_SHARE_PM:-333}
SCENARIO_MIN_SCALE_PM=${SCENARIO_MIN_SCALE_PM:-250}
SCALE_PM=1000

# scale_for LOAD_BPS CAPACITY_BPS: the per-mille scale that LOAD needs.
scale_for() {
	local s
	[ "${2:-0}" -gt 0 ] && [ "$1" -gt 0 ] || { echo 1000; return; }
	s=$(($2 * SCENARIO_SHARE_PM / $1))
	echo $((s > 1000 ? 1000 : s))
}

scenario_load() {	# UDP_MBIT [TCP_MBIT]
	local cu ct su st
	read -r cu ct <<<"${SCENARIO_CAPACITY:-}"
	if [ -z "$cu" ]; then
		step "$SCENARIO at scale 1: no capacity measured (tests/run.sh scenarios measures it; SCENARIO_CAPACITY=\"UDP_BPS TCP_BPS\" sets it)"
		return 0
	fi
	su=$(scale_for $(($1 * 1000000)) "$cu")
	st=$(scale_for $((${2:-0} * 1000000)) "$ct")
	SCALE_PM=$((su < st ? su : st))
	step "$SCENARIO at scale $(scale_text): the VM carries $((cu / 1000000)) Mbit/s of UDP, $((ct / 1000000)) of TCP; the case offers up to $1 and ${2:-0} at scale 1"
	if [ "$SCALE_PM" -lt "$SCENARIO_MIN_SCALE_PM" ]; then
		echo "SKIP $SCENARIO: this VM carries $((cu / 1000000)) Mbit/s of UDP and $((ct / 1000000)) of TCP unshaped; at scale $(scale_text) (below $SCENARIO_MIN_SCALE_PM/1000) the case is too far from what it was built for"
		exit 0
	fi
}

scale_text() { printf '%d.%03d' $((SCALE_PM / 1000)) $((SCALE_PM % 1000)); }

# sr MBIT / sk KBIT: that rate at the scale, in whole kbit/s (write
# "$(sr 20)kbit" for tc and htbctl, "$(sr 20)K" for iperf3's -b).
sr() { echo $(($1 * SCALE_PM)); }
sk() { echo $(($1 * SCALE_PM / 1000)); }
# sb BPS: a rate in bit/s (an integer) at the scale, in bit/s.
sb() { echo $(($1 * SCALE_PM / 1000)); }

# A tc rate in kbit/s, in awk (bit, kbit, mbit, gbit; any other unit is
# an error: a file this cannot scale must not run at the wrong scale).
SCALE_AWK_KBIT='
function kbit(v,   n, u) {
	n = v + 0; u = tolower(substr(v, length(n "") + 1))
	if (u == "bit") return n / 1000
	if (u == "kbit") return n
	if (u == "mbit") return n * 1000
	if (u == "gbit") return n * 1000000
	printf "%s: unit %s not scaled\n", FILENAME, v > "/dev/stderr"; exit 1
}'

# scale_config FILE: FILE with its rate and ceil values at the scale, for
# trees kept in configs/. Quanta left to the default follow the rates
# (rate / r2q).
scale_config() {
	awk -v s="$SCALE_PM" "$SCALE_AWK_KBIT"'
	/^[ \t]*(rate|ceil)[ \t]*=/ {
		split($0, kv, "="); v = kv[2]; gsub(/[ \t]|#.*/, "", v)
		k = kv[1]; gsub(/[ \t]/, "", k)
		printf "%s = %dkbit\n", k, kbit(v) * s / 1000; next
	}
	{ print }' "$1"
}

# scale_tc FILE: a tc script with the word after each rate and ceil at the
# scale.
scale_tc() {
	awk -v s="$SCALE_PM" "$SCALE_AWK_KBIT"'
	/^tc / { for (i = 2; i < NF; i++) if ($i == "rate" || $i == "ceil") $(i + 1) = int(kbit($(i + 1)) * s / 1000) "kbit" }
	{ print }' "$1"
}
