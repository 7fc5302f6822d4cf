#!/usr/bin/env bash
# htbctl built with UBSan (-fno-sanitize-recover: undefined behaviour
# aborts) on the paths where it once had some: an import of an HTB tree
# without filters (52b6d7f sorted a null array of u32 nodes), a load and
# a reload of a config without matches (52b6d7f copied an empty kind's
# entries from a null array into the shadow). The build is this file's
# own (setup_file), in its temporary directory.

setup_file() {
	make -s OUTPUT="$file_tmp/ub" CFLAGS="-O1 -g -fsanitize=undefined -fno-sanitize-recover=all" \
		"$file_tmp/ub/htbctl" > "$file_tmp/make.log" 2>&1 ||
		fail "the UBSan build failed: $(tail -3 "$file_tmp/make.log" | tr '\n' ' ')"
}
ub() { in_snd "$file_tmp/ub/htbctl" "$@"; }

test_import_without_filters() {
	printf '%s\n' 'tc qdisc add dev eth0 root handle 1: htb default 20' \
		'tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit' \
		'tc class add dev eth0 parent 1:1 classid 1:20 htb rate 2mbit ceil 10mbit' > "$tmp/n.tc"
	"$file_tmp/ub/htbctl" import script "$tmp/n.tc" -o "$tmp/n.ini" > "$tmp/out" 2>&1 ||
		fail "import: $(oneline "$tmp/out")"
	grep -q "runtime error" "$tmp/out" && fail "UBSan: $(oneline "$tmp/out")"
	return 0
}

test_load_and_reload_without_matches() {
	{ ini device default=1:30; ini 'class 1:1' rate=100mbit
	  ini 'class 1:30' parent=1:1 rate=1mbit; } > "$tmp/a.ini"
	{ ini device default=1:30; ini 'class 1:1' rate=100mbit
	  ini 'class 1:30' parent=1:1 rate=2mbit; } > "$tmp/b.ini"
	ub load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > "$tmp/out" 2>&1 || fail "load: $(oneline "$tmp/out")"
	ub reload dev "$SND_IF" config "$tmp/b.ini" >> "$tmp/out" 2>&1 || fail "reload: $(oneline "$tmp/out")"
	ub unload dev "$SND_IF" >> "$tmp/out" 2>&1 || fail "unload: $(oneline "$tmp/out")"
	grep -q "runtime error" "$tmp/out" && fail "UBSan: $(oneline "$tmp/out")"
	return 0
}

. "$(dirname "$0")/../lib/runner.sh"
