/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CSV reader for the files operators' spreadsheets and CRMs write
 * (RFC 4180 and what LibreQoS's own files do beyond it): fields separated
 * by commas, a field in double quotes may hold commas, newlines and ""
 * for a quote; CRLF or LF; a UTF-8 byte order mark skipped; blank lines
 * and comment lines (the first non-blank character '#', as LibreQoS
 * skips them) are not records. The whole file is in memory: a record's
 * fields point into the reader's own buffer until the next csv_next().
 */
#ifndef HTBCTL_IMPORT_CSV_H
#define HTBCTL_IMPORT_CSV_H

#include <stddef.h>

struct csv {
	const char *text;
	size_t len, pos;
	unsigned line;		/* the line pos is on, from 1 */
	/* the record csv_next() read */
	unsigned rec_line;	/* the line it starts on */
	unsigned nfield;
	char **field;
	/* storage: the fields' bytes, each NUL-terminated; offsets until the
	 * record is complete, since buf moves as it grows */
	char *buf;
	size_t buflen, bufcap;
	size_t *off;
	unsigned offcap;
	char err[200];		/* why csv_next() returned -1, at line err_line */
	unsigned err_line;
	/* a record of more fields is refused as it is read (memory stays
	 * bounded whatever a line holds); csv_init sets CSV_MAX_FIELDS */
	unsigned max_fields;
};

#define CSV_MAX_FIELDS	4096

/* text must stay valid while c is used. */
void csv_init(struct csv *c, const char *text, size_t len);
/* The next record: 1 (c->field[0 .. nfield-1], c->rec_line), 0 at the
 * end of the text, -1 on an error (c->err, c->err_line) or out of memory. */
int csv_next(struct csv *c);
void csv_free(struct csv *c);

#endif
