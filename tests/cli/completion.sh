#!/usr/bin/env bash
# Bash completion (`htbctl help --bash`, generated from the command table):
# the script is valid bash, completes commands, each command's keywords,
# keyword values (sort, hysteresis, --metrics-classes), devices and files,
# and follows the table (every command of `htbctl help` is offered). Needs
# no privileges; tests/net/show.sh completes class ids of a loaded device.
RUN_TOPO=none

setup_file() { "$HTBCTL" help --bash > "$file_tmp/c.bash" || fail "help --bash failed"; }

# completes LINE -> the words offered, sorted, on one line
completes() {
	bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; COMPREPLY=(); _htbctl
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"' _ "$file_tmp/c.bash" "$1"
}
offers() {	# line words
	local got
	got=$(completes "$1")
	[ "$got" = "$2" ] || fail "'$1' offered '$got', wanted '$2'"
}

test_valid_bash() {
	bash -n "$file_tmp/c.bash" > "$tmp/out" 2>&1 || fail "$(head -1 "$tmp/out")"
	grep -q '^complete -F _htbctl htbctl$' "$file_tmp/c.bash" || fail "no 'complete -F _htbctl htbctl'"
}
test_every_command() {
	local cmds got
	cmds=$("$HTBCTL" help | awk '/^  htbctl / { print $2 }' | sort | tr '\n' ' ' | sed 's/ $//')
	got=$(completes "htbctl " | tr ' ' '\n' | grep -v '^-' | grep -v '^help$' | tr '\n' ' ' | sed 's/ $//')
	[ -n "$cmds" ] && [ "$got" = "$cmds" ] || fail "'$got' against help's '$cmds'"
}
test_commands_by_prefix() { offers "htbctl s" "set show simulate"; }
test_show_keywords() { offers "htbctl show " "class dev interval n sort"; }
test_load_keywords() { offers "htbctl load dev x " "--no-qdisc config dev"; }
test_sort_values() { offers "htbctl show dev lo sort " "borrowed delay drops rate"; }
test_hysteresis_values() { offers "htbctl set dev lo hysteresis " "off on"; }
test_metrics_classes() { offers "htbctl daemon dev lo config f --metrics-classes " "all inner top:"; }
test_devices() { offers "htbctl show dev l" "lo"; }
test_files() {
	mkdir "$tmp/d" && touch "$tmp/d/tree.ini"
	offers "htbctl check config $tmp/d/tr" "$tmp/d/tree.ini"
}
test_help_topics() { offers "htbctl help --" "--bash --man"; }

. "$(dirname "$0")/../lib/runner.sh"
