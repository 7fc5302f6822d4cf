// SPDX-License-Identifier: GPL-2.0
/*
 * Where a loaded BPF program's time goes, by source line: perf's samples
 * (`perf script -F ip,sym` on stdin) mapped through the program's
 * jited_line_info and line_info, which bpftool prints only when it is
 * built with a disassembler (Debian's is not). scripts/bench-profile.sh
 * runs it; docs/log.md, "2026-12-05: The leaf's step, 1.5x", is what it
 * was written for.
 *
 *   prog_lines PROG_ID [TOP] < samples
 *
 * Prints the samples' share per symbol (the kernel's clock, test_run,
 * each of the program's functions), then per source line of the program
 * (a sample lands on the instruction after a slow one as often as on the
 * slow one: read a line's neighbours too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

struct line {
	__u64 addr;
	const char *where;	/* file:line */
	const char *text;
	long hits;
};

struct tally {
	char name[128];
	long hits;
};

static int by_addr(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_hits(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;

	return x->hits < y->hits ? 1 : x->hits > y->hits ? -1 : 0;
}

static int line_by_hits(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return x->hits < y->hits ? 1 : x->hits > y->hits ? -1 : 0;
}

/* The program's line records, sorted by address; NULL on failure. */
static struct line *read_lines(int fd, __u32 *n)
{
	struct bpf_prog_info info = { 0 }, full = { 0 };
	__u32 len = sizeof(info);
	struct bpf_line_info *li;
	struct line *out;
	struct btf *btf;
	__u64 *jli;

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.nr_jited_line_info)
		return NULL;
	*n = info.nr_jited_line_info;
	li = calloc(info.nr_line_info, sizeof(*li));
	jli = calloc(*n, sizeof(*jli));
	out = calloc(*n, sizeof(*out));
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!li || !jli || !out || !btf)
		return NULL;
	full.nr_line_info = info.nr_line_info;
	full.line_info_rec_size = sizeof(*li);
	full.line_info = (unsigned long)li;
	full.nr_jited_line_info = *n;
	full.jited_line_info_rec_size = sizeof(*jli);
	full.jited_line_info = (unsigned long)jli;
	len = sizeof(full);
	if (bpf_obj_get_info_by_fd(fd, &full, &len))
		return NULL;
	for (__u32 i = 0; i < *n; i++) {
		const char *f = btf__name_by_offset(btf, li[i].file_name_off);
		const char *base = f ? strrchr(f, '/') : NULL;
		char buf[256];

		snprintf(buf, sizeof(buf), "%s:%u", base ? base + 1 : f ? f : "?",
			 BPF_LINE_INFO_LINE_NUM(li[i].line_col));
		out[i].addr = jli[i];
		out[i].where = strdup(buf);
		out[i].text = btf__name_by_offset(btf, li[i].line_off);
	}
	qsort(out, *n, sizeof(*out), by_addr);
	return out;
}

/* the line record covering addr (the last at or below it), or NULL */
static struct line *line_at(struct line *l, __u32 n, __u64 addr)
{
	__u32 lo = 0, hi = n;

	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;

		if (l[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &l[lo - 1] : NULL;
}

static void count_symbol(struct tally *t, int *nt, int max, const char *sym)
{
	for (int i = 0; i < *nt; i++)
		if (!strcmp(t[i].name, sym)) {
			t[i].hits++;
			return;
		}
	if (*nt < max) {
		snprintf(t[*nt].name, sizeof(t[*nt].name), "%.127s", sym);
		t[(*nt)++].hits = 1;
	}
}

int main(int argc, char **argv)
{
	static struct tally syms[512];
	int fd, nsym = 0, top = argc > 2 ? atoi(argv[2]) : 40;
	long total = 0;
	char buf[512];
	struct line *l;
	__u32 n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PROG_ID [TOP] < perf-script-output\n", argv[0]);
		return 2;
	}
	fd = bpf_prog_get_fd_by_id((__u32)strtoul(argv[1], NULL, 10));
	l = fd < 0 ? NULL : read_lines(fd, &n);
	if (!l) {
		fprintf(stderr, "prog_lines: program %s: no jited line info (not loaded, "
			"or not root)\n", argv[1]);
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin)) {
		char sym[256];
		unsigned long long ip;
		struct line *at;

		if (sscanf(buf, "%llx %255s", &ip, sym) != 2)
			continue;
		total++;
		count_symbol(syms, &nsym, 512, sym);
		if (strncmp(sym, "bpf_prog_", 9))
			continue;
		at = line_at(l, n, ip);
		if (at)
			at->hits++;
	}
	if (!total) {
		fprintf(stderr, "prog_lines: no samples on stdin\n");
		return 1;
	}
	/* one tally per file:line, summed into its first record */
	for (__u32 i = 0; i < n; i++)
		for (__u32 k = i + 1; k < n; k++)
			if (l[k].hits && !strcmp(l[i].where, l[k].where)) {
				l[i].hits += l[k].hits;
				l[k].hits = 0;
			}
	qsort(syms, nsym, sizeof(*syms), by_hits);
	qsort(l, n, sizeof(*l), line_by_hits);
	printf("%ld samples\n\nby symbol\n", total);
	for (int i = 0; i < nsym && i < 12; i++)
		printf("%6.2f%%  %s\n", 100.0 * syms[i].hits / total, syms[i].name);
	printf("\nby line of the program (of all samples)\n");
	for (int i = 0; i < (int)n && i < top && l[i].hits; i++)
		printf("%6.2f%%  %-22s %.70s\n", 100.0 * l[i].hits / total, l[i].where,
		       l[i].text ? l[i].text + strspn(l[i].text, " \t") : "");
	return 0;
}
