#!/usr/bin/env bash
# htbctl import (root): the corpus of tc scripts this kernel can run (sch_htb
# and cls_u32 are built in; fw, flower, police and fq_codel are not: the VM's
# scenario 11 imports those), each compared with tc field by field
# (tests/lib/import.sh); a live device read as the script gives; a big
# LibreQoS-style tree; refusals with one line, changing nothing.
. tests/lib/import.sh

test_corpus_seed003() { import_check seed003 eth0 > "$tmp/r" || fail "$(oneline "$tmp/r")"; note "$(cat "$tmp/r")"; }
test_corpus_libreqos() { import_check libreqos wan0 > "$tmp/r" || fail "$(oneline "$tmp/r")"; note "$(cat "$tmp/r")"; }
test_corpus_u32() { import_check u32 lan0 > "$tmp/r" || fail "$(oneline "$tmp/r")"; note "$(cat "$tmp/r")"; }
test_corpus_order() { import_check order ord0 > "$tmp/r" || fail "$(oneline "$tmp/r")"; note "$(cat "$tmp/r")"; }

# seed 003's commands on the case's own device
seed_on_snd() {
	sed -n "s/^[[:space:]]*tc[[:space:]]\+//; s/dev eth0/dev $SND_IF/; /^$/d; /\\\\$/{N; s/\\\\\n//}; p" \
		tests/import/seed003.tc | sed -n '/^\(qdisc\|class\|filter\) add/p' > "$tmp/batch"
	in_snd tc -batch "$tmp/batch" > /dev/null 2>&1 || fail "tc could not apply seed 003's commands"
}

test_live_device_as_script() {
	seed_on_snd
	in_snd tc -d class show dev "$SND_IF" | grep "^class" > "$tmp/before"
	h import dev "$SND_IF" -o "$tmp/live.ini" 2> "$tmp/err" || fail "import dev: $(oneline "$tmp/err")"
	[ ! -s "$tmp/err" ] || fail "warnings: $(oneline "$tmp/err")"
	"$HTBCTL" import script tests/import/seed003.tc -o "$tmp/script.ini" 2> "$tmp/err" ||
		fail "import script: $(oneline "$tmp/err")"
	diff <(sed 1d "$tmp/live.ini") <(sed 1d "$tmp/script.ini") > "$tmp/d" ||
		fail "the live import differs from the script's: $(oneline "$tmp/d")"
	in_snd tc -d class show dev "$SND_IF" | grep "^class" > "$tmp/after"
	cmp -s "$tmp/before" "$tmp/after" || fail "import changed the device's classes"
	# the imported file loads on the same device once HTB is gone
	in_snd tc qdisc del dev "$SND_IF" root
	h load dev "$SND_IF" config "$tmp/live.ini" --no-qdisc > /dev/null 2> "$tmp/err" ||
		fail "the import does not load: $(oneline "$tmp/err")"
	[ "$(h -j show dev "$SND_IF" interval 0 | jq '[.classes[] | select(.class == "1:11")][0].rate')" = 62500000 ] ||
		fail "1:11's rate after load is not 500mbit"
}

test_script_touches_only_its_namespace() {
	local before after
	before=$(ip -o link show; ip netns list; tc qdisc show)
	"$HTBCTL" import script tests/import/libreqos.tc > /dev/null 2>&1 || fail "import failed"
	after=$(ip -o link show; ip netns list; tc qdisc show)
	[ "$before" = "$after" ] || fail "the machine's links, namespaces or qdiscs changed"
}

# 10,000 circuits under 20 sites, one /32 each in a 256-bucket u32 table:
# every circuit's match converted, no warning
test_libreqos_10000_circuits() {
	local c t0 t1
	{
		echo "tc qdisc add dev wan0 root handle 1: htb default 2"
		echo "tc class add dev wan0 parent 1: classid 1:1 htb rate 10gbit"
		echo "tc class add dev wan0 parent 1:1 classid 1:2 htb rate 10mbit ceil 10gbit"
		for c in $(seq 0 19); do
			printf 'tc class add dev wan0 parent 1:1 classid 1:%x htb rate 400mbit ceil 1gbit\n' $((0x10 + c))
		done
		echo "tc filter add dev wan0 parent 1: prio 1 handle 2: protocol ip u32 divisor 256"
		echo "tc filter add dev wan0 parent 1: prio 1 protocol ip u32 ht 800:: match ip dst 198.18.0.0/15 hashkey mask 0x000000ff at 16 link 2:"
		awk 'BEGIN { for (c = 0; c < 10000; c++) {
			printf "tc class add dev wan0 parent 1:%x classid 1:%x htb rate 10mbit ceil 100mbit\n", 16 + c % 20, 256 + c
			printf "tc filter add dev wan0 parent 1: prio 1 protocol ip u32 ht 2:%x: match ip dst 198.18.%d.%d/32 flowid 1:%x\n", c % 256, int(c / 256), c % 256, 256 + c
		} }'
	} > "$tmp/big.tc"
	t0=$(date +%s%N)
	"$HTBCTL" import script "$tmp/big.tc" -o "$tmp/big.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	t1=$(date +%s%N)
	[ ! -s "$tmp/err" ] || fail "warnings: $(head -c 300 "$tmp/err")"
	[ "$(grep -c '^match = dst 198.18.' "$tmp/big.ini")" = 10000 ] || fail "not every circuit's match"
	grep -q '^match = dst 198.18.39.15/32$' "$tmp/big.ini" || fail "circuit 9999's match is missing"
	"$HTBCTL" check config "$tmp/big.ini" > /dev/null 2>&1 || fail "check refused the import"
	note "10,022 classes, script applied and imported in $(( (t1 - t0) / 1000000 )) ms"
}

test_refusals() {
	local dev
	refused_with 1 "device nosuchdev" "$HTBCTL" import dev nosuchdev
	# the case's device has no HTB (noqueue): one line, exit 1
	refused_with 1 "not htb: nothing to import" h import dev "$SND_IF"
	in_snd tc qdisc add dev "$SND_IF" root handle 1: htb
	refused_with 1 "no classes: nothing to import" h import dev "$SND_IF"
	refused_with 2 "needs dev IFACE, script FILE or libreqos CSV JSON" "$HTBCTL" import
	refused_with 2 "-o needs a file" "$HTBCTL" import dev "$SND_IF" -o
	refused_with 1 "nosuch.tc: No such file" "$HTBCTL" import script "$tmp/nosuch.tc"
	# a device or a FIFO: one line at once (7112e5f read /dev/zero until
	# memory ran out, and blocked on a FIFO)
	refused_with 1 "/dev/zero: a character device, not a regular file" timeout 10 "$HTBCTL" import script /dev/zero
	mkfifo "$tmp/fifo.tc"
	refused_with 1 "fifo.tc: a FIFO or pipe, not a regular file" timeout 10 "$HTBCTL" import script "$tmp/fifo.tc"
	# a regular file whose size says 0 and whose bytes do not end: the cap
	# counts the bytes read (52b6d7f grew past 7 GB in 60 s)
	refused_with 1 "pagemap: over 64 MiB" timeout 20 "$HTBCTL" import script /proc/self/pagemap
	printf 'tc qdisc add dev eth0 root handle 1: htb\ntc class add dev eth0 parent 1: classid 1:1 htb rate 0\n' > "$tmp/bad.tc"
	refused_with 1 "bad.tc:2: tc refused the command" "$HTBCTL" import script "$tmp/bad.tc"
	# a refused command after 2,000 commands whose kernel warnings (quantum
	# too big) fill more than 64 KB of tc's stderr, and warnings after it
	awk 'BEGIN { print "tc qdisc add dev eth0 root handle 1: htb r2q 1"
		print "tc class add dev eth0 parent 1: classid 1:1 htb rate 1gbit"
		for (i = 0; i < 2000; i++)
			printf "tc class add dev eth0 parent 1:1 classid 1:%x htb rate 100mbit\n", 16 + i
		print "tc class add dev eth0 parent 1:1 classid 1:ffff htb rate 0"
		for (i = 0; i < 10; i++)
			printf "tc class add dev eth0 parent 1:1 classid 1:%x htb rate 100mbit\n", 4096 + i }' > "$tmp/late.tc"
	refused_with 1 "late.tc:2003: tc refused the command" "$HTBCTL" import script "$tmp/late.tc"
	printf 'tc qdisc add dev eth0 root handle 1: htb\ntc class add dev $DEV parent 1: classid 1:1 htb rate 1mbit\n' > "$tmp/var.tc"
	refused_with 1 "var.tc:2: shell expansion is not applied" "$HTBCTL" import script "$tmp/var.tc"
	printf 'tc qdisc add dev a0 root handle 1: htb\ntc qdisc add dev b0 root handle 1: htb\n' > "$tmp/two.tc"
	refused_with 1 "shapes 2 devices: say which with dev NAME" "$HTBCTL" import script "$tmp/two.tc"
	refused_with 1 "no tc command names device c0" "$HTBCTL" import script "$tmp/two.tc" dev c0
	printf 'tc qdisc add dev eth0 root handle 1: htb\ntc filter add dev eth0 parent 1: bpf obj x.o sec cls\n' > "$tmp/bpf.tc"
	refused_with 1 "bpf.tc:2: a bpf filter or action is not imported" "$HTBCTL" import script "$tmp/bpf.tc"
	# not root: the scratch namespace needs CAP_SYS_ADMIN
	refused_with 1 "needs root" nobody "$HTBCTL" import script "$PWD/tests/import/seed003.tc"
	# -o keeps the old file when the import fails
	echo old > "$tmp/out.ini"
	"$HTBCTL" import dev nosuchdev -o "$tmp/out.ini" 2> /dev/null && fail "import of nosuchdev succeeded"
	[ "$(cat "$tmp/out.ini")" = old ] || fail "a failed import replaced -o's file"
}

test_script_forms() {
	# a tc -batch file, sudo, continuation lines, a skipped shell line, and a
	# delete that fails on the fresh device
	cat > "$tmp/forms.tc" <<-'EOF'
	#!/bin/sh
	set -e
	sudo tc qdisc del dev eth9 root
	qdisc add dev eth9 root handle 1: htb default 20
	/sbin/tc class add dev eth9 parent 1: classid 1:1 \
		htb rate 10mbit
	tc class add dev eth9 parent 1:1 classid 1:20 htb rate 2mbit ceil 10mbit prio 2
	EOF
	"$HTBCTL" import script "$tmp/forms.tc" -o "$tmp/f.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	[ "$(grep -c 'skipped: not a tc command' "$tmp/err")" = 1 ] || fail "warnings: $(oneline "$tmp/err")"
	grep -q "forms.tc:2: skipped: not a tc command: 'set -e'" "$tmp/err" || fail "no FILE:LINE for the shell line: $(oneline "$tmp/err")"
	[ "$("$HTBCTL" -j check config "$tmp/f.ini" | jq -c '[.device.default, (.classes[] | [.classid, .rate, .prio])]')" = \
	  '["1:20",["1:1",1250000,0],["1:20",250000,2]]' ] || fail "tree: $(cat "$tmp/f.ini" | tr '\n' ' ')"
}

# tc and ip are the system's whatever the caller's PATH, and run without
# the caller's environment: a tc earlier in PATH is not run.
test_script_tools_not_from_path() {
	mkdir -p "$tmp/bin"
	printf '#!/bin/sh\ntouch %s/ran.$(basename "$0")\nexit 1\n' "$tmp" > "$tmp/bin/tc"
	cp "$tmp/bin/tc" "$tmp/bin/ip"
	chmod +x "$tmp/bin/tc" "$tmp/bin/ip"
	PATH="$tmp/bin:$PATH" TC_LIB_DIR="$tmp/bin" "$HTBCTL" import script tests/import/seed003.tc -o "$tmp/s.ini" 2> "$tmp/err" ||
		fail "import: $(oneline "$tmp/err")"
	[ ! -e "$tmp/ran.tc" ] && [ ! -e "$tmp/ran.ip" ] || fail "ran the tools in PATH: $(ls "$tmp")"
	"$HTBCTL" check config "$tmp/s.ini" > /dev/null 2>&1 || fail "check"
}

# The kernel's tc-testing u32 cases: a table made by hand (divisor 1)
# that no filter links to is never consulted by HTB, so its node is no
# match (52b6d7f made it one; with traffic, HTB sent it 0 packets); HTB's
# direct_qlen is a comment.
test_u32_unlinked_table_and_direct_qlen() {
	printf '%s\n' 'tc qdisc add dev eth0 root handle 1: htb default 20 direct_qlen 64' \
		'tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit' \
		'tc class add dev eth0 parent 1:1 classid 1:10 htb rate 2mbit' \
		'tc class add dev eth0 parent 1:1 classid 1:20 htb rate 2mbit' \
		'tc filter add dev eth0 parent 1: prio 1 handle 43: protocol ip u32 divisor 1' \
		'tc filter add dev eth0 parent 1: prio 1 protocol ip u32 ht 43: match ip dst 198.18.0.1/32 flowid 1:10' \
		'tc filter add dev eth0 parent 1: prio 1 protocol ip u32 match ip dst 198.18.0.2/32 flowid 1:20' > "$tmp/u.tc"
	"$HTBCTL" import script "$tmp/u.tc" -o "$tmp/u.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	grep -q "warning: import: u32 table 43: is linked from no filter: never consulted" "$tmp/err" || fail "no warning: $(oneline "$tmp/err")"
	[ "$("$HTBCTL" -j check config "$tmp/u.ini" 2> /dev/null | jq -c '[.classes[] | select(.matches | length > 0) | [.classid, .matches[].prefix]]')" = \
	  '[["1:20","198.18.0.2/32"]]' ] || fail "matches: $(grep match "$tmp/u.ini" | tr '\n' ' ')"
	grep -qx '# direct_qlen 64: .*' "$tmp/u.ini" || fail "no direct_qlen comment: $(head -8 "$tmp/u.ini" | tr '\n' ' ')"
}

# A script's name is the user's, written into the config's first
# comment: a name with newlines writes no keys of its own.
test_script_name_writes_no_config() {
	local name
	name=$(printf '%s/x.tc\n[class 1:99]\nparent = 1:1\nrate = 9mbit\nmatch = dst 198.18.0.1\n#' "$tmp")
	printf '%s\n' 'tc qdisc add dev eth9 root handle 1: htb default 20' \
		'tc class add dev eth9 parent 1: classid 1:1 htb rate 10mbit' \
		'tc class add dev eth9 parent 1:1 classid 1:20 htb rate 2mbit ceil 10mbit' > "$name"
	"$HTBCTL" import script "$name" -o "$tmp/n.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	grep -q '^\[class 1:99\]' "$tmp/n.ini" && fail "the name wrote a class: $(head -3 "$tmp/n.ini" | tr '\n' ' ')"
	[ "$(head -1 "$tmp/n.ini" | grep -c 'x.tc\\x0a\[class 1:99\]')" = 1 ] || fail "first line: $(head -1 "$tmp/n.ini")"
	[ "$("$HTBCTL" -j check config "$tmp/n.ini" | jq -c '[.classes[].classid]')" = '["1:1","1:20"]' ] ||
		fail "classes: $("$HTBCTL" -j check config "$tmp/n.ini" | jq -c '[.classes[].classid]')"
}

# Issue 23 B: u32 tables linking to tables through several nodes each.
# 7112e5f walked every path (8 links per table, 7 tables deep: 262,144
# paths, each giving the same matches again; a 43-line script took 21 s):
# now a table is walked once per distinct state, and a match line that
# repeats one before it (a filter given twice) is written once.
test_u32_links_deep_and_wide() {
	local t k t0 t1
	{
		echo "tc qdisc add dev b0 root handle 1: htb default 30"
		echo "tc class add dev b0 parent 1: classid 1:1 htb rate 100mbit"
		for k in 10 20 30; do
			echo "tc class add dev b0 parent 1:1 classid 1:$k htb rate 10mbit ceil 100mbit"
		done
		for t in $(seq 1 7); do echo "tc filter add dev b0 parent 1: prio 1 handle $t: protocol ip u32 divisor 1"; done
		echo "tc filter add dev b0 parent 1: prio 1 protocol ip u32 ht 800:: match u32 0 0 link 1:"
		for t in $(seq 1 6); do for k in $(seq 8); do
			echo "tc filter add dev b0 parent 1: prio 1 protocol ip u32 ht $t:: match u32 0 0 link $((t + 1)):"
		done; done
		echo "tc filter add dev b0 parent 1: prio 1 protocol ip u32 ht 7:: match ip dst 198.18.0.1/32 flowid 1:10"
		echo "tc filter add dev b0 parent 1: prio 1 protocol ip u32 ht 7:: match ip protocol 6 0xff match ip dport 80 0xffff flowid 1:20"
		echo "tc filter add dev b0 parent 1: prio 1 protocol ip u32 ht 7:: match ip dst 198.18.0.1/32 flowid 1:10"
	} > "$tmp/b.tc"
	t0=$(date +%s%N)
	timeout 60 "$HTBCTL" import script "$tmp/b.tc" -o "$tmp/b.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	t1=$(date +%s%N)
	[ $(( (t1 - t0) / 1000000 )) -lt 5000 ] || fail "took $(( (t1 - t0) / 1000000 )) ms"
	"$HTBCTL" check config "$tmp/b.ini" > /dev/null 2>&1 || fail "check refused the import"
	[ "$(config_matches "$tmp/b.ini" | sort | uniq -d | wc -l)" = 0 ] ||
		fail "$(config_matches "$tmp/b.ini" | wc -l) match lines, duplicates among them"
	[ "$(config_matches "$tmp/b.ini" | tr '\n' ';')" = "1:10 dst 198.18.0.1/32;1:20 tcp dport 80;" ] ||
		fail "matches: $(config_matches "$tmp/b.ini" | head -5 | tr '\n' ';')"
	note "imported in $(( (t1 - t0) / 1000000 )) ms"
}

# Issue 23 D: past 4,095 nodes in one u32 bucket the kernel gives every
# further node the id fff (cls_u32.c gen_new_kid()), and 7112e5f kept one
# node per handle: of 5,000 /32 filters in 800: it kept 4,095. Each is a
# node of its own, in the kernel's order.
test_u32_5000_in_one_bucket() {
	{
		echo "tc qdisc add dev d0 root handle 1: htb default 2"
		echo "tc class add dev d0 parent 1: classid 1:1 htb rate 10gbit"
		echo "tc class add dev d0 parent 1:1 classid 1:2 htb rate 10mbit ceil 10gbit"
		awk 'BEGIN { for (c = 0; c < 5000; c++) {
			printf "tc class add dev d0 parent 1:1 classid 1:%x htb rate 1mbit ceil 100mbit\n", 256 + c
			printf "tc filter add dev d0 parent 1: prio 1 protocol ip u32 match ip dst 198.18.%d.%d/32 flowid 1:%x\n", int(c / 256), c % 256, 256 + c
		} }'
	} > "$tmp/d.tc"
	"$HTBCTL" import script "$tmp/d.tc" -o "$tmp/d.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	"$HTBCTL" check config "$tmp/d.ini" > /dev/null 2>&1 || fail "check refused the import"
	[ "$(grep -c '^match = dst 198.18.' "$tmp/d.ini")" = 5000 ] ||
		fail "$(grep -c '^match = dst 198.18.' "$tmp/d.ini") of 5000 matches"
	# the last filter (node id fff like every one past the 4,095th), at its class
	awk '/^\[class 1:1487\]/ { c = 1 } c && /^match/ { print; exit }' "$tmp/d.ini" | grep -qx 'match = dst 198.18.19.135/32' ||
		fail "class 1:1487 lacks the 5,000th filter's match"
}

# Issue 23 F: handles with major ffff. An HTB with handle ffff: is
# refused with one line (7112e5f wrote classes ffff:N, which check
# refuses: majors 1..fffe); a class 1:ffff, a filter to ffff:10 and a leaf
# qdisc with handle ffff: import, and pass check (7112e5f took that leaf
# for the ingress side and dropped it).
test_ffff_handles() {
	printf '%s\n' 'tc qdisc add dev e0 root handle ffff: htb default 10' \
		'tc class add dev e0 parent ffff: classid ffff:1 htb rate 10mbit' \
		'tc class add dev e0 parent ffff:1 classid ffff:10 htb rate 5mbit ceil 10mbit' > "$tmp/f1.tc"
	refused_with 1 "handle is ffff:, which htbctl's class ids do not take" "$HTBCTL" import script "$tmp/f1.tc" -o "$tmp/f1.ini"
	[ ! -e "$tmp/f1.ini" ] || fail "-o was written"
	printf '%s\n' 'tc qdisc add dev e0 root handle 1: htb default 10' \
		'tc class add dev e0 parent 1: classid 1:1 htb rate 10mbit' \
		'tc class add dev e0 parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit' \
		'tc class add dev e0 parent 1:1 classid 1:ffff htb rate 5mbit ceil 10mbit' \
		'tc qdisc add dev e0 parent 1:ffff handle ffff: pfifo limit 10' \
		'tc filter add dev e0 parent 1: protocol ip prio 1 u32 match ip dst 198.18.0.1/32 flowid ffff:10' \
		'tc filter add dev e0 parent 1: protocol ip prio 2 u32 match ip dst 198.18.0.2/32 flowid 1:ffff' > "$tmp/f2.tc"
	"$HTBCTL" import script "$tmp/f2.tc" -o "$tmp/f2.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	"$HTBCTL" check config "$tmp/f2.ini" > /dev/null 2>&1 || fail "check refused the import"
	grep -q "class 1:ffff: leaf qdisc pfifo is not converted" "$tmp/err" || fail "the ffff: leaf: $(oneline "$tmp/err")"
	! grep -q "ingress" "$tmp/err" || fail "a leaf taken for ingress: $(oneline "$tmp/err")"
	grep -q "class ffff:10 is not in the HTB tree" "$tmp/err" || fail "the filter to ffff:10: $(oneline "$tmp/err")"
	[ "$(config_matches "$tmp/f2.ini")" = "1:ffff dst 198.18.0.2/32" ] || fail "matches: $(config_matches "$tmp/f2.ini")"
}

# Issue 23 E: the HTB qdisc's size table (stab) is htbctl's device
# overhead, mpu and linklayer when the classes have none of their own, else
# a warning (7112e5f dropped it without a word).
test_stab() {
	local head='tc qdisc add dev e0 root handle 1: stab overhead 24 linklayer ethernet htb default 10'
	local rest='tc class add dev e0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev e0 parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit'
	printf '%s\n%s\n' "$head" "$rest" > "$tmp/e1.tc"
	printf '%s\n%s\n' "${head/overhead 24 linklayer ethernet/overhead 40 mpu 64 linklayer atm}" "$rest" > "$tmp/e2.tc"
	printf '%s\n%s\n' "$head" "${rest/rate 10mbit/rate 10mbit overhead 8}" > "$tmp/e3.tc"
	for f in e1 e2 e3; do
		"$HTBCTL" import script "$tmp/$f.tc" -o "$tmp/$f.ini" 2> "$tmp/$f.err" || fail "$f: $(oneline "$tmp/$f.err")"
		"$HTBCTL" -j check config "$tmp/$f.ini" 2> /dev/null | jq -c '.device | [.overhead, .mpu, .linklayer]' > "$tmp/$f.dev" ||
			fail "$f: check refused the import"
	done
	[ "$(cat "$tmp/e1.dev")" = '[24,0,"ethernet"]' ] || fail "e1: $(cat "$tmp/e1.dev")"
	[ "$(cat "$tmp/e2.dev")" = '[40,64,"atm"]' ] || fail "e2: $(cat "$tmp/e2.dev")"
	! grep -q stab "$tmp/e1.err" "$tmp/e2.err" || fail "a warning about a converted stab"
	[ "$(cat "$tmp/e3.dev")" = '[8,0,"ethernet"]' ] || fail "e3: $(cat "$tmp/e3.dev")"
	grep -q "warning: import: the HTB qdisc's stab (overhead 24 mpu 0 linklayer ethernet) is not converted" "$tmp/e3.err" ||
		fail "e3: no warning: $(oneline "$tmp/e3.err")"
}

# Issue 23 A: a bpf filter or action is refused by what tc parses (tc's
# words: tabs, quotes; its prefixes: "f" is filter, "e" is exec), with
# its FILE:LINE (7112e5f looked for " bpf ", " obj ", " object-file ": tc
# ran the first three and the last two; it skipped "tc f", "filt", "tc e").
test_script_refuses_bpf_spellings() {
	local v i=0
	while IFS= read -r v; do
		i=$((i + 1))
		printf 'tc qdisc add dev eth0 root handle 1: htb\n%s\n' "$v" > "$tmp/v$i.tc"
		refused_with 1 "v$i.tc:2: \(a bpf filter or action is not imported\|tc exec is not run\)" "$HTBCTL" import script "$tmp/v$i.tc"
	done <<-'EOF'
	tc filter add dev eth0 parent 1:	bpf	obj	/nonexistent.o sec cls
	tc filter add dev eth0 parent 1: "bpf" "obj" /nonexistent.o sec cls
	tc filter add dev eth0 parent 1: 'bpf' object-f /nonexistent.o
	tc f add dev eth0 parent 1: bpf da obj /nonexistent.o
	filt add dev eth0 parent 1: bpf bytecode '1,6 0 0 0'
	tc filter add dev eth0 parent 1: u32 match u32 0 0 action "bpf" object-f /nonexistent.o
	tc -s filter add dev eth0 parent 1: u32 match u32 0 0 flowid 1:1 a	bpf	object-file /nonexistent.o
	tc e bpf imp /sys/fs/bpf/x
	EOF
	printf 'tc qdisc add dev eth0 root handle 1: htb\ntc mon\n' > "$tmp/mon.tc"
	refused_with 1 "mon.tc:2: tc monitor is not run" timeout 10 "$HTBCTL" import script "$tmp/mon.tc"
	note "$i spellings refused"
}

# Issue 23 A, defence in depth: whatever reaches tc finds a bpffs of the
# scratch namespace's own, not the machine's. tc loads a filter kind from
# $TC_LIB_DIR/f_KIND.so; this one, as tc loads it, makes a directory and
# pins a map in /sys/fs/bpf (what a bpf object's maps would do) and says
# which bpffs mounts it sees. 7112e5f's tc ran in the machine's mounts:
# both appeared in the machine's bpffs.
test_script_bpffs_isolated() {
	local name=htbctl-iso-$BASHPID
	cat > "$tmp/probe.c" <<-'EOF'
	#include <linux/bpf.h>
	#include <stdint.h>
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	#include <sys/stat.h>
	#include <sys/syscall.h>
	#include <unistd.h>
	__attribute__((constructor)) static void probe(void)
	{
		const char *out = getenv("PROBE_OUT"), *name = getenv("PROBE_NAME");
		char path[256], line[512];
		union bpf_attr a;
		FILE *f, *m;
		int fd;

		if (!out || !name || !(f = fopen(out, "w")))
			return;
		snprintf(path, sizeof(path), "/sys/fs/bpf/%s", name);
		fprintf(f, "mkdir %d\n", mkdir(path, 0700));
		memset(&a, 0, sizeof(a));
		a.map_type = BPF_MAP_TYPE_ARRAY;
		a.key_size = a.value_size = 4;
		a.max_entries = 1;
		fd = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &a, sizeof(a));
		snprintf(path, sizeof(path), "/sys/fs/bpf/%s-map", name);
		memset(&a, 0, sizeof(a));
		a.pathname = (uint64_t)(uintptr_t)path;
		a.bpf_fd = (uint32_t)fd;
		fprintf(f, "pin %d\n", fd < 0 ? -2 : (int)syscall(__NR_bpf, BPF_OBJ_PIN, &a, sizeof(a)));
		if ((m = fopen("/proc/self/mounts", "r"))) {
			while (fgets(line, sizeof(line), m))
				if (strstr(line, " bpf "))
					fprintf(f, "mount %s", line);
			fclose(m);
		}
		fclose(f);
	}
	EOF
	cc -shared -fPIC -o "$tmp/f_htbprobe.so" "$tmp/probe.c" || fail "cannot build the probe"
	printf 'tc qdisc add dev eth0 root handle 1: htb\ntc filter add dev eth0 parent 1: htbprobe\n' > "$tmp/p.tc"
	# htbctl runs tc without the caller's environment, so TC_LIB_DIR
	# loads the probe only with the test build's HTBCTL_TEST_TOOL_ENV
	TC_LIB_DIR=$tmp PROBE_OUT=$tmp/report PROBE_NAME=$name \
		"$HTBCTL" import script "$tmp/p.tc" > /dev/null 2> "$tmp/err"
	[ ! -e "$tmp/report" ] || fail "TC_LIB_DIR reached the release build's tc: $(oneline "$tmp/report")"
	HTBCTL_TEST_TOOL_ENV=1 TC_LIB_DIR=$tmp PROBE_OUT=$tmp/report PROBE_NAME=$name \
		"$HTBCTL_TEST" import script "$tmp/p.tc" > /dev/null 2> "$tmp/err"
	local leaked=""
	[ -e "/sys/fs/bpf/$name" ] && { leaked=" a directory"; rmdir "/sys/fs/bpf/$name"; }
	[ -e "/sys/fs/bpf/$name-map" ] && { leaked="$leaked a pinned map"; rm -f "/sys/fs/bpf/$name-map"; }
	[ -s "$tmp/report" ] || fail "tc never loaded the probe: $(oneline "$tmp/err")"
	[ -z "$leaked" ] || fail "the script's tc made$leaked in the machine's /sys/fs/bpf"
	grep -q "^mkdir 0$" "$tmp/report" && grep -q "^pin 0$" "$tmp/report" ||
		fail "the probe could not use the scratch bpffs: $(oneline "$tmp/report")"
	[ "$(grep -c '^mount ' "$tmp/report")" = 1 ] && grep -q '^mount bpf /sys/fs/bpf bpf' "$tmp/report" ||
		fail "tc sees other bpffs mounts: $(oneline "$tmp/report")"
	grep -q "p.tc:2: tc refused the command" "$tmp/err" || fail "the unknown kind was not refused: $(oneline "$tmp/err")"
}

# Issue 23 C: tc -batch exits mid-script on some lines (makeargs on an
# open quote or over 511 words, a parser's exit on an incomplete command):
# refused with that line, and -o is not written (7112e5f kept the
# truncated tree and exited 0, or said "it was killed").
test_script_tc_stops() {
	local head='tc qdisc add dev eth0 root handle 1: htb default 10
tc class add dev eth0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit'
	local tail='tc class add dev eth0 parent 1:1 classid 1:30 htb rate 5mbit ceil 10mbit'
	printf '%s\n%s\n%s\n' "$head" 'tc class add dev eth0 parent 1:1 classid 1:20 htb rate 5mbit "prio 1' "$tail" > "$tmp/quote.tc"
	printf '%s\n%s\n%s\n' "$head" 'tc class add dev eth0 parent 1:1 classid 1:20 htb rate' "$tail" > "$tmp/incomplete.tc"
	{ echo "$head"; printf 'tc class add dev eth0 parent 1:1 classid 1:20 htb rate 5mbit'
	  for i in $(seq 600); do printf ' prio 1'; done; echo; echo "$tail"; } > "$tmp/long.tc"
	for f in quote incomplete long; do
		refused_with 1 "$f.tc:4: " "$HTBCTL" import script "$tmp/$f.tc" -o "$tmp/$f.ini"
		[ ! -e "$tmp/$f.ini" ] || fail "$f.tc: -o was written"
	done
	refused_with 1 "incomplete.tc:4: tc stopped at this command" "$HTBCTL" import script "$tmp/incomplete.tc"
}

# Issue 23 G: any number of devices up to 1024 (7112e5f made a veth for the
# first 8 only: the 9th's first command failed, "Cannot find device"),
# and one line naming the limit past it.
test_script_many_devices() {
	local i
	for i in $(seq 0 11); do
		echo "tc qdisc add dev g$i root handle 1: htb default 10"
		echo "tc class add dev g$i parent 1: classid 1:10 htb rate $((i + 1))mbit"
	done > "$tmp/g.tc"
	"$HTBCTL" import script "$tmp/g.tc" dev g11 -o "$tmp/g.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	"$HTBCTL" check config "$tmp/g.ini" > /dev/null 2>&1 || fail "check refused the import"
	grep -q '^rate = 12mbit$' "$tmp/g.ini" || fail "not g11's tree: $(oneline "$tmp/g.ini")"
	awk 'BEGIN { for (i = 0; i <= 1024; i++) printf "tc qdisc add dev m%d root handle 1: htb\n", i }' > "$tmp/m.tc"
	refused_with 1 "m.tc:1025: device m1024 is more than 1024 devices" "$HTBCTL" import script "$tmp/m.tc" dev m0
}

. "$(dirname "$0")/../lib/runner.sh"
