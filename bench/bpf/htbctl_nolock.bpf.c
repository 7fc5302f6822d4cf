// SPDX-License-Identifier: GPL-2.0
/*
 * The egress program without its bpf_spin_locks: only for scripts/bench.sh
 * to measure what the locks cost and what they protect (lost charges when
 * two CPUs share a parent). Built by scripts/bench.sh, never installed.
 */
#define HTB_NO_LOCK 1
#include "../../bpf/htbctl.bpf.c"
