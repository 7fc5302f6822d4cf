# The case runner of the shell tiers (cli, net, vm). A test file holds its
# cases, shell functions named test_NAME, and sources this file as its
# last line:
#     . "$(dirname "$0")/../lib/runner.sh"
# Then `bash tests/TIER/FILE.sh [NAME...]` runs every case in the order
# of the file (cases defined by one eval in a loop, in the order of their
# names), or only the cases named; tests/run.sh TIER FILE:NAME does the
# same.
# Each case runs in its own subshell, on its own:
#   - a fresh veth pair between two namespaces (tests/lib/netns.sh, prefix
#     ht: SND_IF, in_snd, RCV_IP4 ...; fresh_topo N for N TX queues);
#   - a fresh directory $tmp (mode 755: a non-root htbctl reads its files);
#   - the file's hooks, when it defines them: setup (after the pair is up)
#     and teardown (before it goes; the runner then removes the pair, what
#     runs in its namespaces and the pins of its device). setup_file runs
#     once before the first case and leaves what the cases share (a built
#     helper) in $file_tmp.
# A file that sets RUN_TOPO=none before sourcing this (the cli tier: no
# network, no privileges) gets no pair and no pins to remove, and runs as
# any user; what its cases need is what its hook `needs` prints, commands
# or paths (default: $HTBCTL), and a missing one is one FAIL line naming
# it (the net and vm files skip without root, bpffs or htbctl).
# A case ends with `fail WHY` or `skip WHY`, or passes by returning 0 (a
# case that returns non-zero otherwise fails); `note TEXT` adds TEXT to
# its PASS line. Each case prints exactly one line, which tests/run.sh
# counts: "PASS FILE:NAME", "FAIL FILE:NAME: why" (then the case's output,
# indented) or "SKIP FILE:NAME: why". Exit status 1 if a case failed.
#
# Under the VM's emulation every process started costs about 0.3 s, so the
# runner's own work per case is done with shell builtins where it can.
. "${BASH_SOURCE[0]%/*}/common.sh"
RUN_TOPO=${RUN_TOPO:-veth}
if [ "$RUN_TOPO" != none ]; then
	. tests/lib/netns.sh
	. tests/lib/htbctl.sh
fi

RUN_FILE=${0##*/}
RUN_FILE=${RUN_FILE%.sh}
# the pair's prefix: two runs at once (two worktrees, two people) each
# set their own, e.g. RUN_PAIR=hb (at most 12 characters: veth names)
RUN_PAIR=${RUN_PAIR:-ht}

# fail WHY / skip WHY end the case (also from a function it calls); the
# first reason given is the one reported. From inside $(...) only that
# subshell ends, but the case is failed all the same.
fail() { printf '%s\n' "$*" >> "$tmp/.fail"; exit 1; }
skip() { printf '%s\n' "$*" >> "$tmp/.skip"; exit 0; }
note() { printf '%s\n' "$*" >> "$tmp/.note"; }

# One line of a file, for a reason: "a b c", at most 300 characters.
oneline() { tr '\n' ' ' < "$1" | cut -c1-300; }

# ok CMD...: CMD succeeds. Its output stays in $tmp/out.
ok() {
	local rc=0
	"$@" > "$tmp/out" 2>&1 || rc=$?
	[ $rc = 0 ] || fail "exit $rc: $(oneline "$tmp/out")"
}

# refused PATTERN CMD...: CMD exits 1 and says PATTERN.
refused() {
	local pat=$1 rc=0
	shift
	"$@" > "$tmp/out" 2>&1 || rc=$?
	[ $rc = 1 ] && grep -q -- "$pat" "$tmp/out" ||
		fail "exit $rc, wanted 1 and '$pat': $(oneline "$tmp/out")"
}

# refused_with RC PATTERN CMD...: CMD exits RC with one line saying PATTERN.
refused_with() {
	local want=$1 pat=$2 rc=0
	shift 2
	"$@" > "$tmp/out" 2>&1 < /dev/null || rc=$?
	[ $rc = "$want" ] && grep -q -- "$pat" "$tmp/out" && [ "$(wc -l < "$tmp/out")" = 1 ] ||
		fail "exit $rc, wanted $want and one line '$pat': $(oneline "$tmp/out")"
}

# fresh_topo TXQUEUES: the case's veth pair again, with that many queues.
fresh_topo() {
	topo_down
	topo_up $RUN_PAIR "$1" || fail "no veth pair with $1 TX queues"
}

defined() { declare -F "$1" > /dev/null; }

# The body of every case's subshell: the pair, the hooks, the case.
case_body() {	# function
	trap case_end EXIT
	[ "$RUN_TOPO" = none ] || topo_up $RUN_PAIR || fail "no veth pair (ip netns, veth)"
	if defined setup; then setup; fi
	"$1"
}
case_end() {
	local p pairs=${TOPO_ALL-}	# unset without a network (RUN_TOPO=none)
	if defined teardown; then teardown; fi
	[ "$RUN_TOPO" != none ] || return 0
	topo_down
	for p in $pairs; do
		[ ! -e "/sys/fs/bpf/htbctl/$p-s" ] || rm -rf "/sys/fs/bpf/htbctl/$p-s"
	done
	# under htbctl's lock, and only if nobody holds it: a load of another
	# run (RUN_PAIR) that has just made the empty directory holds it, and
	# a bare rmdir took the directory from under it ("pinning
	# /sys/fs/bpf/htbctl/IFACE/meta: No such file or directory")
	[ ! -d /sys/fs/bpf/htbctl ] || flock -n /sys/fs/bpf/htbctl rmdir /sys/fs/bpf/htbctl 2> /dev/null
	return 0
}

# attempt NAME FUNCTION...: runs FUNCTION in a subshell with a fresh
# $tmp; sets outcome (PASS, FAIL or SKIP), why (the reason, or the notes)
# and log (the subshell's output).
attempt() {
	local rc=0 notes=()
	tmp=$file_tmp/${1//\//+}	# a case name may hold '/': one directory
	shift
	mkdir -m 755 "$tmp" || exit 1
	( "$@" ) > "$tmp/.log" 2>&1 < /dev/null || rc=$?
	log=$(< "$tmp/.log")
	if [ -s "$tmp/.fail" ]; then
		outcome=FAIL
		read -r why < "$tmp/.fail"
	elif [ $rc != 0 ]; then
		outcome=FAIL why="exit $rc without saying why"
	elif [ -s "$tmp/.skip" ]; then
		outcome=SKIP
		read -r why < "$tmp/.skip"
	else
		[ ! -e "$tmp/.note" ] || mapfile -t notes < "$tmp/.note"
		outcome=PASS why=${notes[*]}
	fi
	rm -rf "$tmp"
}

# The cases of this file, in the order they are written.
all_cases() {
	local f
	shopt -s extdebug
	for f in $(compgen -A function test_); do
		declare -F "$f"
	done | sort -k2,2n | while read -r f _; do echo "${f#test_}"; done
	shopt -u extdebug
}

run_case() {	# name
	local name=$RUN_FILE:$1
	if ! defined "test_$1"; then
		echo "FAIL $name: no such case (cases: $(echo $(all_cases)))"
		return 1
	fi
	attempt "case.$1" case_body "test_$1"
	case $outcome in
	PASS) echo "PASS $name${why:+ ($why)}" ;;
	SKIP) echo "SKIP $name: $why" ;;
	FAIL)
		echo "FAIL $name: $why"
		[ -z "$log" ] || sed 's/^/    /' <<< "$log" | tail -n 20
		return 1 ;;
	esac
}

# A file without a network (RUN_TOPO=none) has nothing to skip for: what
# its cases need is built or installed, or the file fails, so a tier never
# passes with a binary missing.
have_needs() {
	local n
	if defined needs; then set -- $(needs); else set -- "$HTBCTL"; fi
	for n; do
		command -v "$n" > /dev/null && continue
		case $n in
		*/*) echo "FAIL $RUN_FILE: no $n (make builds it; or set HTBCTL, OUTPUT)" ;;
		*) echo "FAIL $RUN_FILE: no command $n (install it)" ;;
		esac
		exit 1
	done
}

# The file: what every case needs, setup_file, then the cases.
run_file() {
	local c failed=0
	if [ "$RUN_TOPO" = none ]; then
		have_needs
	else
		if [ "$EUID" != 0 ]; then
			echo "SKIP $RUN_FILE: needs root (namespaces, BPF)"
			exit 0
		fi
		[ -x "$HTBCTL" ] || { echo "SKIP $RUN_FILE: $HTBCTL not built"; exit 0; }
		need_bpffs || { echo "SKIP $RUN_FILE: no bpffs at /sys/fs/bpf"; exit 0; }
	fi
	file_tmp=$(mktemp -d) && chmod 755 "$file_tmp" || exit 1
	trap 'rm -rf "$file_tmp"' EXIT
	if defined setup_file; then
		attempt setup setup_file
		case $outcome in
		SKIP) echo "SKIP $RUN_FILE: $why"; exit 0 ;;
		FAIL) echo "FAIL $RUN_FILE: setup_file: $why"; exit 1 ;;
		esac
	fi
	[ $# -gt 0 ] || set -- $(all_cases)
	for c; do
		run_case "$c" || failed=1
	done
	exit $failed
}

run_file "$@"
