/* mend-json-scan-private.h — a strict byte scan of small JSON texts, with no tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A scan of one JSON text, token by token, for the hot path of a stream:
 * no allocation, no tree. It reads strict JSON only (RFC 8259) and gives up
 * (FALSE, or MEND_JSON_SCAN_ODD) on anything else or anything unusual —
 * a key with an escape, a lone surrogate, a \u0000, bytes that are not
 * UTF-8, deep nesting, many values — so that what it reads, it reads as
 * json-glib would, and the caller can leave the rest to the parser. */
/* A token of a scanned text that may differ from one text to the next of
 * the same shape: the string read into an out string, or a number
 * skipped. */
#define MEND_JSON_SCAN_MAX_HOLES 8

typedef struct
{
  gsize    at;          /* from the start of the text */
  gsize    length;
  gboolean text;        /* the string read, or else a number skipped */
} MendJsonHole;

typedef struct
{
  const char   *p;
  const char   *end;
  guint         skipped;    /* values skipped so far */
  /* The holes met, for a template (mend_json_template_keep ()). */
  const char   *start;
  MendJsonHole  holes[MEND_JSON_SCAN_MAX_HOLES];
  guint         n_holes;    /* may pass MEND_JSON_SCAN_MAX_HOLES: then too many */
} MendJsonScan;

typedef enum
{
  MEND_JSON_SCAN_ODD,     /* not read: leave the text to the parser */
  MEND_JSON_SCAN_NEXT,    /* a member (its key read, and its colon) or an element follows */
  MEND_JSON_SCAN_DONE,    /* the object or the array ended */
} MendJsonScanStep;

void             mend_json_scan_init    (MendJsonScan *scan,
                                         const char   *data,
                                         gsize         length);
/* The next token is @c ('{', '[', ':'…): consumed. */
gboolean         mend_json_scan_char    (MendJsonScan *scan,
                                         char          c);
/* The next byte that is not whitespace, not consumed; 0 at the end. */
char             mend_json_scan_peek    (MendJsonScan *scan);
/* After '{' or a member's value: the next member, its key in
 * *@key (@key_length bytes, as written: a key with an escape is ODD), or
 * the end of the object. @first is TRUE until the first call. */
MendJsonScanStep mend_json_scan_member  (MendJsonScan *scan,
                                         gboolean     *first,
                                         const char  **key,
                                         gsize        *key_length);
/* After '[' or an element: another element, or the end of the array. */
MendJsonScanStep mend_json_scan_element (MendJsonScan *scan,
                                         gboolean     *first);
/* A string, unescaped and appended to @out (UTF-8, never a NUL). */
gboolean         mend_json_scan_string  (MendJsonScan *scan,
                                         GString      *out);
/* A string with no escape that is @expected. */
gboolean         mend_json_scan_string_is (MendJsonScan *scan,
                                           const char   *expected);
/* null. */
gboolean         mend_json_scan_null    (MendJsonScan *scan);
/* A number that is an integer from 0 to 999 999 999, written as JSON
 * writes it (no sign, no leading zero, no fraction, no exponent). */
gboolean         mend_json_scan_index   (MendJsonScan *scan,
                                         guint        *value);
/* Any value, checked and skipped, nested at most a few levels. */
gboolean         mend_json_scan_skip    (MendJsonScan *scan);
/* Nothing but whitespace is left. */
gboolean         mend_json_scan_end     (MendJsonScan *scan);

/* A template of the texts of one shape, for the bulk of a stream whose
 * events differ only in their text and in numbers no one reads: a text
 * a scan read with certainty, kept with its holes. A text that has the
 * template's bytes outside its holes, a string in its text hole and a
 * number in each other, is read as the scan read the template's (the
 * same tokens, the same keys, the same values but for the holes'): only
 * its holes are scanned. */
typedef struct
{
  GString      *bytes;       /* the text it was made from */
  char         *name;        /* its event's name, or NULL */
  MendJsonHole  holes[MEND_JSON_SCAN_MAX_HOLES];
  guint         n_holes;
  guint         tag;         /* the caller's (a content block's index…) */
  guint         misses;      /* texts kept again since the last match */
  gboolean      valid;
} MendJsonTemplate;

void     mend_json_template_init  (MendJsonTemplate   *tmpl);
void     mend_json_template_clear (MendJsonTemplate   *tmpl);
/* Keeps the text @scan read (all of it, with certainty) as the template,
 * with @name and @tag, when it has one text hole. */
void     mend_json_template_keep  (MendJsonTemplate   *tmpl,
                                   const MendJsonScan *scan,
                                   const char         *name,
                                   guint               tag);
/* Whether @data is the template's text but for its holes: then its
 * string, unescaped, is in @out, and the template's tag in *@tag. */
gboolean mend_json_template_match (MendJsonTemplate   *tmpl,
                                   const char         *name,
                                   const char         *data,
                                   gsize               length,
                                   GString            *out,
                                   guint              *tag);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (MendJsonTemplate, mend_json_template_clear)

/* Whether the key just read is @name. */
#define MEND_JSON_SCAN_KEY_IS(key, length, name) \
  ((length) == sizeof (name) - 1 && memcmp ((key), (name), sizeof (name) - 1) == 0)

G_END_DECLS
