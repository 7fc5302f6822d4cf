#!/usr/bin/env bash
# Re-import benchmark (root): LibreQoS's two files for N circuits under
# 1,000 APs (tests/lib/libreqos.sh), imported with --upload-dev and loaded on a veth
# (download) and a second veth (upload); then the same files with 1% of the
# circuits changed (every circuit whose id is a multiple of 100 gets 1 Mbps
# more Download Max) imported again with --keep-ids and reloaded. Timed:
# that import, that reload, and the two together, for htbctl and for a
# baseline binary in the same run, and the baseline's time over htbctl's.
#
#   scripts/bench-reimport.sh [N]        default 100000
#
# Environment: OUTPUT (build dir, default build), HTBCTL (default
# OUTPUT/htbctl), BASE (the baseline binary, default
# /tmp/base/build/htbctl; "" for none), BENCH_RUNS (repeats, the median is
# reported; default 3). Times are wall clock of the whole commands (ms)
# and, in brackets, their CPU time (user + system): on a shared machine the
# CPU time is the steadier of the two.
. "$(dirname "$0")/../tests/lib/common.sh"
. tests/lib/netns.sh
. tests/lib/libreqos.sh
N=${1:-100000}
RUNS=${BENCH_RUNS:-3}
BASE=${BASE-/tmp/base/build/htbctl}

[ "$(id -u)" = 0 ] || { echo "bench-reimport: must run as root" >&2; exit 1; }
[ -x "$HTBCTL" ] || { echo "bench-reimport: $HTBCTL not built" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench-reimport: no baseline $BASE (BASE= for none)" >&2; exit 1; }
need_bpffs || { echo "bench-reimport: no bpffs at /sys/fs/bpf" >&2; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
UP_IF=
cleanup() {
	local b
	for b in "$HTBCTL" $BASE; do
		[ -n "$SND_IF" ] && in_snd "$b" unload dev "$SND_IF" --force >/dev/null 2>&1
	done
	topo_down
	rm -rf "$tmp"
}
trap cleanup EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The circuits to change: every line of a circuit whose id is a multiple
# of 100 (all its devices: they share the rates), Download Max + 1; the
# fields are split as CSV (quoted fields hold commas).
bump_one_percent() {	# in.csv > out.csv
	awk '
	function fields(s, f,    n, i, c, q, cur) {
		n = 1; cur = ""; q = 0
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "\"") q = !q
			if (c == "," && !q) { f[n++] = cur; cur = ""; continue }
			cur = cur c
		}
		f[n] = cur
		return n
	}
	/^[0-9]+,/ {
		split($0, a, ",")
		if (a[1] % 100 == 0) {
			n = fields($0, f); f[11] = f[11] + 1
			out = f[1]; for (i = 2; i <= n; i++) out = out "," f[i]
			print out; next
		}
	}
	{ print }' "$1"
}

# run WHAT CMD...: CMD (a program: /usr/bin/time runs it) timed; appends "wall_ms cpu_ms" to $tmp/WHAT.
run() {
	local what=$1 t0 t1; shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$@" >/dev/null 2>"$tmp/err" ||
		{ echo "bench-reimport: $what failed: $(head -3 "$tmp/err")" >&2; exit 1; }
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'NR == 1 { printf "%.1f %.1f\n", (b - a) / 1e6, ($1 + $2) * 1000 }' \
		"$tmp/cpu" >> "$tmp/$what"
}

# One binary: its own import of the files, loaded; then RUNS times the
# re-import and reload, and back to the first config (untimed).
measure() {	# BIN TAG
	local b=$1 t=$2 r
	rm -f "$tmp/$t."*
	run "$t.setup" "$b" import libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" \
		--upload-dev "$UP_IF" -o "$tmp/$t.cur.ini"
	chmod 644 "$tmp/$t.cur.ini"
	run "$t.setup" "${NS[@]}" "$b" load dev "$SND_IF" config "$tmp/$t.cur.ini" --no-qdisc
	for r in $(seq "$RUNS"); do
		run "$t.import" "$b" import libreqos "$tmp/changed.csv" "$tmp/network.json" \
			--upload-dev "$UP_IF" --keep-ids "$tmp/$t.cur.ini" -o "$tmp/$t.new.ini"
		chmod 644 "$tmp/$t.new.ini"
		run "$t.reload" "${NS[@]}" "$b" reload dev "$SND_IF" config "$tmp/$t.new.ini"
		run "$t.setup" "${NS[@]}" "$b" reload dev "$SND_IF" config "$tmp/$t.cur.ini"
	done
	paste -d' ' "$tmp/$t.import" "$tmp/$t.reload" |
		awk '{ print $1 + $3, $2 + $4 }' > "$tmp/$t.total"
	in_snd "$b" unload dev "$SND_IF" >/dev/null 2>&1
}

col() { awk -v c="$2" '{ print $c }' "$1" | median; }	# file column -> median
cell() { printf '%.0f (%.0f)' "$(col "$1" 1)" "$(col "$1" 2)"; }
ratio() { awk -v a="$(col "$1" "$3")" -v b="$(col "$2" "$3")" 'BEGIN { printf "%.2fx", a / b }'; }

topo_up br 1 || { echo "bench-reimport: topology failed" >&2; exit 1; }
UP_IF=br-u0
NS=(nsenter --net=/run/netns/"$SND_NS")	# in_snd, as a command /usr/bin/time runs
ip -n "$SND_NS" -batch - <<-EOF || { echo "bench-reimport: upload device failed" >&2; exit 1; }
link add $UP_IF type veth peer name br-u1
link set $UP_IF up
link set br-u1 up
EOF
# an ISP's shape: 1,000 APs (50 per PoP) unless LQ_APS_PER_POP says
LQ_APS_PER_POP=${LQ_APS_PER_POP:-50} lqos_generate "$tmp" "$N" || exit 1
bump_one_percent "$tmp/ShapedDevices.csv" > "$tmp/changed.csv"
changed=$(diff "$tmp/ShapedDevices.csv" "$tmp/changed.csv" | grep -c '^>')

echo "# $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $N circuits, $changed device lines of 1% of the circuits changed; download on $SND_IF, upload on $UP_IF (--no-qdisc)"
echo "# ms: wall clock of the whole command (its CPU time in brackets), median of $RUNS runs"
measure "$HTBCTL" new
[ -n "$BASE" ] && measure "$BASE" base
printf '%-10s %18s %18s %18s\n' binary "import --keep-ids" reload "both"
printf '%-10s %18s %18s %18s\n' htbctl "$(cell "$tmp/new.import")" "$(cell "$tmp/new.reload")" "$(cell "$tmp/new.total")"
if [ -n "$BASE" ]; then
	printf '%-10s %18s %18s %18s\n' baseline "$(cell "$tmp/base.import")" "$(cell "$tmp/base.reload")" "$(cell "$tmp/base.total")"
	printf '%-10s %18s %18s %18s\n' "base/new" \
		"$(ratio "$tmp/base.import" "$tmp/new.import" 1) ($(ratio "$tmp/base.import" "$tmp/new.import" 2))" \
		"$(ratio "$tmp/base.reload" "$tmp/new.reload" 1) ($(ratio "$tmp/base.reload" "$tmp/new.reload" 2))" \
		"$(ratio "$tmp/base.total" "$tmp/new.total" 1) ($(ratio "$tmp/base.total" "$tmp/new.total" 2))"
fi
