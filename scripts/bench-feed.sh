#!/usr/bin/env bash
# The LibreQoS feed's cost (root): CPU time of one re-import and switch
# of N circuits (tests/lib/libreqos.sh's set; each round adds a circuit,
# as a CRM does), in the daemon (libreqos CSV JSON: import, check, write
# FILE, reload in one process) beside the path-unit design a baseline
# build would need (`import libreqos --keep-ids F -o F`, then `reload`,
# two processes). The daemon's figure is its CPU time over the round
# (/proc, 10 ms ticks) less its idle rate (the sharing loop) measured
# first over 5 s; the pipeline's is bash's `time` of both commands. Each
# figure is the median of BENCH_RUNS (5) rounds; wall times are printed
# too (the daemon's includes its 1 s quiet), under contention if the
# machine is shared. On a veth in a namespace, --no-qdisc.
#
#   scripts/bench-feed.sh [N] [BASE_HTBCTL]   default: 10000 /tmp/base/build/htbctl
. "$(dirname "$0")/../tests/lib/common.sh"
. tests/lib/netns.sh
. tests/lib/libreqos.sh
B=$HTBCTL
N=${1:-10000}
BASE=${2:-/tmp/base/build/htbctl}
RUNS=${BENCH_RUNS:-5}

[ "$(id -u)" = 0 ] || { echo "bench-feed: must run as root" >&2; exit 1; }
[ -x "$B" ] && [ -x "$BASE" ] || { echo "bench-feed: $B or $BASE not built" >&2; exit 1; }
need_bpffs || { echo "bench-feed: no bpffs at /sys/fs/bpf" >&2; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; wait 2>/dev/null
      [ -n "$SND_IF" ] && "$B" unload dev "$SND_IF" --force >/dev/null 2>&1; topo_down; rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
cpu_ms() { awk '{ print ($14 + $15) * 10 }' "/proc/$dpid/stat"; }
reloads() { grep -c ': reloaded' "$tmp/log"; }
# add_circuit R: the R-th circuit added to the CSV, renamed over it
add_circuit() {
	{ cat "$tmp/ShapedDevices.csv"
	  echo "new$1,New $1,nd$1,New device $1,AP_1_1_1,,198.19.$1.1,,10,10,100,100,"; } > "$tmp/new.csv"
	mv "$tmp/new.csv" "$tmp/ShapedDevices.csv"
}

topo_up hbf > /dev/null || { echo "bench-feed: no veth pair" >&2; exit 1; }
lqos_generate "$tmp" "$N"

# the daemon
nsenter --net=/run/netns/"$SND_NS" "$B" daemon dev "$SND_IF" config "$tmp/c.ini" \
	libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" --no-qdisc > "$tmp/log" 2>&1 &
dpid=$!
for i in $(seq 600); do grep -q 'sharing spare bandwidth' "$tmp/log" && break; sleep 0.1; done
grep -q 'sharing spare bandwidth' "$tmp/log" || { echo "bench-feed: the daemon did not start: $(tail -2 "$tmp/log")" >&2; exit 1; }
sleep 1
c0=$(cpu_ms); t0=$(date +%s%N); sleep 5; c1=$(cpu_ms); t1=$(date +%s%N)
idle=$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { print c / (t / 1e9) }')
: > "$tmp/new.cpu"; : > "$tmp/new.wall"
for r in $(seq "$RUNS"); do
	n=$(reloads); c0=$(cpu_ms); t0=$(date +%s%N)
	add_circuit "$r"
	for i in $(seq 3000); do [ "$(reloads)" != "$n" ] && break; sleep 0.01; done
	t1=$(date +%s%N); c1=$(cpu_ms)
	[ "$(reloads)" != "$n" ] || { echo "bench-feed: round $r not in force: $(tail -2 "$tmp/log")" >&2; exit 1; }
	awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v i="$idle" 'BEGIN { print c - i * t / 1e9 }' >> "$tmp/new.cpu"
	echo $(((t1 - t0) / 1000000)) >> "$tmp/new.wall"
	sleep 1.5
done
kill "$dpid"; wait "$dpid" 2>/dev/null; dpid=

# the baseline's pipeline, on the config the daemon left
: > "$tmp/base.cpu"; : > "$tmp/base.wall"
TIMEFORMAT='%3U %3S %3R'
for r in $(seq "$RUNS"); do
	add_circuit $((RUNS + r))
	{ time { "$BASE" import libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" \
			--keep-ids "$tmp/c.ini" -o "$tmp/c.ini" 2> /dev/null &&
		 in_snd "$BASE" reload dev "$SND_IF" config "$tmp/c.ini" > /dev/null 2>&1; } ||
		echo "bench-feed: the baseline's round $r failed" >&2; } 2> "$tmp/t"
	awk '{ print ($1 + $2) * 1000 }' "$tmp/t" >> "$tmp/base.cpu"
	awk '{ print $3 * 1000 }' "$tmp/t" >> "$tmp/base.wall"
done

nc=$(median < "$tmp/new.cpu") bc=$(median < "$tmp/base.cpu")
printf 'bench-feed: %s circuits, median of %s rounds (each adds a circuit)\n' "$N" "$RUNS"
printf '  daemon feed (new):            CPU %6.0f ms, wall %6.0f ms (with its 1 s quiet; idle loop %.0f ms/s taken off)\n' \
	"$nc" "$(median < "$tmp/new.wall")" "$idle"
printf '  import + reload (baseline):   CPU %6.0f ms, wall %6.0f ms\n' "$bc" "$(median < "$tmp/base.wall")"
awk -v n="$nc" -v b="$bc" 'BEGIN { printf "  CPU new/baseline: %.2f\n", n / b }'
