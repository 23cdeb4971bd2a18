/* mend-string-private.h — GString appends for the hot path of a stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <string.h>

#include <glib.h>

G_BEGIN_DECLS

/* g_string_append_len () without its call when the string has the room:
 * a few bytes a time, every line and every delta of a stream. */
static inline void
mend_string_append_len (GString    *s,
                        const char *bytes,
                        gsize       n)
{
  if (G_LIKELY (s->len + n < s->allocated_len))
    {
      memcpy (s->str + s->len, bytes, n);
      s->len += n;
      s->str[s->len] = '\0';
    }
  else
    g_string_append_len (s, bytes, n);
}

/* g_string_truncate (s, 0) without its call. */
static inline void
mend_string_empty (GString *s)
{
  s->len = 0;
  s->str[0] = '\0';
}

G_END_DECLS
