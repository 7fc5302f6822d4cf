#!/usr/bin/env bash
# htbctl under systemd (root): the unit file (systemd/htbctl@.service)
# passes `systemd-analyze verify` and its exposure score is measured
# (`systemd-analyze security --offline=yes`); the daemon's sd_notify
# messages (READY, RELOADING/READY around a reload, WATCHDOG, STOPPING)
# reach a test socket as NOTIFY_SOCKET names it (tests/tools/notifyrecv);
# and the capabilities the unit keeps are exactly what a load needs: it
# loads with them, and fails without any one of them, changing nothing.

UNIT=systemd/htbctl@.service


conf() {
	ini device default=1:30
	ini 'class 1:1' rate=100mbit
	ini 'class 1:10' parent=1:1 rate=20mbit "match=dst $RCV_IP4/32"
	ini 'class 1:30' parent=1:1 rate=1mbit ceil=100mbit
}

# The unit as installed (make install), htbctl's path pointing at this
# build, under an instance name in a unit directory of its own.
unit_copy() {
	mkdir -p "$tmp/units"
	sed "s|/usr/sbin/htbctl|$HTBCTL|g" "$UNIT" > "$tmp/units/htbctl@.service"
	cp "$tmp/units/htbctl@.service" "$tmp/units/htbctl@$SND_IF.service"
}

test_unit_verifies() {
	command -v systemd-analyze > /dev/null || fail "no systemd-analyze"
	unit_copy
	SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$tmp/units/htbctl@$SND_IF.service" \
		> "$tmp/v" 2>&1 || fail "systemd-analyze verify: $(oneline "$tmp/v")"
	# a missing device unit is expected (no systemd runs here); nothing else
	! grep -v -e 'sys-subsystem-net-devices' -e '^$' "$tmp/v" | grep -q . ||
		fail "systemd-analyze verify said: $(oneline "$tmp/v")"
}

test_security_score() {
	local score
	unit_copy
	systemd-analyze security --offline=yes --no-pager "$tmp/units/htbctl@$SND_IF.service" \
		> "$tmp/s" 2>&1 || true
	score=$(grep -o 'Overall exposure level for [^:]*: [0-9.]*' "$tmp/s" | awk '{ print $NF }')
	[ -n "$score" ] || fail "no score: $(tail -3 "$tmp/s" | tr '\n' ' ')"
	awk -v s="$score" 'BEGIN { exit !(s < 3.0) }' || fail "exposure $score, not below 3.0 (OK)"
	note "exposure $score ($(grep -o 'Overall exposure level[^\n]*' "$tmp/s" | sed 's/.* //'))"
}

# The daemon with NOTIFY_SOCKET and a 2 s watchdog; notifyrecv's lines in
# $tmp/notify.
dpid= rpid=
teardown() {
	local p
	for p in $dpid $rpid; do
		{ kill "$p"; wait "$p"; } 2> /dev/null
	done
	return 0
}
said() { grep -q "$1" "$tmp/notify"; }
test_sd_notify_messages() {
	local n
	conf > "$tmp/c.ini"
	chmod 644 "$tmp/c.ini"
	"$OUT/tests/tools/notifyrecv" "$tmp/notify.sock" 30 > "$tmp/notify" 2>&1 &
	rpid=$!
	wait_for 5 test -S "$tmp/notify.sock" || fail "no notify socket: $(oneline "$tmp/notify")"
	NOTIFY_SOCKET=$tmp/notify.sock WATCHDOG_USEC=2000000 \
		nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/c.ini" \
		--no-qdisc > "$tmp/log" 2>&1 &
	dpid=$!
	wait_for 10 said "READY=1|STATUS=shaping $SND_IF with $tmp/c.ini$" ||
		fail "no READY=1: $(oneline "$tmp/notify") / $(oneline "$tmp/log")"
	h show dev "$SND_IF" interval 0 > /dev/null || fail "READY=1 before the tree was in force"
	ini 'class 1:40' parent=1:1 rate=1mbit >> "$tmp/c.ini"
	wait_for 10 said 'RELOADING=1|MONOTONIC_USEC=[0-9]*$' || fail "no RELOADING=1: $(oneline "$tmp/notify")"
	wait_for 10 sh -c "grep -A1 RELOADING=1 '$tmp/notify' | tail -1 | grep -q 'READY=1|STATUS=shaping'" ||
		fail "no READY=1 after the reload: $(oneline "$tmp/notify")"
	echo 'rate = nonsense' >> "$tmp/c.ini"
	wait_for 10 said 'READY=1|STATUS=.*not applied' || fail "a rejected reload not said: $(oneline "$tmp/notify")"
	sleep 2.5
	n=$(grep -c ' WATCHDOG=1$' "$tmp/notify")
	[ "$n" -ge 3 ] || fail "$n WATCHDOG=1 in about 4 s with a 2 s watchdog: $(oneline "$tmp/notify")"
	kill -TERM "$dpid"
	wait "$dpid" || fail "the daemon exited $? on SIGTERM"
	dpid=
	wait_for 5 said ' STOPPING=1$' || fail "no STOPPING=1: $(oneline "$tmp/notify")"
	note "$(wc -l < "$tmp/notify") messages, $n watchdog pings"
}

# A start whose file cannot be put in force is a failed start: exit 1 and
# a STATUS= line, never READY=1, whether the device keeps a tree loaded
# before (7112e5f adopted it, said READY=1 "shaping X with F" and ran on)
# or is not shaped at all.
notify_daemon() {	# runs the daemon in the foreground; its status as $rc
	rc=0
	NOTIFY_SOCKET=$tmp/notify.sock timeout 20 nsenter --net=/run/netns/"$SND_NS" \
		"$HTBCTL" daemon dev "$SND_IF" config "$tmp/bad.ini" --no-qdisc > "$tmp/log" 2>&1 || rc=$?
}
test_a_failed_start_is_not_ready() {
	conf > "$tmp/c.ini"
	chmod 644 "$tmp/c.ini"
	printf '[device]\n[class 1:1]\nrate = nonsense\n' > "$tmp/bad.ini"
	"$OUT/tests/tools/notifyrecv" "$tmp/notify.sock" 30 > "$tmp/notify" 2>&1 &
	rpid=$!
	wait_for 5 test -S "$tmp/notify.sock" || fail "no notify socket: $(oneline "$tmp/notify")"
	load_tree "$tmp/c.ini" --no-qdisc
	notify_daemon
	[ "$rc" = 1 ] || fail "exit $rc with a bad file over a loaded tree (wanted 1): $(oneline "$tmp/log")"
	wait_for 5 said 'STATUS=not started: .*bad.ini was not put in force; .* stays shaped' ||
		fail "no STATUS= of the failure: $(oneline "$tmp/notify")"
	h show dev "$SND_IF" interval 0 > /dev/null || fail "the tree loaded before is gone"
	grep -q 'not starting' "$tmp/log" || fail "the log does not say it: $(oneline "$tmp/log")"
	ok h unload dev "$SND_IF"
	notify_daemon
	[ "$rc" = 1 ] || fail "exit $rc with a bad file on an unloaded device: $(oneline "$tmp/log")"
	wait_for 5 said 'STATUS=not started: .* is not shaped' ||
		fail "no STATUS= of the failure on an unloaded device: $(oneline "$tmp/notify")"
	! said 'READY=1' || fail "READY=1 after a failed start: $(oneline "$tmp/notify")"
}

test_no_notify_socket_no_messages() {
	conf > "$tmp/c.ini"
	chmod 644 "$tmp/c.ini"
	NOTIFY_SOCKET= nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" \
		config "$tmp/c.ini" --no-qdisc > "$tmp/log" 2>&1 &
	dpid=$!
	wait_for 10 h show dev "$SND_IF" interval 0 > /dev/null 2>&1 || fail "no load: $(oneline "$tmp/log")"
	kill -TERM "$dpid"
	wait "$dpid" || fail "the daemon exited $? without NOTIFY_SOCKET"
	dpid=
}

# The unit's CapabilityBoundingSet, as setpriv's list.
unit_caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_//g; s/ /,+/g; s/^/+/'
}
capped() {	# caps command...: root with only those capabilities
	local caps=$1
	shift
	in_snd setpriv --bounding-set=-all,"$caps" --inh-caps=-all "$@"
}
test_the_units_capabilities_are_what_a_load_needs() {
	local all c rest
	all=$(unit_caps)
	[ -n "$all" ] || fail "no CapabilityBoundingSet in $UNIT"
	conf > "$tmp/c.ini"
	chmod 644 "$tmp/c.ini"
	capped "$all" "$HTBCTL" load dev "$SND_IF" config "$tmp/c.ini" --no-qdisc > "$tmp/out" 2>&1 ||
		fail "load with $all failed: $(oneline "$tmp/out")"
	capped "$all" "$HTBCTL" unload dev "$SND_IF" > "$tmp/out" 2>&1 ||
		fail "unload with $all failed: $(oneline "$tmp/out")"
	for c in ${all//,/ }; do
		rest=$(echo ",$all," | sed "s/,$c,/,/; s/^,//; s/,$//")
		if capped "$rest" "$HTBCTL" load dev "$SND_IF" config "$tmp/c.ini" --no-qdisc > "$tmp/out" 2>&1; then
			h unload dev "$SND_IF" > /dev/null 2>&1
			fail "load succeeded without ${c#+}: the unit keeps a capability it does not need"
		fi
		[ ! -e "$(pins)" ] || fail "a load refused without ${c#+} left pins"
		note "without ${c#+}: $(grep -v warning: "$tmp/out" | head -1)"
	done
}

. "$(dirname "$0")/../lib/runner.sh"
