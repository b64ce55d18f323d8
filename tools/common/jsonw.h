/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* tools/common/jsonw.h: a small streaming JSON writer for the tools' --json output
 * (uvinfo, uvperf).  Commas and nesting are tracked here so the callers only say what
 * they write; strings are escaped per RFC 8259 section 7. */
#ifndef UVERBS_TOOLS_COMMON_JSONW_H
#define UVERBS_TOOLS_COMMON_JSONW_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

struct jw {
	FILE *f;
	int depth;
	int first[32];     /* no member written yet at this depth */
	int pending_key;   /* a key was written; the value follows without a comma */
};

static inline void jw_init(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->first[0] = 1;
	w->pending_key = 0;
}

static inline void jw_sep(struct jw *w)
{
	if (w->pending_key) {
		w->pending_key = 0;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = 0;
	if (w->depth)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
}

static inline void jw_raw_str(struct jw *w, const char *s)
{
	fputc('"', w->f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(w->f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(w->f, "\\u%04x", *p);
		else
			fputc(*p, w->f);
	}
	fputc('"', w->f);
}

static inline void jw_key(struct jw *w, const char *k)
{
	jw_sep(w);
	jw_raw_str(w, k);
	fputs(": ", w->f);
	w->pending_key = 1;
}

/* Where every value starts: its key when it is an object member (k not NULL), else
 * the separator from the previous array element. */
static inline void jw_value_start(struct jw *w, const char *k)
{
	if (k)
		jw_key(w, k);
	jw_sep(w);
}

static inline void jw_open(struct jw *w, const char *k, char c)
{
	jw_value_start(w, k);
	fputc(c, w->f);
	if (w->depth < 31)
		w->depth++;
	w->first[w->depth] = 1;
}

static inline void jw_close(struct jw *w, char c)
{
	int empty = w->first[w->depth];
	if (w->depth)
		w->depth--;
	if (!empty)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(c, w->f);
	if (!w->depth)
		fputc('\n', w->f);
}

static inline void jw_obj(struct jw *w, const char *k) { jw_open(w, k, '{'); }
static inline void jw_obj_end(struct jw *w) { jw_close(w, '}'); }
static inline void jw_arr(struct jw *w, const char *k) { jw_open(w, k, '['); }
static inline void jw_arr_end(struct jw *w) { jw_close(w, ']'); }

static inline void jw_str(struct jw *w, const char *k, const char *v)
{
	jw_value_start(w, k);
	if (v)
		jw_raw_str(w, v);
	else
		fputs("null", w->f);
}

static inline void jw_u64(struct jw *w, const char *k, uint64_t v)
{
	jw_value_start(w, k);
	fprintf(w->f, "%" PRIu64, v);
}

static inline void jw_i64(struct jw *w, const char *k, int64_t v)
{
	jw_value_start(w, k);
	fprintf(w->f, "%" PRId64, v);
}

static inline void jw_dbl(struct jw *w, const char *k, double v)
{
	jw_value_start(w, k);
	if (isfinite(v))
		fprintf(w->f, "%.12g", v);
	else
		fputs("null", w->f);
}

static inline void jw_bool(struct jw *w, const char *k, int v)
{
	jw_value_start(w, k);
	fputs(v ? "true" : "false", w->f);
}

static inline void jw_null(struct jw *w, const char *k)
{
	jw_value_start(w, k);
	fputs("null", w->f);
}

#endif
