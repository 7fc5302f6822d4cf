#!/usr/bin/env bash
# `htbctl import libreqos ShapedDevices.csv network.json`: the real
# formats (comment lines, quoted fields, address lists, decimal Mbps,
# Comment and sqm, virtual nodes, a flat network), the tree LibreQoS
# builds (Mins cut to fit, generated parent nodes, flattening, what it
# accepts with a warning, each refused again under --strict), every error
# as one line FILE:LINE naming the column or key and the value, exit 1
# and nothing written; the round trip of a generated 10,000-circuit set
# through `htbctl -j check`, every circuit compared; more classes than
# one major's 16-bit minor holds. Needs no privileges.
RUN_TOPO=none
needs() { echo "$HTBCTL" jq awk; }
. tests/lib/libreqos.sh
sample=tests/import/libreqos

H='Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment'
NET='{"Site_A": {"downloadBandwidthMbps": 1000, "uploadBandwidthMbps": 500,
  "children": {"AP_1": {"downloadBandwidthMbps": 300, "uploadBandwidthMbps": 100}}}}'

# csv LINE...: $tmp/d.csv, the header then LINEs; net [TEXT]: $tmp/n.json
csv() { { echo "$H"; printf '%s\n' "$@"; } > "$tmp/d.csv"; }
net() { printf '%s\n' "${1:-$NET}" > "$tmp/n.json"; }

# lq_refused PATTERN [ARGS...]: import of $tmp/d.csv and $tmp/n.json exits
# 1 with one line on stderr holding PATTERN (fixed text), nothing on
# stdout, and -o's file neither created nor, when it was there, changed.
lq_refused() {
	local pat=$1 rc=0
	shift
	"$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" "$@" > "$tmp/stdout" 2> "$tmp/err" || rc=$?
	[ $rc = 1 ] || fail "exit $rc, wanted 1: $(oneline "$tmp/err")"
	[ "$(wc -l < "$tmp/err")" = 1 ] || fail "not one line: $(oneline "$tmp/err")"
	grep -qF -- "$pat" "$tmp/err" || fail "wanted '$pat': $(oneline "$tmp/err")"
	[ ! -s "$tmp/stdout" ] || fail "wrote to stdout: $(oneline "$tmp/stdout")"
	echo keep > "$tmp/old.ini"
	rc=0
	"$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" "$@" -o "$tmp/new.ini" -o "$tmp/old.ini" \
		> /dev/null 2>&1 || rc=$?
	[ $rc = 1 ] && [ "$(cat "$tmp/old.ini")" = keep ] || fail "-o: exit $rc, the old file: $(oneline "$tmp/old.ini")"
	rc=0
	"$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" "$@" -o "$tmp/new.ini" > /dev/null 2>&1 || rc=$?
	[ $rc = 1 ] && [ ! -e "$tmp/new.ini" ] || fail "-o: exit $rc, a new file: $(ls "$tmp")"
}

ok_row='1,"Smith, J.",1,CPE 1,AP_1,,100.64.0.1,,1,1,100,20,'

# ---- the real formats --------------------------------------------------

# The sample pair holds what operators' files have; its config is kept
# (config.ini), and what matters is asserted from check's JSON.
test_sample_config() {
	ok "$HTBCTL" import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 --upload-dev eth1 -o "$tmp/c.ini"
	diff -u $sample/config.ini <(sed 1d "$tmp/c.ini") > "$tmp/diff" || fail "differs from config.ini: $(head -c 600 "$tmp/diff")"
	"$HTBCTL" check config "$tmp/c.ini" > /dev/null 2> "$tmp/warn" || fail "check: $(oneline "$tmp/warn")"
	[ ! -s "$tmp/warn" ] || fail "check warns: $(oneline "$tmp/warn")"
}

# classes of $tmp/c.json: jq_class ID EXPR
jq_class() { jq -c --arg id "$1" ".classes[] | select(.classid == \$id) | $2" "$tmp/c.json"; }

test_sample_values() {
	ok "$HTBCTL" import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 --upload-dev eth1 -o "$tmp/c.ini"
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> /dev/null || fail "check failed"
	[ "$(jq -r .device.upload_dev "$tmp/c.json")" = eth1 ] || fail "upload_dev: $(jq -c .device "$tmp/c.json")"
	[ "$(jq -r .device.default "$tmp/c.json")" = 1:2 ] || fail "default: $(jq -c .device "$tmp/c.json")"
	# 2794: two rows, one class with all four addresses, under Tower_East
	# (whose virtual parent Group_V is no class: it hangs on Site_East)
	local id
	id=$(awk '/^# circuit .*\(2794\)$/ { getline; print $2 }' "$tmp/c.ini" | tr -d ']')
	[ "$(jq_class "$id" '[.rate, .ceil, .upload.rate, .upload.ceil]')" = "[125000,13125000,125000,2250000]" ] ||
		fail "2794's rates: $(jq_class "$id" .)"
	[ "$(jq_class "$id" '[.matches[] | .type + " " + .prefix] | sort')" = \
	  '["dst 100.70.0.5/32","dst 100.70.0.6/32","dst 2001:db8:500::/56","dst 2001:db8:501::/56"]' ] ||
		fail "2794's matches: $(jq_class "$id" .matches)"
	grep -q '^# node "Group_V"' "$tmp/c.ini" && fail "the virtual node is a class"
	# decimal Mbps exactly: 104's 25.5/100.5 down, 12.5/50.25 up; its /29
	id=$(awk '/^# circuit .*\(104\)$/ { getline; print $2 }' "$tmp/c.ini" | tr -d ']')
	[ "$(jq_class "$id" '[.rate, .ceil, .upload.rate, .upload.ceil, .matches[0].prefix]')" = \
	  '[3187500,12562500,1562500,6281250,"100.70.1.0/29"]' ] || fail "104: $(jq_class "$id" .)"
	# 106 has no Parent Node: under LibreQoS's generated parent node
	id=$(awk '/^# circuit .*\(106\)$/ { getline; print $2 }' "$tmp/c.ini" | tr -d ']')
	pn=$(awk '/^# node "Generated_PN_1" \(generated\)$/ { getline; print $2 }' "$tmp/c.ini" | tr -d ']')
	[ -n "$pn" ] && [ "$(jq_class "$id" .parent)" = "\"$pn\"" ] || fail "106's parent: $(jq_class "$id" .parent), not $pn"
	[ "$(jq_class "$pn" '[.parent, .ceil, .upload.ceil]')" = '["1:1",125000000,125000000]' ] || fail "$pn: $(jq_class "$pn" .)"
	# the root: the top nodes (1000 + 500 + 1000 generated, 1000 + 250 +
	# 1000 generated), the default's 1
	[ "$(jq_class 1:1 '[.rate, .ceil, .upload.rate, .upload.ceil]')" = "[312625000,312625000,281375000,281375000]" ] ||
		fail "root: $(jq_class 1:1 .)"
	[ "$(jq_class 1:2 '[.leaf, .prio, .rate, (.matches | length)]')" = "[true,7,125000,0]" ] ||
		fail "default class: $(jq_class 1:2 .)"
}

test_names_in_comments() {
	ok "$HTBCTL" import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 -o "$tmp/c.ini"
	grep -qxF '# circuit "Elm St. 4 \"the blue house\"" (103)' "$tmp/c.ini" || fail "103's name: $(grep -F '(103)' "$tmp/c.ini")"
	grep -qxF '# circuit "6 Quarry Drive, Barre, VT 05641" (2794)' "$tmp/c.ini" || fail "2794's name"
	grep -qxF 'match = dst 100.70.0.6/32   # device "Device 6" (6)' "$tmp/c.ini" || fail "device 6's comment"
	grep -qxF '# node "AP_South" (AP)' "$tmp/c.ini" || fail "AP_South's comment"
	grep -q '^# upload_dev = IFACE' "$tmp/c.ini" || fail "no hint for upload_dev without --upload-dev"
}

# --root-mbps: the root is the link; the top-level nodes (1000 + 500 +
# 1000 generated down; up capped at the link's 500: 500 + 250 + 500)
# share what it has left after the default class (1): down 999 * 1000 /
# 2500 and 999 * 500 / 2500, up 499 * 500 / 1250 and 499 * 250 / 1250.
test_root_mbps() {
	ok "$HTBCTL" import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 --upload-dev eth1 \
		--root-mbps 1000/500 -o "$tmp/c.ini"
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> "$tmp/warn" || fail "check: $(oneline "$tmp/warn")"
	[ ! -s "$tmp/warn" ] || fail "check warns: $(oneline "$tmp/warn")"
	[ "$(jq_class 1:1 '[.rate, .ceil, .upload.rate, .upload.ceil]')" = "[125000000,125000000,62500000,62500000]" ] ||
		fail "root: $(jq_class 1:1 .)"
	[ "$(jq_class 1:2 '[.ceil, .upload.ceil]')" = "[125000000,62500000]" ] || fail "default: $(jq_class 1:2 .)"
	[ "$(jq_class 1:3 '[.rate, .ceil, .upload.rate, .upload.ceil]')" = "[49950000,125000000,24950000,62500000]" ] ||
		fail "Site_West: $(jq_class 1:3 .)"
	[ "$(jq_class 1:c '[.rate, .upload.rate]')" = "[24975000,12475000]" ] || fail "Site_East: $(jq_class 1:c .)"
	grep -q '^# the root: the link, as --root-mbps gave it' "$tmp/c.ini" || fail "no comment"
	csv "$ok_row"
	net
	for v in 1000 /500 1000/ 0.5/10 10/0 10/x 10/20/30; do
		refused_with 2 "--root-mbps '$v': expected DOWN/UP in Mbps" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --root-mbps "$v"
	done
	refused_with 2 "--root-mbps given twice" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --root-mbps 1/1 --root-mbps 1/1
}

# A newline, an escape and a quote in a name stay inside their comment.
test_hostile_name_one_line() {
	csv $'7,"two\nlines \e[2J ""q""",1,CPE,AP_1,,100.64.0.7,,1,1,10,10,'
	net
	ok "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" -o "$tmp/c.ini"
	grep -qxF '# circuit "two\x0alines \x1b[2J \"q\"" (7)' "$tmp/c.ini" || fail "$(grep -a 'circuit' "$tmp/c.ini" | od -c | head -3)"
	ok "$HTBCTL" check config "$tmp/c.ini"
}

# LibreQoS's flat network: {} and no Parent Node. Its circuits go
# round-robin under its generated parent nodes (test_generated_pn); with
# --generated-pn 0 on the root, as htbctl placed them before.
test_flat_network() {
	csv '1,A,1,x,,,100.64.0.1,,1,1,10,5,' '2,B,2,y,,,,2001:db8::/64,2,2,20,5,'
	net '{}'
	ok "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --upload-dev up0 --generated-pn 0 -o "$tmp/c.ini"
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> /dev/null || fail "check"
	[ "$(jq -c '[.classes[] | [.classid, .parent, .ceil]]' "$tmp/c.json")" = \
	  '[["1:1",null,3875000],["1:2","1:1",3875000],["1:3","1:1",1250000],["1:4","1:1",2500000]]' ] ||
		fail "$(jq -c '[.classes[] | [.classid, .parent, .ceil]]' "$tmp/c.json")"
}

# Generated_PN_1..COUNT, round-robin in file order, each of
# --generated-pn-mbps (capped at the link); the default count is this
# machine's CPUs.
test_generated_pn() {
	csv '1,A,1,x,,,100.64.0.1,,1,1,10,5,' '2,B,2,y,,,100.64.0.2,,1,1,20,5,' '3,C,3,z,,,100.64.0.3,,1,1,30,5,'
	net '{}'
	ok "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --upload-dev up0 --generated-pn 2 \
		--generated-pn-mbps 100/2000 --root-mbps 1000/500 -o "$tmp/c.ini"
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> "$tmp/cerr" || fail "check: $(oneline "$tmp/cerr")"
	[ ! -s "$tmp/cerr" ] || fail "check warns: $(oneline "$tmp/cerr")"
	[ "$(jq -c '[.classes[] | [.classid, .parent, .ceil, .upload.ceil]]' "$tmp/c.json")" = \
	  '[["1:1",null,125000000,62500000],["1:2","1:1",125000000,62500000],["1:3","1:1",12500000,62500000],["1:4","1:3",1250000,625000],["1:5","1:3",3750000,625000],["1:6","1:1",12500000,62500000],["1:7","1:6",2500000,625000]]' ] ||
		fail "$(jq -c '[.classes[] | [.classid, .parent, .ceil, .upload.ceil]]' "$tmp/c.json")"
	grep -qxF '# node "Generated_PN_2" (generated)' "$tmp/c.ini" || fail "no Generated_PN_2"
	ok "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" -o "$tmp/c.ini"
	[ "$(grep -c '^# node "Generated_PN_' "$tmp/c.ini")" = "$(( $(nproc) < 3 ? $(nproc) : 3 ))" ] ||
		fail "default: $(grep -c '^# node "Generated_PN_' "$tmp/c.ini") nodes, $(nproc) CPUs"
	for v in -1 x 4097 ''; do
		refused_with 2 "--generated-pn '$v': expected a count" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --generated-pn "$v"
	done
	refused_with 2 "--generated-pn-mbps '5': expected DOWN/UP" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --generated-pn-mbps 5
}

# LibreQoS's UISP integration writes Min = 0.98 x Max: 30 circuits of
# 98/100 Mbps on a 300 Mbps AP. LibreQoS cuts their Mins to 1 Mbps (one
# warning with the numbers), so that the AP passes no more than its
# bandwidth when every circuit sends its Max.
test_mins_cut_to_fit() {
	local i rows=()
	for i in $(seq 1 30); do rows+=("$i,C$i,$i,d$i,AP_1,,100.64.1.$i,,98,19.6,100,20,"); done
	csv "${rows[@]}"
	net
	lq_claims "n.json:2: node 'AP_1': the Download/Upload Min of its 30 circuits add up to 2940/588 Mbps, above its rate 300/100 Mbps: each cut to 1/1 Mbps"
	[ "$(jq -c '[.classes[] | select(.parent == "1:4") | [.rate, .upload.rate]] | unique' "$tmp/c.json")" = '[[125000,125000]]' ] ||
		fail "$(jq -c '[.classes[] | select(.parent == "1:4") | [.rate, .upload.rate]] | unique' "$tmp/c.json")"
	"$HTBCTL" simulate config "$tmp/c.ini" offer all=max > "$tmp/sim" 2>&1 || fail "simulate: $(oneline "$tmp/sim")"
	note "$(grep -E '^ *(class )?1:(1|4) ' "$tmp/sim" | head -2 | tr -s ' ')"
	# 300 circuits: 300 x 1 Mbps is still too many; LibreQoS's 10 kbit/s
	rows=()
	for i in $(seq 1 300); do rows+=("$i,C$i,$i,d$i,AP_1,,100.64.$((i / 200)).$((i % 200)),,98,19.6,100,20,"); done
	csv "${rows[@]}"
	lq_claims "each cut to 0.01/0.01 Mbps"
}

# Header names as LibreQoS compares them: letters and digits, any case,
# "Mbps" optional on a rate.
test_header_spellings() {
	printf '%s\n' 'circuit_id,circuit_name,device_id,device_name,parent_node,mac,ipv4,ipv6,Download Min,upload_min_mbps,DOWNLOAD-MAX,Upload Max Mbps' \
		'c1,A,d1,x,AP_1,,100.64.0.9,,2,0.5,40,4' > "$tmp/d.csv"
	net
	lq_claims
	[ "$(lq_matches c1)" = "dst 100.64.0.9/32" ] || fail "$(lq_matches c1)"
	[ "$(jq -c '[.classes[] | select(.parent == "1:4") | [.rate, .ceil, .upload.rate, .upload.ceil]]' "$tmp/c.json")" = '[[250000,5000000,62500,500000]]' ] ||
		fail "$(jq -c '.classes' "$tmp/c.json")"
}

# CRLF, a byte order mark, blank lines, indented comments, blanks around
# fields and a quote after blanks (hand-edited files).
test_crlf_bom_blanks() {
	printf '\xef\xbb\xbf# exported\r\n%s\r\n\r\n  # an indented comment\r\n1, A ,1,x, AP_1 ,, "100.64.0.1, 100.64.0.2" ,,1,1,10,5,\r\n' "$H" > "$tmp/d.csv"
	net
	ok "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" -o "$tmp/c.ini"
	grep -qxF 'match = dst 100.64.0.2/32   # device "x" (1)' "$tmp/c.ini" || fail "$(oneline "$tmp/c.ini")"
	grep -qxF '# circuit "A" (1)' "$tmp/c.ini" || fail "name not trimmed"
}

# Columns found by name: another order, without the optional ones.
test_columns_by_name() {
	printf '%s\n' 'IPv6,IPv4,Parent Node,Circuit ID,Upload Max Mbps,Download Max Mbps,Upload Min Mbps,Download Min Mbps' \
		',100.64.0.9,AP_1,c9,4,40,0.5,2' > "$tmp/d.csv"
	net
	ok "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --upload-dev up0 -o "$tmp/c.ini"
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> /dev/null || fail "check"
	[ "$(jq_class 1:5 '[.parent, .rate, .ceil, .upload.rate, .upload.ceil]')" = '["1:4",250000,5000000,62500,500000]' ] ||
		fail "$(jq -c '.classes' "$tmp/c.json")"
}

# ---- every error -------------------------------------------------------

# LibreQoS leaves a circuit whose Parent Node it cannot find unshaped.
test_parent_not_in_network() {
	csv "$ok_row" '2,B,2,y,AP_9,,100.64.0.2,,1,1,10,5,'
	net
	lq_claims "d.csv:3: Parent Node 'AP_9' is not a node of"
	grep -qF 'the row is left out, its device unshaped' "$tmp/err" || fail "$(oneline "$tmp/err")"
	grep -q '(2)$' "$tmp/c.ini" && fail "circuit 2 written"
	grep -q 'circuits (1 devices, 1 addresses)' "$tmp/err" || fail "summary: $(oneline "$tmp/err")"
	lq_refused "d.csv:3: Parent Node 'AP_9' is not a node of" --strict
}
# LibreQoS ignores Parent Node in a flat network ({}): one warning.
test_parent_with_flat_network() {
	csv "$ok_row" '2,B,2,y,AP_9,,100.64.0.2,,1,1,10,5,'
	net '{}'
	lq_claims "d.csv:2: Parent Node 'AP_1' ignored, as every one is"
	[ "$(jq -c '[.classes[] | select(.leaf) | .parent] | unique' "$tmp/c.json")" = '["1:1","1:3"]' ] ||
		fail "$(jq -c '[.classes[] | [.classid, .parent]]' "$tmp/c.json")"
	lq_refused "d.csv:2: Parent Node 'AP_1' is not a node of" --strict
	grep -qF 'a flat network leaves Parent Node empty' "$tmp/err" || fail "$(oneline "$tmp/err")"
}
# lq_claims WANT...: the import of $tmp/d.csv and $tmp/n.json succeeds
# with one warning per WANT (fixed text, in order) and the summary, and
# check takes its config ($tmp/c.json: check -j's view).
lq_claims() {
	local n=0 w
	"$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --generated-pn 1 --upload-dev up0 ${LQ_ARGS:-} -o "$tmp/c.ini" 2> "$tmp/err" ||
		fail "import failed: $(oneline "$tmp/err")"
	for w in "$@"; do
		n=$((n + 1))
		sed -n "${n}p" "$tmp/err" | grep -qF -- "$w" || fail "warning $n: wanted '$w': $(oneline "$tmp/err")"
	done
	[ "$(grep -c 'warning' "$tmp/err")" = $# ] || fail "not $# warnings: $(oneline "$tmp/err")"
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> "$tmp/cerr" || fail "check: $(oneline "$tmp/cerr")"
	[ ! -s "$tmp/cerr" ] || fail "check warns: $(oneline "$tmp/cerr")"
}
# circuit ID's matches, sorted: "dst P" ...
lq_matches() {
	local id
	id=$(awk -v c="($1)" '/^# circuit / && $NF == c { getline; print $2 }' "$tmp/c.ini" | tr -d ']')
	jq_class "$id" '[.matches[] | .type + " " + .prefix] | sort | join(",")' | tr -d '"'
}
# LibreQoS warns of an address in two circuits and maps it to the circuit
# it maps last: on one node, circuits by Circuit Name ("B" before "Smith,
# J."), so circuit 1 keeps it whatever the rows' order.
test_duplicate_address() {
	csv "$ok_row" '2,B,2,y,AP_1,,"100.64.0.5, 100.64.0.1/32",,1,1,10,5,'
	net
	lq_claims "d.csv:3: IPv4 100.64.0.1/32 of circuit '2' is also at line 2 (circuit '1'), which keeps it"
	[ "$(lq_matches 1)" = "dst 100.64.0.1/32" ] || fail "circuit 1: $(lq_matches 1)"
	[ "$(lq_matches 2)" = "dst 100.64.0.5/32" ] || fail "circuit 2: $(lq_matches 2)"
	grep -q "circuits (2 devices, 2 addresses)" "$tmp/err" || fail "summary: $(oneline "$tmp/err")"
	csv '2,B,2,y,AP_1,,"100.64.0.5, 100.64.0.1/32",,1,1,10,5,' "$ok_row"
	lq_claims "d.csv:2: IPv4 100.64.0.1/32 of circuit '2' is also at line 3 (circuit '1'), which keeps it"
	[ "$(lq_matches 1)" = "dst 100.64.0.1/32" ] || fail "reordered, circuit 1: $(lq_matches 1)"
}
# Nodes of one level in name order: AP_0's circuit (a child of Site_A
# like AP_1, written after it as network.json has it) is mapped first.
test_duplicate_address_node_names() {
	csv "$ok_row" '2,B,2,y,AP_0,,100.64.0.1,,1,1,10,5,'
	net '{"Site_A": {"downloadBandwidthMbps": 1000, "uploadBandwidthMbps": 500, "children": {
	  "AP_1": {"downloadBandwidthMbps": 300, "uploadBandwidthMbps": 100},
	  "AP_0": {"downloadBandwidthMbps": 300, "uploadBandwidthMbps": 100}}}}'
	lq_claims "d.csv:3: IPv4 100.64.0.1/32 of circuit '2' is also at line 2 (circuit '1'), which keeps it"
}
# LibreQoS maps a node's own circuits before its children's, whatever the
# rows' order: AP_1's circuit (after Site_A's own) keeps the prefix.
test_duplicate_address_tree_order() {
	csv "$ok_row" '2,B,2,y,Site_A,,100.64.0.1,,1,1,10,5,' '2,B,3,z,Site_A,,100.64.0.9,,1,1,10,5,'
	net
	lq_claims "d.csv:3: IPv4 100.64.0.1/32 of circuit '2' is also at line 2 (circuit '1'), which keeps it"
	[ "$(lq_matches 1)" = "dst 100.64.0.1/32" ] || fail "circuit 1: $(lq_matches 1)"
	[ "$(lq_matches 2)" = "dst 100.64.0.9/32" ] || fail "circuit 2: $(lq_matches 2)"
}
test_duplicate_ipv6_same_circuit() {
	csv '1,A,1,x,AP_1,,,2001:db8:1::/48,1,1,10,5,' '1,A,2,y,AP_1,,,2001:db8:1:0::/48,1,1,10,5,'
	net
	lq_claims "d.csv:3: IPv6 2001:db8:1::/48 of circuit '1' is also at line 2: written once"
	[ "$(lq_matches 1)" = "dst 2001:db8:1::/48" ] || fail "circuit 1: $(lq_matches 1)"
}
test_devices_differ_in_rate() {
	csv "$ok_row" '1,"Smith, J.",2,CPE 2,AP_1,,100.64.0.2,,1,1,105,20,'
	net
	lq_claims "d.csv:3: Download Max Mbps '105' of circuit '1' differs from line 2 ('100'): the circuit keeps that line's"
	[ "$(jq -c '[.classes[] | select(.leaf and .classid != "1:2") | [.ceil, (.matches | length)]]' "$tmp/c.json")" = '[[12500000,2]]' ] ||
		fail "$(jq -c '.classes' "$tmp/c.json")"
	lq_refused "d.csv:3: Download Max Mbps '105' of circuit '1' differs from line 2 ('100')" --strict
}
test_devices_differ_in_parent() {
	csv "$ok_row" '1,"Smith, J.",2,CPE 2,Site_A,,100.64.0.2,,1,1,100,20,'
	net
	lq_refused "d.csv:3: Parent Node 'Site_A' of circuit '1' differs from line 2 (AP_1)"
}
test_min_above_max() {
	csv '1,A,1,x,AP_1,,100.64.0.1,,1,30,100,20,'
	net
	lq_refused "d.csv:2: Upload Min Mbps '30' is above Upload Max Mbps '20'"
}
test_zero_rate() {
	csv '1,A,1,x,AP_1,,100.64.0.1,,0,1,100,20,'
	net
	lq_refused "d.csv:2: Download Min Mbps '0' is zero"
}
test_rate_below_8_bits() {
	csv '1,A,1,x,AP_1,,100.64.0.1,,1,0.000005,100,20,'
	net
	lq_refused "d.csv:2: Upload Min Mbps '0.000005' is below 8 bit/s"
}
test_rate_not_a_number() {
	for v in 10mbit -5 '' 1,5 1e3 12345678; do
		csv "1,A,1,x,AP_1,,100.64.0.1,,1,1,\"$v\",20,"
		net
		lq_refused "d.csv:2: Download Max Mbps '$v' is not a number of Mbps"
	done
}
test_bad_address() {
	csv '1,A,1,x,AP_1,,100.64.0.256,,1,1,10,5,'
	net
	lq_refused "d.csv:2: IPv4 '100.64.0.256' is not an IPv4 address"
}
test_address_in_the_other_column() {
	csv '1,A,1,x,AP_1,,2001:db8::1,,1,1,10,5,'
	net
	lq_refused "d.csv:2: IPv4 '2001:db8::1' is not an IPv4 address (it is in the other family's column)"
}
test_bad_prefix_length() {
	csv '1,A,1,x,AP_1,,,2001:db8::/129,1,1,10,5,'
	net
	lq_refused "d.csv:2: IPv6 '2001:db8::/129' has an invalid prefix length (0..128)"
}
test_host_bits() {
	csv '1,A,1,x,AP_1,,100.64.0.1/24,,1,1,10,5,'
	net
	lq_claims "d.csv:2: IPv4 '100.64.0.1/24' has host bits set (did you mean 100.64.0.0/24?): taken as that prefix"
	[ "$(lq_matches 1)" = "dst 100.64.0.0/24" ] || fail "circuit 1: $(lq_matches 1)"
	lq_refused "d.csv:2: IPv4 '100.64.0.1/24' has host bits set (did you mean 100.64.0.0/24?)" --strict
}
test_no_address() {
	csv '1,A,1,x,AP_1,,,,1,1,10,5,'
	net
	lq_claims "d.csv:2: no address: a device needs an IPv4 or an IPv6 address (or both): its circuit's class is written"
	[ "$(jq -c '[.classes[] | select(.leaf and .classid != "1:2") | (.matches | length)]' "$tmp/c.json")" = '[0]' ] ||
		fail "$(jq -c '.classes' "$tmp/c.json")"
	lq_refused "d.csv:2: no address: a device needs an IPv4 or an IPv6 address" --strict
}
test_empty_circuit_id() {
	csv "$ok_row" ',B,2,y,AP_1,,100.64.0.2,,1,1,10,5,'
	net
	lq_refused "d.csv:3: Circuit ID is empty"
}
test_header_without_column() {
	printf '%s\n' 'Circuit ID,Parent Node,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps' '1,AP_1,100.64.0.1,,1,1,10' > "$tmp/d.csv"
	net
	lq_refused "d.csv:1: the header has no 'Upload Max Mbps' column"
}
test_header_column_twice() {
	printf '%s\n' "$H,IPv4" "$ok_row" > "$tmp/d.csv"
	net
	lq_refused "d.csv:1: column 'IPv4' given twice in the header"
}
test_too_few_fields() {
	csv '1,A,1,x,AP_1,,100.64.0.1,,1,1,10'
	net
	lq_refused "d.csv:2: 11 fields, the header (line 1) has 13"
}
test_too_many_fields_without_comment() {
	printf '%s\n' "${H%,Comment}" '1,A,1,x,AP_1,,100.64.0.1,,1,1,10,5,extra' > "$tmp/d.csv"
	net
	lq_refused "d.csv:2: 13 fields, the header (line 1) has 12 (a field with a comma needs double quotes)"
}
test_unclosed_quote() {
	csv "$ok_row" '2,"B,2,y,AP_1,,100.64.0.2,,1,1,10,5,' '3,C,3,z,AP_1,,100.64.0.3,,1,1,10,5,'
	net
	lq_refused 'd.csv:3: the quoted field opened on line 3 has no closing quote'
}
test_text_after_quote() {
	csv '1,"A"x,1,x,AP_1,,100.64.0.1,,1,1,10,5,'
	net
	lq_refused "d.csv:2: text after a field's closing quote"
}
test_only_a_header() {
	csv
	net
	lq_refused 'd.csv: no circuits: the file has only its header'
}
test_empty_csv() {
	: > "$tmp/d.csv"
	net
	lq_refused 'd.csv: no header row and no circuits'
}
test_missing_file() {
	net
	lq_refused "d.csv': No such file or directory"
}
test_json_syntax() {
	csv "$ok_row"
	net $'{\n  "Site_A": {\n    "downloadBandwidthMbps": 1000,\n    "uploadBandwidthMbps": 500,\n  }\n}'
	lq_refused "n.json:5: expected a member name in double quotes"
}
test_json_node_twice() {
	csv "$ok_row"
	net $'{"AP_1": {"downloadBandwidthMbps": 1, "uploadBandwidthMbps": 1},\n "S": {"downloadBandwidthMbps": 1, "uploadBandwidthMbps": 1,\n  "children": {\n   "AP_1": {"downloadBandwidthMbps": 1, "uploadBandwidthMbps": 1}}}}'
	lq_refused "n.json:4: node name 'AP_1' given twice (also line 1)"
}
test_json_bandwidth_missing() {
	csv "$ok_row"
	net $'{"AP_1":\n {"downloadBandwidthMbps": 100}}'
	lq_refused "n.json:2: node 'AP_1' has no \"uploadBandwidthMbps\""
}
test_json_bandwidth_not_a_number() {
	csv "$ok_row"
	net $'{"AP_1": {"downloadBandwidthMbps": 100,\n  "uploadBandwidthMbps": "fast"}}'
	lq_refused "n.json:2: node 'AP_1': \"uploadBandwidthMbps\" 'fast' is not a number of Mbps"
}
# LibreQoS's fix_zero_bandwidths: a node without bandwidth (or 0) takes
# its parent's, at the top the link's.
test_json_zero_bandwidth() {
	csv "$ok_row"
	net $'{"Site_A": {"downloadBandwidthMbps": 1000, "uploadBandwidthMbps": 500,\n "children": {"AP_1": {"downloadBandwidthMbps": 0}}}}'
	lq_claims "n.json:2: node 'AP_1' has \"downloadBandwidthMbps\" 0: 1000 Mbps taken, its parent's" \
		"n.json:2: node 'AP_1' has no \"uploadBandwidthMbps\": 500 Mbps taken, its parent's"
	[ "$(jq -c '[.classes[] | select(.classid == "1:4") | [.ceil, .upload.ceil]]' "$tmp/c.json")" = '[[125000000,62500000]]' ] ||
		fail "$(jq -c '.classes' "$tmp/c.json")"
	lq_refused "n.json:2: node 'AP_1' has \"downloadBandwidthMbps\" 0" --strict
	net $'{"AP_1": {"downloadBandwidthMbps": 0, "uploadBandwidthMbps": 5}}'
	lq_refused "n.json:1: node 'AP_1' has \"downloadBandwidthMbps\" 0 (LibreQoS takes the link's: give --root-mbps DOWN/UP)"
	LQ_ARGS="--root-mbps 900/90" lq_claims "n.json:1: node 'AP_1' has \"downloadBandwidthMbps\" 0: 900 Mbps taken, the link's"
}
# A key the import reads, twice in one node: refused, not one of them
# silently kept.
test_json_key_twice() {
	csv "$ok_row"
	net $'{"Site_A": {"downloadBandwidthMbps": 1000, "uploadBandwidthMbps": 500,\n "children": {},\n "children": {"AP_1": {"downloadBandwidthMbps": 300, "uploadBandwidthMbps": 100}}}}'
	lq_refused "n.json:3: node 'Site_A': \"children\" given twice (also line 2)"
	net $'{"AP_1": {"downloadBandwidthMbps": 300, "uploadBandwidthMbps": 100,\n "uploadBandwidthMbps": 5}}'
	lq_refused "n.json:2: node 'AP_1': \"uploadBandwidthMbps\" given twice (also line 1)"
}
# A FIFO for either file or --keep-ids is refused at once, not read
# until a writer comes.
test_fifo_refused() {
	csv "$ok_row"
	net
	mkfifo "$tmp/fifo"
	local args
	for args in "$tmp/fifo $tmp/n.json" "$tmp/d.csv $tmp/fifo" "$tmp/d.csv $tmp/n.json --keep-ids $tmp/fifo"; do
		# shellcheck disable=SC2086 # the words of each case
		refused_with 1 "fifo': a FIFO or pipe" timeout 10 "$HTBCTL" import libreqos $args
	done
}
# Memory stays bounded by what the formats hold: an array (which network
# .json has none of) is checked, not kept, and a row of 10 million commas
# is refused at the header's fields + 64; both within 150 MB of address
# space (52b6d7f: 381 and 162 MB for these 10 MB inputs).
test_memory_bounded_by_the_format() {
	csv "$ok_row"
	awk 'BEGIN { printf "{\"Site_A\": {\"downloadBandwidthMbps\": 1000, \"uploadBandwidthMbps\": 500, \"extra\": ["
		for (i = 0; i < 5000000; i++) printf "0,"; print "0],"
		print "\"children\": {\"AP_1\": {\"downloadBandwidthMbps\": 300, \"uploadBandwidthMbps\": 100}}}}" }' > "$tmp/n.json"
	( ulimit -v 150000; "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" -o "$tmp/c.ini" ) 2> "$tmp/err" ||
		fail "the array: $(oneline "$tmp/err")"
	net
	{ echo "$H"; printf '1,A,1,d,AP_1,,100.64.0.1,,1,1,10,5,'; head -c 10000000 /dev/zero | tr '\0' ','; echo; } > "$tmp/d.csv"
	( ulimit -v 150000; refused_with 1 "d.csv:2: more than 77 fields" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" )
}
test_json_top_not_object() {
	csv "$ok_row"
	net '[]'
	lq_refused "n.json:1: the top is an array: network.json is an object of nodes"
}
test_json_too_deep_for_htb() {
	local j='{"AP_1": {"downloadBandwidthMbps": 100, "uploadBandwidthMbps": 100}}' i
	for i in 7 6 5 4 3 2 1; do
		j="{\"N$i\": {\"downloadBandwidthMbps\": 100, \"uploadBandwidthMbps\": 100, \"children\": $j}}"
	done
	csv "$ok_row"
	net "$j"
	lq_claims "n.json:1: node 'N7' is below LibreQoS's sixth level of nodes: it hangs on 'N5'" \
		"n.json:1: node 'AP_1' is below LibreQoS's sixth level of nodes: it hangs on 'N5'"
	[ "$(jq -c '[.classes[] | select(.matches | length > 0) | .depth]' "$tmp/c.json")" = '[8]' ] ||
		fail "$(jq -c '[.classes[] | [.classid, .parent, .depth]]' "$tmp/c.json")"
	lq_refused "n.json:1: node 'AP_1' is at HTB level 9" --strict
}
test_circuit_too_deep_for_htb() {
	local j='{"AP_1": {"downloadBandwidthMbps": 100, "uploadBandwidthMbps": 100}}' i
	for i in 6 5 4 3 2 1; do
		j="{\"N$i\": {\"downloadBandwidthMbps\": 100, \"uploadBandwidthMbps\": 100, \"children\": $j}}"
	done
	csv "$ok_row"
	net "$j"
	lq_claims "n.json:1: node 'AP_1' is below LibreQoS's sixth level of nodes: it hangs on 'N5'"
	lq_refused "d.csv:2: Parent Node 'AP_1' is at HTB level 8" --strict
}
test_usage_errors() {
	csv "$ok_row"
	net
	refused_with 2 'import libreqos needs ShapedDevices.csv and network.json' "$HTBCTL" import libreqos "$tmp/d.csv"
	refused_with 2 "unexpected argument 'x'" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" x
	refused_with 2 '--upload-dev needs a device' "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --upload-dev
	refused_with 2 "--upload-dev 'a b'" "$HTBCTL" import libreqos "$tmp/d.csv" "$tmp/n.json" --upload-dev 'a b'
}
test_error_in_json_mode() {
	csv "$ok_row" '2,B,2,y,AP_9,,100.64.0.2,,1,1,10,5,'
	net
	"$HTBCTL" -j import libreqos "$tmp/d.csv" "$tmp/n.json" --strict > "$tmp/out" 2> /dev/null && fail "exit 0"
	jq -e '.error | test("d.csv:3: Parent Node")' "$tmp/out" > /dev/null || fail "$(oneline "$tmp/out")"
}

# With -j and -o, what was written is an object on stdout.
test_json_summary() {
	"$HTBCTL" -j import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 -o "$tmp/c.ini" > "$tmp/out" 2> "$tmp/err" ||
		fail "$(oneline "$tmp/err")"
	[ "$(jq -c '[.circuits, .devices, .addresses, .nodes, .classes]' "$tmp/out")" = "[8,9,16,8,17]" ] ||
		fail "$(oneline "$tmp/out")"
	[ ! -s "$tmp/err" ] || fail "stderr: $(oneline "$tmp/err")"
}

# ---- the round trip ----------------------------------------------------

# roundtrip N: lqos_generate's set of N circuits imported, checked with
# htbctl -j check and every circuit compared with what was generated:
# rate (less where the import said it cut the Mins of the circuit's node),
# ceil, upload rate and ceil, parent node (a generated one for none),
# addresses; every node's ceil its bandwidth; under every class, the
# children's rates add up to no more than its rate (guarantees nest, as
# HTB needs). Notes the import's time.
roundtrip() {
	local n=$1 t0 t1 ms
	lqos_generate "$tmp" "$n"
	t0=$(date +%s%N)
	"$HTBCTL" import libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" --upload-dev up0 \
		--generated-pn 4 -o "$tmp/c.ini" 2> "$tmp/imp.err" || fail "import: $(oneline "$tmp/imp.err")"
	t1=$(date +%s%N)
	sed -n "s/.*node '\([^']*\)': the Download\/Upload Min of its .* each cut to \([0-9.]*\)\/\([0-9.]*\) Mbps.*/\1 \2 \3/p" \
		"$tmp/imp.err" | jq -R -n '[inputs | split(" ") | {key: .[0], value: [((.[1] | tonumber) * 125000 | round),
		((.[2] | tonumber) * 125000 | round)]}] | from_entries' > "$tmp/cut.json"
	ms=$(( (t1 - t0) / 1000000 ))
	"$HTBCTL" -j check config "$tmp/c.ini" > "$tmp/c.json" 2> "$tmp/warn" || fail "check: $(oneline "$tmp/warn")"
	[ ! -s "$tmp/warn" ] || fail "check warns: $(head -c 300 "$tmp/warn")"
	# which class is which circuit or node: the comments above [class X]
	awk '/^# circuit / { k = "circuit"; v = $0; sub(/.*\(/, "", v); sub(/\)$/, "", v); next }
	     /^# node / { k = "node"; v = $3; gsub(/"/, "", v); next }
	     /^\[class / { c = $2; sub(/\]/, "", c); if (k) printf "{\"class\":\"%s\",\"%s\":\"%s\"}\n", c, k, v; k = "" }' \
		"$tmp/c.ini" > "$tmp/names.jsonl"
	jq -n --slurpfile chk "$tmp/c.json" --slurpfile nm "$tmp/names.jsonl" --slurpfile exp "$tmp/expected.jsonl" \
		--slurpfile cut "$tmp/cut.json" '
		def fix($g): (if .parent == "" and ($g.parent | startswith("Generated_PN_")) then .parent = $g.parent else . end)
			| (if $cut[0][.parent] then .down[0] = ([.down[0], $cut[0][.parent][0]] | min)
			   | .up[0] = ([.up[0], $cut[0][.parent][1]] | min) else . end);
		($nm | map({key: .class, value: .}) | from_entries) as $by
		| [$chk[0].classes[] | select($by[.classid].circuit)] as $circ
		| ($circ | map({key: $by[.classid].circuit, value: {
			parent: ($by[.parent].node // ""), down: [.rate, .ceil], up: [.upload.rate, .upload.ceil],
			ips: (.matches | map(.prefix) | sort), types: (.matches | map(.type) | unique)}}) | from_entries) as $got
		| ($exp | map({key: .id, value: {parent, down, up, ips: (.ips | sort), types: ["dst"]}}) | from_entries) as $want
		| [$want | keys[] | . as $id | select(($want[$id] | fix($got[$id])) != $got[$id])] as $bad
		| {circuits: ($circ | length), want: ($want | length), bad: ($bad | length),
		   first: ($bad[:1] | map({id: ., want: $want[.], got: $got[.]}))}' > "$tmp/cmp.json" || fail "jq"
	[ "$(jq -c '[.circuits, .want, .bad]' "$tmp/cmp.json")" = "[$n,$n,0]" ] ||
		fail "$(jq -c . "$tmp/cmp.json" | head -c 600)"
	# the nodes: network.json's bandwidths are the classes' ceilings
	jq -c '[.. | objects | to_entries[] | select(.value | type == "object" and has("downloadBandwidthMbps"))
		| {key: .key, value: [.value.downloadBandwidthMbps * 125000, .value.uploadBandwidthMbps * 125000]}]
		| from_entries' "$tmp/network.json" > "$tmp/nodes_want.json"
	jq -n --slurpfile chk "$tmp/c.json" --slurpfile nm "$tmp/names.jsonl" '
		($nm | map({key: .class, value: .}) | from_entries) as $by
		| [$chk[0].classes[] | select($by[.classid].node and ($by[.classid].node | startswith("Generated_PN_") | not))
		   | {key: $by[.classid].node, value: [.ceil, .upload.ceil]}]
		| from_entries' > "$tmp/nodes_got.json"
	[ "$(jq -S -c . "$tmp/nodes_got.json")" = "$(jq -S -c . "$tmp/nodes_want.json")" ] ||
		fail "nodes differ: $(diff <(jq -S . "$tmp/nodes_want.json") <(jq -S . "$tmp/nodes_got.json") | head -c 400)"
	jq -c '.classes as $c | [$c[] | select(.leaf | not) | . as $p
		| [$c[] | select(.parent == $p.classid)] as $k
		| select(([$k[].rate] | add) > $p.rate or ([$k[].upload.rate] | add) > $p.upload.rate) | $p.classid]' \
		"$tmp/c.json" > "$tmp/over.json"
	[ "$(cat "$tmp/over.json")" = "[]" ] || fail "children's rates above their parent's: $(head -c 300 "$tmp/over.json")"
	note "$n circuits ($(wc -l < "$tmp/ShapedDevices.csv") lines, $(jq length "$tmp/nodes_want.json") nodes) imported in ${ms} ms, Mins cut under $(jq length "$tmp/cut.json") nodes"
}

test_roundtrip_10000() { roundtrip 10000; }

# ids FILE: "KEY CLASS" per class of an import's config, KEY c:ID or n:NAME
ids() {
	awk '/^# circuit / { k = $0; sub(/.*" \(/, "c:", k); sub(/\)$/, "", k); next }
	     /^# node / { k = "n:" $3; gsub(/"/, "", k); next }
	     /^\[class / { c = $2; sub(/\]/, "", c); if (k) print k, c; k = "" }' "$1" | sort
}

# --keep-ids: a CRM export with 100 new circuits at the top and every 50th
# circuit gone keeps every other circuit's and every node's class id; the
# new ones get ids the old config did not use.
test_keep_ids_10000() {
	lqos_generate "$tmp" 10000
	ok "$HTBCTL" import libreqos "$tmp/ShapedDevices.csv" "$tmp/network.json" --upload-dev up0 -o "$tmp/old.ini"
	awk -F, 'NR == 3 { print; for (i = 1; i <= 100; i++)
			printf "NEW-%d,New %d,%d,CPE,AP_1_1_1,,198.18.%d.%d,,1,1,50,10,,\n", i, i, 90000 + i, int(i / 256), i % 256
		next }
		 NR > 3 && $1 ~ /^[0-9]+$/ && $1 % 50 == 0 { next } { print }' "$tmp/ShapedDevices.csv" > "$tmp/new.csv"
	ok "$HTBCTL" import libreqos "$tmp/new.csv" "$tmp/network.json" --upload-dev up0 --keep-ids "$tmp/old.ini" -o "$tmp/new.ini"
	ids "$tmp/old.ini" > "$tmp/old.ids"
	ids "$tmp/new.ini" > "$tmp/new.ids"
	local kept moved new reused
	kept=$(join "$tmp/old.ids" "$tmp/new.ids" | awk '$2 == $3' | wc -l)
	moved=$(join "$tmp/old.ids" "$tmp/new.ids" | awk '$2 != $3' | wc -l)
	new=$(join -v 2 "$tmp/old.ids" "$tmp/new.ids" | wc -l)
	reused=$(join -v 2 "$tmp/old.ids" "$tmp/new.ids" | awk '{ print $2 }' | grep -cxFf <(awk '{ print $2 }' "$tmp/old.ids"))
	[ "$new" = 100 ] && [ "$moved" = 0 ] && [ "$reused" = 0 ] &&
		[ "$kept" = $(($(wc -l < "$tmp/new.ids") - 100)) ] ||
		fail "kept $kept, moved $moved, new $new (of them on an old id: $reused)"
	grep -q "import: $kept of them kept their class id" "$tmp/out" || fail "no count $kept: $(oneline "$tmp/out")"
	"$HTBCTL" check config "$tmp/new.ini" > /dev/null 2>&1 || fail "check of the new config"
	note "$kept ids kept, 100 new"
}

# A --keep-ids file that is no import's config keeps nothing and changes
# nothing; one that is missing is an error like the others.
test_keep_ids_other_file() {
	ok "$HTBCTL" import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 -o "$tmp/a.ini"
	ok "$HTBCTL" import libreqos $sample/ShapedDevices.csv $sample/network.json --generated-pn 1 --keep-ids configs/seed003.ini -o "$tmp/b.ini"
	grep -q "0 of them kept" "$tmp/out" || fail "$(oneline "$tmp/out")"
	cmp -s "$tmp/a.ini" "$tmp/b.ini" || fail "differs"
	csv "$ok_row"
	net
	lq_refused "nothere.ini': No such file or directory" --keep-ids "$tmp/nothere.ini"
}

# Past one major's 65535 minors the ids go on in major 2: 70,000 circuits.
# 4 generated parent nodes (roundtrip gives --generated-pn 4)
test_roundtrip_beyond_16_bits() {
	roundtrip 70000
	grep -q '^\[class 1:ffff\]$' "$tmp/c.ini" && grep -q '^\[class 2:1\]$' "$tmp/c.ini" ||
		fail "no 1:ffff then 2:1"
	[ "$(jq '.classes | length' "$tmp/c.json")" = $((70000 + 145 + 4 + 2)) ] || fail "classes: $(jq '.classes | length' "$tmp/c.json")"
}

. "$(dirname "$0")/../lib/runner.sh"
