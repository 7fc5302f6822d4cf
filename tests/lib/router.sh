# Topologies where the shaper forwards (issue 22): a router or a bridge
# between subscribers and an upstream server, each a namespace, joined by
# veth pairs, addresses from 198.18.0.0/15 and fd00::/8 only. Sourced by
# the router and bridge scenarios after tests/lib/shaping.sh.
#
#   subscribers (PREFIX c) -- PREFIX g: the router or bridge -- upstream (PREFIX u)
#        PREFIX-c ======== PREFIX-d      PREFIX-p ======== PREFIX-u
#
# PREFIX-d is the middle box's device toward the subscribers (its egress
# is the download), PREFIX-p the one toward upstream (the upload).
# fwd_use PREFIX selects a topology (FWD_* names); fwd_dev DEV points the
# shaping helpers of tests/lib/shaping.sh (shape_with, show) at the middle
# box's device DEV (down or up); fwd_down removes every topology.
#
# Router: subscribers in 198.18.1.0/24 and fd00:1::/64 behind PREFIX-d
# (.1, ::1), upstream in 198.18.2.0/24 and fd00:2::/64 behind PREFIX-p.
# Bridge: one subnet (198.18.1.0/24, fd00:1::/64) on both sides, the
# subscribers and the server on VLAN VID over their veth, the middle box a
# Linux bridge of PREFIX-d and PREFIX-p that carries the tagged frames.
#
# Host: no middle box; the subscribers' namespace is a host that shapes
# its own device toward the server (PREFIX-c, "up"; there is no "down").
FWD_ALL=
SRV4= SRV6=
declare -A FWD_KIND=()

fwd_use() {	# prefix
	FWD_PREFIX=$1
	FWD_C=${1}c FWD_G=${1}g FWD_U=${1}u
	FWD_DOWN=${1}-d FWD_UP=${1}-p
	if [ "${FWD_KIND[$1]:-}" = host ]; then
		FWD_G=$FWD_C FWD_DOWN= FWD_UP=${1}-c
	fi
}
in_c() { nsenter --net=/run/netns/"$FWD_C" "$@"; }
in_g() { nsenter --net=/run/netns/"$FWD_G" "$@"; }
in_u() { nsenter --net=/run/netns/"$FWD_U" "$@"; }

# fwd_dev down|up: the middle box's device that later shaping calls use.
fwd_dev() {
	SND_NS=$FWD_G
	case $1 in
	down) SND_IF=$FWD_DOWN; [ -n "$SND_IF" ] || { echo "fwd_dev: a host has no down device" >&2; return 1; } ;;
	up) SND_IF=$FWD_UP ;;
	*) echo "fwd_dev: down or up, not '$1'" >&2; return 1 ;;
	esac
}

fwd_down() {
	local p pids n
	for p in $FWD_ALL; do
		fwd_use "$p"
		for n in "$FWD_C" "$FWD_G" "$FWD_U"; do
			pids=$(ip netns pids "$n" 2>/dev/null)
			[ -z "$pids" ] || kill $pids 2>/dev/null
		done
		printf 'netns del %s\n' "$FWD_C" "$FWD_G" "$FWD_U" | ip -force -batch - 2>/dev/null
	done
	FWD_ALL=
}

# The three namespaces and the two pairs, links up, nothing addressed.
fwd_links() {	# prefix
	fwd_use "$1"
	FWD_ALL+=" $1"
	ip -batch - <<-EOF || return 1
	netns add $FWD_C
	netns add $FWD_G
	netns add $FWD_U
	link add ${1}-c netns $FWD_C type veth peer name $FWD_DOWN netns $FWD_G
	link add $FWD_UP netns $FWD_G type veth peer name ${1}-u netns $FWD_U
	EOF
	in_c ip link set lo up && in_g ip link set lo up && in_u ip link set lo up
}

# router_up PREFIX SUBSCRIBER_HOST...: subscriber n has 198.18.1.HOST and
# fd00:1::HOST (the first is the source of the namespace's own packets,
# e.g. ping's); the server is 198.18.2.2 / fd00:2::2.
router_up() {
	local p=$1 h; shift
	fwd_links "$p" || return 1
	SRV4=198.18.2.2 SRV6=fd00:2::2
	{ for h; do
		echo "addr add 198.18.1.$h/24 dev $p-c"
		echo "addr add fd00:1::$h/64 dev $p-c nodad"
	  done
	  echo "link set $p-c up"
	  echo "route add default via 198.18.1.1"
	  echo "route add default via fd00:1::1"; } | ip -n "$FWD_C" -batch - || return 1
	ip -n "$FWD_G" -batch - <<-EOF || return 1
	addr add 198.18.1.1/24 dev $FWD_DOWN
	addr add fd00:1::1/64 dev $FWD_DOWN nodad
	addr add 198.18.2.1/24 dev $FWD_UP
	addr add fd00:2::1/64 dev $FWD_UP nodad
	link set $FWD_DOWN up
	link set $FWD_UP up
	EOF
	ip -n "$FWD_U" -batch - <<-EOF || return 1
	addr add $SRV4/24 dev $p-u
	addr add $SRV6/64 dev $p-u nodad
	link set $p-u up
	route add 198.18.1.0/24 via 198.18.2.1
	route add fd00:1::/64 via fd00:2::1
	EOF
	in_g sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

# bridge_up PREFIX VID SUBSCRIBER_HOST...: as router_up, one subnet: the
# subscribers' and the server's (198.18.1.2 / fd00:1::2) addresses on VLAN
# VID devices over their veth; the middle box bridges PREFIX-d and
# PREFIX-p (no addresses, no VLAN filtering: the tagged frames cross as
# they are).
bridge_up() {
	local p=$1 vid=$2 h; shift 2
	fwd_links "$p" || return 1
	SRV4=198.18.1.2 SRV6=fd00:1::2
	{ echo "link set $p-c up"
	  echo "link add link $p-c name $p-c.$vid type vlan id $vid"
	  for h; do
		echo "addr add 198.18.1.$h/24 dev $p-c.$vid"
		echo "addr add fd00:1::$h/64 dev $p-c.$vid nodad"
	  done
	  echo "link set $p-c.$vid up"; } | ip -n "$FWD_C" -batch - || return 1
	ip -n "$FWD_G" -batch - <<-EOF || return 1
	link add br0 type bridge stp_state 0 forward_delay 0
	link set $FWD_DOWN master br0
	link set $FWD_UP master br0
	link set $FWD_DOWN up
	link set $FWD_UP up
	link set br0 up
	EOF
	ip -n "$FWD_U" -batch - <<-EOF || return 1
	link set $p-u up
	link add link $p-u name $p-u.$vid type vlan id $vid
	addr add $SRV4/24 dev $p-u.$vid
	addr add $SRV6/64 dev $p-u.$vid nodad
	link set $p-u.$vid up
	EOF
}

# host_up PREFIX SERVER_HOST...: the host 198.18.1.1 / fd00:1::1 in
# namespace PREFIX c, the server upstream with 198.18.1.HOST and
# fd00:1::HOST for each HOST (SRV4/SRV6 the first), one veth pair.
host_up() {
	local p=$1 h; shift
	FWD_KIND[$p]=host
	fwd_use "$p"
	FWD_ALL+=" $p"
	ip -batch - <<-EOF || return 1
	netns add $FWD_C
	netns add $FWD_U
	link add $p-c netns $FWD_C type veth peer name $p-u netns $FWD_U
	EOF
	SRV4=198.18.1.$1 SRV6=fd00:1::$1
	ip -n "$FWD_C" -batch - <<-EOF || return 1
	link set lo up
	addr add 198.18.1.1/24 dev $p-c
	addr add fd00:1::1/64 dev $p-c nodad
	link set $p-c up
	EOF
	{ echo "link set lo up"
	  for h; do
		echo "addr add 198.18.1.$h/24 dev $p-u"
		echo "addr add fd00:1::$h/64 dev $p-u nodad"
	  done
	  echo "link set $p-u up"; } | ip -n "$FWD_U" -batch -
}
