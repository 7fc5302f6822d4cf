// SPDX-License-Identifier: GPL-2.0
/*
 * import: filters other than u32 (fw, flower; every other classifier is
 * reported), their actions, and a rule's keys as one htbctl match line.
 * One table of classifiers: a new one is a row and its decoder.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "import/filter.h"
#include "netlink/nl.h"

/* ---- actions --------------------------------------------------------- */

/* The kinds of the actions in an ACT nest ("police, mirred"); true if
 * there was one. */
bool imp_action_kinds(const struct nlattr *act, char *out, size_t len)
{
	const struct nlattr *a, *b;
	size_t n = 0;

	out[0] = '\0';
	mnl_attr_for_each_nested(a, act) {
		mnl_attr_for_each_nested(b, a) {
			if (mnl_attr_get_type(b) == TCA_ACT_KIND &&
			    mnl_attr_validate(b, MNL_TYPE_NUL_STRING) == 0 && n < len)
				n += snprintf(out + n, len - n, "%s%s", n ? ", " : "",
					      mnl_attr_get_str(b));
		}
	}
	return n > 0;
}

/*
 * A filter with actions: police alone keeps its match (the class is where
 * HTB puts the packets it lets through; htbctl does not police, the note
 * says so); any other action decides the packet's fate itself (mirred,
 * drop, skbedit...), so the filter is not converted.
 */
static void note_actions(struct imp_tree *t, struct imp_rule *r, const char *kinds)
{
	if (!strcmp(kinds, "police")) {
		imp_note(t, r->classid, true,
			 "filter pref %u (%s): its police action is not converted (htbctl does not police); its match is kept",
			 r->pref, r->kind);
		return;
	}
	snprintf(r->why, sizeof(r->why), "its actions (%s) are not converted", kinds);
}

void imp_rule_actions(struct imp_tree *t, struct imp_rule *r, const struct nlattr *act,
		      bool legacy_police)
{
	char kinds[96];

	if (legacy_police) {
		note_actions(t, r, "police");
		return;
	}
	if (act && imp_action_kinds(act, kinds, sizeof(kinds)))
		note_actions(t, r, kinds);
}

/* Zeroes an address key's bits beyond its prefix (the config refuses
 * host bits). */
void imp_key_mask(struct imp_key *k)
{
	int n = k->af == AF_INET ? 4 : 16;

	for (int i = 0; i < n; i++) {
		int keep = k->plen - 8 * i;

		k->addr[i] &= keep >= 8 ? 0xff : keep <= 0 ? 0 : (__u8)(0xff << (8 - keep));
	}
}

/* ---- fw -------------------------------------------------------------- */

static int decode_fw(struct imp_tree *t, struct imp_rule *r, const struct nlattr *opts)
{
	const struct nlattr *a, *act = NULL;
	struct imp_key *k = &r->keys[r->nkeys++];
	bool police = false;

	k->field = IF_MARK;
	k->val = r->handle;
	k->mask = 0xffffffff;
	mnl_attr_for_each_nested(a, opts) {
		switch (mnl_attr_get_type(a)) {
		case TCA_FW_CLASSID:
			r->classid = mnl_attr_get_u32(a);
			break;
		case TCA_FW_MASK:
			k->mask = mnl_attr_get_u32(a);
			break;
		case TCA_FW_INDEV:
			snprintf(r->why, sizeof(r->why), "it matches an input device");
			break;
		case TCA_FW_ACT:
			act = a;
			break;
		case TCA_FW_POLICE:
			police = true;
			break;
		}
	}
	if (k->val & ~k->mask)
		snprintf(r->why, sizeof(r->why),
			 "handle 0x%x has bits outside mask 0x%x: it never matches in HTB", k->val, k->mask);
	imp_rule_actions(t, r, act, police);
	return 0;
}

/* ---- flower ---------------------------------------------------------- */

static bool all_ones(const void *p, size_t n)
{
	const __u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != 0xff)
			return false;
	return true;
}

/* A prefix length from a mask, -1 if the mask is not a prefix. */
static int mask_plen(const __u8 *m, int nbytes)
{
	int plen = 0, i;

	for (i = 0; i < nbytes && m[i] == 0xff; i++)
		plen += 8;
	if (i < nbytes) {
		__u8 b = m[i];

		while (b & 0x80) {
			plen++;
			b <<= 1;
		}
		if (b)
			return -1;
		for (i++; i < nbytes; i++)
			if (m[i])
				return -1;
	}
	return plen;
}

struct flower_addr {
	int key, mask, af, nbytes;
	enum imp_field field;
};

static const struct flower_addr flower_addrs[] = {
	{ TCA_FLOWER_KEY_IPV4_SRC, TCA_FLOWER_KEY_IPV4_SRC_MASK, AF_INET, 4, IF_SRC },
	{ TCA_FLOWER_KEY_IPV4_DST, TCA_FLOWER_KEY_IPV4_DST_MASK, AF_INET, 4, IF_DST },
	{ TCA_FLOWER_KEY_IPV6_SRC, TCA_FLOWER_KEY_IPV6_SRC_MASK, AF_INET6, 16, IF_SRC },
	{ TCA_FLOWER_KEY_IPV6_DST, TCA_FLOWER_KEY_IPV6_DST_MASK, AF_INET6, 16, IF_DST },
};

struct flower_port {
	int key, mask;		/* a single port and its mask */
	int min, max;		/* or a range */
	enum imp_field field;
};

static const struct flower_port flower_ports[] = {
	{ TCA_FLOWER_KEY_TCP_SRC, TCA_FLOWER_KEY_TCP_SRC_MASK, 0, 0, IF_SPORT },
	{ TCA_FLOWER_KEY_TCP_DST, TCA_FLOWER_KEY_TCP_DST_MASK, 0, 0, IF_DPORT },
	{ TCA_FLOWER_KEY_UDP_SRC, TCA_FLOWER_KEY_UDP_SRC_MASK, 0, 0, IF_SPORT },
	{ TCA_FLOWER_KEY_UDP_DST, TCA_FLOWER_KEY_UDP_DST_MASK, 0, 0, IF_DPORT },
	{ 0, 0, TCA_FLOWER_KEY_PORT_SRC_MIN, TCA_FLOWER_KEY_PORT_SRC_MAX, IF_SPORT },
	{ 0, 0, TCA_FLOWER_KEY_PORT_DST_MIN, TCA_FLOWER_KEY_PORT_DST_MAX, IF_DPORT },
};

static bool flower_key_known(int type)
{
	static const int ok[] = {
		TCA_FLOWER_CLASSID, TCA_FLOWER_ACT, TCA_FLOWER_FLAGS, TCA_FLOWER_IN_HW_COUNT,
		TCA_FLOWER_KEY_ETH_TYPE, TCA_FLOWER_KEY_IP_PROTO,
		TCA_FLOWER_KEY_IP_TOS, TCA_FLOWER_KEY_IP_TOS_MASK,
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (type == ok[i])
			return true;
	for (size_t i = 0; i < sizeof(flower_addrs) / sizeof(flower_addrs[0]); i++)
		if (type == flower_addrs[i].key || type == flower_addrs[i].mask)
			return true;
	for (size_t i = 0; i < sizeof(flower_ports) / sizeof(flower_ports[0]); i++) {
		const struct flower_port *p = &flower_ports[i];

		if (type && (type == p->key || type == p->mask || type == p->min || type == p->max))
			return true;
	}
	return false;
}

static const struct nlattr *flower_attr(const struct nlattr *opts, int type)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, opts)
		if (mnl_attr_get_type(a) == type)
			return a;
	return NULL;
}

static void flower_addr_keys(struct imp_rule *r, const struct nlattr *opts)
{
	for (size_t i = 0; i < sizeof(flower_addrs) / sizeof(flower_addrs[0]); i++) {
		const struct flower_addr *f = &flower_addrs[i];
		const struct nlattr *v = flower_attr(opts, f->key), *m = flower_attr(opts, f->mask);
		struct imp_key *k;
		int plen;

		if (!v || mnl_attr_get_payload_len(v) < (unsigned)f->nbytes || r->nkeys >= IMP_MAX_KEYS)
			continue;
		plen = m ? mask_plen(mnl_attr_get_payload(m), f->nbytes) : f->nbytes * 8;
		if (plen < 0) {
			snprintf(r->why, sizeof(r->why), "an address mask that is not a prefix");
			continue;
		}
		k = &r->keys[r->nkeys++];
		k->field = f->field;
		k->af = f->af;
		k->plen = (__u8)plen;
		memcpy(k->addr, mnl_attr_get_payload(v), f->nbytes);
		imp_key_mask(k);	/* flower keeps the bits beyond the mask */
	}
}

static void flower_port_keys(struct imp_rule *r, const struct nlattr *opts)
{
	for (size_t i = 0; i < sizeof(flower_ports) / sizeof(flower_ports[0]); i++) {
		const struct flower_port *p = &flower_ports[i];
		const struct nlattr *v = flower_attr(opts, p->key ? p->key : p->min);
		const struct nlattr *m = flower_attr(opts, p->key ? p->mask : p->max);
		struct imp_key *k;

		if (!v || r->nkeys >= IMP_MAX_KEYS)
			continue;
		if (p->key && m && !all_ones(mnl_attr_get_payload(m), 2)) {
			snprintf(r->why, sizeof(r->why), "a port under a mask");
			continue;
		}
		k = &r->keys[r->nkeys++];
		k->field = p->field;
		k->lo = ntohs(mnl_attr_get_u16(v));
		k->hi = p->key || !m ? k->lo : ntohs(mnl_attr_get_u16(m));
	}
}

static void flower_tos_key(struct imp_rule *r, const struct nlattr *opts)
{
	const struct nlattr *v = flower_attr(opts, TCA_FLOWER_KEY_IP_TOS);
	const struct nlattr *m = flower_attr(opts, TCA_FLOWER_KEY_IP_TOS_MASK);
	__u8 mask = m ? mnl_attr_get_u8(m) : 0xff;
	struct imp_key *k;

	if (!v || r->nkeys >= IMP_MAX_KEYS)
		return;
	if (mask != 0xfc) {
		snprintf(r->why, sizeof(r->why), "ip_tos under mask 0x%02x (only the DSCP bits, 0xfc, convert)", mask);
		return;
	}
	k = &r->keys[r->nkeys++];
	k->field = IF_DSCP;
	k->val = mnl_attr_get_u8(v) >> 2;
}

static int decode_flower(struct imp_tree *t, struct imp_rule *r, const struct nlattr *opts)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, opts) {
		int type = mnl_attr_get_type(a);

		if (!flower_key_known(type) && !r->why[0])
			snprintf(r->why, sizeof(r->why),
				 "it matches on a flower key htbctl does not classify on (attribute %d)", type);
		if (type == TCA_FLOWER_CLASSID)
			r->classid = mnl_attr_get_u32(a);
		if (type == TCA_FLOWER_KEY_IP_PROTO && r->nkeys < IMP_MAX_KEYS) {
			struct imp_key *k = &r->keys[r->nkeys++];

			k->field = IF_PROTO;
			k->val = mnl_attr_get_u8(a);
		}
	}
	flower_addr_keys(r, opts);
	flower_port_keys(r, opts);
	flower_tos_key(r, opts);
	imp_rule_actions(t, r, flower_attr(opts, TCA_FLOWER_ACT), false);
	return 0;
}

/* ---- the table ------------------------------------------------------- */

static const struct {
	const char *kind;
	int (*decode)(struct imp_tree *t, struct imp_rule *r, const struct nlattr *opts);
} classifiers[] = {
	{ "fw", decode_fw },
	{ "flower", decode_flower },
};

int imp_filter_decode(struct imp_tree *t, const struct nlmsghdr *nlh)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a, *opts = NULL;
	const char *kind = "";
	struct imp_rule *r = imp_rule_new(t);

	if (!r)
		return -1;
	mnl_attr_for_each(a, nlh, sizeof(*tcm))
		if (mnl_attr_get_type(a) == TCA_OPTIONS)
			opts = a;
	kind = tc_msg_kind(nlh);
	r->attach = tcm->tcm_parent;
	r->pref = TC_H_MAJ(tcm->tcm_info) >> 16;
	r->proto = ntohs(TC_H_MIN(tcm->tcm_info));
	r->handle = tcm->tcm_handle;
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	for (size_t i = 0; i < sizeof(classifiers) / sizeof(classifiers[0]); i++)
		if (!strcmp(kind, classifiers[i].kind))
			return opts ? classifiers[i].decode(t, r, opts) : 0;
	snprintf(r->why, sizeof(r->why), "htbctl has no equivalent of the %s classifier", kind);
	return 0;
}

/* ---- a rule as one match line ---------------------------------------- */

static const char *field_name(enum imp_field f)
{
	static const char *const n[] = {
		[IF_SRC] = "src", [IF_DST] = "dst", [IF_SPORT] = "sport", [IF_DPORT] = "dport",
		[IF_MARK] = "mark", [IF_DSCP] = "dscp", [IF_PROTO] = "protocol",
	};
	return n[f];
}

static void key_text(const struct imp_key *k, char *out, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	switch (k->field) {
	case IF_SRC:
	case IF_DST:
		inet_ntop(k->af, k->addr, addr, sizeof(addr));
		snprintf(out, len, "%s %s/%u", field_name(k->field), addr, k->plen);
		break;
	case IF_SPORT:
	case IF_DPORT:
		if (k->lo == k->hi)
			snprintf(out, len, "%s %u", field_name(k->field), k->lo);
		else
			snprintf(out, len, "%s %u-%u", field_name(k->field), k->lo, k->hi);
		break;
	case IF_MARK:
		if (k->mask == 0xffffffff)
			snprintf(out, len, "mark 0x%x", k->val);
		else
			snprintf(out, len, "mark 0x%x/0x%x", k->val, k->mask);
		break;
	case IF_DSCP:
		snprintf(out, len, "dscp %u", k->val);
		break;
	case IF_PROTO:
		snprintf(out, len, "protocol %u", k->val);
		break;
	}
}

/* "src 198.18.0.0/16 and dport 80" */
static void keys_text(const struct imp_rule *r, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < r->nkeys && n < len; i++) {
		char k[80];

		key_text(&r->keys[i], k, sizeof(k));
		n += snprintf(out + n, len - n, "%s%s", i ? " and " : "", k);
	}
}

void imp_rule_express(struct imp_rule *r)
{
	const struct imp_key *field = NULL, *proto = NULL;
	char all[IMP_TEXT_LEN];
	int nfields = 0;

	for (int i = 0; i < r->nkeys; i++) {
		if (r->keys[i].field == IF_PROTO) {
			proto = &r->keys[i];
		} else {
			field = &r->keys[i];
			nfields++;
		}
	}
	keys_text(r, all, sizeof(all));
	if (r->why[0])
		return;
	if (r->proto != ETH_P_ALL && r->proto != ETH_P_IP && r->proto != ETH_P_IPV6) {
		snprintf(r->why, sizeof(r->why), "protocol 0x%04x (htbctl classifies IPv4 and IPv6)", r->proto);
		return;
	}
	if (!nfields && !proto) {	/* every packet (of r->proto: first_catchall) */
		snprintf(r->text, sizeof(r->text), "*");	/* every packet */
		return;
	}
	if (nfields > 1 || (!field && proto)) {
		snprintf(r->why, sizeof(r->why),
			 "%s: a match line is one field, so this condition cannot be written", all);
		return;
	}
	if (proto && !((field->field == IF_SPORT || field->field == IF_DPORT) &&
		       (proto->val == IPPROTO_TCP || proto->val == IPPROTO_UDP))) {
		snprintf(r->why, sizeof(r->why),
			 "%s: a protocol goes with a port only, and only tcp or udp", all);
		return;
	}
	key_text(field, all, sizeof(all));
	snprintf(r->text, sizeof(r->text), "%s%s", !proto ? "" : proto->val == IPPROTO_TCP ? "tcp " : "udp ",
		 all);
}
