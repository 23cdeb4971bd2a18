/* mend-redact.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "mend-redact-private.h"

#define REDACTED "[redacted]"

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_' || c == '.' || c == '~' ||
         c == '+' || c == '/' || c == '=';
}

static gboolean
has_prefix_nocase (const char *p,
                   const char *end,
                   const char *prefix)
{
  gsize n = strlen (prefix);

  return (gsize) (end - p) >= n && g_ascii_strncasecmp (p, prefix, n) == 0;
}

/* The length of a "Bearer …", "Authorization: …", "x-api-key: …" or
 * "sk-…" credential starting at @p, with *value_at where its value starts;
 * 0 if none starts there. */
static gsize
credential_at (const char  *p,
               const char  *end,
               const char  *start,
               const char **value_at)
{
  static const char * const labels[] = {
    "bearer ", "authorization:", "authorization=", "x-api-key:", "x-api-key=",
    "\"x-api-key\":", "\"authorization\":", "api_key=", "api-key:", NULL
  };
  const char *q;

  for (guint i = 0; labels[i] != NULL; i++)
    if (has_prefix_nocase (p, end, labels[i]) && (p == start || !g_ascii_isalnum (p[-1])))
      {
        q = p + strlen (labels[i]);
        while (q < end && (*q == ' ' || *q == '"'))
          q++;
        /* "Authorization: Bearer x": blank the scheme's value too. */
        if (has_prefix_nocase (q, end, "bearer ") || has_prefix_nocase (q, end, "basic "))
          q = (const char *) memchr (q, ' ', end - q) + 1;
        *value_at = q;
        while (q < end && is_token_char (*q))
          q++;
        return q > *value_at ? (gsize) (q - p) : 0;
      }

  if (has_prefix_nocase (p, end, "sk-") && (p == start || !is_token_char (p[-1])))
    {
      q = p + 3;
      while (q < end && is_token_char (*q))
        q++;
      /* A real key is long; "sk-1" in prose is not one. */
      if (q - p >= 12)
        {
          *value_at = p;
          return q - p;
        }
    }

  return 0;
}

char *
mend_redact_secrets (const char *text,
                     gssize      length)
{
  GString *out;
  const char *end;
  const char *p;

  if (text == NULL)
    return NULL;
  if (length < 0)
    length = strlen (text);

  out = g_string_sized_new (length);
  end = text + length;
  p = text;

  while (p < end)
    {
      const char *value_at = NULL;
      gsize n = credential_at (p, end, text, &value_at);

      if (n == 0)
        {
          g_string_append_c (out, *p++);
          continue;
        }

      g_string_append_len (out, p, value_at - p);
      g_string_append (out, REDACTED);
      p += n;
    }

  return g_string_free (out, FALSE);
}
