# (No process substitution: the VM has no /dev/fd.)
# Checks of `htbctl import` against tc (tests/net/import.sh on this
# machine's kernel, scenario 11 in the VM for fw, flower, police and
# fq_codel). A corpus entry is tests/import/NAME.tc (a tc script, the
# device it names) and NAME.expect: "match CLASS TEXT" lines (every match
# the config must have, and no other), "default CLASS", "has CLASS LINE" (a line of
# that class's section), "warn TEXT" lines (a warning that
# must be on stderr) and "warnings N" (how many).

# tc's own view of the script's tree: the script applied with tc -batch to
# veth devices in a namespace of the test's, `tc -s -d class show` read
# into "CLASS rate R ceil C burst B cburst CB [prio P quantum Q]" lines
# (prio and quantum are printed for leaves only).
tc_view() {	# script dev netns
	local ns=$3 batch
	batch=$(mktemp)
	sed -e 's/#.*//' "$1" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
		sed -n -e 's/^[[:space:]]*tc[[:space:]]\+//p' > "$batch"
	ip netns add "$ns" && ip -n "$ns" link add "$2" type veth peer name "$2-p" &&
		ip netns exec "$ns" tc -force -batch "$batch" > /dev/null 2>&1
	rm -f "$batch"
	ip netns exec "$ns" tc -s -d class show dev "$2" | awk '
	$1 == "class" && $2 == "htb" {
		line = $3
		for (i = 4; i <= NF; i++)
			if ($i ~ /^(prio|quantum|rate|ceil|burst|cburst)$/) {
				v = $(i + 1); sub(/\/.*/, "", v); line = line " " $i " " v
			}
		print line
	}' | sort
	ip netns del "$ns"
}

# The same lines from htbctl's resolved config, printed as tc prints them
# (iproute2's sprint_rate and sprint_size: shared/docs/tc-units.md,
# "Printing").
htbctl_view() {	# config
	"$HTBCTL" -j check config "$1" 2>/dev/null | jq -r '.classes[] |
		[.classid, .rate, .ceil, .burst, .cburst, .prio, .quantum, .leaf] | @tsv' | awk -F'\t' '
	function rate(r,   u, i) {
		r *= 8; split(",K,M,G,T", u, ",")
		for (i = 1; i < 5; i++) {
			if (r < 1000) break
			if (r % 1000 != 0 && r < 1000000) break
			r = int(r / 1000)
		}
		return sprintf("%.0f%sbit", r, u[i])
	}
	function rint(x) { return int(x + 0.5) }
	function abs(x) { return x < 0 ? -x : x }
	function size(s) {
		if (s >= 1048576 && abs(1048576 * rint(s / 1048576) - s) < 1024)
			return sprintf("%gMb", rint(s / 1048576))
		if (s >= 1024 && abs(1024 * rint(s / 1024) - s) < 16)
			return sprintf("%gKb", rint(s / 1024))
		return sprintf("%db", s)
	}
	{
		l = $1
		if ($8 == "true") l = l " prio " $6 " quantum " $7
		print l " rate " rate($2) " ceil " rate($3) " burst " size($4) " cburst " size($5)
	}' | sort
}

# "CLASS TEXT" for every match line of an htbctl config.
config_matches() {
	awk '/^\[class / { c = $2; sub(/\]/, "", c) } /^match = / { sub(/^match = /, ""); print c " " $0 }' "$1" | sort
}

# import_check NAME DEV: imports tests/import/NAME.tc, then asserts the
# config passes check, its tree equals tc's field by field, its matches
# and warnings are the .expect file's. Prints why on failure, returns 1.
import_check() {	# name dev
	local name=$1 dev=$2 dir want got n matches
	dir=$(mktemp -d)
	if ! "$HTBCTL" import script "tests/import/$name.tc" -o "$dir/c.ini" 2> "$dir/err"; then
		echo "$name: import failed: $(tr '\n' ' ' < "$dir/err")"; rm -rf "$dir"; return 1
	fi
	if ! "$HTBCTL" check config "$dir/c.ini" > /dev/null 2> "$dir/check"; then
		echo "$name: check refused the import: $(grep -v warning "$dir/check" | head -3 | tr '\n' ' ')"
		rm -rf "$dir"; return 1
	fi
	tc_view "tests/import/$name.tc" "$dev" "htbimp-$BASHPID" > "$dir/tc"
	htbctl_view "$dir/c.ini" > "$dir/htbctl"
	if [ ! -s "$dir/tc" ] || ! cmp -s "$dir/tc" "$dir/htbctl"; then
		echo "$name: the tree differs from tc's (< tc, > htbctl):"
		diff "$dir/tc" "$dir/htbctl" | head -10
		rm -rf "$dir"; return 1
	fi
	matches=$(sed -n 's/^match //p' "tests/import/$name.expect" | sort)
	got=$(config_matches "$dir/c.ini")
	if [ "$matches" != "$got" ]; then
		echo "$name: matches differ (< expected, > imported):"
		echo "$matches" > "$dir/want"; echo "$got" > "$dir/got"
		diff "$dir/want" "$dir/got" | head -10
		rm -rf "$dir"; return 1
	fi
	want=$(sed -n 's/^default //p' "tests/import/$name.expect")
	got=$(sed -n 's/^default = //p' "$dir/c.ini")
	if [ -n "$want" ] && [ "$want" != "$got" ]; then
		echo "$name: default '$got', expected '$want'"; rm -rf "$dir"; return 1
	fi
	while read -r c w; do
		[ -n "$c" ] || continue
		awk -v c="[class $c]" '/^\[/ { in_c = $0 == c } in_c && !/^#/' "$dir/c.ini" | grep -qFx -- "$w" ||
			{ echo "$name: class $c has no line '$w'"; rm -rf "$dir"; return 1; }
	done <<<"$(sed -n 's/^has //p' "tests/import/$name.expect")"
	while read -r w; do
		[ -n "$w" ] || continue
		grep -qF -- "$w" "$dir/err" || { echo "$name: no warning '$w' in: $(tr '\n' ' ' < "$dir/err")"; rm -rf "$dir"; return 1; }
	done <<<"$(sed -n 's/^warn //p' "tests/import/$name.expect")"
	n=$(sed -n 's/^warnings //p' "tests/import/$name.expect")
	got=$(grep -c 'warning: import' "$dir/err")
	if [ -n "$n" ] && [ "$got" != "$n" ]; then
		echo "$name: $got import warnings, expected $n: $(tr '\n' ' ' < "$dir/err")"; rm -rf "$dir"; return 1
	fi
	echo "$name: $(wc -l < "$dir/tc") classes equal to tc's, $(grep -c . <<<"$matches") matches, $got warnings"
	rm -rf "$dir"
}
