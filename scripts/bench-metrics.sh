#!/usr/bin/env bash
# Scrape cost (root; issue 14): how long `htbctl metrics` and a scrape of
# the daemon's /metrics take for N classes, every class's series
# (--metrics-classes all) and the default (inner), beside `htbctl show` of
# the same tree, on a veth in a namespace (gen-config.sh's trees, loaded
# --no-qdisc). Each figure is the median of BENCH_RUNS (5) runs; the
# exposition's size and sample count are printed, and promtool checks the
# largest. interval 0: one read of the maps (the current rate then reads 0;
# the default 100 ms interval adds exactly that).
#
#   flock /tmp/htbctl-root.lock scripts/bench-metrics.sh [N ...]   default: 1000 100000
. "$(dirname "$0")/../tests/lib/common.sh"
. tests/lib/netns.sh
B=$HTBCTL
RUNS=${BENCH_RUNS:-5}
PORT=9109
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 100000)

[ "$(id -u)" = 0 ] || { echo "bench-metrics: must run as root" >&2; exit 1; }
[ -x "$B" ] || { echo "bench-metrics: $B not built (make OUTPUT=$OUT)" >&2; exit 1; }
need_bpffs || { echo "bench-metrics: no bpffs at /sys/fs/bpf" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench-metrics: no curl (scripts/setup.sh)" >&2; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; wait 2>/dev/null
      [ -n "$SND_IF" ] && "$B" unload dev "$SND_IF" --force >/dev/null 2>&1; topo_down; rm -rf "$tmp"' EXIT

now_ns() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed CMD...: the median wall ms of RUNS runs of CMD, its stdout to
# /dev/null (a scraper parses what it reads: writing 130 MB to a file
# doubled the figure), then once more into $tmp/out for the size, the
# samples and promtool
timed() {
	local t0 t1 r v=()
	"$@" > "$tmp/out" 2> "$tmp/err" || { echo "bench-metrics: $* failed: $(head -2 "$tmp/err")" >&2; exit 1; }
	for r in $(seq "$RUNS"); do
		t0=$(now_ns)
		"$@" > /dev/null 2> "$tmp/err" || { echo "bench-metrics: $* failed: $(head -2 "$tmp/err")" >&2; exit 1; }
		t1=$(now_ns)
		v+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')")
	done
	printf '%s\n' "${v[@]}" | median
}

topo_up bm 1 || { echo "bench-metrics: topology failed" >&2; exit 1; }
printf '%-8s %-6s %12s %12s %10s %10s\n' classes mode "metrics ms" "scrape ms" samples "KiB"
for n in "${sizes[@]}"; do
	scripts/gen-config.sh "$n" > "$tmp/a.ini" || exit 1
	chmod 644 "$tmp/a.ini"
	classes=$(grep -c '^\[class ' "$tmp/a.ini")
	in_snd "$B" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > /dev/null 2> "$tmp/err" ||
		{ echo "bench-metrics: load failed: $(head -2 "$tmp/err")" >&2; exit 1; }
	for mode in inner all; do
		nsenter --net=/run/netns/"$SND_NS" "$B" daemon dev "$SND_IF" config "$tmp/a.ini" --no-qdisc \
			--metrics 127.0.0.1:$PORT --metrics-classes $mode > "$tmp/daemon.log" 2>&1 &
		dpid=$!
		for _ in $(seq 100); do
			in_snd curl -sf -o "$tmp/probe" "http://127.0.0.1:$PORT/metrics" && break
			sleep 0.1
		done
		m=$(timed in_snd "$B" metrics dev "$SND_IF" interval 0 --metrics-classes $mode)
		s=$(timed in_snd curl -sf "http://127.0.0.1:$PORT/metrics")
		samples=$(grep -c '^htbctl_' "$tmp/out")
		kib=$(( $(wc -c < "$tmp/out") / 1024 ))
		[ "$mode" = all ] && { promtool check metrics < "$tmp/out" > "$tmp/pt" 2>&1 ||
			echo "bench-metrics: promtool: $(head -2 "$tmp/pt")" >&2; }
		printf '%-8s %-6s %12s %12s %10s %10s\n' "$classes" "$mode" "$m" "$s" "$samples" "$kib"
		kill "$dpid"; wait "$dpid" 2>/dev/null; dpid=
	done
	sh_ms=$(timed in_snd "$B" show dev "$SND_IF" interval 0)
	printf '%-8s %-6s %12s   (htbctl show, interval 0, the same tree)\n' "$classes" show "$sh_ms"
	in_snd "$B" unload dev "$SND_IF" > /dev/null 2>&1
done
