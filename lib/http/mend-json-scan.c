/* mend-json-scan.c — a strict byte scan of small JSON texts, with no tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the scan takes, json-glib reads the same way: strict JSON, valid
 * UTF-8 (json-glib refuses a text that is not), strings whose escapes
 * are exact. The rest it gives up on, and the caller parses.
 */

#include "config.h"

#include <string.h>

#include "mend-json-private.h"
#include "mend-json-scan-private.h"
#include "mend-string-private.h"

/* Skipped values: nesting and count, far below what the parser takes. */
#define MAX_SKIP_DEPTH  16
#define MAX_SKIPPED     4096

void
mend_json_scan_init (MendJsonScan *scan,
                     const char   *data,
                     gsize         length)
{
  scan->p = data;
  scan->end = data + length;
  scan->skipped = 0;
  scan->start = data;
  scan->n_holes = 0;
}

static inline void
add_hole (MendJsonScan *scan,
          const char   *from,
          gboolean      text)
{
  if (scan->n_holes < MEND_JSON_SCAN_MAX_HOLES)
    {
      MendJsonHole *hole = &scan->holes[scan->n_holes];

      hole->at = from - scan->start;
      hole->length = scan->p - from;
      hole->text = text;
    }
  scan->n_holes++;
}

static inline void
skip_space (MendJsonScan *scan)
{
  if (G_LIKELY (scan->p < scan->end && (guchar) *scan->p > ' '))
    return;
  while (scan->p < scan->end &&
         (*scan->p == ' ' || *scan->p == '\n' || *scan->p == '\r' || *scan->p == '\t'))
    scan->p++;
}

/* The next byte that is not whitespace, and taking it: inline, as every
 * token starts with them. */
static inline char
peek (MendJsonScan *scan)
{
  skip_space (scan);
  return scan->p < scan->end ? *scan->p : '\0';
}

static inline gboolean
take (MendJsonScan *scan,
      char          c)
{
  if (peek (scan) != c || c == '\0')
    return FALSE;
  scan->p++;
  return TRUE;
}

char
mend_json_scan_peek (MendJsonScan *scan)
{
  return peek (scan);
}

gboolean
mend_json_scan_char (MendJsonScan *scan,
                     char          c)
{
  return take (scan, c);
}

gboolean
mend_json_scan_end (MendJsonScan *scan)
{
  skip_space (scan);
  return scan->p == scan->end;
}

/* The end of a run of a string's plain bytes: the first quote, backslash
 * or control byte from @p (or @end); *@high is set when the run has a
 * byte beyond ASCII. */
static inline const char *
plain_run (const char *p,
           const char *end,
           gboolean   *high)
{
  for (;;)
    {
      p = mend_json_next_special (p, end, high);
      if (p == end || (guchar) *p != 0x7f)
        return p;
      p++;   /* DEL: a plain byte in a JSON string */
    }
}

/* A string's bytes up to its closing quote, with no escape: the rest of
 * a key, or of a string compared as it is. */
static gboolean
plain_string (MendJsonScan  *scan,
              const char   **start,
              gsize         *length)
{
  const char *p;
  gboolean high = FALSE;

  if (!take (scan, '"'))
    return FALSE;
  p = plain_run (scan->p, scan->end, &high);
  if (p == scan->end || *p != '"' || (high && !g_utf8_validate_len (scan->p, p - scan->p, NULL)))
    return FALSE;
  *start = scan->p;
  *length = p - scan->p;
  scan->p = p + 1;
  return TRUE;
}

MendJsonScanStep
mend_json_scan_member (MendJsonScan *scan,
                       gboolean     *first,
                       const char  **key,
                       gsize        *key_length)
{
  char c = peek (scan);

  if (c == '}')
    {
      scan->p++;
      return MEND_JSON_SCAN_DONE;
    }
  if (!*first)
    {
      if (c != ',')
        return MEND_JSON_SCAN_ODD;
      scan->p++;
    }
  *first = FALSE;
  if (!plain_string (scan, key, key_length) || !take (scan, ':'))
    return MEND_JSON_SCAN_ODD;
  return MEND_JSON_SCAN_NEXT;
}

MendJsonScanStep
mend_json_scan_element (MendJsonScan *scan,
                        gboolean     *first)
{
  char c = peek (scan);

  if (c == ']')
    {
      scan->p++;
      return MEND_JSON_SCAN_DONE;
    }
  if (!*first)
    {
      if (c != ',')
        return MEND_JSON_SCAN_ODD;
      scan->p++;
    }
  *first = FALSE;
  return MEND_JSON_SCAN_NEXT;
}

static inline int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* The four hex digits after "\u". */
static gboolean
read_hex4 (const char  *p,
           const char  *end,
           gunichar    *value)
{
  gunichar v = 0;

  if (end - p < 4)
    return FALSE;
  for (int i = 0; i < 4; i++)
    {
      int h = hex_value (p[i]);

      if (h < 0)
        return FALSE;
      v = (v << 4) | (gunichar) h;
    }
  *value = v;
  return TRUE;
}

/* A string, unescaped and appended to @out, or only checked when @out is
 * NULL. Each run of bytes between escapes is checked as UTF-8 (an escape
 * cannot split a character); what an escape writes is UTF-8 by making. */
static gboolean
read_string (MendJsonScan *scan,
             GString      *out)
{
  gsize start = out != NULL ? out->len : 0;
  const char *p;

  if (!take (scan, '"'))
    return FALSE;

  p = scan->p;
  for (;;)
    {
      const char *run = p;
      gboolean high = FALSE;
      char c;
      gunichar u;

      p = plain_run (p, scan->end, &high);
      if (high && !g_utf8_validate_len (run, p - run, NULL))
        goto odd;
      if (out != NULL)
        mend_string_append_len (out, run, p - run);
      if (p == scan->end || (guchar) *p < 0x20)
        goto odd;
      if (*p == '"')
        break;

      /* An escape */
      if (scan->end - p < 2)
        goto odd;
      switch (p[1])
        {
        case '"': c = '"'; break;
        case '\\': c = '\\'; break;
        case '/': c = '/'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': c = 0; break;
        default: goto odd;
        }
      if (c != 0)
        {
          if (out != NULL)
            g_string_append_c (out, c);
          p += 2;
          continue;
        }

      if (!read_hex4 (p + 2, scan->end, &u))
        goto odd;
      p += 6;
      if (u >= 0xdc00 && u <= 0xdfff)
        goto odd;   /* a low surrogate alone */
      if (u >= 0xd800 && u <= 0xdbff)
        {
          gunichar low;

          /* A high surrogate: its low half must follow. */
          if (scan->end - p < 6 || p[0] != '\\' || p[1] != 'u' || !read_hex4 (p + 2, scan->end, &low) ||
              low < 0xdc00 || low > 0xdfff)
            goto odd;
          p += 6;
          u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
        }
      /* json-glib ends a string at a NUL. */
      if (u == 0)
        goto odd;
      if (out != NULL)
        g_string_append_unichar (out, u);
    }

  scan->p = p + 1;
  return TRUE;

odd:
  if (out != NULL)
    g_string_truncate (out, start);
  return FALSE;
}

gboolean
mend_json_scan_string (MendJsonScan *scan,
                       GString      *out)
{
  const char *from;

  skip_space (scan);
  from = scan->p;
  if (!read_string (scan, out))
    return FALSE;
  add_hole (scan, from, TRUE);
  return TRUE;
}

gboolean
mend_json_scan_string_is (MendJsonScan *scan,
                          const char   *expected)
{
  const char *start;
  gsize length;

  return plain_string (scan, &start, &length) && length == strlen (expected) &&
         memcmp (start, expected, length) == 0;
}

static gboolean
literal (MendJsonScan *scan,
         const char   *word,
         gsize         length)
{
  skip_space (scan);
  if ((gsize) (scan->end - scan->p) < length || memcmp (scan->p, word, length) != 0)
    return FALSE;
  scan->p += length;
  return TRUE;
}

gboolean
mend_json_scan_null (MendJsonScan *scan)
{
  return literal (scan, "null", 4);
}

static gsize
digits (const char *p,
        const char *end)
{
  const char *q = p;

  while (q < end && *q >= '0' && *q <= '9')
    q++;
  return q - p;
}

gboolean
mend_json_scan_index (MendJsonScan *scan,
                      guint        *value)
{
  gsize n;
  guint v = 0;

  skip_space (scan);
  n = digits (scan->p, scan->end);
  if (n == 0 || n > 9 || (n > 1 && scan->p[0] == '0'))
    return FALSE;
  /* No fraction or exponent after it. */
  if (scan->p + n < scan->end && (scan->p[n] == '.' || scan->p[n] == 'e' || scan->p[n] == 'E'))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    v = v * 10 + (guint) (scan->p[i] - '0');
  scan->p += n;
  *value = v;
  return TRUE;
}

/* A number as strict JSON writes it, and short enough that json-glib
 * reads it without a doubt. */
static gboolean
skip_number (MendJsonScan *scan)
{
  const char *p = scan->p;
  gsize n;

  if (p < scan->end && *p == '-')
    p++;
  n = digits (p, scan->end);
  if (n == 0 || n > 15 || (n > 1 && *p == '0'))
    return FALSE;
  p += n;
  if (p < scan->end && *p == '.')
    {
      p++;
      n = digits (p, scan->end);
      if (n == 0 || n > 20)
        return FALSE;
      p += n;
    }
  if (p < scan->end && (*p == 'e' || *p == 'E'))
    {
      p++;
      if (p < scan->end && (*p == '+' || *p == '-'))
        p++;
      n = digits (p, scan->end);
      if (n == 0 || n > 2)
        return FALSE;
      p += n;
    }
  scan->p = p;
  return TRUE;
}

static gboolean
skip_value (MendJsonScan *scan,
            guint         depth)
{
  gboolean first = TRUE;
  MendJsonScanStep step;
  const char *key;
  gsize key_length;

  if (++scan->skipped > MAX_SKIPPED)
    return FALSE;

  switch (peek (scan))
    {
    case '"':
      /* Checked as the parser would read it, and dropped. */
      return read_string (scan, NULL);
    case '{':
      if (depth >= MAX_SKIP_DEPTH)
        return FALSE;
      scan->p++;
      while ((step = mend_json_scan_member (scan, &first, &key, &key_length)) == MEND_JSON_SCAN_NEXT)
        if (!skip_value (scan, depth + 1))
          return FALSE;
      return step == MEND_JSON_SCAN_DONE;
    case '[':
      if (depth >= MAX_SKIP_DEPTH)
        return FALSE;
      scan->p++;
      while ((step = mend_json_scan_element (scan, &first)) == MEND_JSON_SCAN_NEXT)
        if (!skip_value (scan, depth + 1))
          return FALSE;
      return step == MEND_JSON_SCAN_DONE;
    case 't':
      return literal (scan, "true", 4);
    case 'f':
      return literal (scan, "false", 5);
    case 'n':
      return literal (scan, "null", 4);
    default:
      {
        const char *from = scan->p;

        if (!skip_number (scan))
          return FALSE;
        add_hole (scan, from, FALSE);
        return TRUE;
      }
    }
}

gboolean
mend_json_scan_skip (MendJsonScan *scan)
{
  return skip_value (scan, 0);
}

/* Templates */

/* Texts kept again, none matching, before the template gives up for the
 * stream: its events differ in more than their holes. */
#define MAX_MISSES 16

void
mend_json_template_init (MendJsonTemplate *tmpl)
{
  memset (tmpl, 0, sizeof *tmpl);
}

void
mend_json_template_clear (MendJsonTemplate *tmpl)
{
  if (tmpl->bytes != NULL)
    g_string_free (tmpl->bytes, TRUE);
  g_free (tmpl->name);
  memset (tmpl, 0, sizeof *tmpl);
}

void
mend_json_template_keep (MendJsonTemplate   *tmpl,
                         const MendJsonScan *scan,
                         const char         *name,
                         guint               tag)
{
  guint texts = 0;

  if (tmpl->misses >= MAX_MISSES || scan->n_holes > MEND_JSON_SCAN_MAX_HOLES)
    return;
  for (guint i = 0; i < scan->n_holes; i++)
    texts += scan->holes[i].text;
  if (texts != 1)
    return;

  if (tmpl->valid)
    tmpl->misses++;
  if (tmpl->bytes == NULL)
    tmpl->bytes = g_string_new (NULL);
  g_string_truncate (tmpl->bytes, 0);
  g_string_append_len (tmpl->bytes, scan->start, scan->end - scan->start);
  if (g_strcmp0 (tmpl->name, name) != 0)
    {
      g_free (tmpl->name);
      tmpl->name = g_strdup (name);
    }
  memcpy (tmpl->holes, scan->holes, scan->n_holes * sizeof scan->holes[0]);
  tmpl->n_holes = scan->n_holes;
  tmpl->tag = tag;
  tmpl->valid = TRUE;
}

gboolean
mend_json_template_match (MendJsonTemplate *tmpl,
                          const char       *name,
                          const char       *data,
                          gsize             length,
                          GString          *out,
                          guint            *tag)
{
  MendJsonScan scan;
  gsize from = 0;

  if (!tmpl->valid || g_strcmp0 (tmpl->name, name) != 0)
    return FALSE;

  mend_json_scan_init (&scan, data, length);
  g_string_truncate (out, 0);
  for (guint i = 0; i <= tmpl->n_holes; i++)
    {
      const MendJsonHole *hole = i < tmpl->n_holes ? &tmpl->holes[i] : NULL;
      gsize fixed = (hole != NULL ? hole->at : tmpl->bytes->len) - from;

      /* The bytes up to the hole, as they were; then a token of the
       * hole's kind, right there (no space before it: that would be a
       * fixed byte). */
      if ((gsize) (scan.end - scan.p) < fixed || memcmp (scan.p, tmpl->bytes->str + from, fixed) != 0)
        goto miss;
      scan.p += fixed;
      if (hole == NULL)
        break;
      if (scan.p == scan.end || (hole->text && *scan.p != '"') ||
          !(hole->text ? read_string (&scan, out) : skip_number (&scan)))
        goto miss;
      from = hole->at + hole->length;
    }
  if (scan.p != scan.end)
    goto miss;

  tmpl->misses = 0;
  *tag = tmpl->tag;
  return TRUE;

miss:
  g_string_truncate (out, 0);
  return FALSE;
}
