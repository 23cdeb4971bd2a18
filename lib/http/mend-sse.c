/* mend-sse.c — a bounded reader of server-sent events
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Server-sent events, read a chunk at a time with every buffer bounded.
 */

#include "config.h"

#include <string.h>

#include "mend-sse-private.h"
#include "mend-string-private.h"

void
mend_sse_reader_init (MendSseReader    *reader,
                      gsize             max_line_bytes,
                      gsize             max_event_bytes,
                      MendSseEventFunc  func,
                      gpointer          user_data)
{
  memset (reader, 0, sizeof *reader);
  reader->line = g_string_new (NULL);
  reader->data = g_string_new (NULL);
  reader->name = g_string_new (NULL);
  reader->max_line_bytes = max_line_bytes;
  reader->max_event_bytes = max_event_bytes;
  reader->func = func;
  reader->user_data = user_data;
}

void
mend_sse_reader_clear (MendSseReader *reader)
{
  if (reader->line != NULL)
    g_string_free (reader->line, TRUE);
  if (reader->data != NULL)
    g_string_free (reader->data, TRUE);
  if (reader->name != NULL)
    g_string_free (reader->name, TRUE);
  reader->line = reader->data = reader->name = NULL;
}

static MendSseStatus
dispatch (MendSseReader *reader)
{
  gboolean go_on = TRUE;

  if (reader->data->len > 0 || reader->has_name)
    go_on = reader->func (reader->has_name ? reader->name->str : NULL,
                          reader->data->str, reader->data->len, reader->user_data);

  mend_string_empty (reader->data);
  reader->has_name = FALSE;
  return go_on ? MEND_SSE_MORE : MEND_SSE_STOPPED;
}

/* One whole line, without its end: in the chunk, or held. */
static MendSseStatus
take_line (MendSseReader *reader,
           const char    *line,
           gsize          length)
{
  if (length == 0)
    return dispatch (reader);

  if (line[0] == 'e' && length >= strlen ("event:") && memcmp (line, "event:", strlen ("event:")) == 0)
    {
      const char *name = line + strlen ("event:");
      const char *end = line + length;
      const char *nul = memchr (name, '\0', end - name);

      /* The name ends at a NUL, and goes without the spaces around it. */
      if (nul != NULL)
        end = nul;
      while (name < end && g_ascii_isspace (*name))
        name++;
      while (end > name && g_ascii_isspace (end[-1]))
        end--;
      mend_string_empty (reader->name);
      mend_string_append_len (reader->name, name, end - name);
      reader->has_name = TRUE;
    }
  else if (line[0] == 'd' && length >= strlen ("data:") && memcmp (line, "data:", strlen ("data:")) == 0)
    {
      const char *data = line + strlen ("data:");
      gsize n = length - strlen ("data:");

      if (n > 0 && *data == ' ')
        {
          data++;
          n--;
        }
      if (reader->data->len + 1 + n > reader->max_event_bytes)
        return MEND_SSE_EVENT_TOO_LARGE;
      if (reader->data->len > 0)
        mend_string_append_len (reader->data, "\n", 1);
      mend_string_append_len (reader->data, data, n);
    }
  /* Comments (":…"), "id:", "retry:" and unknown fields are not used. */

  return MEND_SSE_MORE;
}

MendSseStatus
mend_sse_reader_feed (MendSseReader *reader,
                      const char    *bytes,
                      gsize          length)
{
  const char *p = bytes;
  const char *end = bytes + length;
  /* Lines end at LF alone in most streams: a chunk with no CR is not
   * looked at for one line by line. */
  gboolean has_cr = memchr (bytes, '\r', length) != NULL;

  while (p < end)
    {
      const char *stop;
      const char *cr;
      MendSseStatus status;

      /* A line ends at CRLF, LF or CR; the LF of a CRLF split between two
       * chunks is not a second, empty line. */
      if (reader->after_cr && *p == '\n')
        {
          reader->after_cr = FALSE;
          p++;
          continue;
        }
      reader->after_cr = FALSE;

      /* The line's end: the first LF, unless a CR comes before it. */
      stop = memchr (p, '\n', end - p);
      if (stop == NULL)
        stop = end;
      cr = has_cr ? memchr (p, '\r', stop - p) : NULL;
      if (cr != NULL)
        stop = cr;

      if ((gsize) (stop - p) > reader->max_line_bytes - MIN (reader->line->len, reader->max_line_bytes))
        return MEND_SSE_LINE_TOO_LONG;

      if (stop == end)
        {
          /* The rest of a line, until the next chunk. */
          mend_string_append_len (reader->line, p, stop - p);
          break;
        }

      reader->after_cr = *stop == '\r';
      if (reader->line->len == 0)
        status = take_line (reader, p, stop - p);
      else
        {
          mend_string_append_len (reader->line, p, stop - p);
          status = take_line (reader, reader->line->str, reader->line->len);
          mend_string_empty (reader->line);
        }
      p = stop + 1;
      if (status != MEND_SSE_MORE)
        return status;
    }

  return MEND_SSE_MORE;
}

MendSseStatus
mend_sse_reader_finish (MendSseReader *reader)
{
  if (reader->line->len > 0)
    {
      MendSseStatus status = take_line (reader, reader->line->str, reader->line->len);

      g_string_truncate (reader->line, 0);
      if (status != MEND_SSE_MORE)
        return status;
    }

  return dispatch (reader);
}
