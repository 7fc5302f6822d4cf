// SPDX-License-Identifier: GPL-2.0
/*
 * import script: a script line read the way tc -batch reads it, so what
 * import checks is what tc will run (iproute2 6.1, lib/utils.c and
 * tc/tc.c): makeargs() splits on blanks, a word that starts with ' or "
 * runs to the next same quote (no backslash escapes inside words; the
 * only backslash tc knows is the one before a newline); tc matches its
 * options, objects and verbs by prefix (matches(): "f" is filter, "d" is
 * delete), while a filter's or action's kind is an exact name (it names
 * a shared object and a symbol). The checked words are then written back
 * for tc quoted so that tc splits them into the same words.
 */
#include <stdio.h>
#include <string.h>

#include "import/tc.h"

/* tc's matches(): word is a non-empty prefix of name. */
bool tc_matches(const char *word, const char *name)
{
	size_t n = strlen(word);

	return n && n <= strlen(name) && !strncmp(word, name, n);
}

/* tc's main() options, in its order (the first that matches wins), and
 * whether the option takes the next word. */
static const struct { const char *name; bool arg; } tc_opts[] = {
	{ "-stats", false }, { "-statistics", false }, { "-details", false },
	{ "-raw", false }, { "-pretty", false }, { "-graph", false }, { "-Version", false },
	{ "-iec", false }, { "-help", false }, { "-force", false }, { "-batch", true },
	{ "-netns", true }, { "-Numeric", false }, { "-names", false }, { "-nm", false },
	{ "-cf", true }, { "-conf", true },
};

/* tc's objects in do_cmd()'s order. */
static const struct { const char *name; enum tc_object obj; } tc_objs[] = {
	{ "qdisc", TC_QDISC }, { "class", TC_CLASS }, { "filter", TC_FILTER },
	{ "chain", TC_CHAIN }, { "actions", TC_ACTIONS }, { "monitor", TC_MONITOR },
	{ "exec", TC_EXEC }, { "help", TC_HELP },
};

/* makeargs(): 0, or -1 with *why (tc -batch would exit there, leaving
 * the rest of the script unapplied). line is cut into the words. */
int tc_split(char *line, struct tc_line *l, const char **why)
{
	static const char blank[] = " \t\r\n";
	char *p = line;

	l->n = 0;
	while (*p) {
		p += strspn(p, blank);
		if (!*p)
			break;
		if (l->n >= TC_MAX_WORDS) {
			*why = "more words than tc -batch takes in one command (511)";
			return -1;
		}
		if (*p == '\'' || *p == '"') {
			char q = *p++;

			l->w[l->n++] = p;
			p = strchr(p, q);
			if (!p) {
				*why = "a quoted word is not closed";
				return -1;
			}
		} else {
			l->w[l->n++] = p;
			p += strcspn(p, blank);
			if (!*p)
				break;
		}
		*p++ = '\0';
	}
	return 0;
}

/* The word after "sudo", "tc" or ".../tc" and tc's options: where tc's
 * own command starts (a tc -batch file's lines start there). */
static int skip_tc_prefix(const struct tc_line *l)
{
	int i = 0;
	size_t len;

	if (i < l->n && !strcmp(l->w[i], "sudo"))
		i++;
	if (i >= l->n)
		return i;
	len = strlen(l->w[i]);
	if (strcmp(l->w[i], "tc") && !(len > 3 && !strcmp(l->w[i] + len - 3, "/tc")))
		return i;
	for (i++; i < l->n && l->w[i][0] == '-'; i++)
		for (size_t k = 0; k < sizeof(tc_opts) / sizeof(tc_opts[0]); k++)
			if (tc_matches(l->w[i], tc_opts[k].name)) {
				i += tc_opts[k].arg;
				break;
			}
	return i;
}

/* Which tc object the line runs (TC_NONE: not a tc command), its first
 * word in l->obj, and whether its verb deletes (l->del). */
void tc_classify(struct tc_line *l)
{
	int i = skip_tc_prefix(l);

	l->obj = i;
	l->kind = TC_NONE;
	l->del = false;
	for (size_t k = 0; i < l->n && k < sizeof(tc_objs) / sizeof(tc_objs[0]); k++)
		if (tc_matches(l->w[i], tc_objs[k].name)) {
			l->kind = tc_objs[k].obj;
			break;
		}
	if (l->kind != TC_NONE && i + 1 < l->n)
		l->del = tc_matches(l->w[i + 1], "delete") || tc_matches(l->w[i + 1], "flush");
}

/*
 * Why tc must not run the line, NULL if it may. A bpf classifier or
 * action loads a program and may pin its maps in a bpffs; its kind is
 * the word "bpf" wherever tc takes a kind (a filter's first word after
 * its options, an action's after "action"), so any word "bpf" refuses
 * the line (a device named bpf too: a false alarm is cheap here).
 * tc exec runs BPF helpers; tc monitor waits for events and never ends.
 */
const char *tc_refusal(const struct tc_line *l)
{
	if (l->kind == TC_EXEC)
		return "tc exec is not run (it loads and runs BPF programs)";
	if (l->kind == TC_MONITOR)
		return "tc monitor is not run (it waits for events and never ends)";
	for (int i = l->obj; i < l->n; i++)
		if (!strcmp(l->w[i], "bpf"))
			return "a bpf filter or action is not imported (it would load a program, and may pin maps in a bpffs)";
	return NULL;
}

/* One word as tc's makeargs reads it back: bare when it has no blank and
 * no quote at its start (every word makeargs made without quotes), else
 * in the quote it does not hold (a quoted word cannot hold its own). */
static size_t put_word(char *out, size_t len, const char *w)
{
	bool bare = *w && !strpbrk(w, " \t\r\n") && *w != '"' && *w != '\'';
	char q = strchr(w, '"') ? '\'' : '"';
	int n = bare ? snprintf(out, len, "%s", w) : snprintf(out, len, "%c%s%c", q, w, q);

	return n < 0 ? 0 : (size_t)n;
}

static size_t put_text(char *out, size_t len, size_t at, const char *w, bool word)
{
	char *o = at < len ? out + at : NULL;
	size_t room = at < len ? len - at : 0;

	if (word)
		return at + put_word(o, room, w);
	return at + (size_t)snprintf(o, room, "%s", w);
}

/* The words from the object on, as one tc -batch line (no newline);
 * its length, or the length it needs when out is too small. A backslash
 * at the end of a line would join the next one: a blank follows it. */
size_t tc_join(const struct tc_line *l, char *out, size_t len)
{
	size_t at = 0;

	if (len)
		*out = '\0';
	for (int i = l->obj; i < l->n; i++) {
		if (i > l->obj)
			at = put_text(out, len, at, " ", false);
		at = put_text(out, len, at, l->w[i], true);
	}
	if (at && at < len && out[at - 1] == '\\')
		at = put_text(out, len, at, " ", false);
	return at;
}

/* The device a command names: the word after each "dev" (tc compares
 * "dev" exactly), from word *from on; NULL when there is none left. */
const char *tc_next_dev(const struct tc_line *l, int *from)
{
	for (int i = *from > l->obj ? *from : l->obj; i + 1 < l->n; i++)
		if (!strcmp(l->w[i], "dev")) {
			*from = i + 2;
			return l->w[i + 1];
		}
	*from = l->n;
	return NULL;
}
