#!/usr/bin/env bash
# `htbctl simulate` (issue 11): HTB's fluid ideal for a config and offered
# rates. Values asserted from -j (bytes/s) on seed 003's tree and on the
# cases of tests/unit/test_fluid.c; the text form's shape; bad offers
# refused with one line on stderr, exit 2 and nothing on stdout. Needs no
# privileges.
RUN_TOPO=none
needs() { echo "$HTBCTL" jq; }
seed=configs/seed003.ini

# sim CONFIG OFFER...: the JSON into $tmp/out (exit status kept)
sim() {
	local conf=$1
	shift
	"$HTBCTL" -j simulate config "$conf" offer "$@" > "$tmp/out" 2> "$tmp/err"
}

# expect 'CLASS=FIELD=VALUE ...': each class's JSON field has VALUE
# (FIELD of a nested value as jq path, e.g. borrowed_from[0].classid)
expect() {
	local kv id field want got bad=
	for kv in $1; do
		id=${kv%%=*} field=${kv#*=} want=${field#*=} field=${field%%=*}
		got=$(jq -r --arg id "$id" ".classes[] | select(.classid == \$id) | .$field" "$tmp/out")
		[ "$got" = "$want" ] || bad+=" $id.$field=$got (want $want)"
	done
	[ -z "$bad" ] || fail "${bad# } $(head -c 200 "$tmp/err")"
}

# conf NAME [SECTION KEY=VALUE...]... : a config in $tmp/NAME.ini;
# "-" starts a class section: - ID parent=... rate=...
conf() {
	local f=$tmp/$1.ini
	shift
	: > "$f"
	for w; do
		if [ "$w" = - ]; then
			printf '\n' >> "$f"
		elif [[ $w == *=* ]]; then
			printf '%s = %s\n' "${w%%=*}" "${w#*=}" >> "$f"
		else
			printf '[class %s]\n' "$w" >> "$f"
		fi
	done
	echo "$f"
}

# --- values ---------------------------------------------------------
# seed 003: A 15, B 2, C 3 Mbit/s
test_seed003_rates() {
	sim "$seed" 1:11=15mbit 1:12=4mbit 1:13=15mbit
	expect "1:11=gets=1875000 1:12=gets=250000 1:13=gets=375000 1:30=gets=0 1:1=gets=2500000"
}
test_seed003_own_borrowed_lender_limits() {
	sim "$seed" 1:11=15mbit 1:12=4mbit 1:13=15mbit
	expect "1:11=own=1250000 1:11=borrowed=625000 1:11=borrowed_from[0].classid=1:1
	 1:11=borrowed_from[0].level=1 1:13=borrowed=125000 1:1=lent=750000
	 1:11=limited_by=demand 1:12=limited_by=ceil 1:13=limited_by=spare
	 1:30=limited_by=idle 1:11=offered=1875000 1:11=backlogged=false"
}
# seed 003 backlogged, 1:30 idle: A 5/6 of the spare
test_seed003_backlogged_one_idle() {
	sim "$seed" all=max 1:30=0
	expect "1:11=gets=1875000 1:13=gets=375000 1:12=gets=250000 1:11=offered=null
	 1:11=backlogged=true"
}
# seed 003 all backlogged: 5.5 Mbit/s spare 20 : 4 : 1
test_seed003_all_backlogged() {
	sim "$seed" all=max
	expect "1:11=gets=1800000 1:13=gets=360000 1:30=gets=90000 1:12=gets=250000"
}
test_later_offers_win_over_all() {
	sim "$seed" all=10mbit 1:12=1mbit 1:30=0
	expect "1:12=offered=125000 1:11=offered=1250000 1:30=offered=0 1:12=gets=125000"
}

test_quantum_1_3() {
	sim "$(conf q13 1:1 rate=10mbit - 1:11 parent=1:1 rate=1mbit ceil=10mbit quantum=1000 \
		- 1:12 parent=1:1 rate=1mbit ceil=10mbit quantum=3000)" all=max
	expect "1:11=gets=375000 1:12=gets=875000"
}

conf_q125() {
	conf q125 1:1 rate=10mbit - 1:11 parent=1:1 rate=1mbit ceil=10mbit quantum=1000 \
		- 1:12 parent=1:1 rate=1mbit ceil=10mbit quantum=2000 \
		- 1:13 parent=1:1 rate=1mbit ceil=10mbit quantum=5000
}
test_quantum_1_2_5() {
	sim "$(conf_q125)" all=inf
	expect "1:11=gets=234375 1:12=gets=343750 1:13=gets=671875"
}
test_quantum_1_2_third_idle() {
	sim "$(conf_q125)" 1:11=max 1:12=max
	expect "1:11=gets=458334 1:12=gets=791666 1:13=gets=0"
}

# prio 0 first, then 1, 2 keeps its rate
test_prio() {
	sim "$(conf prio 1:1 rate=10mbit - 1:11 parent=1:1 rate=1mbit ceil=5mbit prio=0 \
		- 1:12 parent=1:1 rate=1mbit ceil=10mbit prio=1 \
		- 1:13 parent=1:1 rate=1mbit ceil=10mbit prio=2)" all=max
	expect "1:11=gets=625000 1:12=gets=500000 1:13=gets=125000 1:11=limited_by=ceil
	 1:13=limited_by=spare"
}

# ceil-capped and demand-limited leave the rest
test_capped_leave_the_rest() {
	sim "$(conf capped 1:1 rate=20mbit \
		- 1:11 parent=1:1 rate=2mbit ceil=3mbit quantum=1500 \
		- 1:12 parent=1:1 rate=2mbit ceil=20mbit quantum=1500 \
		- 1:13 parent=1:1 rate=2mbit ceil=20mbit quantum=1500 \
		- 1:14 parent=1:1 rate=2mbit ceil=20mbit quantum=1500)" all=max 1:12=4mbit
	expect "1:11=gets=375000 1:12=gets=500000 1:13=gets=812500 1:14=gets=812500
	 1:11=limited_by=ceil 1:12=limited_by=demand"
}

# two_groups NAME RATE_2 CEIL_2 RATE_3 RATE_2x RATE_3x: 1:1 at 30mbit over
# 1:2 (1:21, 1:22) and 1:3 (ceil 30mbit; 1:31, 1:32), leaves' ceil 30mbit
two_groups() {
	conf "$1" 1:1 rate=30mbit - 1:2 parent=1:1 rate="$2" ceil="$3" \
		- 1:3 parent=1:1 rate="$4" ceil=30mbit \
		- 1:21 parent=1:2 rate="$5" ceil=30mbit quantum=1000 \
		- 1:22 parent=1:2 rate="$5" ceil=30mbit quantum=1000 \
		- 1:31 parent=1:3 rate="$6" ceil=30mbit quantum=1000 \
		- 1:32 parent=1:3 rate="$6" ceil=30mbit quantum=1000
}

# 3 levels: 1:3 lends first, then the top to all
test_three_levels() {
	sim "$(two_groups three 4mbit 30mbit 6mbit 2mbit 1mbit)" all=max
	expect "1:21=gets=875000 1:31=gets=1000000 1:31=borrowed_from[0].classid=1:3
	 1:31=borrowed_from[0].rate=250000 1:31=borrowed_from[1].classid=1:1
	 1:31=borrowed_from[1].level=2 1:31=borrowed_from[1].rate=625000
	 1:3=lent=500000 1:1=lent=2500000 1:2=gets=1750000 1:2=own=500000"
}
# text: a line per class, lenders by id, totals of inner classes
test_text_three_levels() {
	"$HTBCTL" simulate config "$(two_groups three 4mbit 30mbit 6mbit 2mbit 1mbit)" offer all=max > "$tmp/txt"
	grep -q '^    class 1:31 parent 1:3 prio 0 rate 1Mbit ceil 30Mbit quantum 1000 offered max gets 8Mbit own 1Mbit borrowed 7Mbit (2Mbit from 1:3, 5Mbit from 1:1) limited by spare$' "$tmp/txt" &&
	grep -q '^  class 1:3 parent 1:1 rate 6Mbit ceil 30Mbit gets 16Mbit own 6Mbit lent 4Mbit$' "$tmp/txt" &&
	[ "$(wc -l < "$tmp/txt")" = 7 ] || fail "$(oneline "$tmp/txt")"
}

test_ancestor_ceil_caps_a_group() {
	sim "$(two_groups group 2mbit 6mbit 2mbit 1mbit 1mbit)" all=max
	expect "1:21=gets=375000 1:22=gets=375000 1:31=gets=1500000 1:21=limited_by=ancestor_ceil
	 1:21=limiter=1:2 1:31=limiter=null"
}
test_text_ancestor_ceil_names_the_class() {
	"$HTBCTL" simulate config "$(two_groups group 2mbit 6mbit 2mbit 1mbit 1mbit)" offer all=max > "$tmp/txt"
	grep -q 'class 1:21 .* limited by ancestor ceil 1:2$' "$tmp/txt" || fail "$(oneline "$tmp/txt")"
}

test_ceil_below_rate() {
	sim "$(conf below 1:1 rate=10mbit ceil=6mbit - 1:11 parent=1:1 rate=4mbit ceil=2mbit \
		- 1:12 parent=1:1 rate=1mbit ceil=10mbit)" all=max
	expect "1:11=gets=250000 1:11=own=250000 1:12=gets=500000"
}

test_nothing_offered_all_idle() {
	sim "$seed"
	expect "1:11=gets=0 1:11=limited_by=idle 1:1=gets=0 1:1=lent=0"
}

# work conservation: the sum of what the leaves get is the parent's rate,
# to the byte
test_work_conserving() {
	local sum
	sim "$(conf wc 1:1 rate=8000007bit - 1:11 parent=1:1 rate=8008bit ceil=1gbit quantum=1000 \
		- 1:12 parent=1:1 rate=8016bit ceil=1gbit quantum=1337 \
		- 1:13 parent=1:1 rate=8024bit ceil=1gbit quantum=1674)" all=max
	sum=$(jq '[.classes[] | select(.leaf) | .gets] | add' "$tmp/out")
	[ "$sum" = 1000000 ] || fail "leaves got $sum of 1000000"
}

# --- refusals -------------------------------------------------------
# refuses WANT ARG...: exit 2, one line on stderr with WANT, no stdout
refuses() {
	local want=$1 rc=0
	shift
	"$HTBCTL" simulate "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ $rc = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ] &&
		grep -qF -- "$want" "$tmp/err" ||
		fail "exit $rc, stdout $(wc -c < "$tmp/out") bytes, stderr: $(head -c 300 "$tmp/err")"
}
test_refuses_an_unknown_class() {
	refuses "offer '1:99=1mbit': no class 1:99 in $seed" config "$seed" offer 1:99=1mbit
}
test_refuses_an_inner_class() {
	refuses "offer '1:1=1mbit': 1:1 is an inner class" config "$seed" offer 1:1=1mbit
}
test_refuses_a_bad_unit() {
	refuses "offer '1:11=15megs': rate '15megs': unknown unit" config "$seed" offer 1:11=15megs
}
test_refuses_a_missing_eq() { refuses "offer '1:11': no '=' (CLASS=RATE)" config "$seed" offer 1:11; }
test_refuses_a_bad_class_id() { refuses "offer 'x=1mbit': 'x' is no class id" config "$seed" offer x=1mbit; }
test_refuses_a_negative_rate() {
	refuses "offer '1:11=-1mbit': rate '-1mbit'" config "$seed" offer 1:11=-1mbit
}
test_refuses_words_before_offer() {
	refuses "unexpected argument '1:11=1mbit'" config "$seed" 1:11=1mbit
}
test_refuses_no_config() { refuses "missing 'config'" offer all=max; }

# an invalid config: check's FILE:LINE lines, exit 1, nothing on stdout
test_invalid_config_as_check() {
	local rc=0
	printf '[class 1:1]\nrate = 1megs\n' > "$tmp/bad.ini"
	"$HTBCTL" simulate config "$tmp/bad.ini" offer all=max > "$tmp/out" 2> "$tmp/err" || rc=$?
	"$HTBCTL" check config "$tmp/bad.ini" > /dev/null 2> "$tmp/check_err"
	[ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q "^$tmp/bad.ini:2: " "$tmp/err" &&
		diff <(grep -v rejected "$tmp/err") <(grep -v rejected "$tmp/check_err") > /dev/null ||
		fail "exit $rc: $(head -c 300 "$tmp/err")"
}

. "$(dirname "$0")/../lib/runner.sh"
