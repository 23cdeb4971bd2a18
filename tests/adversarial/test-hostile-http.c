/* test-hostile-http.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendHttpSender against upstreams that misbehave on purpose, on raw
 * loopback sockets: answers that never end, a line with no newline, a gzip
 * bomb, nesting hidden behind a comment, redirects to another port, bad
 * chunking, headers that never finish, absurd Retry-After values. Each
 * attempt must end, with a failure that says why, within a bounded amount
 * of memory. Waits run in virtual time; only the loopback I/O is real.
 */

#include <libmend.h>

#include "mend-test-hostile-server.h"

/* The raw-socket server (tests/support/mend-test-hostile-server.c). */
typedef MendTestHostileServer HostileServer;
typedef MendTestHostileBehaviour HostileBehaviour;

#define WALL_START_S 1764500000
#define API_KEY "sk-ant-hostile-0123456789abcdef"

static const char SSE_OK[] =
  "HTTP/1.1 200 OK\r\n"
  "Content-Type: text/event-stream\r\n"
  "Connection: close\r\n"
  "\r\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

typedef struct
{
  MendClock      *clock;
  MendChat       *chat;
  MendHttpSender *sender;
  HostileServer  *server;
  MendTurn       *finished;
} Fixture;

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_set_object (&f->finished, turn);
}

static void
fixture_start (Fixture          *f,
               HostileBehaviour  behaviour,
               gconstpointer     data)
{
  g_autofree char *uri = NULL;
  MendErrorPolicy *policy = mend_error_policy_new ();

  f->server = mend_test_hostile_server_new (behaviour, data, 8);
  uri = mend_test_hostile_server_uri (f->server);
  f->clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  f->sender = mend_http_sender_new (uri);
  g_assert_true (mend_http_sender_set_header (f->sender, "x-api-key", API_KEY, NULL));
  mend_http_sender_set_timeout_ms (f->sender, 30000);

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "policy", policy, "sender", f->sender, NULL);
  g_object_unref (policy);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  mend_chat_close (f->chat);
  g_clear_object (&f->finished);
  g_assert_finalize_object (f->chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (f->sender);
  g_assert_finalize_object (f->clock);
  mend_test_hostile_server_free (f->server);
}

static gboolean
watchdog (gpointer data)
{
  g_error ("the hostile server test did not settle in time");
  return G_SOURCE_REMOVE;
}

/* Submits a turn and runs until its first attempt has ended: the turn
 * waits for a retry, or has finished. Returns the attempt's failure, or
 * NULL if it succeeded. */
static MendFailure *
run_first_attempt (Fixture *f)
{
  guint id = g_timeout_add_seconds (60, watchdog, NULL);
  MendTurn *turn;

  g_assert_true (mend_chat_submit (f->chat, "Summarize the build logs", NULL, NULL));
  for (;;)
    {
      turn = mend_chat_get_turn (f->chat);
      if (turn == NULL || mend_turn_get_state (turn) == MEND_TURN_WAITING)
        break;
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (id);

  if (turn == NULL)
    turn = f->finished;
  g_assert_nonnull (turn);
  return mend_turn_get_last_failure (turn);
}

static void
assert_failed_on_cap (Fixture    *f,
                      MendFailure *failure,
                      const char *property)
{
  g_assert_nonnull (failure);
  g_test_message ("%s", mend_failure_get_message (failure));
  g_assert_nonnull (strstr (mend_failure_get_message (failure), property));
  g_assert_error (mend_failure_get_error (failure), G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
  /* An answer past a cap is not asked for again. */
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_nonnull (f->finished);
  g_assert_cmpint (mend_turn_get_state (f->finished), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_test_hostile_server_n_requests (f->server), ==, 1);
}

/* Answers that never end */

static void
endless_json (HostileServer *server,
              GSocket       *connection,
              const char    *request)
{
  g_autofree char *chunk = NULL;

  if (!mend_test_hostile_write_str (server, connection,
                                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n["))
    return;
  chunk = g_strnfill (65536, ' ');
  for (guint i = 0; i < 65536 / 2; i++)
    chunk[2 * i] = '0', chunk[2 * i + 1] = ',';
  while (mend_test_hostile_write (server, connection, chunk, 65536))
    ;
}

static void
test_endless_body_stops_at_max_body_bytes (Fixture       *f,
                                           gconstpointer  data)
{
  MendFailure *failure;

  fixture_start (f, endless_json, NULL);
  g_assert_cmpuint (mend_http_sender_get_max_body_bytes (f->sender), ==, 32 * 1024 * 1024);
  failure = run_first_attempt (f);
  assert_failed_on_cap (f, failure, "max-body-bytes");
  g_assert_false (mend_failure_get_partial (failure));
  /* Nothing was read far past the cap: the server's writes stalled once
   * the client stopped reading (socket buffers aside). */
  g_assert_cmpuint (mend_test_hostile_server_written (f->server), <, (guint64) 48 * 1024 * 1024);
}

static void
sse_line_without_end (HostileServer *server,
                      GSocket       *connection,
                      const char    *request)
{
  g_autofree char *chunk = g_strnfill (65536, 'x');

  if (!mend_test_hostile_write_str (server, connection,
                                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: "))
    return;
  while (mend_test_hostile_write (server, connection, chunk, 65536))
    ;
}

static void
test_sse_line_without_newline_stops_at_max_line_bytes (Fixture       *f,
                                                       gconstpointer  data)
{
  fixture_start (f, sse_line_without_end, NULL);
  g_assert_cmpuint (mend_http_sender_get_max_line_bytes (f->sender), ==, 1024 * 1024);
  assert_failed_on_cap (f, run_first_attempt (f), "max-line-bytes");
}

static void
sse_event_without_end (HostileServer *server,
                       GSocket       *connection,
                       const char    *request)
{
  g_autofree char *line = g_strnfill (1024, 'x');

  line[0] = 'd', line[1] = 'a', line[2] = 't', line[3] = 'a', line[4] = ':', line[1023] = '\n';
  if (!mend_test_hostile_write_str (server, connection,
                                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"))
    return;
  while (mend_test_hostile_write (server, connection, line, 1024))
    ;
}

static void
test_sse_event_without_end_stops_at_max_event_bytes (Fixture       *f,
                                                     gconstpointer  data)
{
  fixture_start (f, sse_event_without_end, NULL);
  g_assert_cmpuint (mend_http_sender_get_max_event_bytes (f->sender), ==, 1024 * 1024);
  assert_failed_on_cap (f, run_first_attempt (f), "max-event-bytes");
}

/* 1 MiB of zeros, deflated and flushed, is a run of bytes that may be
 * repeated: a gzip body of about a megabyte that inflates to a gigabyte. */
static GBytes *
make_gzip_bomb (gsize *member_header)
{
  g_autoptr(GZlibCompressor) compressor = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
  g_autofree char *zeros = g_malloc0 (1 << 20);
  g_autoptr(GByteArray) bomb = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  char *out = g_malloc (1 << 20);
  gsize read = 0;
  gsize written = 0;
  gsize header;

  /* The gzip header alone, then one flushed megabyte of zeros. */
  g_converter_convert (G_CONVERTER (compressor), zeros, 0, out, 1 << 20,
                       G_CONVERTER_FLUSH, &read, &header, &error);
  g_assert_no_error (error);
  g_converter_convert (G_CONVERTER (compressor), zeros, 1 << 20, out + header, (1 << 20) - header,
                       G_CONVERTER_FLUSH, &read, &written, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (read, ==, 1 << 20);

  g_byte_array_append (bomb, (guint8 *) out, header);
  /* Every back-reference in a run of zeros reads zeros, so the flushed
   * block means the same wherever it is repeated. */
  for (guint i = 0; i < 1024; i++)
    g_byte_array_append (bomb, (guint8 *) out + header, written);
  g_free (out);

  *member_header = header;
  return g_byte_array_free_to_bytes (g_steal_pointer (&bomb));
}

static void
gzip_bomb (HostileServer *server,
           GSocket       *connection,
           const char    *request)
{
  GBytes *bomb = (GBytes *) server->data;

  if (!mend_test_hostile_write_str (server, connection,
                                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                    "Content-Encoding: gzip\r\nConnection: close\r\n\r\n"))
    return;
  mend_test_hostile_write (server, connection, g_bytes_get_data (bomb, NULL), g_bytes_get_size (bomb));
}

static void
test_gzip_bomb_stops_at_max_body_bytes (Fixture       *f,
                                        gconstpointer  data)
{
  gsize header = 0;
  g_autoptr(GBytes) bomb = make_gzip_bomb (&header);

  g_test_message ("gzip bomb: %" G_GSIZE_FORMAT " bytes, 1 GiB inflated", g_bytes_get_size (bomb));
  g_assert_cmpuint (g_bytes_get_size (bomb), <, 2 * 1024 * 1024);
  fixture_start (f, gzip_bomb, bomb);
  assert_failed_on_cap (f, run_first_attempt (f), "max-body-bytes");
}

static void
test_caps_are_properties (Fixture       *f,
                          gconstpointer  data)
{
  MendFailure *failure;

  fixture_start (f, endless_json, NULL);
  g_object_set (f->sender, "max-body-bytes", 100000, NULL);
  g_assert_cmpuint (mend_http_sender_get_max_body_bytes (f->sender), ==, 100000);
  failure = run_first_attempt (f);
  assert_failed_on_cap (f, failure, "max-body-bytes");
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "100000"));
}

/* Nesting behind a comment, in one 200 KB event */

static void
sse_hidden_nesting (HostileServer *server,
                    GSocket       *connection,
                    const char    *request)
{
  g_autoptr(GString) event = g_string_new ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                           "Connection: close\r\n\r\n"
                                           "event: content_block_delta\ndata: [/*\"*/");

  for (guint i = 0; i < 100000; i++)
    g_string_append_c (event, '[');
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (event, ']');
  g_string_append (event, "/*\"*/]\n\n");
  mend_test_hostile_write (server, connection, event->str, event->len);
}

static void
test_nesting_behind_a_comment_in_an_event_is_refused (Fixture       *f,
                                                      gconstpointer  data)
{
  MendFailure *failure;

  fixture_start (f, sse_hidden_nesting, NULL);
  failure = run_first_attempt (f);
  /* The event is not read as JSON (no stack overflow), and the stream
   * ended without its message_stop. */
  g_assert_nonnull (failure);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
}

/* Redirects */

typedef struct
{
  guint status;
  guint16 to_port;
} Redirect;

static void
redirect (HostileServer *server,
          GSocket       *connection,
          const char    *request)
{
  const Redirect *r = server->data;
  g_autofree char *answer =
    g_strdup_printf ("HTTP/1.1 %u Moved\r\nLocation: http://127.0.0.1:%u/v1/messages?key=%s\r\n"
                     "Content-Length: 0\r\nConnection: close\r\n\r\n",
                     r->status, r->to_port, API_KEY);

  mend_test_hostile_write_str (server, connection, answer);
}

static void
answer_ok (HostileServer *server,
           GSocket       *connection,
           const char    *request)
{
  mend_test_hostile_write_str (server, connection, SSE_OK);
}

static void
test_redirect_to_another_origin_is_not_followed (Fixture       *f,
                                                 gconstpointer  data)
{
  static const guint statuses[] = { 301, 302, 303, 307, 308 };
  HostileServer *elsewhere = mend_test_hostile_server_new (answer_ok, NULL, 8);
  Redirect r = { 0, elsewhere->port };

  fixture_start (f, redirect, &r);

  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    {
      MendFailure *failure;

      r.status = statuses[i];
      failure = run_first_attempt (f);
      g_assert_nonnull (failure);
      g_test_message ("%u: %s", statuses[i], mend_failure_get_message (failure));
      g_assert_cmpuint (mend_failure_get_status (failure), ==, statuses[i]);
      g_assert_nonnull (strstr (mend_failure_get_message (failure), "redirected"));
      g_assert_null (strstr (mend_failure_get_message (failure), API_KEY));
      /* Not a success with the prompt dropped, and not retried. */
      g_assert_nonnull (f->finished);
      g_assert_cmpint (mend_turn_get_state (f->finished), ==, MEND_TURN_FAILED);
      g_assert_cmpuint (mend_test_hostile_server_n_requests (f->server), ==, i + 1);
    }

  /* The other origin never saw a request, so never the key. */
  g_assert_cmpuint (mend_test_hostile_server_n_requests (elsewhere), ==, 0);
  mend_test_hostile_server_free (elsewhere);
}

/* Framing */

static void
bad_chunking (HostileServer *server,
              GSocket       *connection,
              const char    *request)
{
  const char *kind = server->data;
  g_autofree char *chunk = g_strnfill (65536, 'x');

  if (!mend_test_hostile_write_str (server, connection,
                                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"))
    return;
  if (g_str_equal (kind, "garbage"))
    mend_test_hostile_write_str (server, connection, "zz\r\nnot a chunk\r\n0\r\n\r\n");
  else
    {
      /* A chunk that claims a size past 64 bits, or one of 128 TiB that
       * never ends. */
      if (!mend_test_hostile_write_str (server, connection,
                                        g_str_equal (kind, "overflow") ? "1ffffffffffffffff\r\n" : "7fffffffffff\r\n"))
        return;
      while (mend_test_hostile_write (server, connection, chunk, 65536))
        ;
    }
}

static void
test_bad_chunking_fails_the_attempt (Fixture       *f,
                                     gconstpointer  data)
{
  MendFailure *failure;

  fixture_start (f, bad_chunking, data);
  failure = run_first_attempt (f);
  g_assert_nonnull (failure);
  g_test_message ("%s", mend_failure_get_message (failure));
  if (g_str_equal (data, "huge"))
    assert_failed_on_cap (f, failure, "max-body-bytes");
  else
    {
      /* libsoup reads a size it cannot parse as a last chunk: an empty
       * answer, retried like a cut one. */
      g_assert_true (mend_failure_get_reason (failure) == MEND_REASON_TRANSPORT ||
                     mend_failure_get_reason (failure) == MEND_REASON_EMPTY);
      g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
    }
}

static void
headers_never_end (HostileServer *server,
                   GSocket       *connection,
                   const char    *request)
{
  if (mend_test_hostile_write_str (server, connection, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Slow: "))
    mend_test_hostile_wait_for_close (server, connection);
}

static void
test_headers_that_never_end_time_out (Fixture       *f,
                                      gconstpointer  data)
{
  guint id = g_timeout_add_seconds (60, watchdog, NULL);
  MendTurn *turn;

  fixture_start (f, headers_never_end, NULL);
  g_assert_true (mend_chat_submit (f->chat, "Summarize the build logs", NULL, NULL));
  while (mend_test_hostile_server_n_requests (f->server) < 1)
    g_main_context_iteration (NULL, FALSE);
  g_source_remove (id);

  turn = mend_chat_get_turn (f->chat);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 29999);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1);
  while (mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_TIMEOUT);
}

/* Interim answers without end */

static void
interim_flood (HostileServer *server,
               GSocket       *connection,
               const char    *request)
{
  static const char hint[] = "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
  g_autoptr(GString) many = g_string_new (NULL);

  for (guint i = 0; i < 256; i++)
    g_string_append (many, hint);
  while (mend_test_hostile_write (server, connection, many->str, many->len))
    ;
}

static gboolean
count_tick (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

/* A flood of 1xx answers (103 Early Hints without end) is bounded in
 * number: the attempt fails saying so, within one dispatch's worth of
 * them, and the main loop runs meanwhile (libsoup reads them all in
 * one dispatch, so no timer could end it). */
static void
test_interim_flood_fails_the_attempt (Fixture       *f,
                                      gconstpointer  data)
{
  gint64 start = g_get_monotonic_time ();
  guint ticks = 0;
  guint tick_id;
  MendFailure *failure;

  fixture_start (f, interim_flood, NULL);
  tick_id = g_timeout_add (1, count_tick, &ticks);
  failure = run_first_attempt (f);
  g_source_remove (tick_id);

  g_assert_nonnull (failure);
  g_test_message ("%s; the loop ticked %u times", mend_failure_get_message (failure), ticks);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "interim"));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
}

/* 1xx answers that come slowly, each alone: the main loop runs between
 * them, but the attempt's timer is on the chat's clock, which no one
 * advances here. The timeout counts while they come, in real time: the
 * attempt times out at the first 1xx past timeout-ms. The server answers
 * 200 after them, so that an attempt that did not count would succeed. */
#define SLOW_INTERIM_N 25
#define SLOW_INTERIM_GAP_MS 100
#define SLOW_INTERIM_TIMEOUT_MS 1000

static void
slow_interim (HostileServer *server,
              GSocket       *connection,
              const char    *request)
{
  char buffer[256];

  for (guint i = 0; i < SLOW_INTERIM_N; i++)
    {
      if (!mend_test_hostile_write_str (server, connection, "HTTP/1.1 102 Processing\r\n\r\n"))
        return;
      /* The pause; a client that closed the connection ends it. */
      if (g_socket_condition_timed_wait (connection, G_IO_IN, SLOW_INTERIM_GAP_MS * 1000, NULL, NULL) &&
          g_socket_receive (connection, buffer, sizeof buffer, NULL, NULL) <= 0)
        return;
    }
  if (mend_test_hostile_write_str (server, connection, SSE_OK))
    mend_test_hostile_wait_for_close (server, connection);
}

static void
test_slow_interim_answers_time_out (Fixture       *f,
                                    gconstpointer  data)
{
  gint64 start = g_get_monotonic_time ();
  gint64 clock_start;
  MendFailure *failure;
  gint64 elapsed_ms;

  fixture_start (f, slow_interim, NULL);
  clock_start = mend_clock_get_monotonic_time (f->clock);
  mend_http_sender_set_timeout_ms (f->sender, SLOW_INTERIM_TIMEOUT_MS);
  failure = run_first_attempt (f);
  elapsed_ms = (g_get_monotonic_time () - start) / 1000;

  g_assert_nonnull (failure);
  g_test_message ("%s after %" G_GINT64_FORMAT " ms", mend_failure_get_message (failure), elapsed_ms);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TIMEOUT);
  g_assert_null (strstr (mend_failure_get_message (failure), "interim"));
  /* Not the clock's timer: the chat's clock stood still. */
  g_assert_cmpint (mend_clock_get_monotonic_time (f->clock), ==, clock_start);
  g_assert_cmpint (elapsed_ms, >=, SLOW_INTERIM_TIMEOUT_MS);
  /* Ended before the server ran out of 1xx answers. */
  g_assert_cmpint (elapsed_ms, <, (gint64) mend_test_real_time (SLOW_INTERIM_N * SLOW_INTERIM_GAP_MS));
  g_assert_cmpuint (mend_test_hostile_server_n_requests (f->server), ==, 1);
}

/* Retry-After */

static void
absurd_retry_after (HostileServer *server,
                    GSocket       *connection,
                    const char    *request)
{
  g_autofree char *answer =
    g_strdup_printf ("HTTP/1.1 503 Service Unavailable\r\n%s\r\nContent-Type: text/plain\r\n"
                     "Content-Length: 10\r\nConnection: close\r\n\r\noverloaded",
                     (const char *) server->data);

  mend_test_hostile_write_str (server, connection, answer);
}

static void
test_absurd_retry_after_never_waits_past_the_policy (Fixture       *f,
                                                     gconstpointer  data)
{
  MendFailure *failure;
  MendTurn *turn;

  fixture_start (f, absurd_retry_after, data);
  failure = run_first_attempt (f);
  g_assert_nonnull (failure);
  turn = mend_chat_get_turn (f->chat);
  g_test_message ("%s: retry-after-ms %" G_GINT64_FORMAT ", %s", (const char *) data,
                  mend_failure_get_retry_after_ms (failure),
                  turn ? "waits" : "gave up");
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), >=, -1);
  if (turn != NULL)
    {
      /* A wait, but never longer than the policy allows a hint. */
      MendRetryWait *wait = mend_turn_get_wait (turn);

      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
      g_assert_cmpint (mend_retry_wait_get_delay_ms (wait), <=, 60000);
      g_assert_cmpint (mend_retry_wait_get_delay_ms (wait), >=, 0);
    }
  else
    g_assert_cmpint (mend_turn_get_state (f->finished), ==, MEND_TURN_FAILED);
}

/* Headers the sender is given */

static void
record_only (HostileServer *server,
             GSocket       *connection,
             const char    *request)
{
  mend_test_hostile_write_str (server, connection, SSE_OK);
}

static void
test_set_header_refuses_what_http_cannot_carry (Fixture       *f,
                                                gconstpointer  data)
{
  static const char * const bad_names[] = { "", "x api key", "x-api-key\r\nX-Injected", "x:y", "caf\xc3\xa9" };
  static const char * const bad_values[] = { "abc\r\nX-Injected: 1", "abc\ndef", "abc\rdef", "a\001b", "a\177b" };
  g_autoptr(GError) error = NULL;
  const char *request;
  MendFailure *failure;

  fixture_start (f, record_only, NULL);
  g_assert_true (mend_http_sender_set_header (f->sender, "anthropic-version", "2023-06-01", &error));
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (bad_names); i++)
    {
      g_assert_false (mend_http_sender_set_header (f->sender, bad_names[i], "value", &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_test_message ("%s", error->message);
      g_clear_error (&error);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad_values); i++)
    {
      g_assert_false (mend_http_sender_set_header (f->sender, "anthropic-version", bad_values[i], &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      /* The error names the header. */
      g_assert_nonnull (strstr (error->message, "anthropic-version"));
      g_clear_error (&error);
    }

  /* Nothing was changed: the request goes out with the good values, and
   * nothing was injected (a CRITICAL would have ended the test). */
  failure = run_first_attempt (f);
  g_assert_null (failure);
  g_assert_cmpuint (mend_test_hostile_server_n_requests (f->server), ==, 1);
  request = g_ptr_array_index (f->server->requests, 0);
  g_assert_nonnull (mend_test_find_nocase (request, "\r\nanthropic-version: 2023-06-01\r\n"));
  g_assert_nonnull (mend_test_find_nocase (request, "\r\nx-api-key: " API_KEY "\r\n"));
  g_assert_null (mend_test_find_nocase (request, "X-Injected"));
}

/* The read loop: a stream a byte at a time, in chunks of every size, cut */

static const char SSE_BODY[] =
  "event: content_block_start\r\n"
  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n"
  "event: content_block_delta\r\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"caf\xc3\xa9 \\u00e9\"}}\r\n\r\n"
  ": keep-alive\r\n\r\n"
  "event: content_block_delta\n"
  "data:{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" \xf0\x9f\x98\x80!\"}}\r\r"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

/* "trickle": the body a byte at a time; "chunked": the body in chunks of
 * 1, 2, 3… bytes; "cut": a chunked body that ends in the middle of a
 * chunk, with the connection closed. */
static void
sse_in_pieces (HostileServer *server,
               GSocket       *connection,
               const char    *request)
{
  const char *kind = server->data;
  gsize length = strlen (SSE_BODY);
  gboolean chunked = !g_str_equal (kind, "trickle");

  if (!mend_test_hostile_write_str (server, connection,
                                    chunked ? "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                              "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                            : "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"))
    return;
  if (g_str_equal (kind, "trickle"))
    {
      for (gsize i = 0; i < length; i++)
        if (!mend_test_hostile_write (server, connection, SSE_BODY + i, 1))
          return;
      return;
    }
  for (gsize at = 0, n = 1; at < length; at += n, n++)
    {
      g_autofree char *size = NULL;

      n = MIN (n, length - at);
      if (g_str_equal (kind, "cut") && at + n >= length - 20)
        {
          /* Half of a chunk, then the end of the connection. */
          size = g_strdup_printf ("%" G_GSIZE_MODIFIER "x\r\n", n);
          mend_test_hostile_write_str (server, connection, size);
          mend_test_hostile_write (server, connection, SSE_BODY + at, n / 2);
          return;
        }
      size = g_strdup_printf ("%" G_GSIZE_MODIFIER "x\r\n", n);
      if (!mend_test_hostile_write_str (server, connection, size) ||
          !mend_test_hostile_write (server, connection, SSE_BODY + at, n) ||
          !mend_test_hostile_write_str (server, connection, "\r\n"))
        return;
    }
  mend_test_hostile_write_str (server, connection, "0\r\n\r\n");
}

static void
test_sse_in_pieces (Fixture       *f,
                    gconstpointer  data)
{
  MendFailure *failure;

  fixture_start (f, sse_in_pieces, data);
  failure = run_first_attempt (f);
  if (g_str_equal (data, "cut"))
    {
      g_assert_nonnull (failure);
      g_test_message ("%s: %s, %d", mend_reason_to_nick (mend_failure_get_reason (failure)),
                      mend_failure_get_message (failure), mend_failure_get_kind (failure));
      /* Cut after text was seen: a transport failure, not retried. */
      g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
      g_assert_true (mend_failure_get_partial (failure));
      g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
      return;
    }
  g_assert_null (failure);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "caf\xc3\xa9 \xc3\xa9 \xf0\x9f\x98\x80!");
}

int
main (int   argc,
      char *argv[])
{
  mend_test_limit_memory ();
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func, data) \
  g_test_add (path, Fixture, data, NULL, func, fixture_tear_down)

  ADD ("/Mend/Hostile/Http/endless-body-stops-at-max-body-bytes", test_endless_body_stops_at_max_body_bytes, NULL);
  ADD ("/Mend/Hostile/Http/sse-line-without-newline-stops-at-max-line-bytes",
       test_sse_line_without_newline_stops_at_max_line_bytes, NULL);
  ADD ("/Mend/Hostile/Http/sse-event-without-end-stops-at-max-event-bytes",
       test_sse_event_without_end_stops_at_max_event_bytes, NULL);
  ADD ("/Mend/Hostile/Http/gzip-bomb-stops-at-max-body-bytes", test_gzip_bomb_stops_at_max_body_bytes, NULL);
  ADD ("/Mend/Hostile/Http/caps-are-properties", test_caps_are_properties, NULL);
  ADD ("/Mend/Hostile/Http/nesting-behind-a-comment-in-an-event-is-refused",
       test_nesting_behind_a_comment_in_an_event_is_refused, NULL);
  ADD ("/Mend/Hostile/Http/redirect-to-another-origin-is-not-followed",
       test_redirect_to_another_origin_is_not_followed, NULL);
  ADD ("/Mend/Hostile/Http/sse/a-byte-at-a-time", test_sse_in_pieces, "trickle");
  ADD ("/Mend/Hostile/Http/sse/chunks-of-every-size", test_sse_in_pieces, "chunked");
  ADD ("/Mend/Hostile/Http/sse/cut-in-a-chunk", test_sse_in_pieces, "cut");
  ADD ("/Mend/Hostile/Http/bad-chunking/garbage-size", test_bad_chunking_fails_the_attempt, "garbage");
  ADD ("/Mend/Hostile/Http/bad-chunking/size-past-64-bits", test_bad_chunking_fails_the_attempt, "overflow");
  ADD ("/Mend/Hostile/Http/bad-chunking/huge-size-never-ends", test_bad_chunking_fails_the_attempt, "huge");
  ADD ("/Mend/Hostile/Http/headers-that-never-end-time-out", test_headers_that_never_end_time_out, NULL);
  ADD ("/Mend/Hostile/Http/interim-flood-fails-the-attempt", test_interim_flood_fails_the_attempt, NULL);
  ADD ("/Mend/Hostile/Http/slow-interim-answers-time-out", test_slow_interim_answers_time_out, NULL);
  ADD ("/Mend/Hostile/Http/absurd-retry-after/huge-seconds", test_absurd_retry_after_never_waits_past_the_policy,
       "Retry-After: 99999999999999999999999999");
  ADD ("/Mend/Hostile/Http/absurd-retry-after/negative-ms", test_absurd_retry_after_never_waits_past_the_policy,
       "retry-after-ms: -5000");
  ADD ("/Mend/Hostile/Http/absurd-retry-after/year-9999", test_absurd_retry_after_never_waits_past_the_policy,
       "Retry-After: Fri, 31 Dec 9999 23:59:59 GMT");
  ADD ("/Mend/Hostile/Http/absurd-retry-after/huge-ms", test_absurd_retry_after_never_waits_past_the_policy,
       "retry-after-ms: 18446744073709551616");
  ADD ("/Mend/Hostile/Http/set-header-refuses-what-http-cannot-carry",
       test_set_header_refuses_what_http_cannot_carry, NULL);

#undef ADD

  return g_test_run ();
}
