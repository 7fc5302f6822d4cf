#!/usr/bin/env bash
# Bash completion (`htbctl help --bash`, generated from the command table):
# the script is valid bash, completes commands, each command's keywords,
# keyword values (sort, hysteresis, --metrics-classes), devices and files,
# and follows the table (every command of `htbctl help` is offered). Needs
# no privileges; tests/net/show.sh completes class ids of a loaded device.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
HTBCTL=${HTBCTL:-$top/${OUTPUT:-build}/htbctl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ! -x "$HTBCTL" ]; then
	echo "FAIL completion: no htbctl binary at $HTBCTL (build it or set HTBCTL)"
	exit 1
fi
pass() { echo "PASS completion:$1"; }
fail() { echo "FAIL completion:$1: $2"; }

"$HTBCTL" help --bash > "$tmp/c.bash"
# completes LINE -> the words offered, sorted, on one line
completes() {
	bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; COMPREPLY=(); _htbctl
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"' _ "$tmp/c.bash" "$1"
}
expect() {	# name line words
	local got
	got=$(completes "$2")
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1" "'$2' offered '$got', wanted '$3'"; fi
}

if bash -n "$tmp/c.bash" && grep -q '^complete -F _htbctl htbctl$' "$tmp/c.bash"; then
	pass valid_bash
else
	fail valid_bash "$(bash -n "$tmp/c.bash" 2>&1 | head -1)"
fi
cmds=$("$HTBCTL" help | awk '/^  htbctl / { print $2 }' | sort | tr '\n' ' ' | sed 's/ $//')
got=$(completes "htbctl " | tr ' ' '\n' | grep -v '^-' | grep -v '^help$' | tr '\n' ' ' | sed 's/ $//')
if [ -n "$cmds" ] && [ "$got" = "$cmds" ]; then pass every_command; else fail every_command "'$got' against help's '$cmds'"; fi
expect commands_by_prefix "htbctl s" "set show simulate"
expect show_keywords "htbctl show " "class dev interval n sort"
expect load_keywords "htbctl load dev x " "--no-qdisc config dev"
expect sort_values "htbctl show dev lo sort " "borrowed delay drops rate"
expect hysteresis_values "htbctl set dev lo hysteresis " "off on"
expect metrics_classes "htbctl daemon dev lo config f --metrics-classes " "all inner top:"
expect devices "htbctl show dev l" "lo"
mkdir -p "$tmp/d" && touch "$tmp/d/tree.ini"
expect files "htbctl check config $tmp/d/tr" "$tmp/d/tree.ini"
expect help_topics "htbctl help --" "--bash --man"
