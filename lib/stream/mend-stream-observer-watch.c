/* mend-stream-observer-watch.c — MendStreamObserver's watch of a stream, a line at a time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendStreamObserver's watch of a stream: lines put together from reads
 * and fed to the observer one by one.
 */

/* memmem () */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-stream-observer-private.h"

#define READ_BUFFER_SIZE  (64 * 1024)

typedef struct
{
  GInputStream *stream;
  guint8       *buffer;
  GByteArray   *tail;        /* the start of a line split over reads */
  gboolean      discarding;  /* in a line over the limit, until its '\n' */
} WatchData;

static void
watch_data_free (WatchData *data)
{
  g_clear_object (&data->stream);
  g_clear_pointer (&data->buffer, g_free);
  g_clear_pointer (&data->tail, g_byte_array_unref);
  g_free (data);
}

static void
watch_return (GTask  *task,
              GError *error)
{
  MendStreamObserver *self = g_task_get_source_object (task);

  mend_stream_observer_set_watching (self, FALSE);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}


/* Feeds the complete lines of one read, and keeps the rest for the next. */
static void
watch_consume (MendStreamObserver *self,
               WatchData          *data,
               const guint8       *p,
               gsize               n)
{
  const guint8 *end = p + n;
  /* Room for a '\r' before the '\n', which feed_line drops. */
  gsize limit = (gsize) mend_stream_observer_get_max_line_bytes (self) + 1;

  while (p < end)
    {
      const guint8 *newline = memchr (p, '\n', end - p);
      gsize piece = (newline ? newline : end) - p;

      if (data->discarding)
        {
          if (newline != NULL)
            data->discarding = FALSE;
        }
      else if (data->tail->len + piece > limit)
        {
          mend_stream_observer_skip_line (self, data->tail->len > 0 ? data->tail->data : p,
                          data->tail->len > 0 ? data->tail->len : piece);
          g_byte_array_set_size (data->tail, 0);
          data->discarding = newline == NULL;
        }
      else if (newline == NULL)
        g_byte_array_append (data->tail, p, piece);
      else if (data->tail->len > 0)
        {
          g_byte_array_append (data->tail, p, piece);
          mend_stream_observer_feed_line (self, (const char *) data->tail->data, data->tail->len);
          g_byte_array_set_size (data->tail, 0);
        }
      else
        /* The common case: the whole line is in the buffer. */
        mend_stream_observer_feed_line (self, (const char *) p, piece);

      if (newline == NULL)
        break;
      p = newline + 1;
    }
}

static void
watch_read (GTask *task);

static void
on_watch_read (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  MendStreamObserver *self = g_task_get_source_object (task);
  WatchData *data = g_task_get_task_data (task);
  GError *error = NULL;
  gssize n;

  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);
  if (n < 0)
    {
      /* A read error ends the output as surely as its end does; only the
       * app's own cancel leaves the chat as it is. */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        mend_stream_observer_end_of_output (self);
      watch_return (task, error);
      return;
    }

  if (n == 0)
    {
      /* The last line may have no line end. */
      if (!data->discarding && data->tail->len > 0)
        mend_stream_observer_feed_line (self, (const char *) data->tail->data, data->tail->len);
      g_byte_array_set_size (data->tail, 0);
      mend_stream_observer_end_of_output (self);
      watch_return (task, NULL);
      return;
    }

  watch_consume (self, data, data->buffer, (gsize) n);
  watch_read (g_steal_pointer (&task));
}

static void
watch_read (GTask *task)
{
  WatchData *data = g_task_get_task_data (task);

  g_input_stream_read_async (data->stream, data->buffer, READ_BUFFER_SIZE,
                             g_task_get_priority (task),
                             g_task_get_cancellable (task),
                             on_watch_read, task);
}

/**
 * mend_stream_observer_watch_async:
 * @self: an observer
 * @stream: the agent's output, such as a subprocess's standard output
 * @cancellable: (nullable): stops the watch
 * @callback: (scope async) (closure user_data): called at the end of
 *   @stream, on a read error or when cancelled
 * @user_data: data for @callback
 *
 * Reads @stream to its end and feeds each line to
 * [method@Mend.StreamObserver.feed_line] as it arrives, including a last
 * line without a line end. Lines split over reads are put together; lines
 * longer than [property@Mend.StreamObserver:max-line-bytes] are skipped
 * as they stream by, without being held in memory.
 *
 * When @stream ends or cannot be read — the agent exited or crashed — an
 * app turn whose attempt is in flight fails as a dropped connection
 * (retried, unless output was seen), and the agent's own turn, if one
 * ran, is over. Cancelling the watch changes neither.
 *
 * An observer watches one stream at a time: a second watch while one runs
 * completes with %G_IO_ERROR_PENDING and does not read.
 */
void
mend_stream_observer_watch_async (MendStreamObserver  *self,
                                  GInputStream        *stream,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  WatchData *data;

  g_return_if_fail (MEND_IS_STREAM_OBSERVER (self));
  g_return_if_fail (G_IS_INPUT_STREAM (stream));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, mend_stream_observer_watch_async);

  if (!mend_stream_observer_set_watching (self, TRUE))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_PENDING,
                               _("The observer already watches a stream"));
      return;
    }

  data = g_new0 (WatchData, 1);
  data->stream = g_object_ref (stream);
  data->buffer = g_malloc (READ_BUFFER_SIZE);
  data->tail = g_byte_array_new ();
  g_task_set_task_data (task, data, (GDestroyNotify) watch_data_free);

  watch_read (g_steal_pointer (&task));
}

/**
 * mend_stream_observer_watch_finish:
 * @self: an observer
 * @result: the result passed to the callback
 * @error: return location for the stream's error, %G_IO_ERROR_CANCELLED
 *   or %G_IO_ERROR_PENDING
 *
 * Finishes [method@Mend.StreamObserver.watch_async].
 *
 * Returns: %TRUE if the stream was read to its end
 */
gboolean
mend_stream_observer_watch_finish (MendStreamObserver  *self,
                                   GAsyncResult        *result,
                                   GError             **error)
{
  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == mend_stream_observer_watch_async, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
