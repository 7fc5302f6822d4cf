// SPDX-License-Identifier: GPL-2.0
/*
 * clsprobe IFACE SPEC...: which class the program attached to IFACE puts
 * each packet in, asked of the kernel itself. Each SPEC is one packet,
 * comma-separated fields (defaults in brackets):
 *   proto=udp|tcp [udp]  src=ADDR [198.18.0.1]  dst=ADDR [198.18.1.1]
 *   sport=N [5000]  dport=N [6000]  mark=N [0]  prio=MAJ:MIN [none]
 *   dscp=N [0]
 * The pinned program runs each packet once (BPF_PROG_TEST_RUN); the leaf
 * whose packet or drop counter moved is the answer, printed as its class
 * id on a line of its own, or "unshaped" when none moved ("ambiguous" when
 * another leaf moved too, PROBE_TRIES times running). For tests
 * (tests/net): the run charges the class like a real packet.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_util.h"
#include "loader/pins.h"

static int parse_spec(char *spec, struct pkt_spec *s, struct run_in *in,
		      unsigned *dscp)
{
	static char src[64], dst[64];
	char *save = NULL;

	*s = (struct pkt_spec){ .proto = IPPROTO_UDP, .src = "198.18.0.1",
				.dst = "198.18.1.1", .sport = 5000, .dport = 6000,
				.payload = 58 };
	memset(in, 0, sizeof(*in));
	*dscp = 0;
	for (char *f = strtok_r(spec, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		char *v = strchr(f, '=');
		unsigned maj, min;

		if (!v)
			return -1;
		*v++ = '\0';
		if (!strcmp(f, "proto"))
			s->proto = !strcmp(v, "tcp") ? IPPROTO_TCP : IPPROTO_UDP;
		else if (!strcmp(f, "src"))
			s->src = strncpy(src, v, sizeof(src) - 1);
		else if (!strcmp(f, "dst"))
			s->dst = strncpy(dst, v, sizeof(dst) - 1);
		else if (!strcmp(f, "sport"))
			s->sport = (__u16)strtoul(v, NULL, 0);
		else if (!strcmp(f, "dport"))
			s->dport = (__u16)strtoul(v, NULL, 0);
		else if (!strcmp(f, "dscp"))
			*dscp = (unsigned)strtoul(v, NULL, 0) & 63;
		else if (!strcmp(f, "mark"))
			in->mark = (__u32)strtoul(v, NULL, 0);
		else if (!strcmp(f, "prio") && sscanf(v, "%x:%x", &maj, &min) == 2)
			in->priority = maj << 16 | min;
		else
			return -1;
	}
	s->v6 = strchr(s->dst, ':') != NULL;
	return 0;
}

/* The leaf of the active generation whose counters moved, -1 if none,
 * -2 if more than one did. */
static int moved_leaf(const struct htb_class_conf *conf, const struct htb_class_state *a,
		      const struct htb_class_state *b, __u32 n)
{
	int leaf = -1;

	for (__u32 s = 0; s < n; s++)
		if ((conf[s].flags & HTB_CONF_LEAF) &&
		    (a[s].packets != b[s].packets || a[s].drops != b[s].drops)) {
			if (leaf >= 0)
				return -2;
			leaf = (int)s;
		}
	return leaf;
}

/* Tries per probe: a packet of the machine's own may cross the device
 * between the two reads (a fresh veth sends IPv6 router solicitations and
 * MLD reports for seconds, into the default class), and then two leaves
 * moved; the probe runs again. */
#define PROBE_TRIES	5

int main(int argc, char **argv)
{
	struct ctx ctx = { 0 };
	struct fx f = { 0 };
	struct htb_runtime rt;
	struct htb_class_conf *conf;
	struct htb_class_state *before, *after;
	char path[256];
	__u32 cap;

	if (argc < 3) {
		fprintf(stderr, "usage: clsprobe IFACE SPEC...\n");
		return 2;
	}
	pin_path(argv[1], PIN_PROG, path, sizeof(path));
	f.prog = bpf_obj_get(path);
	if (f.prog < 0 || maps_open_pinned(&ctx, argv[1], &f.maps) ||
	    maps_get_runtime(&f.maps, &rt)) {
		fprintf(stderr, "clsprobe: %s: not loaded\n", argv[1]);
		return 1;
	}
	cap = rt.capacity;
	conf = calloc(cap, sizeof(*conf));
	before = calloc(cap, sizeof(*before));
	after = calloc(cap, sizeof(*after));
	if (!conf || !before || !after ||
	    array_read(f.maps.fd[M_CONF], (rt.gen & 1) * cap, cap, conf, sizeof(*conf), 0)) {
		fprintf(stderr, "clsprobe: reading class_conf failed\n");
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		struct pkt_spec s;
		struct run_in in;
		struct pkt p;
		unsigned dscp;
		int leaf;

		if (parse_spec(argv[i], &s, &in, &dscp)) {
			fprintf(stderr, "clsprobe: bad packet spec '%s'\n", argv[i]);
			return 2;
		}
		pkt_build(&p, &s);
		pkt_set_dscp(&p, s.v6, dscp);
		/* with every CPU's batch: a leaf within its rate is charged
		 * through its batch, and a packet worth less than its
		 * HTB_BATCH_NS stays there (a 50 Mbit leaf's first probe
		 * read "unshaped" from class_state alone) */
		leaf = -2;
		for (int t = 0; t < PROBE_TRIES && leaf == -2; t++) {
			if (maps_read_state(&f.maps, conf, cap, before) ||
			    fx_run(&f, &p, &in, NULL) ||
			    maps_read_state(&f.maps, conf, cap, after)) {
				fprintf(stderr, "clsprobe: running the program failed\n");
				return 1;
			}
			leaf = moved_leaf(conf, before, after, cap);
		}
		if (leaf == -2)
			printf("ambiguous\n");	/* other traffic every time */
		else if (leaf < 0)
			printf("unshaped\n");
		else
			printf("%x:%x\n", conf[leaf].classid >> 16, conf[leaf].classid & 0xffff);
	}
	return 0;
}
