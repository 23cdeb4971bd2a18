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
typedef struct
{
  const char *p;
  const char *end;
  guint       skipped;    /* values skipped so far */
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

/* Whether the key just read is @name. */
#define MEND_JSON_SCAN_KEY_IS(key, length, name) \
  ((length) == sizeof (name) - 1 && memcmp ((key), (name), sizeof (name) - 1) == 0)

G_END_DECLS
