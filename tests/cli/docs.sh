#!/usr/bin/env bash
# The documents point at what exists: every repo path that README.md and
# docs/*.md (not the dated log) name (src/, include/, bpf/, tests/, scripts/, bench/, docs/,
# configs/, systemd/, or a folder of src/ as HACKING.md writes them) is
# there, and every function HACKING.md names as `name()` is defined in
# the sources. (The layout moved in issue 25; a map that names files that
# are not there is worse than none.)
RUN_TOPO=none
needs() { echo grep; }

# paths DOC: the repo paths DOC names, one per line: a word that starts
# with one of the repo's folders (not inside another path: /sys/fs/bpf/...,
# ../shared/docs/..., build/tests/...), globs and placeholders (FILE, NAME,
# N, <name>) left out
paths() {
	grep -oP '(?<![A-Za-z0-9_./-])(src|include|bpf|tests|scripts|bench|docs|configs|systemd)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/](?![<A-Za-z0-9_])' "$1" |
		grep -vE '[*]|[A-Z]{2,}|_N_|/N[._]|\.\.\.|/$' | sort -u
	# HACKING.md's short forms below src/ ("loader/plan.c")
	[ "$(basename "$1")" != HACKING.md ] ||
		grep -oE '`(cli|common|config|netlink|loader|observe|share|daemon|import)/[a-z_]+\.[ch]`' "$1" |
			tr -d '`' | sed 's|^|src/|' | sort -u
}
check_doc() {	# DOC: fails naming every path DOC names that is not there
	local p missing=
	while read -r p; do
		# a test binary or tool is named without its .c
		[ -e "$p" ] || [ -e "$p.c" ] || missing+=" $p"
	done < <(paths "$1")
	[ -z "$missing" ] || fail "$1 names what is not there:$missing"
}

# docs/log.md is history: it names files as they were then
for d in README.md docs/*.md; do
	[ "$d" != docs/log.md ] || continue
	n=$(basename "$d" .md)
	eval "test_paths_in_$n() { check_doc $d; }"
done

test_functions_in_hacking() {
	local f missing=
	while read -r f; do
		grep -rqE "\b$f\(" src include bpf tests bench || missing+=" $f()"
	done < <(grep -oE '`[a-z_][a-z0-9_]*\(\)`' docs/HACKING.md | tr -d '`()' | sort -u)
	[ -z "$missing" ] || fail "docs/HACKING.md names functions that are not defined:$missing"
}

# No tracked file keeps a merge's conflict markers (a merge of two
# helpers' log entries once built and passed with them in docs/log.md).
test_no_conflict_markers() {
	local hits
	hits=$(grep -rnE --exclude-dir=build --exclude-dir=.git --exclude-dir=.vm-cache \
		--exclude=docs.sh '^(<<<<<<<|>>>>>>>) ' . | head -3)
	[ -z "$hits" ] || fail "conflict markers: $hits"
}

. "$(dirname "$0")/../lib/runner.sh"
