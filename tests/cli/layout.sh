#!/usr/bin/env bash
# The layout has no circles (issue 25): no object of src/ uses a function
# or variable of another that, directly or around a loop, uses one of its
# own. Read from the built objects (nm: what each defines and what it
# needs), so a call through any header counts; tsort finds the loops. At
# fd038b3 it found two: import_read with import_u32 and with import_filter
# (the tree helpers lived in read.c; they are import/tree.c now).
RUN_TOPO=none
needs() { echo "$HTBCTL"; echo nm; echo tsort; }

# edges: "USER DEFINER" for every symbol an object of $OUT/src needs that
# another one defines
edges() {
	local o m
	find "$OUT/src" -name '*.o' | sort | while read -r o; do
		m=${o#"$OUT"/src/}
		[ -f "src/${m%.o}.c" ] || continue	# left by an older layout
		nm "$o" | awk -v m="${m%.o}" '$1 == "U" { print "U", m, $2 }
			$2 ~ /^[TDRBC]$/ { print "D", m, $3 }'
	done | awk '$1 == "D" { def[$3] = $2; next } { use[NR] = $2 " " $3 }
		END { for (i in use) { split(use[i], a, " ")
			if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]] } }' | sort -u
}

test_no_object_loops() {
	local e loops
	e=$(edges)
	[ -n "$e" ] || fail "no edges read from $OUT/src (nm found nothing)"
	loops=$(tsort <<<"$e" 2>&1 >/dev/null | grep -v 'input contains a loop' | sed 's/^tsort: //' | tr '\n' ' ')
	[ -z "$loops" ] || fail "objects that use each other around a loop: $loops"
}

. "$(dirname "$0")/../lib/runner.sh"
