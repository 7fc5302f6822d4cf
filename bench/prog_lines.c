// SPDX-License-Identifier: GPL-2.0
/*
 * Where a loaded BPF program's time goes, by source line: perf's samples
 * (`perf script -F ip,sym` on stdin) mapped through the program's line
 * info by libbpf's bpf_prog_linfo, which bpftool uses only when it is
 * built with a disassembler (Debian's is not). scripts/bench-profile.sh
 * runs it; docs/log.md, "2026-12-05: The leaf's step, 1.5x", is what it
 * was written for.
 *
 *   prog_lines PROG_ID [TOP] < samples
 *
 * Prints the samples' share per symbol (the twelve largest: the kernel's
 * clock, test_run, the program's functions), then per source line of the
 * program, the TOP largest (default 40). A sample counts for a line only
 * inside one of the program's own jitted functions. (A sample lands on
 * the instruction after a slow one as often as on the slow one: read a
 * line's neighbours too.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MAX_SYMS	512
#define MAX_LINES	4096

struct tally {
	char name[128];		/* a symbol, or a line's file:line */
	const char *text;	/* a line's source */
	long hits;
};

/* The program's functions and line info, as the kernel reports them. */
struct prog {
	struct bpf_prog_info info;
	struct bpf_prog_linfo *linfo;
	struct btf *btf;
	__u64 *ksyms;
	__u32 *lens;
	void *li, *jli;
};

static int by_hits(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;

	return x->hits < y->hits ? 1 : x->hits > y->hits ? -1 : 0;
}

static int by_ip(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* Fills pr from the program fd; NULL, or why not. */
static const char *prog_read(int fd, struct prog *pr)
{
	struct bpf_prog_info *in = &pr->info, first = { 0 };
	__u32 len = sizeof(first);

	if (bpf_obj_get_info_by_fd(fd, &first, &len))
		return strerror(errno);
	if (!first.nr_jited_ksyms || !first.nr_jited_line_info)
		return "not JITed, or no line info (no BTF)";
	pr->ksyms = calloc(first.nr_jited_ksyms, sizeof(*pr->ksyms));
	pr->lens = calloc(first.nr_jited_func_lens, sizeof(*pr->lens));
	pr->li = calloc(first.nr_line_info, first.line_info_rec_size);
	pr->jli = calloc(first.nr_jited_line_info, first.jited_line_info_rec_size);
	if (!pr->ksyms || !pr->lens || !pr->li || !pr->jli)
		return "out of memory";
	*in = (struct bpf_prog_info){
		.nr_jited_ksyms = first.nr_jited_ksyms,
		.jited_ksyms = (unsigned long)pr->ksyms,
		.nr_jited_func_lens = first.nr_jited_func_lens,
		.jited_func_lens = (unsigned long)pr->lens,
		.nr_line_info = first.nr_line_info,
		.line_info_rec_size = first.line_info_rec_size,
		.line_info = (unsigned long)pr->li,
		.nr_jited_line_info = first.nr_jited_line_info,
		.jited_line_info_rec_size = first.jited_line_info_rec_size,
		.jited_line_info = (unsigned long)pr->jli,
	};
	len = sizeof(*in);
	if (bpf_obj_get_info_by_fd(fd, in, &len))
		return strerror(errno);
	if (!in->jited_ksyms || !in->jited_line_info || !pr->ksyms[0])
		return "the kernel hides its addresses (sysctl kernel.kptr_restrict)";
	pr->linfo = bpf_prog_linfo__new(in);
	if (!pr->linfo)
		return "libbpf could not read its line info";
	pr->btf = btf__load_from_kernel_by_id(first.btf_id);
	return pr->btf ? NULL : "its BTF could not be read";
}

/* The program's function holding ip, or -1: another program, the kernel. */
static int func_of(const struct prog *pr, __u64 ip)
{
	for (__u32 i = 0; i < pr->info.nr_jited_ksyms; i++)
		if (ip >= pr->ksyms[i] && ip < pr->ksyms[i] + pr->lens[i])
			return (int)i;
	return -1;
}

static struct tally *count(struct tally *t, int *n, int max, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	if (*n == max)
		return NULL;
	snprintf(t[*n].name, sizeof(t[*n].name), "%.127s", name);
	return &t[(*n)++];
}

/* Each sampled address's line, counted as many times as it was sampled
 * (ips sorted: one lookup per address). */
static void count_lines(const struct prog *pr, const __u64 *ips, size_t n,
			struct tally *lines, int *nl)
{
	for (size_t i = 0, k; i < n; i = k) {
		const struct bpf_line_info *l;
		const char *f, *base;
		struct tally *t;
		char where[128];
		int fn = func_of(pr, ips[i]);

		for (k = i; k < n && ips[k] == ips[i]; k++)
			;
		l = fn < 0 ? NULL : bpf_prog_linfo__lfind_addr_func(pr->linfo, ips[i], fn, 0);
		if (!l)
			continue;
		f = btf__name_by_offset(pr->btf, l->file_name_off);
		base = f ? strrchr(f, '/') : NULL;
		snprintf(where, sizeof(where), "%s:%u", base ? base + 1 : f ? f : "?",
			 BPF_LINE_INFO_LINE_NUM(l->line_col));
		t = count(lines, nl, MAX_LINES, where);
		if (t) {
			t->hits += (long)(k - i);
			t->text = btf__name_by_offset(pr->btf, l->line_off);
		}
	}
}

static void print_top(const struct tally *t, int n, int top, long total)
{
	for (int i = 0; i < n && i < top && t[i].hits; i++)
		printf("%6.2f%%  %-22s %.70s\n", 100.0 * t[i].hits / total, t[i].name,
		       t[i].text ? t[i].text + strspn(t[i].text, " \t") : "");
}

int main(int argc, char **argv)
{
	static struct tally syms[MAX_SYMS], lines[MAX_LINES];
	int fd, nsym = 0, nline = 0;
	unsigned long id, top = 40;
	size_t nip = 0, cap = 0;
	struct prog pr = { 0 };
	__u64 *ips = NULL;
	const char *why;
	long total = 0;
	char buf[512], *end;

	if (argc < 2 || argc > 3 || !(id = strtoul(argv[1], &end, 10)) || *end ||
	    (argc == 3 && (!(top = strtoul(argv[2], &end, 10)) || *end))) {
		fprintf(stderr, "usage: %s PROG_ID [TOP] < perf-script-output (whole numbers)\n",
			argv[0]);
		return 2;
	}
	fd = bpf_prog_get_fd_by_id((__u32)id);
	why = fd < 0 ? strerror(errno) : prog_read(fd, &pr);
	if (why) {
		fprintf(stderr, "prog_lines: program %lu: %s\n", id, why);
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin)) {
		unsigned long long ip;
		struct tally *t;
		char sym[256];

		if (sscanf(buf, "%llx %255s", &ip, sym) != 2)
			continue;
		total++;
		t = count(syms, &nsym, MAX_SYMS, sym);
		if (t)
			t->hits++;
		if (nip == cap && !(ips = realloc(ips, (cap = cap * 2 + 4096) * sizeof(*ips)))) {
			fprintf(stderr, "prog_lines: out of memory\n");
			return 1;
		}
		ips[nip++] = ip;
	}
	if (!total) {
		fprintf(stderr, "prog_lines: no samples on stdin\n");
		return 1;
	}
	qsort(ips, nip, sizeof(*ips), by_ip);
	count_lines(&pr, ips, nip, lines, &nline);
	qsort(syms, nsym, sizeof(*syms), by_hits);
	qsort(lines, nline, sizeof(*lines), by_hits);
	printf("%ld samples\n\nby symbol\n", total);
	print_top(syms, nsym, 12, total);
	printf("\nby line of the program (of all samples)\n");
	print_top(lines, nline, (int)top, total);
	return 0;
}
