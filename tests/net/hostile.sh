#!/usr/bin/env bash
# A careless or hostile user against htbctl (issue 10, bugs 2 and 3):
# device names that are paths, and user nobody on a bpffs of mode 1777 (the
# kernel's default) holding a lock on it, planting a pin root of its own or
# a symlink in it. htbctl runs as root; every case asserts the refusal and
# that nothing of root's changed (docs/loader.md "Pins and the lock").
#
# The file runs itself in a private mount namespace, and every case mounts
# a fresh bpffs of its own over /sys/fs/bpf there: what nobody plants and
# what htbctl removes never reaches the machine's bpffs (before the fix,
# `unload dev ../x --force` removed /sys/fs/bpf/x). The mounts go with the
# namespace when the file ends.
if [ "${HOSTILE_MNT_OUTSIDE:-}" = "" ] && [ "$EUID" = 0 ]; then
	HOSTILE_MNT_OUTSIDE=$(readlink /proc/self/ns/mnt) exec \
		unshare --mount --propagation private bash "$0" "$@"
fi

setup() {
	[ "$(readlink /proc/self/ns/mnt)" != "$HOSTILE_MNT_OUTSIDE" ] ||
		fail "not in a private mount namespace: /sys/fs/bpf stays untouched"
	mount -t bpf bpf /sys/fs/bpf && chmod 1777 /sys/fs/bpf || fail "no private bpffs"
	{ ini device default=1:30; ini 'class 1:1' rate=100mbit
	  ini 'class 1:30' parent=1:1 rate=1mbit; } > "$tmp/a.ini"
	{ ini device default=1:30; ini 'class 1:1' rate=100mbit
	  ini 'class 1:30' parent=1:1 rate=2mbit; } > "$tmp/b.ini"
	chmod 644 "$tmp"/*.ini
}

load_a() { load_tree "$tmp/a.ini" --no-qdisc; }

# victim DIR: a pinned map of someone else's in DIR, which htbctl must
# leave alone; still_there DIR: it is still there.
victim() {
	mkdir -p "$1" && bpftool map create "$1/victim" type array key 4 value 4 entries 1 name victim ||
		fail "could not pin a map in $1"
}
still_there() { [ -e "$1/victim" ] || fail "$1/victim was removed"; }

# ---- device names: what the kernel's dev_valid_name() refuses, for
# every command, before any path is built from the name

bad_names=(.. . ../rzvictim a/b 'a:b' 'a b' $'a\tb' $'a\nb' '' 0123456789abcdef)

# names_refused VERB [ARGS...]: `htbctl VERB dev NAME ARGS...` refuses
# every bad name with one line that says so.
names_refused() {
	local verb=$1 n rc
	shift
	for n in "${bad_names[@]}"; do
		rc=0
		timeout 10 "$HTBCTL" "$verb" dev "$n" "$@" > "$tmp/out" 2>&1 || rc=$?
		[ $rc = 1 ] && grep -q "is not a valid device name" "$tmp/out" &&
			[ "$(wc -l < "$tmp/out")" = 1 ] ||
			fail "$verb dev '$n': exit $rc: $(oneline "$tmp/out")"
	done
}
# A config anyone else could change chooses what htbctl loads as root:
# load, reload and the daemon refuse one writable by group or others, one
# of another user, one in a directory others may write (unless sticky,
# as /tmp), each with one line saying what to do; nothing is loaded.
test_config_others_could_change_refused() {
	local d
	chmod 666 "$tmp/a.ini"
	refused_with 1 "a.ini: writable by group or others (uid 0, mode 0666)" \
		in_snd "$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	chmod 644 "$tmp/a.ini" && chown nobody "$tmp/a.ini"
	refused_with 1 "a.ini: owned by another user (uid $(id -u nobody), mode 0644)" \
		in_snd "$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	refused_with 1 "a.ini: owned by another user" \
		timeout 10 nsenter --net=/run/netns/"$SND_NS" "$HTBCTL" daemon dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	[ ! -e "/sys/fs/bpf/htbctl/$SND_IF" ] || fail "a refused config was loaded"
	# root acting for that user through sudo loads the user's own file
	SUDO_UID=$(id -u nobody) in_snd "$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > "$tmp/out" 2>&1 ||
		fail "sudo for the file's owner: $(oneline "$tmp/out")"
	in_snd "$HTBCTL" unload dev "$SND_IF" > /dev/null 2>&1
	chown root "$tmp/a.ini"
	mkdir -m 777 "$tmp/open" && cp -p "$tmp/a.ini" "$tmp/b.ini" "$tmp/open/"
	refused_with 1 "open/a.ini: its directory is writable by group or others (uid 0, mode 0777)" \
		in_snd "$HTBCTL" load dev "$SND_IF" config "$tmp/open/a.ini" --no-qdisc
	chmod 1777 "$tmp/open"
	load_tree "$tmp/open/a.ini" --no-qdisc
	chmod 664 "$tmp/open/b.ini"
	refused_with 1 "b.ini: writable by group or others" in_snd "$HTBCTL" reload dev "$SND_IF" config "$tmp/open/b.ini"
}

# -o over a file another user planted is refused (52b6d7f gave the new
# config to its owner, mode 666 kept); over the caller's own file, the
# new one keeps its group, but neither group nor world may write it.
test_output_of_nobody_refused() {
	printf 'Circuit ID,Parent Node,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps\nc1,,198.18.0.1,,1,1,10,5\n' > "$tmp/d.csv"
	echo '{}' > "$tmp/n.json"
	echo planted > "$tmp/o.ini"
	chown nobody:nogroup "$tmp/o.ini" && chmod 666 "$tmp/o.ini" || fail "setup"
	refused_with 1 "o.ini: owned by uid $(id -u nobody), not by you (uid 0): remove it first or write elsewhere" \
		"$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" -o "$tmp/o.ini"
	[ "$(cat "$tmp/o.ini")" = planted ] || fail "the planted file changed"
	echo mine > "$tmp/m.ini"
	chgrp nogroup "$tmp/m.ini" && chmod 6666 "$tmp/m.ini" || fail "setup"
	"$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" -o "$tmp/m.ini" 2> "$tmp/err" || fail "import: $(oneline "$tmp/err")"
	[ "$(stat -c %a:%U:%G "$tmp/m.ini")" = 644:root:nogroup ] || fail "the new file is $(stat -c %a:%U:%G "$tmp/m.ini")"
}

test_names_refused_by_load() { names_refused load config "$tmp/a.ini" --no-qdisc; }
test_names_refused_by_reload() { names_refused reload config "$tmp/a.ini"; }
test_names_refused_by_unload() { names_refused unload; }
test_names_refused_by_unload_force() { names_refused unload --force; }
test_names_refused_by_show() { names_refused show; }
test_names_refused_by_set() { names_refused set hysteresis on; }
test_names_refused_by_daemon() { names_refused daemon config "$tmp/a.ini" --no-qdisc; }

# With a device loaded, /sys/fs/bpf/htbctl/.. is /sys/fs/bpf.
test_name_with_dotdot_removes_nothing() {
	load_a
	victim /sys/fs/bpf/rzvictim
	refused "is not a valid device name" h unload dev ../rzvictim --force
	still_there /sys/fs/bpf/rzvictim
}
test_dotdot_removes_nothing_at_bpffs_top() {
	load_a
	victim /sys/fs/bpf
	refused "is not a valid device name" h unload dev .. --force
	still_there /sys/fs/bpf
}
test_name_message_says_why() {
	refused "contains '/'" h unload dev ../rzvictim --force
	refused "longer than 15 bytes" h show dev 0123456789abcdef
	refused "'.' and '..' are not" h show dev ..
	refused "contains white space" h show dev 'a b'
}

# ---- (a) nobody holds a lock where htbctl's used to be

# nobody_locks PATH: nobody holds flock on PATH until the case ends.
nobody_locks() {
	nobody flock "$1" sleep 120 &
	wait_for 5 locked "$1" || fail "nobody could not lock $1"
}
locked() { ! flock -n "$1" true; }

test_lock_of_nobody_blocks_no_command() {
	nobody_locks /sys/fs/bpf
	ok in_snd timeout 10 "$HTBCTL" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	ok in_snd timeout 10 "$HTBCTL" reload dev "$SND_IF" config "$tmp/b.ini"
	ok in_snd timeout 10 "$HTBCTL" set dev "$SND_IF" hysteresis on
	ok in_snd timeout 10 "$HTBCTL" show dev "$SND_IF" interval 0
	ok in_snd timeout 10 "$HTBCTL" unload dev "$SND_IF"
}
test_lock_of_nobody_blocks_no_daemon() {
	nobody_locks /sys/fs/bpf
	in_snd timeout 30 "$HTBCTL" daemon dev "$SND_IF" config "$tmp/a.ini" --no-qdisc \
		> "$tmp/daemon.out" 2>&1 &
	wait_for 10 grep -q ": loaded" "$tmp/daemon.out" ||
		fail "the daemon did not load within 10 s: $(oneline "$tmp/daemon.out")"
}
# The lock is on htbctl's pin root, which only root can open.
test_nobody_cannot_take_the_lock() {
	load_a
	[ "$(stat -c %a:%u /sys/fs/bpf/htbctl)" = 700:0 ] ||
		fail "/sys/fs/bpf/htbctl is $(stat -c %a:%u /sys/fs/bpf/htbctl), not 700:0"
	! nobody flock -n /sys/fs/bpf/htbctl true 2> /dev/null ||
		fail "nobody locked /sys/fs/bpf/htbctl"
}
# Two loops of load and unload race for the lock, and unload removes the
# pin root with the last device while the other waits on it: the waiter
# must lock the new one, never pin into a removed directory.
cycles() {	# n: load, unload n times; each says "loaded", "unloaded" or why not
	local i
	for ((i = 0; i < $1; i++)); do
		h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc 2>&1 | grep -v "not enforced"
		h unload dev "$SND_IF" 2>&1
	done
}
test_lock_waiters_follow_a_removed_pin_root() {
	cycles 20 > "$tmp/c1" &
	cycles 20 > "$tmp/c2"
	wait
	cat "$tmp/c1" "$tmp/c2" | grep -v ": loaded\|: unloaded\|is already loaded\|nothing to unload" > "$tmp/odd"
	[ ! -s "$tmp/odd" ] || fail "$(oneline "$tmp/odd")"
	h unload dev "$SND_IF" > /dev/null 2>&1
	nothing_left
	[ ! -e /sys/fs/bpf/htbctl ] || fail "/sys/fs/bpf/htbctl is left"
}
# A root-owned pin root that others may read (an admin's chmod) is made
# 0700 again: else anyone could open it and hold the lock.
test_readable_pin_root_tightened() {
	mkdir -m 755 /sys/fs/bpf/htbctl
	load_a
	[ "$(stat -c %a /sys/fs/bpf/htbctl)" = 700 ] ||
		fail "/sys/fs/bpf/htbctl is mode $(stat -c %a /sys/fs/bpf/htbctl)"
}

# ---- (b) a pin root htbctl did not make

nobody_makes_pin_root() {
	nobody mkdir /sys/fs/bpf/htbctl && nobody chmod 777 /sys/fs/bpf/htbctl ||
		fail "nobody could not make /sys/fs/bpf/htbctl"
}
test_pin_root_of_nobody_refused_by_load() {
	nobody_makes_pin_root
	snap "$tmp/s0"
	refused "belongs to uid 65534.*remove it" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	unchanged_since "$tmp/s0"
	[ -z "$(ls -A /sys/fs/bpf/htbctl)" ] ||
		fail "htbctl wrote into nobody's directory: $(ls -A /sys/fs/bpf/htbctl | tr '\n' ' ')"
}
test_pin_root_of_nobody_refused_by_every_command() {
	nobody_makes_pin_root
	refused "belongs to uid 65534" h reload dev "$SND_IF" config "$tmp/a.ini"
	refused "belongs to uid 65534" h unload dev "$SND_IF"
	refused "belongs to uid 65534" h unload dev "$SND_IF" --force
	refused "belongs to uid 65534" h show dev "$SND_IF"
	refused "belongs to uid 65534" h set dev "$SND_IF" hysteresis on
	refused "belongs to uid 65534" in_snd timeout 10 "$HTBCTL" daemon dev "$SND_IF" \
		config "$tmp/a.ini" --no-qdisc
	[ -d /sys/fs/bpf/htbctl ] || fail "nobody's directory was removed"
}
test_pin_root_writable_by_others_refused() {
	mkdir /sys/fs/bpf/htbctl && chmod 777 /sys/fs/bpf/htbctl
	snap "$tmp/s0"
	refused "writable by others (mode 0777)" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	unchanged_since "$tmp/s0"
}
test_pin_root_symlink_refused() {
	victim /sys/fs/bpf/other
	nobody ln -s /sys/fs/bpf/other /sys/fs/bpf/htbctl || fail "nobody could not plant the link"
	refused "is a symbolic link" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	refused "is a symbolic link" h unload dev "$SND_IF" --force
	[ -z "$(ls /sys/fs/bpf/other | grep -v victim)" ] || fail "htbctl pinned into /sys/fs/bpf/other"
	still_there /sys/fs/bpf/other
}
# After root's load nobody can neither rename root's pins away nor the pin
# root (the bpffs root is sticky), and root's commands see its own pins.
test_pins_of_root_stay_with_root() {
	load_a
	! nobody mv "/sys/fs/bpf/htbctl/$SND_IF" /sys/fs/bpf/stolen 2> /dev/null ||
		fail "nobody renamed root's pin directory"
	! nobody mv /sys/fs/bpf/htbctl /sys/fs/bpf/stolen 2> /dev/null ||
		fail "nobody renamed the pin root"
	! nobody mkdir /sys/fs/bpf/htbctl/x 2> /dev/null || fail "nobody wrote into the pin root"
	ok h show dev "$SND_IF" interval 0
}
# A command that fails leaves no pin root behind that was not there.
test_failed_commands_leave_no_pin_root() {
	h unload dev "$SND_IF" > /dev/null 2>&1
	h show dev "$SND_IF" > /dev/null 2>&1
	HTBCTL_TEST_FAIL=pins in_snd "$HTBCTL_TEST" load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc > /dev/null 2>&1
	[ ! -e /sys/fs/bpf/htbctl ] || fail "/sys/fs/bpf/htbctl was left behind"
}

# Not hostile: a service that runs htbctl with CAP_BPF and CAP_NET_ADMIN
# but not as root trusts the pin root it made itself.
capable_nobody() {
	in_snd setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+bpf,+net_admin,+perfmon \
		--ambient-caps=+bpf,+net_admin,+perfmon "$HTBCTL" "$@"
}
test_capable_user_trusts_its_own_pin_root() {
	ok capable_nobody load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	ok capable_nobody show dev "$SND_IF" interval 0
	ok capable_nobody unload dev "$SND_IF"
}

# ---- (c) a symlink where a device's pin directory would be

test_symlink_of_nobody_not_followed() {
	victim /sys/fs/bpf/other
	nobody_makes_pin_root
	nobody ln -s /sys/fs/bpf/other "/sys/fs/bpf/htbctl/$SND_IF" || fail "nobody could not plant the link"
	refused "belongs to uid 65534" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	! grep -q -- "--force" "$tmp/out" || fail "load suggests --force: $(oneline "$tmp/out")"
	refused "belongs to uid 65534" h unload dev "$SND_IF" --force
	still_there /sys/fs/bpf/other
}
# The same link in a pin root of root's (planted before a chown, or by
# hand): refused all the same, with what to do.
root_pin_root_with_link() {
	victim /sys/fs/bpf/other
	mkdir -m 700 /sys/fs/bpf/htbctl && ln -s /sys/fs/bpf/other "/sys/fs/bpf/htbctl/$SND_IF" ||
		fail "no link"
}
test_symlinked_pin_dir_refused_by_load() {
	root_pin_root_with_link
	refused "is a symbolic link.*rm /sys/fs/bpf/htbctl/$SND_IF" h load dev "$SND_IF" \
		config "$tmp/a.ini" --no-qdisc
	still_there /sys/fs/bpf/other
}
test_symlinked_pin_dir_refused_by_unload_force() {
	root_pin_root_with_link
	refused "is a symbolic link" h unload dev "$SND_IF" --force
	! grep -q "Directory not empty" "$tmp/out" || fail "$(oneline "$tmp/out")"
	still_there /sys/fs/bpf/other
	[ -L "/sys/fs/bpf/htbctl/$SND_IF" ] || fail "the link was removed"
}
test_symlinked_pin_dir_refused_by_daemon() {
	root_pin_root_with_link
	refused "is a symbolic link" in_snd timeout 10 "$HTBCTL" daemon dev "$SND_IF" \
		config "$tmp/a.ini" --no-qdisc
	still_there /sys/fs/bpf/other
}
test_pin_dir_of_nobody_refused() {
	mkdir -m 700 /sys/fs/bpf/htbctl "/sys/fs/bpf/htbctl/$SND_IF" &&
		chown nobody "/sys/fs/bpf/htbctl/$SND_IF" || fail "no directory"
	refused "belongs to uid 65534" h load dev "$SND_IF" config "$tmp/a.ini" --no-qdisc
	refused "belongs to uid 65534" h unload dev "$SND_IF" --force
	[ -d "/sys/fs/bpf/htbctl/$SND_IF" ] || fail "the directory was removed"
}

. "$(dirname "$0")/../lib/runner.sh"
