#!/usr/bin/env bash
# Control-plane benchmark (root): time to load N classes with htbctl and to
# reload with one class changed, side by side with kernel HTB + u32 filters
# built through `tc -batch` on the same kind of device in the same run; and
# memory per class (htbctl: the maps' and program's memlock as bpftool
# reports it; kernel HTB: the change in Slab, approximate).
#
#   scripts/bench-load.sh [N ...]        default: 1000 10000 65279 100000
#
# Configs come from scripts/gen-config.sh N: 1 top class, ceil(N/256) inner
# classes and N leaves, each leaf with one `match = dst A/32`, so the class
# count is N + ceil(N/256) + 1. Up to N = 65279 (65535 classes) every class
# is in major 1; above that gen-config.sh goes on in majors 2 and 3.
# The tc side gets the same tree: one `class add` per class and one u32
# `filter add ... match ip dst A/32 flowid` per leaf, all in one tc -batch.
# One HTB qdisc holds the classes of one major, so tc runs only up to
# N = 65279.
#
# Environment: OUTPUT (build dir, default build), HTBCTL (the binary,
# default OUTPUT/htbctl), BENCH_RUNS (repeats per htbctl measurement, the
# median is reported; default 3), BENCH_TC_MAX (skip tc above this many
# leaves; default and at most 65279: tc -batch of 65279 takes minutes),
# RESULTS (directory for a TSV copy of the table), BASE (a baseline
# htbctl measured the same way in the same run: each size's row is
# followed by its times and the ratio baseline / htbctl; default
# /tmp/base/build/htbctl if it is there, "" for none), BENCH_PAIR (the
# veth pair's name, default bl; another for a run beside someone else's).
. "$(dirname "$0")/../tests/lib/common.sh"
. tests/lib/netns.sh
B=$HTBCTL
RUNS=${BENCH_RUNS:-3}
TC_MAX=${BENCH_TC_MAX:-65279}
BASE=${BASE-/tmp/base/build/htbctl}
PAIR=${BENCH_PAIR:-bl}
[ -z "$BASE" ] || [ -x "$BASE" ] || BASE=
[ "$TC_MAX" -le 65279 ] || TC_MAX=65279
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 65279 100000)

[ "$(id -u)" = 0 ] || { echo "bench-load: must run as root" >&2; exit 1; }
[ -x "$B" ] || { echo "bench-load: $B not built (make OUTPUT=$OUT)" >&2; exit 1; }
[ -x scripts/gen-config.sh ] || { echo "bench-load: scripts/gen-config.sh missing" >&2; exit 1; }
need_bpffs || { echo "bench-load: no bpffs at /sys/fs/bpf" >&2; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"
trap '[ -n "$SND_IF" ] && "$B" unload dev "$SND_IF" --force >/dev/null 2>&1; topo_down; rm -rf "$tmp"' EXIT

now_ns() { date +%s%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
slab_kb() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }

# The tc -batch equivalent of a gen-config.sh file.
to_tc() {	# config dev
	awk -v dev="$2" '
	function flush() {
		if (id == "") return
		p = (parent == "") ? "1:" : parent
		printf "class add dev %s parent %s classid %s htb rate %s ceil %s\n", dev, p, id, rate, (ceil == "" ? rate : ceil)
		if (dst != "") filters[++nf] = sprintf("filter add dev %s parent 1: protocol ip prio 1 u32 match ip dst %s flowid %s", dev, dst, id)
		id = parent = rate = ceil = dst = ""
	}
	/^default = / { def = $3 }
	/^\[class / { flush(); id = $2; sub(/\]/, "", id) }
	/^parent = / { parent = $3 }
	/^rate = / { rate = $3 }
	/^ceil = / { ceil = $3 }
	/^match = dst / { dst = $4 }
	END {
		flush()
		sub(/^1:/, "", def)
		print "qdisc add dev " dev " root handle 1: htb default " def | "cat 1>&2"
		for (i = 1; i <= nf; i++) print filters[i]
	}' "$1" 2>"$tmp/qdisc.cmd" >"$tmp/rest.cmd"
	# qdisc first, then classes, then filters
	cat "$tmp/qdisc.cmd"
	grep '^class ' "$tmp/rest.cmd"
	grep '^filter ' "$tmp/rest.cmd"
}

maps_memlock() {	# dev -> bytes of every pinned map and the program
	local total=0 f b
	for f in /sys/fs/bpf/htbctl/"$1"/*; do
		if [ "$(basename "$f")" = htb_egress ]; then
			b=$(bpftool -j prog show pinned "$f" | jq -r '.bytes_memlock // 0')
		else
			b=$(bpftool -j map show pinned "$f" | jq -r '.bytes_memlock // 0')
		fi
		total=$((total + b))
	done
	echo $total
}

topo_up "$PAIR" 1 || { echo "bench-load: topology failed" >&2; exit 1; }
echo "# $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), htbctl $($B --version | cut -d' ' -f2)"
echo "# htbctl: --no-qdisc (this kernel may lack sch_fq; the qdisc step takes < 1 ms)"
echo "# times are wall-clock of the whole command, median of $RUNS runs"
hdr=$(printf '%-7s %8s | %10s %10s %9s %9s | %11s %10s %10s | %9s %9s' \
	leaves classes "load ms" "reload1 ms" "B/class" "maps MB" "tc-batch ms" "tc chg ms" "kB/class" speedup speedup)
echo "$hdr"
printf '%-7s %8s | %10s %10s %9s %9s | %11s %10s %10s | %9s %9s\n' "" "" "" "" "" "" "" "" "(slab)" "load" "reload1"
tsv=
[ -n "${RESULTS:-}" ] && { mkdir -p "$RESULTS"; tsv=$RESULTS/bench-load.tsv
	printf 'leaves\tclasses\thtbctl_load_ms\thtbctl_reload1_ms\thtbctl_bytes_per_class\ttc_batch_ms\ttc_change_ms\thtb_slab_kb_per_class\n' >"$tsv"; }

# htbctl_times BIN: load, reload1 (the medians of RUNS runs, ms) into t_load
# and t_rel, and the memory of the first run's maps into mem.
htbctl_times() {
	local b=$1 r t0 t1 loads=() reloads=()
	mem=0
	for r in $(seq "$RUNS"); do
		t0=$(now_ns)
		in_snd "$b" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc >/dev/null 2>"$tmp/err" ||
			{ echo "bench-load: load failed: $(head -2 "$tmp/err")" >&2; exit 1; }
		t1=$(now_ns)
		loads+=("$(ms "$t0" "$t1")")
		t0=$(now_ns)
		in_snd "$b" reload dev "$SND_IF" config "$tmp/b.ini" >/dev/null 2>"$tmp/err" ||
			{ echo "bench-load: reload failed: $(head -2 "$tmp/err")" >&2; exit 1; }
		t1=$(now_ns)
		reloads+=("$(ms "$t0" "$t1")")
		# and back: the steady state (generations level, shadow current)
		t0=$(now_ns)
		in_snd "$b" reload dev "$SND_IF" config "$tmp/a.ini" >/dev/null 2>&1
		t1=$(now_ns)
		reloads+=("$(ms "$t0" "$t1")")
		[ "$r" = 1 ] && mem=$(maps_memlock "$SND_IF")
		in_snd "$b" unload dev "$SND_IF" >/dev/null 2>&1
	done
	t_load=$(printf '%s\n' "${loads[@]}" | median)
	t_rel=$(printf '%s\n' "${reloads[@]}" | median)
}

for n in "${sizes[@]}"; do
	scripts/gen-config.sh "$n" >"$tmp/a.ini" || exit 1
	# one class changed: the first leaf's rate
	awk 'BEGIN { d = 0 } /^rate = 1mbit$/ && !d { print "rate = 2mbit"; d = 1; next } { print }' \
		"$tmp/a.ini" >"$tmp/b.ini"
	chmod 644 "$tmp"/*.ini
	classes=$(grep -c '^\[class ' "$tmp/a.ini")

	htbctl_times "$B"
	lm=$t_load rm_=$t_rel bpc=$((mem / classes))
	base_line=
	[ -n "$BASE" ] && htbctl_times "$BASE" &&
		base_line=$(awk -v bl="$t_load" -v br="$t_rel" -v l="$lm" -v r="$rm_" -v b="$BASE" 'BEGIN {
			printf "          baseline %s: load %.1f ms (%.2fx), reload1 %.1f ms (%.2fx)\n", b, bl, bl / l, br, br / r }')

	tcb=- tcc=- kpc=- s1=- s2=-
	if [ "$n" -le "$TC_MAX" ]; then
		to_tc "$tmp/a.ini" "$SND_IF" >"$tmp/tc.batch"
		sync; s0=$(slab_kb)
		t0=$(now_ns)
		in_snd tc -batch "$tmp/tc.batch" >/dev/null 2>"$tmp/tcerr" ||
			echo "bench-load: tc -batch reported: $(head -2 "$tmp/tcerr")" >&2
		t1=$(now_ns)
		tcb=$(ms "$t0" "$t1")
		kpc=$(awk -v a="$s0" -v b="$(slab_kb)" -v n="$classes" 'BEGIN { printf "%.2f", (b - a) / n }')
		first=$(awk '/^rate = 1mbit$/ { print prev; exit } /^\[class / { prev = $2 }' "$tmp/a.ini" | tr -d ']')
		par=$(awk -v c="[class $first]" '$0 == c { f = 1 } f && /^parent = / { print $3; exit }' "$tmp/a.ini")
		t0=$(now_ns)
		in_snd tc class change dev "$SND_IF" parent "$par" classid "$first" htb rate 2mbit ceil 100mbit
		t1=$(now_ns)
		tcc=$(ms "$t0" "$t1")
		in_snd tc qdisc del dev "$SND_IF" root
		s1=$(awk -v a="$tcb" -v b="$lm" 'BEGIN { printf "%.0fx", a / b }')
		s2=$(awk -v a="$tcc" -v b="$rm_" 'BEGIN { printf "%.2fx", a / b }')
	fi
	printf '%-7s %8s | %10s %10s %9s %9s | %11s %10s %10s | %9s %9s\n' "$n" "$classes" "$lm" "$rm_" "$bpc" \
		"$(awk -v m="$mem" 'BEGIN { printf "%.1f", m / 1048576 }')" "$tcb" "$tcc" "$kpc" "$s1" "$s2"
	[ -n "$base_line" ] && printf '%s\n' "$base_line"
	[ -n "$tsv" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$classes" "$lm" "$rm_" "$bpc" "$tcb" "$tcc" "$kpc" >>"$tsv"
done
echo "# reload1: one leaf's rate changed, then changed back (both directions counted)"
echo "# B/class: every pinned map and the program, bytes_memlock / classes (capacity is 2x the classes)"
