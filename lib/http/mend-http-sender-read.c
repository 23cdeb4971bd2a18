/* mend-http-sender-read.c — MendHttpSender: reading an attempt's answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The answer of an attempt, from its status to its last byte: a whole
 * body, or server-sent events each read by the dialect (a text delta by
 * its byte scan, anything else by one parser for the attempt), every
 * byte counted against the caps. A pollable stream (libsoup's are) is read
 * every chunk at hand at once, with no task per chunk.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-clock-private.h"
#include "mend-failure-parse-private.h"
#include "mend-failure-private.h"
#include "mend-http-failures-private.h"
#include "mend-http-sender-private.h"
#include "mend-i18n-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
#include "mend-transcript-private.h"
#include "mend-turn-private.h"

void
mend_http_attempt_free (MendHttpAttempt *attempt)
{
  if (attempt->timeout_id != 0)
    mend_clock_remove_timeout (attempt->clock, attempt->timeout_id);
  if (attempt->outer_id != 0)
    g_cancellable_disconnect (attempt->outer, attempt->outer_id);
  g_clear_object (&attempt->outer);
  g_clear_object (&attempt->cancellable);
  if (attempt->readable != NULL)
    {
      g_source_destroy (attempt->readable);
      g_clear_pointer (&attempt->readable, g_source_unref);
    }
  g_clear_object (&attempt->body_stream);
  mend_sse_reader_clear (&attempt->events);
  mend_json_template_clear (&attempt->memo);
  g_clear_object (&attempt->parser);
  if (attempt->scratch != NULL)
    g_string_free (attempt->scratch, TRUE);
  g_free (attempt->buffer);
  g_clear_pointer (&attempt->body, g_byte_array_unref);
  g_clear_pointer (&attempt->answer, mend_http_answer_free);
  g_clear_object (&attempt->outcome);
  if (attempt->message != NULL)
    g_signal_handlers_disconnect_by_data (attempt->message, attempt);
  g_clear_object (&attempt->message);
  g_clear_object (&attempt->clock);
  g_clear_object (&attempt->turn);
  g_clear_object (&attempt->self);
  g_clear_object (&attempt->transcript);
  g_free (attempt->answer_text);
  g_free (attempt);
}

/* Whether the attempt's ::content and the turn's ::text-delta have a
 * handler, looked at once per read of the answer (before its events),
 * not per event: an emission with no handler costs as much as a text
 * delta's scan. Once a handler is found, the signal is emitted to the
 * attempt's end (GLib skips handlers that went). */
static void
look_for_handlers (MendHttpAttempt *attempt)
{
  if (!attempt->content_wanted)
    attempt->content_wanted = g_signal_has_handler_pending (attempt->self, attempt->content_signal, 0, TRUE);
  if (!attempt->text_wanted)
    attempt->text_wanted = mend_turn_wants_text (attempt->turn);
}

/* Output: the turn told once, then ::content with @data, and
 * ::text-delta with @text unless empty or the attempt was cancelled by
 * then. */
static void
emit_content (MendHttpAttempt *attempt,
              const char      *data,
              const char      *text)
{
  if (!attempt->output_noted)
    {
      attempt->output_noted = TRUE;
      mend_turn_note_output (attempt->turn);
    }
  if (attempt->content_wanted)
    g_signal_emit (attempt->self, attempt->content_signal, 0, attempt->turn, data);
  /* A ::content handler that stopped the turn: no text after Stop. */
  if (text != NULL && text[0] != '\0' && !g_cancellable_is_cancelled (attempt->cancellable))
    {
      g_signal_emit (attempt->self, attempt->text_delta_signal, 0, text);
      /* The turn's stream, which every sender feeds; unless a handler
       * stopped it meanwhile. */
      if (attempt->text_wanted && !g_cancellable_is_cancelled (attempt->cancellable))
        mend_turn_emit_text (attempt->turn, text);
    }
}

void
mend_http_attempt_finish (GTask       *task,
                          MendFailure *failure)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);

  if (attempt->timeout_id != 0)
    {
      mend_clock_remove_timeout (attempt->clock, attempt->timeout_id);
      attempt->timeout_id = 0;
    }

  /* The answer of an attempt that succeeded, unless Stop came first. */
  if (failure == NULL && !(attempt->outer != NULL && g_cancellable_is_cancelled (attempt->outer)))
    {
      g_autoptr(JsonNode) content = mend_http_answer_dup_content (attempt->answer);

      mend_transcript_answered (attempt->transcript, attempt->turn, content);
      g_free (attempt->answer_text);
      attempt->answer_text = g_strdup (mend_http_answer_get_text (attempt->answer));
    }

  g_task_return_pointer (task, failure, g_object_unref);
  g_object_unref (task);
}

static MendFailure *
failure_from_error (MendHttpAttempt      *attempt,
                    const GError *error)
{
  if (attempt->interim_flood && !attempt->timed_out)
    return mend_http_failure_interim_flood (MEND_HTTP_MAX_INTERIM);
  return mend_http_failure_from_error (error, attempt->timed_out ? attempt->timeout_ms : 0,
                                       attempt->outer != NULL && g_cancellable_is_cancelled (attempt->outer));
}

static MendFailure *
failure_over_cap (MendHttpAttempt     *attempt,
                  MendHttpCap  cap)
{
  return mend_http_failure_over_cap (cap, cap == MEND_HTTP_CAP_LINE ? attempt->max_line_bytes
                                          : cap == MEND_HTTP_CAP_EVENT ? attempt->max_event_bytes
                                          : attempt->max_body_bytes);
}

static MendFailure *
failure_from_response (MendHttpAttempt    *attempt,
                       const void *data,
                       gsize       size)
{
  return mend_http_failure_from_response (attempt->message, data, size, attempt->clock,
                                          mend_turn_get_policy (attempt->turn));
}

/* An error body cut at the most read of it is one the failure knows
 * may be cut inside a key. */
G_STATIC_ASSERT (MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES >= MEND_REASON_MAX_BODY_BYTES);

/* Whether a line end of @data falls inside a JSON string of it. */
static gboolean
line_end_in_string (const char *data,
                    gsize       length)
{
  gboolean in_string = FALSE;

  for (gsize i = 0; i < length; i++)
    {
      if (in_string && data[i] == '\\')
        i++;
      else if (data[i] == '"')
        in_string = !in_string;
      else if (in_string && data[i] == '\n')
        return TRUE;
    }
  return FALSE;
}

/* An error event's data, its data: lines joined. A server that splits
 * a line of its own, a JSON string or a key echoed in it, over two data:
 * lines makes two halves that neither the parser nor the redaction
 * knows: unless the data is JSON as it is, the lines are joined without
 * their ends, into the text they were cut from. */
static MendFailure *
failure_from_event (MendHttpAttempt *attempt,
                    const char      *data,
                    gsize            length)
{
  g_autoptr(GString) joined = NULL;
  g_autoptr(JsonNode) json = NULL;

  /* JSON split between its tokens only is whole. */
  if (memchr (data, '\n', length) == NULL ||
      (!line_end_in_string (data, length) && (json = mend_json_parse (data, (gssize) length, NULL)) != NULL))
    return failure_from_response (attempt, data, length);

  joined = g_string_sized_new (length);
  for (const char *p = data, *end = data + length; p < end; p++)
    if (*p != '\n')
      g_string_append_c (joined, *p);
  return failure_from_response (attempt, joined->str, joined->len);
}

/* Reading the answer: a chunk at a time, every byte counted */

/* How a complete answer ends the attempt: an answer with no content at
 * all (no text, no tool call) is the model's empty response. */
static MendFailure *
answer_outcome (MendHttpAttempt *attempt)
{
  return mend_http_answer_is_empty (attempt->answer) ? mend_failure_new_empty_response () : NULL;
}

static gboolean
on_event (const char *name,
          const char *data,
          gsize       length,
          gpointer    user_data)
{
  MendHttpAttempt *attempt = user_data;
  const MendHttpDialectClass *wire = attempt->wire;
  g_autoptr(JsonNode) node = NULL;
  const char *text = NULL;
  MendHttpEvent event;

  /* Stop (or the timeout) came from a handler of the event before, in
   * the same chunk: the attempt ends now, the rest not read. */
  if (g_cancellable_is_cancelled (attempt->cancellable))
    {
      g_autoptr(GError) error = NULL;

      g_cancellable_set_error_if_cancelled (attempt->cancellable, &error);
      attempt->ended = TRUE;
      attempt->outcome = failure_from_error (attempt, error);
      return FALSE;
    }

  /* A text delta costs a byte scan, or less: a comparison with the last
   * one and a scan of its text; anything else, a parse (with one parser
   * for the attempt). */
  if (!mend_http_dialect_scan (wire, attempt->answer, &attempt->memo, name, data, length, attempt->scratch,
                               &event, &text))
    {
      if (attempt->parser == NULL)
        attempt->parser = json_parser_new_immutable ();
      node = mend_json_parse_with (attempt->parser, data, length, NULL);
      text = NULL;
      event = wire->read_event (attempt->answer, name, data, length,
                                node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL,
                                &text);
    }
  switch (event)
    {
    case MEND_HTTP_EVENT_ERROR:
      attempt->ended = TRUE;
      attempt->outcome = failure_from_event (attempt, data, length);
      return FALSE;
    case MEND_HTTP_EVENT_END:
      attempt->ended = TRUE;
      attempt->outcome = answer_outcome (attempt);
      return FALSE;
    case MEND_HTTP_EVENT_CONTENT:
      emit_content (attempt, data, text);
      break;
    case MEND_HTTP_EVENT_OTHER:
    default:
      break;
    }

  return TRUE;
}

/* Ends the attempt if the reader's status says so; TRUE when it did. */
static gboolean
sse_status_ends (GTask         *task,
                 MendSseStatus  status)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);

  switch (status)
    {
    case MEND_SSE_STOPPED:
      mend_http_attempt_finish (task, g_steal_pointer (&attempt->outcome));
      return TRUE;
    case MEND_SSE_LINE_TOO_LONG:
      mend_http_attempt_finish (task, failure_over_cap (attempt, MEND_HTTP_CAP_LINE));
      return TRUE;
    case MEND_SSE_EVENT_TOO_LARGE:
      mend_http_attempt_finish (task, failure_over_cap (attempt, MEND_HTTP_CAP_EVENT));
      return TRUE;
    case MEND_SSE_MORE:
    default:
      return FALSE;
    }
}

static void
finish_body (GTask *task)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);
  guint status = soup_message_get_status (attempt->message);

  if (SOUP_STATUS_IS_REDIRECTION (status))
    mend_http_attempt_finish (task, mend_http_failure_from_redirect (attempt->message, attempt->clock,
                                                     mend_turn_get_policy (attempt->turn)));
  else if (!SOUP_STATUS_IS_SUCCESSFUL (status))
    {
      guint len = MIN (attempt->body->len, MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES);
      mend_http_attempt_finish (task, failure_from_response (attempt, attempt->body->data, len));
    }
  else if (attempt->body->len == 0)
    mend_http_attempt_finish (task, mend_failure_new_empty_response ());
  else
    {
      const char *type = soup_message_headers_get_content_type (soup_message_get_response_headers (attempt->message), NULL);
      g_autoptr(JsonNode) root = NULL;
      const char *text = "";
      MendHttpEvent whole = MEND_HTTP_EVENT_OTHER;

      /* A whole answer in the dialect's JSON: its text, as one delta; an
       * answer with nothing in it is the model's empty response, and an
       * error object in a 200 a failure as in a stream. */
      if (g_strcmp0 (type, "application/json") == 0 &&
          (root = mend_json_parse ((const char *) attempt->body->data, attempt->body->len, NULL)) != NULL)
        whole = attempt->wire->read_whole (attempt->answer, root);
      if (whole == MEND_HTTP_EVENT_ERROR)
        {
          guint len = MIN (attempt->body->len, MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES);

          mend_http_attempt_finish (task, failure_from_response (attempt, attempt->body->data, len));
          return;
        }
      if (whole == MEND_HTTP_EVENT_END)
        {
          if (mend_http_answer_is_empty (attempt->answer))
            {
              mend_http_attempt_finish (task, mend_failure_new_empty_response ());
              return;
            }
          text = mend_http_answer_get_text (attempt->answer);
        }

      g_byte_array_append (attempt->body, (const guint8 *) "", 1);
      look_for_handlers (attempt);
      emit_content (attempt, (const char *) attempt->body->data, text);
      mend_http_attempt_finish (task, NULL);
    }
}

/* One chunk of the answer, as decoded; TRUE when it ended the attempt
 * (the task may be gone then). */
static gboolean
take_chunk (GTask      *task,
            const char *data,
            gsize       size)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);
  gboolean success = attempt->success;

  /* The bytes as decoded: a small compressed answer counts as what it
   * becomes. */
  attempt->received += size;
  if (success && attempt->received > attempt->max_body_bytes)
    {
      mend_http_attempt_finish (task, failure_over_cap (attempt, MEND_HTTP_CAP_BODY));
      return TRUE;
    }

  if (attempt->streaming)
    return sse_status_ends (task, mend_sse_reader_feed (&attempt->events, data, size));
  if (success)
    {
      g_byte_array_append (attempt->body, (const guint8 *) data, size);
      return FALSE;
    }

  /* Of an error, only the head is kept; the rest is not read. */
  g_byte_array_append (attempt->body, (const guint8 *) data,
                       MIN (size, MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES - attempt->body->len));
  if (attempt->body->len >= MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES)
    {
      finish_body (task);
      return TRUE;
    }
  return FALSE;
}

/* The end of the answer's bytes. */
static void
take_end (GTask *task)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);
  g_autoptr(GError) eof = NULL;

  if (!attempt->streaming)
    {
      finish_body (task);
      return;
    }
  if (sse_status_ends (task, mend_sse_reader_finish (&attempt->events)))
    return;
  /* A stream whose model said how it ended, with no end marker after
   * (some servers send none): complete. */
  if (mend_http_answer_get_stop_reason (attempt->answer) != NULL &&
      attempt->wire->dialect != MEND_HTTP_DIALECT_MESSAGES)
    {
      mend_http_attempt_finish (task, answer_outcome (attempt));
      return;
    }
  eof = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT,
                             _("The event stream ended before the message did"));
  mend_http_attempt_finish (task, mend_failure_new_from_error (eof));
}

/* Reading a stream that is not pollable: a chunk at a time, each a GTask. */

static void read_more (GTask *task);

static void
on_read (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  GTask *task = user_data;
  MendHttpAttempt *attempt = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) chunk = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error);
  const char *data;
  gsize size = 0;

  if (error != NULL)
    {
      mend_http_attempt_finish (task, failure_from_error (attempt, error));
      return;
    }

  data = g_bytes_get_data (chunk, &size);
  look_for_handlers (attempt);
  if (size == 0)
    take_end (task);
  else if (!take_chunk (task, data, size))
    read_more (task);
}

static void
read_more (GTask *task)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);

  g_input_stream_read_bytes_async (attempt->body_stream, MEND_HTTP_READ_SIZE, attempt->io_priority,
                                   attempt->cancellable, on_read, task);
}

/* Reading a pollable stream (libsoup's are): every chunk at hand in one
 * go, into one buffer, with no task or allocation per chunk; one source
 * waits for the next chunks while it brings them. libsoup makes a stream's
 * source for what the stream holds when it is made (its own buffer, an
 * HTTP/2 stream's data), so a source that wakes the reader for nothing
 * is made again. */

static void
new_readable (MendHttpAttempt *attempt)
{
  if (attempt->readable != NULL)
    {
      g_source_destroy (attempt->readable);
      g_source_unref (attempt->readable);
    }
  attempt->readable = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (attempt->body_stream),
                                                             attempt->cancellable);
  g_source_set_priority (attempt->readable, attempt->io_priority);
  g_source_attach (attempt->readable, g_main_context_get_thread_default ());
}

static gboolean on_readable (GObject  *stream,
                             gpointer  user_data);

static gboolean
read_at_hand (GTask *task)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);
  GPollableInputStream *pollable = (GPollableInputStream *) attempt->body_stream;   /* checked by read_body () */
  GSource *woke = attempt->readable;
  gsize got = 0;

  if (woke != NULL)
    g_source_set_ready_time (woke, -1);
  look_for_handlers (attempt);
  for (guint i = 0; i < MEND_HTTP_READS_PER_DISPATCH; i++)
    {
      g_autoptr(GError) error = NULL;
      gssize n;

      if (g_cancellable_is_cancelled (attempt->cancellable) &&
          g_cancellable_set_error_if_cancelled (attempt->cancellable, &error))
        {
          mend_http_attempt_finish (task, failure_from_error (attempt, error));
          return G_SOURCE_REMOVE;
        }
      n = g_pollable_input_stream_read_nonblocking (pollable, attempt->buffer, MEND_HTTP_READ_SIZE, NULL, &error);
      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        break;
      if (n < 0)
        {
          mend_http_attempt_finish (task, failure_from_error (attempt, error));
          return G_SOURCE_REMOVE;
        }
      if (n == 0)
        {
          take_end (task);
          return G_SOURCE_REMOVE;
        }
      got += n;
      if (take_chunk (task, attempt->buffer, n))
        return G_SOURCE_REMOVE;
      /* Enough for one go: the main loop's turn, then the rest. */
      if (i + 1 == MEND_HTTP_READS_PER_DISPATCH)
        {
          if (woke == NULL)
            {
              new_readable (attempt);
              g_source_set_callback (attempt->readable, G_SOURCE_FUNC (on_readable), task, NULL);
            }
          g_source_set_ready_time (attempt->readable, 0);
          return woke == NULL ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
        }
    }

  /* Read all there was: the source waits for more, unless it woke the
   * reader for nothing twice in a row (once is a part of a chunk). */
  attempt->empty_wakeups = got == 0 ? attempt->empty_wakeups + 1 : 0;
  if (woke == NULL || attempt->empty_wakeups >= 2)
    {
      attempt->empty_wakeups = 0;
      new_readable (attempt);
      g_source_set_callback (attempt->readable, G_SOURCE_FUNC (on_readable), task, NULL);
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_readable (GObject  *stream,
             gpointer  user_data)
{
  return read_at_hand (user_data);
}

static void
read_body (GTask *task)
{
  MendHttpAttempt *attempt = g_task_get_task_data (task);

  if (G_IS_POLLABLE_INPUT_STREAM (attempt->body_stream) &&
      g_pollable_input_stream_can_poll (G_POLLABLE_INPUT_STREAM (attempt->body_stream)))
    {
      attempt->buffer = g_malloc (MEND_HTTP_READ_SIZE);
      read_at_hand (task);
    }
  else
    read_more (task);
}

void
mend_http_attempt_on_sent (GObject      *object,
                          GAsyncResult *result,
                          gpointer      user_data)
{
  GTask *task = user_data;
  MendHttpAttempt *attempt = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) stream = soup_session_send_finish (SOUP_SESSION (object), result, &error);
  g_autofree char *shown_type = NULL;
  const char *content_type;
  guint status;

  if (stream == NULL)
    {
      mend_http_attempt_finish (task, failure_from_error (attempt, error));
      return;
    }

  status = soup_message_get_status (attempt->message);
  content_type = soup_message_headers_get_content_type (soup_message_get_response_headers (attempt->message), NULL);
  shown_type = mend_redact_secrets (content_type ? content_type : "", -1);
  mend_debug ("Turn %s attempt: HTTP %u %s", mend_turn_get_id (attempt->turn), status, shown_type);

  attempt->body_stream = g_steal_pointer (&stream);
  attempt->body = g_byte_array_new ();
  attempt->success = SOUP_STATUS_IS_SUCCESSFUL (status);
  attempt->streaming = attempt->success && g_strcmp0 (content_type, "text/event-stream") == 0;
  if (attempt->streaming)
    {
      mend_sse_reader_init (&attempt->events, attempt->max_line_bytes,
                            attempt->max_event_bytes, on_event, attempt);
      attempt->scratch = g_string_new (NULL);
    }
  read_body (task);
}
