/* mend-sse-private.h — a bounded reader of server-sent events
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  MEND_SSE_MORE,             /* fed; waiting for more bytes */
  MEND_SSE_STOPPED,          /* the event callback ended the stream */
  MEND_SSE_LINE_TOO_LONG,    /* a line passed max_line_bytes */
  MEND_SSE_EVENT_TOO_LARGE,  /* an event's data passed max_event_bytes */
} MendSseStatus;

/* One event: @name is the last "event:" field or NULL, @data the "data:"
 * lines joined by '\n' (NUL-terminated). Return FALSE to stop reading. */
typedef gboolean (*MendSseEventFunc) (const char *name,
                                      const char *data,
                                      gsize       length,
                                      gpointer    user_data);

/* A bounded reader of server-sent events: bytes in, events out, and never
 * more than max_line_bytes of a line or max_event_bytes of an event held,
 * whatever the stream sends (a line with no end, an event with no end). */
typedef struct
{
  GString          *line;     /* the start of a line a chunk did not end */
  GString          *data;
  GString          *name;     /* the event's name, when has_name */
  gboolean          has_name;
  gboolean          after_cr;
  gsize             max_line_bytes;
  gsize             max_event_bytes;
  MendSseEventFunc  func;
  gpointer          user_data;
} MendSseReader;

void          mend_sse_reader_init   (MendSseReader    *reader,
                                      gsize             max_line_bytes,
                                      gsize             max_event_bytes,
                                      MendSseEventFunc  func,
                                      gpointer          user_data);
void          mend_sse_reader_clear  (MendSseReader    *reader);
MendSseStatus mend_sse_reader_feed   (MendSseReader    *reader,
                                      const char       *bytes,
                                      gsize             length);
/* The end of the stream: a last line without its newline is read, and an
 * event not yet dispatched is. */
MendSseStatus mend_sse_reader_finish (MendSseReader    *reader);

G_END_DECLS
