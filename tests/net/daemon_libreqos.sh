#!/usr/bin/env bash
# htbctl daemon ... libreqos CSV JSON (root; --no-qdisc, no sch_fq here):
# the live workflow of LibreQoS operators, whose CRM rewrites
# ShapedDevices.csv every few minutes. The daemon imports both files with
# its config's class ids kept, writes the config and puts it in force:
# a circuit's rate changed, one added, one removed, rows reordered is in
# force with the untouched circuits' classes, counters and tokens kept;
# traffic to every circuit across the switch is counted, packet by packet,
# in its circuit's class (none lost, none elsewhere); a bad file (JSON
# syntax, a column missing, a Min above its Max) keeps the tree in force
# and the config byte for byte, says FILE:LINE in the log, in systemd's
# STATUS= and htbctl_import_ok 0 in /metrics, and the next good file is
# taken; a CRM that writes the CSV and then the JSON gets one import of
# the pair; the systemd drop-in for it passes systemd-analyze verify.

PORT=9141	# /metrics, in the case's own namespace
JSON=network.json	# network.json's path below $tmp

# lq_json [EXTRA_AP]: network.json with AP_A and AP_B (and EXTRA_AP)
lq_json() {
	printf '{\n'
	printf '  "AP_A": {"downloadBandwidthMbps": 1000, "uploadBandwidthMbps": 1000, "type": "AP"},\n'
	printf '  "AP_B": {"downloadBandwidthMbps": 1000, "uploadBandwidthMbps": 1000, "type": "AP"}'
	[ -z "${1:-}" ] || printf ',\n  "%s": {"downloadBandwidthMbps": 500, "uploadBandwidthMbps": 500, "type": "AP"}' "$1"
	printf '\n}\n'
}
# lq_row I MAX [PARENT]: circuit cI at 198.19.0.I, Min 10 Mbit/s (a
# packet of 500 bytes then costs it more than a CPU's batch holds, so its
# counters move with each packet: include/htb/batch.h), Max MAX
lq_row() {
	local p=${3:-AP_$([ $(($1 % 2)) = 1 ] && echo A || echo B)}
	echo "c$1,Circuit $1,d$1,Dev $1,$p,,198.19.0.$1,,10,10,$2,100,"
}
lq_head() {
	echo "Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment"
}
# lq_csv N: circuits 1..N, Max 100
lq_csv() {
	local i
	lq_head
	for ((i = 1; i <= $1; i++)); do lq_row $i 100; done
}
# lq_changed N: circuit 3's Max 50, circuit 2 gone, circuit N+1 new, the
# rows in reverse order
lq_changed() {
	local i
	lq_head
	lq_row $(($1 + 1)) 100
	for ((i = $1; i >= 1; i--)); do
		case $i in
		2) ;;
		3) lq_row 3 50 ;;
		*) lq_row $i 100 ;;
		esac
	done
}
# put FILE: stdin renamed over $tmp/FILE, as CRM integrations write
put() { cat > "$tmp/$1.new" && mv "$tmp/$1.new" "$tmp/$1"; }

# spawn_daemon: the daemon on $tmp/c.ini fed by the pair in $tmp, its
# output in $tmp/log, until the config's first import is in force
dpid= rpid=
spawn_daemon() {
	"$OUT/tests/tools/notifyrecv" "$tmp/notify.sock" 60 > "$tmp/notify" 2>&1 &
	rpid=$!
	wait_for 5 test -S "$tmp/notify.sock" || fail "no notify socket: $(oneline "$tmp/notify")"
	NOTIFY_SOCKET=$tmp/notify.sock nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/c.ini" \
		libreqos "$tmp/ShapedDevices.csv" "$tmp/$JSON" --root-mbps 2000/2000 ${FEED_ARGS:-} \
		--no-qdisc --metrics "127.0.0.1:$PORT" >> "$tmp/log" 2>&1 &
	dpid=$!
	wait_for 10 in_force c1 || fail "the daemon did not load: $(oneline "$tmp/log")"
}
teardown() {
	[ -z "${KEEP_LOG:-}" ] || cp "$tmp/log" "/tmp/lv-$RANDOM.log"
	local p
	for p in $dpid $rpid; do
		{ kill "$p"; wait "$p"; } 2> /dev/null
	done
	return 0
}
alive() { kill -0 "$dpid" 2> /dev/null || fail "the daemon exited: $(oneline "$tmp/log")"; }

# ids FILE: "circuit classid" lines of a config import libreqos wrote
ids() {
	awk '/^# circuit / { k = $0; sub(/.*" \(/, "", k); sub(/\)$/, "", k); next }
	     /^\[class / { c = $2; sub(/\]/, "", c); if (k != "") print k, c; k = "" }' "$1" | sort
}
# id CIRCUIT: its class id in the config now
id() { ids "$tmp/c.ini" | awk -v c="$1" '$1 == c { print $2 }'; }
# in_force CIRCUIT: the config names it and its class is loaded
in_force() {
	local c
	c=$(id "$1" 2> /dev/null)
	[ -n "$c" ] && h -j show dev "$SND_IF" interval 0 2> /dev/null |
		jq -e --arg c "$c" '.classes[] | select(.class == $c)' > /dev/null 2>&1
}
# state FILE: "class packets bytes drops tokens ctokens" of every class
state() {
	h -j show dev "$SND_IF" interval 0 | jq -r '.classes[] |
		"\(.class) \(.packets) \(.bytes) \(.drops) \(.tokens) \(.ctokens)"' | sort > "$1"
}
ceil_of() {
	h -j show dev "$SND_IF" interval 0 2> /dev/null |
		jq -r --arg c "$(id "$1")" '.classes[] | select(.class == $c) | .ceil'
}
ceil_is_mbit() { [ "$(ceil_of "$1")" = $(($2 * 125000)) ]; }
# scrape: /metrics into $tmp/m
scrape() { in_snd curl -sf "http://127.0.0.1:$PORT/metrics" > "$tmp/m"; }
metric() { scrape && awk -v n="$1" '$1 ~ "^" n "[{ ]" { print $2 }' "$tmp/m"; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }
# route: the circuits' addresses (198.19.0.0/16) out of the pair's device
route() { in_snd ip route add 198.19.0.0/16 via "$RCV_IP4"; }
# send SECONDS I...: flowgen on CPU 0 to circuits I at 2 Mbit/s each in
# 500-byte datagrams; its report in $tmp/sent ("address packets")
send() {
	local s=$1 i targets=()
	shift
	for i in "$@"; do targets+=("198.19.0.$i,7000,4,2m"); done
	in_snd taskset -c 0 "${HTBCTL%/htbctl}/tests/tools/flowgen" send --size 500 --seconds "$s" "${targets[@]}" > "$tmp/fg" 2>&1 ||
		fail "flowgen: $(oneline "$tmp/fg")"
	awk '$1 == "target" { split($2, t, ","); print t[1], $4; if ($8 != 0) err = 1 }
	     END { exit err }' "$tmp/fg" > "$tmp/sent" || fail "flowgen had errors: $(oneline "$tmp/fg")"
}
# rx_packets: what the receiver's end of the pair took in
rx_packets() { in_rcv ip -j -s link show dev "$RCV_IF" | jq '.[0].stats64.rx.packets'; }
# tree FILE: the tree in force as the maps hold it, without its state
tree() {
	h -j show dev "$SND_IF" interval 0 | jq -c '.classes[] | {class, index, parent, leaf, prio,
		rate, ceil, burst, cburst, quantum, limit, aqm}' | sort > "$1"
}

test_a_changed_csv_is_in_force_the_rest_kept() {
	local c n before after
	lq_json > "$tmp/network.json"
	lq_csv 12 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	route
	send 1 1 3 4 5 6 7 8 9 10 11 12
	ids "$tmp/c.ini" > "$tmp/ids.before"
	state "$tmp/state.before"
	lq_changed 12 | put ShapedDevices.csv
	wait_for 10 ceil_is_mbit c3 50 || fail "circuit 3's ceil is $(ceil_of c3): $(oneline "$tmp/log")"
	in_force c13 || fail "circuit 13 not in force"
	state "$tmp/state.after"
	ids "$tmp/c.ini" > "$tmp/ids.after"
	# class ids: every circuit kept's; circuit 2's gone from the tree
	join "$tmp/ids.before" "$tmp/ids.after" | awk '$2 != $3 { print; bad = 1 } END { exit bad }' ||
		fail "class ids changed: $(join "$tmp/ids.before" "$tmp/ids.after" | awk '$2 != $3' | tr '\n' ' ')"
	n=$(join "$tmp/ids.before" "$tmp/ids.after" | wc -l)
	[ "$n" = 11 ] || fail "$n circuits in both configs, wanted 11"
	c=$(awk '$1 == "c2" { print $2 }' "$tmp/ids.before")
	grep -q "^$c " "$tmp/state.after" && fail "circuit 2's class $c is still loaded"
	# counters and tokens of the untouched circuits, as before the switch
	for c in c1 c4 c5 c6 c7 c8 c9 c10 c11 c12; do
		n=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/ids.before")
		before=$(grep "^$n " "$tmp/state.before") after=$(grep "^$n " "$tmp/state.after")
		[ "$before" = "$after" ] || fail "circuit $c ($n): before '$before', after '$after'"
		[ "$(echo "$before" | awk '{ print $2 }')" -gt 0 ] || fail "circuit $c counted nothing: $before"
	done
	# the maps: each circuit's address in its class, circuit 2's in the default
	want=$(for i in 1 3 4 5 6 7 8 9 10 11 12 13; do id c$i; done; echo 1:2)
	got=$(in_snd "${HTBCTL%/htbctl}/tests/bpf/clsprobe" "$SND_IF" \
		$(for i in 1 3 4 5 6 7 8 9 10 11 12 13 2; do printf 'dst=198.19.0.%d ' $i; done) 2> "$tmp/err") ||
		fail "clsprobe: $(oneline "$tmp/err")"
	[ "$got" = "$want" ] || fail "classified $(echo $got), wanted $(echo $want)"
	grep -q 'daemon: imported .*: 12 circuits, [0-9]* classes, [0-9]* ids kept from' "$tmp/log" ||
		fail "the log does not say the import: $(oneline "$tmp/log")"
	alive
}

# Traffic to every circuit while the CSV changes under the daemon: each
# circuit kept counts exactly what was sent to it; circuit 21's address,
# added by the change, counts in the default class before the switch and
# in its own after, together exactly what was sent to it; nothing was
# dropped, and the receiver got it all. (Circuit 2, removed, gets no
# traffic: its class's counters go with it.)
test_traffic_across_the_switch_neither_lost_nor_misclassified() {
	local fg i sent got rx0 rx1 total
	lq_json > "$tmp/network.json"
	lq_csv 20 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	route
	# the pair's own IPv6 chatter (MLD reports, router solicitations) would
	# count in the default class beside circuit 21's packets
	in_snd sysctl -qw "net.ipv6.conf.$SND_IF.disable_ipv6=1"
	state "$tmp/state.before"
	rx0=$(rx_packets)
	send 4 1 $(seq 3 21) &
	fg=$!
	sleep 1.5
	lq_changed 20 | put ShapedDevices.csv
	wait "$fg" || fail "the sender failed"
	ceil_is_mbit c3 50 || fail "the change was not in force when the traffic ended: $(oneline "$tmp/log")"
	grep -q 'daemon: imported .*: 20 circuits, [0-9]* classes, [0-9]* ids kept from' "$tmp/log" || fail "no import: $(oneline "$tmp/log")"
	state "$tmp/state.after"
	rx1=$(rx_packets)
	for i in 1 $(seq 3 20); do
		sent=$(awk -v a="198.19.0.$i" '$1 == a { print $2 }' "$tmp/sent")
		got=$(delta "$(id c$i)")
		[ "$sent" -gt 500 ] || fail "only $sent packets to circuit $i"
		[ "$got" = "$sent" ] || fail "circuit $i: $sent sent, $got counted in its class $(id c$i)"
	done
	sent=$(awk '$1 == "198.19.0.21" { print $2 }' "$tmp/sent")
	got=$(( $(delta 1:2) + $(delta "$(id c21)") ))
	[ "$got" = "$sent" ] && [ "$(delta "$(id c21)")" -gt 0 ] && [ "$(delta 1:2)" -gt 0 ] ||
		fail "circuit 21: $sent sent, $(delta 1:2) in the default class before the switch, $(delta "$(id c21)") in its own after"
	awk '{ d += $4 } END { exit d != 0 }' "$tmp/state.after" ||
		fail "drops: $(awk '$4 != 0' "$tmp/state.after" | tr '\n' ' ')"
	total=$(awk '{ n += $2 } END { print n }' "$tmp/sent")
	[ $((rx1 - rx0)) -ge "$total" ] && [ $((rx1 - rx0)) -le $((total + 10)) ] ||
		fail "the receiver got $((rx1 - rx0)) packets of $total sent"
	note "$total packets to 20 circuits across the switch, each counted in its class; circuit 21's $(delta 1:2) in the default class before, $(delta "$(id c21)") in its own after"
}
# delta CLASS: its packets in $tmp/state.after less in .before (0 if new)
delta() {
	awk -v c="$1" 'NR == FNR { if ($1 == c) b = $2; next } $1 == c { a = $2 }
		END { print a - b }' "$tmp/state.before" "$tmp/state.after"
}

# bad KIND: the pair made bad one way; the log's line and the file named
bad() {
	case $1 in
	json) lq_json | sed 's/"AP_B": {/"AP_B" {/' | put network.json
	      echo 'network.json:3: expected '"':'"' after a member name' ;;
	column) lq_csv 6 | sed '1s/Parent Node,//; 2,$s/,AP_[AB],/,/' | put ShapedDevices.csv
		echo "ShapedDevices.csv:1: the header has no 'Parent Node' column" ;;
	rate) lq_csv 6 | sed '3s/,10,10,100,100,$/,200,10,100,100,/' | put ShapedDevices.csv
		echo "ShapedDevices.csv:3: Download Min Mbps '200' is above Download Max Mbps '100'" ;;
	esac
}
test_a_bad_file_keeps_the_tree_and_the_config() {
	local kind line failures=0
	lq_json > "$tmp/network.json"
	lq_csv 6 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	wait_for 10 metric_is htbctl_import_ok 1 || fail "htbctl_import_ok: $(metric htbctl_import_ok)"
	metric_is htbctl_import_failures_total 0 || fail "failures at the start: $(metric htbctl_import_failures_total)"
	[ "$(metric htbctl_import_last_success_timestamp_seconds | cut -d. -f1)" -gt 1700000000 ] ||
		fail "no success time: $(metric htbctl_import_last_success_timestamp_seconds)"
	cp -p "$tmp/c.ini" "$tmp/c.ini.first"
	tree "$tmp/tree.first"
	for kind in json column rate; do
		lq_json > "$tmp/network.json"
		line=$(bad $kind)
		failures=$((failures + 1))
		wait_for 10 metric_is htbctl_import_failures_total $failures ||
			fail "$kind: failures $(metric htbctl_import_failures_total), wanted $failures: $(oneline "$tmp/log")"
		metric_is htbctl_import_ok 0 || fail "$kind: htbctl_import_ok $(metric htbctl_import_ok)"
		grep -F "$line" "$tmp/log" | grep -q "daemon: import not applied: .*; the tree in force and $tmp/c.ini stay" ||
			fail "$kind: the log does not say '$line': $(oneline "$tmp/log")"
		cmp -s "$tmp/c.ini" "$tmp/c.ini.first" || fail "$kind: the config changed"
		tree "$tmp/tree.now"
		cmp -s "$tmp/tree.now" "$tmp/tree.first" ||
			fail "$kind: the tree in force changed: $(diff "$tmp/tree.first" "$tmp/tree.now" | head -4 | tr '\n' ' ')"
		in_force c6 || fail "$kind: circuit 6 is not in force"
		grep -F "$line" "$tmp/notify" | grep -q "STATUS=shaping $SND_IF with $tmp/c.ini (the last import failed: " ||
			fail "$kind: systemd's STATUS= does not say it: $(tail -c 300 "$tmp/notify")"
	done
	# the next good pair is taken again
	lq_json > "$tmp/network.json"
	lq_changed 6 | put ShapedDevices.csv
	wait_for 10 ceil_is_mbit c3 50 || fail "the good file was not taken: $(oneline "$tmp/log")"
	wait_for 5 metric_is htbctl_import_ok 1 || fail "htbctl_import_ok $(metric htbctl_import_ok) after a good file"
	metric_is htbctl_import_failures_total 3 || fail "failures $(metric htbctl_import_failures_total)"
	promtool check metrics < "$tmp/m" > "$tmp/p" 2>&1 || ! command -v promtool > /dev/null ||
		fail "promtool: $(oneline "$tmp/p")"
	alive
}

# What LibreQoS accepts with a warning (a Parent Node network.json lacks:
# the row left out) the feed takes with that warning in the log; with
# --strict it is a failed import, the tree in force kept.
test_strict_refuses_what_libreqos_warns_of() {
	lq_json > "$tmp/network.json"
	lq_csv 4 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	{ lq_csv 4; lq_row 5 100 AP_Z; } | put ShapedDevices.csv
	wait_for 10 grep -q "Parent Node 'AP_Z' is not a node of" "$tmp/log" || fail "no warning: $(oneline "$tmp/log")"
	wait_for 5 metric_is htbctl_import_ok 1 || fail "htbctl_import_ok $(metric htbctl_import_ok)"
	in_force c5 && fail "circuit 5 is in force"
	kill "$dpid"; wait "$dpid" 2> /dev/null; dpid=
	kill "$rpid"; wait "$rpid" 2> /dev/null; rpid=
	rm -f "$tmp/notify.sock"
	lq_csv 4 > "$tmp/ShapedDevices.csv"
	FEED_ARGS=--strict spawn_daemon
	{ lq_csv 4; lq_row 5 100 AP_Z; } | put ShapedDevices.csv
	wait_for 10 metric_is htbctl_import_ok 0 || fail "--strict: htbctl_import_ok $(metric htbctl_import_ok)"
	grep "Parent Node 'AP_Z' is not a node of" "$tmp/log" | grep -q "import not applied" ||
		fail "--strict: the log: $(oneline "$tmp/log")"
	in_force c4 || fail "--strict: the tree in force changed"
}

# A CRM that writes the CSV (renamed over it) and then the JSON it needs
# (a new AP the CSV names) in place, in two writes 0.5 s apart, the first
# 0.7 s after the CSV: the CSV's quiet second ends between them, with the
# JSON half written. The daemon waits until both files are quiet and
# imports the pair once. The JSON is in a directory of its own, so the
# CSV's watch sees none of its events: only the rule that both watches be
# quiet holds the import back (without it: an import of the half JSON,
# which fails).
test_a_pair_written_one_after_the_other_is_one_import() {
	JSON=j/network.json
	mkdir -m 755 "$tmp/j"
	lq_json > "$tmp/$JSON"
	lq_csv 4 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	lq_json AP_C > "$tmp/json.new"
	{ lq_csv 4; lq_row 5 100 AP_C; } | put ShapedDevices.csv
	sleep 0.7
	head -c 100 "$tmp/json.new" > "$tmp/$JSON"
	sleep 0.5
	tail -c +101 "$tmp/json.new" >> "$tmp/$JSON"
	wait_for 10 in_force c5 || fail "circuit 5 not in force: $(oneline "$tmp/log")"
	grep -q 'import not applied' "$tmp/log" && fail "an import of the half-written pair: $(oneline "$tmp/log")"
	[ "$(grep -c 'daemon: imported' "$tmp/log")" = 2 ] ||
		fail "$(grep -c 'daemon: imported' "$tmp/log") imports, wanted 2 (the start's and the pair's)"
	metric_is htbctl_import_failures_total 0 || fail "failures $(metric htbctl_import_failures_total)"
}

# A bad file at the daemon's start (a restart, a boot): the import fails,
# said once, and the daemon starts with its config as the last good
# import left it; without a config it does not start.
test_a_bad_file_at_start_starts_with_the_config() {
	lq_json > "$tmp/network.json"
	lq_csv 4 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	kill "$dpid"; wait "$dpid" 2> /dev/null; dpid=
	kill "$rpid"; wait "$rpid" 2> /dev/null; rpid=
	cp -p "$tmp/c.ini" "$tmp/c.ini.first"
	bad rate > "$tmp/line"
	: > "$tmp/log"
	rm -f "$tmp/notify.sock"
	spawn_daemon
	grep -F "$(cat "$tmp/line")" "$tmp/log" | grep -q "import not applied: " || fail "the log: $(oneline "$tmp/log")"
	cmp -s "$tmp/c.ini" "$tmp/c.ini.first" || fail "the config changed"
	wait_for 5 said_ready || fail "no READY=1: $(oneline "$tmp/notify")"
	alive
	kill "$dpid"; wait "$dpid" 2> /dev/null; dpid=
	rm "$tmp/c.ini"
	rc=0
	nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/c.ini" \
		libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" --no-qdisc > "$tmp/log2" 2>&1 || rc=$?
	[ "$rc" = 1 ] && grep -q "was not put in force" "$tmp/log2" ||
		fail "exit $rc without a config: $(oneline "$tmp/log2")"
	[ ! -e "$tmp/c.ini" ] || fail "a config was written from a bad import"
}
said_ready() { grep -q 'READY=1' "$tmp/notify"; }

# A directory busy with other files (LibreQoS writes its own beside them)
# wakes the watch, but files that did not change are not imported again.
test_other_files_changing_import_nothing() {
	local i
	lq_json > "$tmp/network.json"
	lq_csv 4 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	for i in 1 2 3; do
		date > "$tmp/queuingStructure.json"
		sleep 1.2
	done
	[ "$(grep -c 'daemon: imported' "$tmp/log")" = 1 ] ||
		fail "$(grep -c 'daemon: imported' "$tmp/log") imports, wanted 1: $(oneline "$tmp/log")"
}

# SIGHUP imports the files again (a change that came while the directory
# was not watched) and re-applies the config.
test_sighup_imports_again() {
	lq_json > "$tmp/network.json"
	lq_csv 4 > "$tmp/ShapedDevices.csv"
	spawn_daemon
	kill -HUP "$dpid"
	wait_for 5 grep -q 'SIGHUP: importing' "$tmp/log" || fail "$(oneline "$tmp/log")"
	wait_for 5 [ "$(grep -c 'daemon: imported' "$tmp/log")" = 2 ] || fail "no second import: $(oneline "$tmp/log")"
	alive
}

# The daemon refuses --keep-ids (its config is the ids' source) and the
# import options without libreqos.
test_arguments_refused() {
	refused_with 2 "keeps the class ids of its config FILE" \
		"$HTBCTL" daemon dev lo config "$tmp/c.ini" libreqos a b --keep-ids c
	refused_with 2 "are options of libreqos CSV JSON" \
		"$HTBCTL" daemon dev lo config "$tmp/c.ini" --root-mbps 10/10
	refused_with 2 "libreqos needs ShapedDevices.csv and network.json" \
		"$HTBCTL" daemon dev lo config "$tmp/c.ini" libreqos a
}

# The drop-in (systemd/htbctl-libreqos.conf) on htbctl@.service, both as
# installed, in a unit directory of their own: it verifies, and it is what
# the instance runs (its ExecStart and conditions replace the unit's).
test_libreqos_dropin_verifies() {
	local u="$tmp/units" unit="htbctl@eth0.service"
	command -v systemd-analyze > /dev/null || fail "no systemd-analyze"
	mkdir -p "$u/$unit.d"
	sed "s|/usr/sbin/htbctl|$HTBCTL|g" systemd/htbctl@.service > "$u/htbctl@.service"
	cp "$u/htbctl@.service" "$u/$unit"
	sed "s|/usr/sbin/htbctl|$HTBCTL|g" systemd/htbctl-libreqos.conf > "$u/$unit.d/libreqos.conf"
	SYSTEMD_UNIT_PATH="$u:" SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$u/$unit" \
		> "$tmp/v" 2>&1 || fail "systemd-analyze verify: $(oneline "$tmp/v")"
	! grep -v -e 'sys-subsystem-net-devices' -e '^$' "$tmp/v" | grep -q . ||
		fail "systemd-analyze verify said: $(oneline "$tmp/v")"
	SYSTEMD_UNIT_PATH="$u:" SYSTEMD_LOG_LEVEL=debug systemd-analyze verify --man=no "$u/$unit" \
		> "$tmp/d" 2>&1
	grep -q "Command Line: $HTBCTL daemon dev eth0 config /var/lib/htbctl/eth0.ini libreqos " "$tmp/d" ||
		fail "the drop-in's ExecStart is not the instance's: $(grep 'Command Line' "$tmp/d" | head -2 | tr '\n' ' ')"
	grep -q 'ConditionPathExists: /etc/htbctl' "$tmp/d" && fail "the unit's condition on /etc/htbctl/IFACE.ini stayed"
	return 0
}

. "$(dirname "$0")/../lib/runner.sh"
