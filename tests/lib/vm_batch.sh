#!/usr/bin/env bash
# Runs test files one after another in one boot of the VM, for tests/run.sh
# (a boot costs 7-20 s, one per file added two minutes to the suite):
#     bash tests/lib/vm_batch.sh "FILE [CASE...]"...
# Each file runs in a bash of its own under `timeout` (BATCH_TIMEOUT, 600 s
# by default, as each file's VM had), its output saved in
# $RESULTS/batch/NAME.log and printed when it ends, its exit status and
# seconds in NAME.rc. A file that left the VM unusable takes the files
# after it with it: tests/run.sh counts each file without an .rc as failed.
set -u
dir=${RESULTS:?}/batch
mkdir -p "$dir"
for run; do
	read -r f _ <<<"$run"
	name=$(basename "$f" .sh)
	t0=$SECONDS
	# shellcheck disable=SC2086 # FILE and its cases, as words
	timeout -k 10 "${BATCH_TIMEOUT:-600}" bash $run > "$dir/$name.log" 2>&1
	rc=$?
	[ $rc = 124 ] && echo "FAIL $name: still running after ${BATCH_TIMEOUT:-600} s, ended" >> "$dir/$name.log"
	echo "$rc $((SECONDS - t0))" > "$dir/$name.rc"
	cat "$dir/$name.log"
	echo "--- $run: $((SECONDS - t0)) s"
done
