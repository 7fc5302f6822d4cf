// SPDX-License-Identifier: GPL-2.0
/*
 * htbctl: HTB semantics on an EDT datapath (clsact BPF + fq).
 * The command table below is the only place the commands, their syntax
 * and their help live: `htbctl help`, `htbctl CMD --help` and the man page
 * (`htbctl help --man`) are all printed from it.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/common.h"

#ifndef HTBCTL_VERSION
#define HTBCTL_VERSION "0.1"
#endif

struct cmd {
	const char *name;
	int (*func)(const struct ctx *ctx, int argc, char **argv);
	const char *args;
	const char *help;	/* one line */
	const char *detail;	/* the rest, for CMD --help and the man page */
};

static const struct cmd cmds[] = {
	{ "load", do_load, "dev IFACE config FILE [--no-qdisc]",
	  "install and start shaping IFACE with the classes in FILE",
	  "Checks privileges and kernel features, installs fq as the root qdisc "
	  "(mq with one fq per TX queue on multi-queue devices), attaches the "
	  "classifier to clsact egress and pins everything under "
	  "/sys/fs/bpf/htbctl/IFACE/. --no-qdisc leaves the root qdisc alone: "
	  "the stamps are then computed but only enforced if the operator runs fq. "
	  "A config of two directions shapes both: its classes as written "
	  "(download) on IFACE's egress, or with [device] direction = ingress on "
	  "IFACE's ingress through an ifb htbctl creates (ifb-IFACE unless [device] "
	  "ifb names it), and with the upload_* rates and mirrored matches (src <-> "
	  "dst, sport <-> dport) on [device] upload_dev's egress; each shaped device "
	  "has its own pins, and if the second fails the first is taken back." },
	{ "reload", do_reload, "dev IFACE config FILE",
	  "apply a changed FILE; unchanged classes keep their token state and counters",
	  "FILE is validated first; a bad file changes nothing. Changed classes keep "
	  "their tokens and take the new parameters; removed classes stop matching "
	  "before they are removed; new ones are complete before anything "
	  "classifies into them. A config of two directions reloads both devices, "
	  "download first; it must shape the devices that are loaded (a change of "
	  "devices is an unload and a load)." },
	{ "unload", do_unload, "dev IFACE [--force]",
	  "remove everything htbctl installed on IFACE, and only that",
	  "Removes the filter, the pins, the clsact qdisc htbctl created and its fq, "
	  "restoring the root qdisc that was there before load. --force also clears "
	  "the pins of a load that did not finish or whose filter is gone (stale "
	  "pins), undoing what they record, even if IFACE no longer exists. While "
	  "an htbctl daemon keeps IFACE shaped, unload is refused (the daemon would "
	  "load it again): stop the daemon first, or add --force. Loaded with two "
	  "directions, any of the devices' names unloads both, the upload first, "
	  "and the ifb of an ingress download goes with its redirect." },
	{ "show", do_show, "dev IFACE [interval TIME] [class ID] [sort rate|drops|delay|borrowed] [n N]",
	  "the class tree with its settings and live statistics",
	  "Like tc -s class show: settings, sent bytes and packets, drops, "
	  "overlimits, lends, borrows, tokens, ctokens and a current rate per class. "
	  "The rate is measured over interval (default 200ms; 0 skips it). "
	  "class ID shows that class and its ancestors; sort lists the classes by "
	  "current rate, drops (limit and AQM), queue delay or borrowed packets, the "
	  "largest first, instead of as a tree; n N shows the first N. A config of two "
	  "directions shows both devices, download first, each with a direction line "
	  "(JSON: an array of the two objects, each with direction and partner)." },
	{ "top", do_top, "dev IFACE [interval TIME] [sort rate|drops|delay|borrowed] [n N]",
	  "a live view of the busiest classes, like top(1)",
	  "Every interval (default 1s, 100ms to 60s) the device's totals and the classes "
	  "sorted by current rate (or drops, queue delay, borrowed packets), as many as "
	  "the terminal has rows for (or N): rate, ceil, current rate with a bar of it "
	  "against the ceil, drops per second (limit and AQM) and queue delay, redrawn in "
	  "place (one frame after another when TERM is dumb, unknown or unset), lines cut "
	  "to the terminal's width; q quits. Without a terminal it prints one frame, its rates over one "
	  "interval, and exits. With two directions both devices share the screen, "
	  "each under a header naming its direction." },
	{ "metrics", do_metrics, "dev IFACE [interval TIME] [-o FILE] [--metrics-classes inner|all|top:N]",
	  "the device's state as a Prometheus text exposition",
	  "Per class: bytes, packets, drops, overlimits, lends, borrows, ECN marks, AQM "
	  "drops and sparse packets (counters), tokens and ctokens in seconds, the "
	  "configured rate and ceil and the current rate in bytes per second, the queue "
	  "delay (gauges), labelled device, class, parent and leaf; per device the "
	  "unclassified, link-control and stale-stamp counters, drops, reloads and the "
	  "class count. --metrics-classes chooses which classes get series: inner (the "
	  "default: every class that is not a leaf), all, or top:N (the inner classes and "
	  "the N leaves with the highest current rate, measured over interval, default "
	  "100ms). -o FILE writes it atomically (a temporary file renamed over FILE, "
	  "mode 0644), as node_exporter's textfile collector wants. `htbctl daemon "
	  "--metrics ADDR:PORT` serves the same over HTTP. A config of two directions "
	  "gives the series of both devices, each also labelled direction (download "
	  "or upload)." },
	{ "set", do_set, "dev IFACE hysteresis on|off",
	  "flip mode hysteresis at run time, without a reload",
	  "Takes effect on the next packet; on both devices of a config of two "
	  "directions." },
	{ "check", do_check, "config FILE",
	  "validate FILE and print the class tree it describes; change nothing",
	  "Prints every class with its effective values (defaults resolved), "
	  "indented by depth. Errors are FILE:LINE: message, exit status 1. "
	  "Needs no privileges." },
	{ "daemon", do_daemon, "dev IFACE config FILE [libreqos FILE FILE [--upload-dev IFACE] [--root-mbps DOWN/UP] [--generated-pn COUNT] [--generated-pn-mbps DOWN/UP] [--strict]] [--no-qdisc] [--metrics ADDR:PORT [--metrics-classes inner|all|top:N]]",
	  "stay resident: apply FILE, re-apply it when it changes, keep IFACE shaped, share spare bandwidth by prio and quantum",
	  "Loads FILE (or adopts an existing load), then reloads whenever FILE's "
	  "text changes; a bad FILE is reported and the tree in force stays. Loads "
	  "again if the attachment disappears (the last good tree if FILE is bad). "
	  "SIGHUP re-reads FILE. One daemon per device (lock in /run/htbctl). "
	  "Every 10 ms its sharing loop gives each borrowing leaf its share of "
	  "the spare bandwidth (by prio, then quantum, as htbctl simulate computes "
	  "it from what each leaf offers); without a daemon borrowers share it "
	  "first come, first served. "
	  "--no-qdisc as for load. --metrics ADDR:PORT serves `htbctl metrics` at "
	  "http://ADDR:PORT/metrics (ADDR an IPv4 address, [IPv6] or nothing for "
	  "127.0.0.1; each scrape a fresh reading of the maps), with the daemon's last "
	  "reload result and time; --metrics-classes as for metrics. "
	  "libreqos CSV JSON (LibreQoS's ShapedDevices.csv and network.json, with "
	  "import libreqos's --upload-dev and --root-mbps): the daemon watches both "
	  "files too; once a change has left them quiet for 1 s it imports them as "
	  "import libreqos --keep-ids FILE does, writes FILE atomically and puts it in "
	  "force, so untouched circuits keep their class, counters and tokens. A bad "
	  "file is one log line (FILE:LINE) and htbctl_import_ok 0 in /metrics; FILE "
	  "and the tree in force stay. SIGHUP imports them again first. "
	  "Exits on SIGINT or SIGTERM, leaving IFACE shaped." },
	{ "import", do_import, "dev IFACE | script FILE [dev NAME] | libreqos FILE FILE [--upload-dev IFACE] [--root-mbps DOWN/UP] [--generated-pn COUNT] [--generated-pn-mbps DOWN/UP] [--keep-ids FILE] [--strict] [-o FILE]",
	  "turn a live kernel HTB tree (or a tc script, or LibreQoS's files) into an htbctl config",
	  "dev IFACE reads the HTB tree on IFACE over netlink: the root HTB qdisc's "
	  "default and r2q, every class's rate, ceil, burst, cburst, prio and quantum, "
	  "fq_codel and codel leaves (as htbctl's CoDel), and the filters: u32 (prefixes, "
	  "protocol with ports, DSCP, mark, hash tables), fw and flower, on the qdisc or "
	  "on inner classes. script FILE applies a tc script (tc commands or a tc -batch "
	  "file) to veth devices of the same names in a scratch network namespace and "
	  "imports from there (dev NAME when it names several); nothing outside that "
	  "namespace is touched. What cannot be converted (actions, police, ingress, "
	  "other classifiers and leaf qdiscs, conditions of several fields, an order "
	  "htbctl's precedence would decide differently) is a comment at its class and a "
	  "warning on stderr. Writes the config to stdout, or atomically to -o FILE. "
	  "Exit 0 when a config was written, 1 when nothing could be converted. "
	  "libreqos ShapedDevices.csv network.json builds the tree LibreQoS builds from "
	  "its files: every network.json node (site, AP; virtual ones left out, nodes "
	  "below LibreQoS's sixth level hung on their fifth-level ancestor) and every "
	  "circuit is a class, Min Mbps its rate and Max Mbps its ceil, the plain keys "
	  "for the download direction and upload_rate/upload_ceil for the upload "
	  "direction (--upload-dev IFACE names its device in [device]); where the Mins "
	  "of a node's circuits add up past its rate, each is cut to 1 Mbps (10 kbit/s "
	  "when still too many), as LibreQoS cuts them, with one warning per node; "
	  "circuits without a Parent Node go round-robin under Generated_PN_1..COUNT "
	  "(--generated-pn, default one per CPU as LibreQoS makes one per queue; 0: on "
	  "the root) of --generated-pn-mbps DOWN/UP each (default 1000/1000, lqos.conf's "
	  "generated_pn_*_mbps); the root is the link as --root-mbps DOWN/UP gives it "
	  "(lqos.conf's downlink and uplink Mbps), else what the top-level nodes add up "
	  "to; each address of a circuit's devices is a `match = dst`; the rows of one "
	  "Circuit ID are one class. Class ids are hex minors in file order from 1:1 "
	  "(the root) and 1:2 (the default class), continuing in major 2 after 1:ffff; "
	  "--keep-ids FILE gives each circuit and node the id it has in FILE, an "
	  "earlier import's config, so that a reload after a new CRM export keeps "
	  "their state, and new ones ids FILE does not use. What LibreQoS accepts with "
	  "a warning is a FILE:LINE warning here too (a device without an address, a "
	  "Parent Node not in network.json: the row left out, devices of one circuit "
	  "with different rates: the first row's, a node without bandwidth: its "
	  "parent's, host bits under a prefix, an address in two circuits: the one "
	  "LibreQoS maps last); --strict refuses those instead. Any other problem is "
	  "one line FILE:LINE naming the column and value, exit 1, and nothing is "
	  "written. "
	  "docs/import.md lists every conversion." },
	{ "simulate", do_simulate, "config FILE [offer CLASS=RATE ...]",
	  "the rate every class gets for those offered rates (HTB's fluid ideal); change nothing",
	  "Every leaf first gets its rate (within its ceil and what it offers); then "
	  "each inner class, the deepest first, lends its spare rate to the leaves "
	  "below it that want more: by prio (0 first), within one prio in proportion "
	  "to quantum, within every ceil on the way. RATE is in tc units (15mbit), or "
	  "max for a class that takes all it can get; all=RATE sets every leaf and "
	  "later words win (offer all=10mbit 1:12=1mbit); a class not named offers "
	  "nothing. Prints per class what it offers and gets, how much of that is its "
	  "own rate and how much it borrowed from which class, and what holds it back "
	  "(demand, ceil, ancestor ceil, spare, idle); inner classes their total and "
	  "what they lent. Needs no privileges." },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const char global_opts[] =
	"  -j, --json     machine-readable output on stdout\n"
	"  -v             more detail (libbpf messages)\n"
	"      --version  print the version\n";

static void usage_line(FILE *f, const struct cmd *c)
{
	/* a name of 7 or more characters still gets its space */
	fprintf(f, "  htbctl %-7s%s%s\n", c->name, strlen(c->name) < 7 ? "" : " ", c->args);
}

static void print_usage(FILE *f)
{
	fprintf(f, "Usage: htbctl [OPTIONS] COMMAND ARGS\n       htbctl help [COMMAND]\n\nCommands:\n");
	for (size_t i = 0; i < NCMDS; i++) {
		usage_line(f, &cmds[i]);
		fprintf(f, "      %s\n", cmds[i].help);
	}
	fprintf(f, "\nOptions:\n%s", global_opts);
}

static void print_cmd_help(FILE *f, const struct cmd *c)
{
	fprintf(f, "Usage:\n");
	usage_line(f, c);
	fprintf(f, "\n%s.\n%s\n", c->help, c->detail);
}

/*
 * roff escapes: a backslash becomes \e and '-' becomes \- (a minus, so
 * options like --no-qdisc stay copyable). A '.' or '\'' at the start of
 * a line would be read as a request and is not escaped: no string of the
 * command table starts a line with one.
 */
static void man_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void print_man(FILE *f)
{
	fprintf(f, ".TH HTBCTL 8 \"\" \"htbctl %s\" \"System Administration\"\n", HTBCTL_VERSION);
	fprintf(f, ".SH NAME\nhtbctl \\- HTB traffic shaping with eBPF and fq\n");
	fprintf(f, ".SH SYNOPSIS\n");
	for (size_t i = 0; i < NCMDS; i++) {
		fprintf(f, ".B htbctl %s\n", cmds[i].name);
		man_text(f, cmds[i].args);
		fprintf(f, "\n.br\n");
	}
	fprintf(f, ".SH COMMANDS\n");
	for (size_t i = 0; i < NCMDS; i++) {
		fprintf(f, ".TP\n.B %s ", cmds[i].name);
		man_text(f, cmds[i].args);
		fprintf(f, "\n");
		man_text(f, cmds[i].help);
		fprintf(f, ".\n");
		man_text(f, cmds[i].detail);
		fprintf(f, "\n");
	}
	fprintf(f, ".SH OPTIONS\n.nf\n");
	man_text(f, global_opts);
	fprintf(f, ".fi\n.SH EXIT STATUS\n0 success; 1 the request failed; 2 usage error.\n");
	fprintf(f, ".SH SEE ALSO\n.BR tc (8),\n.BR tc-htb (8),\n.BR tc-fq (8),\n.BR bpftool (8)\n");
}

/*
 * Bash completion from the command table: each command's words come from
 * its args string. A lowercase word or a -flag is a keyword; an uppercase
 * word after it is its value (IFACE: a network device, FILE: a file, ID:
 * a class of the device named after dev, anything else: not completed);
 * a|b|c after it lists its values; a keyword followed by none is a flag.
 */
enum cval { CV_NONE, CV_IFACE, CV_FILE, CV_CLASS, CV_LIST, CV_FLAG };

static enum cval value_kind(const char *tok)
{
	if (!strcmp(tok, "IFACE"))
		return CV_IFACE;
	if (!strcmp(tok, "FILE"))
		return CV_FILE;
	if (!strcmp(tok, "ID"))
		return CV_CLASS;
	return CV_NONE;
}

static bool is_placeholder(const char *tok)
{
	return (tok[0] >= 'A' && tok[0] <= 'Z') || !strcmp(tok, "...");
}

/* The args string's words, brackets removed, into w (at most max). */
static int arg_words(const char *args, char w[][64], int max)
{
	int n = 0;

	for (const char *p = args; *p && n < max;) {
		size_t k = 0;

		while (*p == ' ' || *p == '[' || *p == ']')
			p++;
		while (*p && *p != ' ' && *p != '[' && *p != ']' && k < 63)
			w[n][k++] = *p++;
		w[n][k] = '\0';
		if (k)
			n++;
	}
	return n;
}

/* The case arms for one command's keyword values, and its word list. */
static void completion_cmd(FILE *f, const struct cmd *c, char *words, size_t wlen)
{
	char w[32][64];
	int n = arg_words(c->args, w, 32);

	words[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *next = i + 1 < n ? w[i + 1] : "";
		enum cval k;

		if (is_placeholder(w[i]) || strchr(w[i], '|'))
			continue;
		snprintf(words + strlen(words), wlen - strlen(words), "%s%s", *words ? " " : "", w[i]);
		k = strchr(next, '|') ? CV_LIST : is_placeholder(next) ? value_kind(next) : CV_FLAG;
		if (k == CV_FLAG)
			continue;
		fprintf(f, "\t\"%s %s\") ", c->name, w[i]);
		switch (k) {
		case CV_IFACE:
			fprintf(f, "_htbctl_reply \"$(ls /sys/class/net 2>/dev/null)\"; return ;;\n");
			break;
		case CV_FILE:
			fprintf(f, "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n");
			break;
		case CV_CLASS:
			fprintf(f, "_htbctl_reply \"$(_htbctl_classes \"$dev\")\"; return ;;\n");
			break;
		case CV_LIST: {
			char vals[256];

			/* "top:N": "top:", the rest typed */
			size_t o = 0;

			for (const char *q = next; *q && o < sizeof(vals) - 1; q++) {
				if (*q == '|')
					vals[o++] = ' ';
				else if (!(*q >= 'A' && *q <= 'Z' && q > next && q[-1] == ':'))
					vals[o++] = *q;
				else
					while (q[1] && q[1] != '|')
						q++;
			}
			vals[o] = '\0';
			fprintf(f, "_htbctl_reply \"%s\"; return ;;\n", vals);
			break;
		}
		default:
			fprintf(f, "COMPREPLY=(); return ;;\n");
		}
	}
}

static void print_completion(FILE *f)
{
	char words[NCMDS][512];

	/* The words come from COMP_LINE split at blanks, not COMP_WORDS: a
	 * class id's ':' is in COMP_WORDBREAKS, so bash replaces only what
	 * follows the last ':' of the word, which _htbctl_reply strips. */
	fprintf(f, "# bash completion for htbctl, generated from its command table "
		   "(htbctl help --bash)\n"
		   "_htbctl_reply() {\n"
		   "\tCOMPREPLY=($(compgen -W \"$1\" -- \"$cur\"))\n"
		   "\tif [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then\n"
		   "\t\tlocal pre=${cur%%\"${cur##*:}\"}\n"
		   "\t\tCOMPREPLY=(\"${COMPREPLY[@]#\"$pre\"}\")\n"
		   "\tfi\n"
		   "}\n"
		   "# the classes of a loaded device (needs root, as show does)\n"
		   "_htbctl_classes() {\n"
		   "\t[ -n \"$1\" ] && \"$bin\" show dev \"$1\" interval 0 2>/dev/null |\n"
		   "\t\tawk '$1 == \"class\" && $2 == \"htb\" { print $3 }'\n"
		   "}\n"
		   "_htbctl() {\n"
		   "\tlocal line=${COMP_LINE:0:COMP_POINT} cur prev bin cmd= dev= i w\n"
		   "\tread -ra w <<< \"$line\"\n"
		   "\tif [[ $line == *[[:space:]] ]]; then w+=(\"\"); fi\n"
		   "\tcur=${w[-1]} prev=${w[-2]:-} bin=${w[0]}\n"
		   "\tfor ((i = 1; i < ${#w[@]} - 1; i++)); do\n"
		   "\t\tif [ -z \"$cmd\" ]; then\n"
		   "\t\t\tcase ${w[i]} in -*) ;; *) cmd=${w[i]} ;; esac\n"
		   "\t\telif [ \"${w[i-1]}\" = dev ]; then\n"
		   "\t\t\tdev=${w[i]}\n"
		   "\t\tfi\n"
		   "\tdone\n"
		   "\tif [ -z \"$cmd\" ]; then\n"
		   "\t\t_htbctl_reply \"");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "%s ", cmds[i].name);
	fprintf(f, "help -j --json -v --version\"\n\t\treturn\n\tfi\n\tcase \"$cmd $prev\" in\n");
	for (size_t i = 0; i < NCMDS; i++)
		completion_cmd(f, &cmds[i], words[i], sizeof(words[i]));
	fprintf(f, "\tesac\n\tcase $cmd in\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "\t%s) _htbctl_reply \"%s\" ;;\n", cmds[i].name, words[i]);
	fprintf(f, "\thelp) _htbctl_reply \"");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "%s ", cmds[i].name);
	fprintf(f, "--man --bash\" ;;\n\tesac\n}\ncomplete -F _htbctl htbctl\n");
}

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int do_help(const struct ctx *ctx, int argc, char **argv)
{
	const struct cmd *c;

	if (argc == 0) {
		print_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[0], "--man")) {
		print_man(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[0], "--bash")) {
		print_completion(stdout);
		return EXIT_OK;
	}
	c = find_cmd(argv[0]);
	if (!c) {
		p_err(ctx, "unknown command '%s' (see 'htbctl help')", argv[0]);
		return EXIT_USAGE;
	}
	print_cmd_help(stdout, c);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct ctx ctx = { .prog = "htbctl" };
	const struct cmd *c;
	int opt;

	/* Options stop at the command word; command arguments are its own. */
	while ((opt = getopt_long(argc, argv, "+jvh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			ctx.json = true;
			break;
		case 'v':
			ctx.verbose++;
			break;
		case 'V':
			printf("htbctl %s\n", HTBCTL_VERSION);
			return EXIT_OK;
		case 'h':
			print_usage(stdout);
			return EXIT_OK;
		default:
			print_usage(stderr);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "help"))
		return do_help(&ctx, argc - 1, argv + 1);
	c = find_cmd(argv[0]);
	if (!c) {
		p_err(&ctx, "unknown command '%s' (see 'htbctl help')", argv[0]);
		return EXIT_USAGE;
	}
	/* -j and -v may also follow the command word; --help anywhere. */
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			print_cmd_help(stdout, c);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			ctx.json = true;
		} else if (!strcmp(argv[i], "-v")) {
			ctx.verbose++;
		} else {
			argv[1 + n++] = argv[i];
		}
	}
	return c->func(&ctx, n, argv + 1);
}
