/* fuzz-stream.c: Claude Code stream-json lines
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The input is split on '\n'; each line (with its '\n') goes to
 * mend_stream_observer_feed_line () of an observer of a MendChat that runs
 * on a MendManualClock, with no sender: a submitted turn runs until a
 * `result` line ends it, as with an agent process.
 *
 * After each line the clock moves on by an amount picked by the line's
 * length (0 to 2 minutes), so that turn retries and subagent resumes come
 * due and fire between lines. Lines that start with '@' are not fed; they
 * are what the app or the user does meanwhile:
 *
 *   @submit [TEXT]   mend_chat_submit () of TEXT (default "Go on")
 *   @prov JSON       mend_chat_submit () of a prompt with that provenance
 *   @next  @stop  @close  @ext  @endext
 *                    send_next, stop, close, begin/end_external_turn
 *   @retry           mend_turn_retry_now () of the chat's turn
 *   @output          mend_turn_note_output () of the chat's turn
 *   @resume ID       mend_subagent_retry_resume_now () of a subagent
 *   @advance MS      the clock moves MS milliseconds on (at most 10 days)
 *   @fire            mend_manual_clock_advance_to_next ()
 *   @max BYTES       the observer's max-line-bytes (1 … G_MAXINT)
 *
 * At the end the due waits fire, the chat is closed, and everything must
 * be finalized. Checked besides crashes and leaks: a line without
 * "system" or "result" is never parsed; the counters add up; every record
 * is a JSON object; a closed chat refuses submissions and keeps no timer.
 *
 * Then the same bytes, '@' lines too, go through
 * mend_stream_observer_watch_async () of a second observer and chat, read
 * in chunks of 1 to 4096 bytes (so lines split over reads) with a
 * max-line-bytes picked by the input's size (so long lines are skipped as
 * they stream by). It must read to the end and count every line once.
 */

/* memmem () */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <json-glib/json-glib.h>

#include "fuzz-common.h"

#include "mend-error-policy-private.h"
#include "mend-stream-observer-private.h"

#define WALL_START G_GINT64_CONSTANT (1764500000000000)

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static void
check_record (gpointer    instance,
              const char *json)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;

  fuzz_check (json != NULL, "a record without text");
  node = json_from_string (json, &error);
  fuzz_check (node != NULL && JSON_NODE_HOLDS_OBJECT (node),
              "a record that is not a JSON object: %s", json);
}

static void
check_subagent_record (MendSubagentRetry *subagents,
                       const char        *json,
                       gpointer           user_data)
{
  check_record (subagents, json);
}

static void
check_chat_record (MendChat   *chat,
                   const char *json,
                   gpointer    user_data)
{
  check_record (chat, json);
}

/* A pollable stream that hands out its bytes a few at a time, as a pipe
 * would, without a thread. */
typedef struct
{
  GInputStream  parent_instance;
  const guint8 *data;
  gsize         size;
  gsize         offset;
  guint         n_reads;
} ChunkStream;

typedef GInputStreamClass ChunkStreamClass;

static GType chunk_stream_get_type (void);
static void chunk_stream_pollable_iface_init (GPollableInputStreamInterface *iface);

G_DEFINE_TYPE_WITH_CODE (ChunkStream, chunk_stream, G_TYPE_INPUT_STREAM,
                         G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
                                                chunk_stream_pollable_iface_init))

static gssize
chunk_stream_read_nonblocking (GPollableInputStream  *stream,
                               void                  *buffer,
                               gsize                  count,
                               GError               **error)
{
  static const gsize chunks[] = { 1, 7, 64, 3, 4096, 2, 511, 13 };
  ChunkStream *self = (ChunkStream *) stream;
  gsize chunk = chunks[self->n_reads++ % G_N_ELEMENTS (chunks)];
  gsize n = MIN (MIN (count, self->size - self->offset), chunk);

  if (n > 0)
    memcpy (buffer, self->data + self->offset, n);
  self->offset += n;
  return (gssize) n;
}

static gssize
chunk_stream_read (GInputStream  *stream,
                   void          *buffer,
                   gsize          count,
                   GCancellable  *cancellable,
                   GError       **error)
{
  return chunk_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (stream), buffer, count, error);
}

static gboolean
chunk_stream_is_readable (GPollableInputStream *stream)
{
  return TRUE;
}

static GSource *
chunk_stream_create_source (GPollableInputStream *stream,
                            GCancellable         *cancellable)
{
  GSource *base = g_timeout_source_new (0);
  GSource *source = g_pollable_source_new_full (stream, base, cancellable);

  g_source_unref (base);
  return source;
}

static void
chunk_stream_pollable_iface_init (GPollableInputStreamInterface *iface)
{
  iface->is_readable = chunk_stream_is_readable;
  iface->create_source = chunk_stream_create_source;
  iface->read_nonblocking = chunk_stream_read_nonblocking;
}

static void
chunk_stream_class_init (ChunkStreamClass *klass)
{
  klass->read_fn = chunk_stream_read;
}

static void
chunk_stream_init (ChunkStream *self)
{
}

static void
on_watched (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  gboolean *done = user_data;
  g_autoptr(GError) error = NULL;

  fuzz_check (mend_stream_observer_watch_finish (MEND_STREAM_OBSERVER (source), result, &error),
              "the watch failed: %s", error->message);
  *done = TRUE;
}

/* The input through watch_async (), in chunks. */
static void
watch_input (const uint8_t *data,
             size_t         size)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendStreamObserver *observer;
  ChunkStream *stream;
  MendChat *chat;
  gboolean done = FALSE;
  guint64 n_lines = 0;

  for (size_t i = 0; i < size; i++)
    if (data[i] == '\n')
      n_lines++;
  if (size > 0 && data[size - 1] != '\n')
    n_lines++;

  mend_error_policy_set_seed (policy, 7);
  chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-2", "clock", clock, "policy", policy, NULL);
  g_object_unref (policy);
  observer = mend_stream_observer_new (chat);
  mend_stream_observer_set_max_line_bytes (observer, 16 + size % 1024);

  stream = g_object_new (chunk_stream_get_type (), NULL);
  stream->data = data;
  stream->size = size;

  mend_stream_observer_watch_async (observer, G_INPUT_STREAM (stream), NULL, on_watched, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);

  fuzz_check (mend_stream_observer_get_n_lines (observer) == n_lines,
              "the watch counted %" G_GUINT64_FORMAT " lines of %" G_GUINT64_FORMAT,
              mend_stream_observer_get_n_lines (observer), n_lines);

  mend_chat_close (chat);
  g_assert_finalize_object (stream);
  g_assert_finalize_object (observer);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static gboolean
has_word (const char *line,
          gsize       length,
          const char *word)
{
  return memmem (line, length, word, strlen (word)) != NULL;
}

/* The argument of a command, after its name and one space. */
static char *
argument (const char *line,
          gsize       length,
          gsize       name_length)
{
  if (length <= name_length + 1)
    return NULL;
  return g_strndup (line + name_length + 1, length - name_length - 1);
}

static gboolean
command_is (const char *line,
            gsize       length,
            const char *name)
{
  gsize n = strlen (name);

  return length >= n && memcmp (line, name, n) == 0 && (length == n || line[n] == ' ');
}

static void
run_command (MendChat           *chat,
             MendStreamObserver *observer,
             MendManualClock    *clock,
             const char         *line,
             gsize               length)
{
  MendTurn *turn = mend_chat_get_turn (chat);
  g_autoptr(GError) error = NULL;

  if (command_is (line, length, "@submit"))
    {
      g_autofree char *text = argument (line, length, strlen ("@submit"));

      if (!mend_chat_submit (chat, text ? text : "Go on", NULL, &error))
        fuzz_check (error != NULL, "submit failed without an error");
    }
  else if (command_is (line, length, "@prov"))
    {
      g_autofree char *provenance = argument (line, length, strlen ("@prov"));

      if (!mend_chat_submit (chat, "Resume the subagent", provenance, &error))
        fuzz_check (error != NULL, "submit failed without an error");
    }
  else if (command_is (line, length, "@next"))
    mend_chat_send_next (chat);
  else if (command_is (line, length, "@stop"))
    mend_chat_stop (chat);
  else if (command_is (line, length, "@close"))
    mend_chat_close (chat);
  else if (command_is (line, length, "@ext"))
    mend_chat_begin_external_turn (chat);
  else if (command_is (line, length, "@endext"))
    mend_chat_end_external_turn (chat);
  else if (command_is (line, length, "@retry"))
    {
      if (turn != NULL)
        mend_turn_retry_now (turn);
    }
  else if (command_is (line, length, "@output"))
    {
      if (turn != NULL)
        mend_turn_note_output (turn);
    }
  else if (command_is (line, length, "@resume"))
    {
      g_autofree char *id = argument (line, length, strlen ("@resume"));

      if (id != NULL &&
          !mend_subagent_retry_resume_now (mend_chat_get_subagents (chat), id, &error))
        fuzz_check (error != NULL, "retry failed without an error");
    }
  else if (command_is (line, length, "@advance"))
    {
      g_autofree char *ms = argument (line, length, strlen ("@advance"));
      guint64 value = ms ? g_ascii_strtoull (ms, NULL, 10) : 0;

      mend_manual_clock_advance (clock, MIN (value, G_GUINT64_CONSTANT (864000000)));
    }
  else if (command_is (line, length, "@fire"))
    mend_manual_clock_advance_to_next (clock);
  else if (command_is (line, length, "@max"))
    {
      g_autofree char *bytes = argument (line, length, strlen ("@max"));
      guint64 value = bytes ? g_ascii_strtoull (bytes, NULL, 10) : 0;

      mend_stream_observer_set_max_line_bytes (observer, (guint) CLAMP (value, 1, G_MAXINT));
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  /* By the line's length: most lines move time on a little, some a lot. */
  static const guint ticks_ms[] = { 0, 0, 10, 100, 250, 1000, 5000, 20000, 60000, 120000, 0 };
  const char *p = (const char *) data;
  const char *end = p + size;
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendErrorPolicy *resume_policy = mend_error_policy_new_for_resume ();
  MendStreamObserver *observer;
  MendChat *chat;
  guint64 n_fed = 0;

  /* Jitter, and the stagger from the chat's id, are random unless fixed. */
  mend_error_policy_set_seed (policy, 7);
  mend_error_policy_set_seed (resume_policy, 7);
  chat = g_object_new (MEND_TYPE_CHAT,
                       "id", "chat-1",
                       "clock", clock,
                       "policy", policy,
                       "resume-policy", resume_policy,
                       NULL);
  g_object_unref (policy);
  g_object_unref (resume_policy);
  g_signal_connect (chat, "record", G_CALLBACK (check_chat_record), NULL);
  g_signal_connect (mend_chat_get_subagents (chat), "record",
                    G_CALLBACK (check_subagent_record), NULL);
  observer = mend_stream_observer_new (chat);

  while (p < end)
    {
      const char *newline = memchr (p, '\n', end - p);
      gsize length = (newline ? newline + 1 : end) - p;
      gsize bare = newline ? length - 1 : length;

      if (bare > 0 && p[0] == '@')
        run_command (chat, observer, MEND_MANUAL_CLOCK (clock), p, bare);
      else
        {
          guint64 parsed = mend_stream_observer_get_n_parsed (observer);

          mend_stream_observer_feed_line (observer, p, length);
          n_fed++;

          if (!has_word (p, length, "\"system\"") && !has_word (p, length, "\"result\""))
            fuzz_check (mend_stream_observer_get_n_parsed (observer) == parsed,
                        "a line without \"system\" or \"result\" was parsed");
        }

      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock),
                                 ticks_ms[MIN (bare, G_N_ELEMENTS (ticks_ms) - 1)]);
      p += length;
    }

  fuzz_check (mend_stream_observer_get_n_lines (observer) == n_fed,
              "%" G_GUINT64_FORMAT " lines counted, %" G_GUINT64_FORMAT " fed",
              mend_stream_observer_get_n_lines (observer), n_fed);
  fuzz_check (mend_stream_observer_get_n_parsed (observer) <= n_fed, "n-parsed");
  fuzz_check (mend_stream_observer_get_n_ignored (observer) <= n_fed, "n-ignored");

  /* What is due fires; then the chat closes. */
  for (guint i = 0; i < 16 && mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (clock)); i++)
    ;
  mend_chat_close (chat);
  fuzz_check (mend_chat_get_lifecycle (chat) == MEND_LIFECYCLE_CLOSED, "not closed");
  fuzz_check (mend_chat_get_turn (chat) == NULL, "a closed chat with a turn");
  {
    g_autoptr(GError) error = NULL;

    fuzz_check (!mend_chat_submit (chat, "Too late", NULL, &error) &&
                g_error_matches (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_CLOSED),
                "a closed chat took a message");
  }
  fuzz_check (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)) == 0,
              "%u timers left after close",
              mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)));

  /* Lines after close change nothing, and are safe. */
  mend_stream_observer_feed_line (observer, "{\"type\":\"system\",\"subtype\":\"init\"}", -1);

  g_assert_finalize_object (observer);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);

  watch_input (data, size);

  return 0;
}
