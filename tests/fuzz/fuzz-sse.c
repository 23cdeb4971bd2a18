/* fuzz-sse.c: server-sent events, read a chunk at a time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Input layout (see corpus/fuzz-sse, made by make-seeds.py):
 *
 *   byte 0    the chunk size the stream is fed in, 1 to 256
 *   byte 1    the caps: max_line_bytes is 16 << (bits 0-2), max_event_bytes
 *             16 << (bits 3-5)
 *   then      the stream, as a server sends it
 *
 * The stream goes through the bounded reader that MendHttpSender uses,
 * once in chunks and once whole. Checked besides crashes and leaks:
 * - the reader never holds more than its caps: a line of at most
 *   max_line_bytes, an event of at most max_event_bytes;
 * - how the bytes are split does not change what is read: the same events,
 *   in the same order, and the same verdict at the end (the caps aside,
 *   which are checked as bytes arrive, so a split can only find them
 *   sooner, never miss them);
 * - each event's data goes to the bounded JSON parser, as the sender's do.
 */

#include "fuzz-common.h"

#include "mend-json-private.h"
#include "mend-sse-private.h"

typedef struct
{
  GString *events;   /* name NUL data NUL, for each event */
  guint    n;
  MendSseReader *reader;
} Seen;

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static gboolean
on_event (const char *name,
          const char *data,
          gsize       length,
          gpointer    user_data)
{
  Seen *seen = user_data;
  g_autoptr(JsonNode) node = NULL;

  fuzz_check (length <= seen->reader->max_event_bytes, "an event of %" G_GSIZE_FORMAT " bytes passed its cap",
              length);
  fuzz_check (data[length] == '\0', "an event's data is not terminated");
  node = mend_json_parse (data, length, NULL);

  g_string_append (seen->events, name ? name : "(none)");
  g_string_append_c (seen->events, '\0');
  g_string_append_len (seen->events, data, length);
  g_string_append_c (seen->events, '\0');
  seen->n++;

  /* A "stop" event ends the stream, as message_stop does. */
  return g_strcmp0 (name, "stop") != 0;
}

static MendSseStatus
read_stream (const uint8_t *data,
             gsize          size,
             gsize          chunk,
             gsize          max_line,
             gsize          max_event,
             Seen          *seen)
{
  MendSseReader reader;
  MendSseStatus status = MEND_SSE_MORE;

  seen->reader = &reader;
  mend_sse_reader_init (&reader, max_line, max_event, on_event, seen);
  for (gsize at = 0; at < size && status == MEND_SSE_MORE; at += chunk)
    {
      status = mend_sse_reader_feed (&reader, (const char *) data + at, MIN (chunk, size - at));
      fuzz_check (reader.line->len <= max_line, "a line of %" G_GSIZE_FORMAT " bytes is held", reader.line->len);
      fuzz_check (reader.data->len <= max_event, "an event of %" G_GSIZE_FORMAT " bytes is held",
                  reader.data->len);
    }
  if (status == MEND_SSE_MORE)
    status = mend_sse_reader_finish (&reader);
  mend_sse_reader_clear (&reader);
  seen->reader = NULL;
  return status;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  Seen chunked = { NULL, 0, NULL };
  Seen whole = { NULL, 0, NULL };
  MendSseStatus a, b;
  gsize chunk, max_line, max_event;

  if (size < 2)
    return 0;

  chunk = data[0] + 1;
  max_line = (gsize) 16 << (data[1] & 7);
  max_event = (gsize) 16 << ((data[1] >> 3) & 7);
  data += 2;
  size -= 2;
  chunked.events = g_string_new (NULL);
  whole.events = g_string_new (NULL);

  a = read_stream (data, size, chunk, max_line, max_event, &chunked);
  b = read_stream (data, size, MAX (size, 1), max_line, max_event, &whole);

  fuzz_check (a == b, "chunks of %" G_GSIZE_FORMAT " read to %d, the whole stream to %d", chunk, a, b);
  fuzz_check (chunked.n == whole.n, "chunks of %" G_GSIZE_FORMAT " gave %u events, the whole stream %u",
              chunk, chunked.n, whole.n);
  fuzz_check (chunked.events->len == whole.events->len &&
              memcmp (chunked.events->str, whole.events->str, whole.events->len) == 0,
              "chunks of %" G_GSIZE_FORMAT " gave other events than the whole stream", chunk);

  g_string_free (chunked.events, TRUE);
  g_string_free (whole.events, TRUE);
  return 0;
}
