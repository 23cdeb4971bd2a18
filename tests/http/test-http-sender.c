/* test-http-sender.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendHttpSender against a real SoupServer on 127.0.0.1, port 0, with a
 * fault script per test. Waits between attempts run in virtual time.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START_S 1764500000
#define SECRET "sk-ant-test-0123456789-secret"

typedef enum
{
  REPLY_BODY,       /* status, headers, body */
  REPLY_CUT,        /* a stream cut off mid-response */
  REPLY_HANG,       /* never answers */
  REPLY_HEADERS,    /* headers, then the connection is reset */
  REPLY_GARBAGE,    /* not HTTP at all */
} ReplyKind;

typedef struct
{
  ReplyKind   kind;
  guint       status;
  const char *content_type;
  const char *body;
  const char *header_name;
  const char *header_value;
  const char *date;         /* the Date header: NULL for the server's own, "" for none */
} Reply;

typedef struct
{
  SoupServer *server;
  GUri *uri;
  const Reply *script;
  guint n_script;
  guint served;
  GPtrArray *keys;         /* Idempotency-Key of each request */
  GPtrArray *bodies;       /* body of each request */
  GPtrArray *api_keys;
  GPtrArray *hanging;      /* SoupServerMessage* paused */

  MendClock *clock;
  MendChat *chat;
  MendHttpSender *sender;
  guint content_events;
  GString *deltas;         /* every text-delta, joined */
  guint n_deltas;
  guint answer_notifies;
  GString *log;
} Fixture;

static GString *captured_log;

static void
capture_log (const char     *domain,
             GLogLevelFlags  level,
             const char     *message,
             gpointer        data)
{
  if (captured_log != NULL)
    g_string_append_printf (captured_log, "%s\n", message);
}

static const char SSE_OK[] =
  "event: message_start\n"
  "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\"}}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

static const char SSE_ERROR_FIRST[] =
  "event: message_start\n"
  "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n"
  "event: error\n"
  "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";

static const char SSE_ERROR_AFTER_CONTENT[] =
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Half an ans\"}}\n\n"
  "event: error\n"
  "data: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";

/* A complete Messages stream with no content block at all. */
static const char SSE_EMPTY[] =
  "event: message_start\n"
  "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"role\":\"assistant\"}}\n\n"
  "event: message_delta\n"
  "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

static const char OVERLOADED[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";

/* Writes raw bytes on the message's connection, then drops it. */
static void
write_raw (SoupServerMessage *msg,
           const char        *bytes)
{
  g_autoptr(GIOStream) stream = soup_server_message_steal_connection (msg);

  g_output_stream_write_all (g_io_stream_get_output_stream (stream), bytes,
                             strlen (bytes), NULL, NULL, NULL);
  g_io_stream_close (stream, NULL, NULL);
}

static void
server_callback (SoupServer        *server,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           user_data)
{
  Fixture *f = user_data;
  SoupMessageHeaders *request = soup_server_message_get_request_headers (msg);
  SoupMessageBody *body = soup_server_message_get_request_body (msg);
  g_autoptr(GBytes) flat = soup_message_body_flatten (body);
  const Reply *reply;

  g_ptr_array_add (f->keys, g_strdup (soup_message_headers_get_one (request, "Idempotency-Key")));
  g_ptr_array_add (f->bodies, g_strndup (g_bytes_get_data (flat, NULL), g_bytes_get_size (flat)));
  g_ptr_array_add (f->api_keys, g_strdup (soup_message_headers_get_one (request, "x-api-key")));

  g_assert_cmpuint (f->served, <, f->n_script);
  reply = &f->script[f->served++];

  switch (reply->kind)
    {
    case REPLY_CUT:
      write_raw (msg,
                 "HTTP/1.1 200 OK\r\n"
                 "Content-Type: text/event-stream\r\n"
                 "Content-Length: 4096\r\n"
                 "\r\n"
                 "event: message_start\n"
                 "data: {\"type\":\"message_start\"}\n\n");
      break;

    case REPLY_HEADERS:
      write_raw (msg, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n");
      break;

    case REPLY_GARBAGE:
      write_raw (msg, "\x16\x03\x01 this is not HTTP \xff\xfe\r\n\r\n");
      break;

    case REPLY_HANG:
      soup_server_message_pause (msg);
      g_ptr_array_add (f->hanging, g_object_ref (msg));
      break;

    case REPLY_BODY:
    default:
      soup_server_message_set_status (msg, reply->status, NULL);
      if (reply->header_name != NULL)
        soup_message_headers_append (soup_server_message_get_response_headers (msg),
                                     reply->header_name, reply->header_value);
      if (reply->date != NULL && *reply->date == '\0')
        soup_message_headers_remove (soup_server_message_get_response_headers (msg), "Date");
      else if (reply->date != NULL)
        soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                      "Date", reply->date);
      soup_server_message_set_response (msg, reply->content_type, SOUP_MEMORY_STATIC,
                                        reply->body, reply->body ? strlen (reply->body) : 0);
      break;
    }
}

static void
on_content (MendHttpSender *sender,
            MendTurn       *turn,
            const char     *event,
            Fixture        *f)
{
  f->content_events++;
}

static void
on_text_delta (MendHttpSender *sender,
               const char     *delta,
               Fixture        *f)
{
  g_assert_nonnull (delta);
  g_string_append (f->deltas, delta);
  f->n_deltas++;
}

static void
on_answer_notify (MendHttpSender *sender,
                  GParamSpec     *pspec,
                  Fixture        *f)
{
  f->answer_notifies++;
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;
  g_autofree char *endpoint = NULL;
  MendErrorPolicy *policy = mend_error_policy_new ();

  f->keys = g_ptr_array_new_with_free_func (g_free);
  f->bodies = g_ptr_array_new_with_free_func (g_free);
  f->api_keys = g_ptr_array_new_with_free_func (g_free);
  f->hanging = g_ptr_array_new_with_free_func (g_object_unref);

  f->server = soup_server_new (NULL, NULL);
  soup_server_add_handler (f->server, "/v1/messages", server_callback, f, NULL);
  g_assert_true (soup_server_listen_local (f->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  g_assert_no_error (error);
  uris = soup_server_get_uris (f->server);
  f->uri = uris->data;
  g_slist_free (uris);
  endpoint = g_strdup_printf ("http://127.0.0.1:%d/v1/messages", g_uri_get_port (f->uri));

  f->clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  f->sender = mend_http_sender_new (endpoint);
  g_assert_true (mend_http_sender_set_header (f->sender, "x-api-key", SECRET, NULL));
  mend_http_sender_set_timeout_ms (f->sender, 5000);
  g_signal_connect (f->sender, "content", G_CALLBACK (on_content), f);
  g_signal_connect (f->sender, "text-delta", G_CALLBACK (on_text_delta), f);
  g_signal_connect (f->sender, "notify::answer", G_CALLBACK (on_answer_notify), f);
  f->deltas = g_string_new (NULL);

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "clock", f->clock,
                          "policy", policy,
                          "sender", f->sender,
                          NULL);
  g_object_unref (policy);

  captured_log = g_string_new (NULL);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  mend_chat_close (f->chat);
  g_assert_finalize_object (f->chat);
  /* The session may hold the message of a cancelled attempt for a moment. */
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (f->sender);
  g_assert_finalize_object (f->clock);

  for (guint i = 0; i < f->hanging->len; i++)
    soup_server_message_unpause (g_ptr_array_index (f->hanging, i));
  soup_server_disconnect (f->server);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_ptr_array_unref (f->hanging);
  g_uri_unref (f->uri);
  g_assert_finalize_object (f->server);

  /* No secret in any log line. */
  g_assert_null (strstr (captured_log->str, SECRET));
  g_string_free (captured_log, TRUE);
  captured_log = NULL;

  g_ptr_array_unref (f->keys);
  g_ptr_array_unref (f->bodies);
  g_ptr_array_unref (f->api_keys);
  g_string_free (f->deltas, TRUE);
}

/* Runs the loop until the server saw @requests requests and the chat's
 * turn is in @state. */
static void
run_until (Fixture       *f,
           MendTurnState  state,
           guint          requests)
{
  mend_test_run_chat_until (f->chat, &f->served, state, requests);
}

static void
start (Fixture     *f,
       const Reply *script,
       guint        n)
{
  f->script = script;
  f->n_script = n;
  g_assert_true (mend_chat_submit (f->chat, "Summarize the build logs", NULL, NULL));
}

static MendRetryWait *
current_wait (Fixture *f)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);

  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  return mend_turn_get_wait (turn);
}

static void
assert_same_key_and_body (Fixture *f)
{
  g_assert_cmpuint (f->keys->len, >=, 2);
  for (guint i = 0; i < f->keys->len; i++)
    {
      g_assert_nonnull (g_ptr_array_index (f->keys, i));
      g_assert_cmpstr (g_ptr_array_index (f->keys, i), ==, g_ptr_array_index (f->keys, 0));
      g_assert_cmpstr (g_ptr_array_index (f->bodies, i), ==, g_ptr_array_index (f->bodies, 0));
      g_assert_cmpstr (g_ptr_array_index (f->api_keys, i), ==, SECRET);
    }
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 0), "\"content\":\"Summarize the build logs\""));
}

static void
test_503_with_retry_after_then_success (Fixture       *f,
                                        gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 503, "text/plain", "no non-exhausted accounts", "Retry-After", "2" },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  MendRetryWait *wait;

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  wait = current_wait (f);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (wait), ==, 2000);
  g_assert_true (mend_retry_wait_get_server_hint (wait));
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_CAPACITY);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 2000);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_cmpuint (f->content_events, ==, 2);
  assert_same_key_and_body (f);
}

/* An answer with nothing in it is the model's empty response: retried. */
static void
test_empty_stream_is_retried (Fixture       *f,
                              gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_EMPTY },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (mend_chat_get_turn (f->chat))),
                   ==, MEND_REASON_EMPTY);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_529_overloaded_is_retried (Fixture       *f,
                                gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 529, "application/json", OVERLOADED },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  MendFailure *failure;

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  failure = mend_turn_get_last_failure (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpstr (mend_failure_get_api_error_type (failure), ==, "overloaded_error");
  g_assert_cmpuint (mend_failure_get_status (failure), ==, 529);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  assert_same_key_and_body (f);
}

static void
test_429_with_retry_after_ms (Fixture       *f,
                              gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 429, "application/json",
      "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}}",
      "retry-after-ms", "1500" },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (current_wait (f)), ==, 1500);
  g_assert_cmpint (mend_retry_wait_get_reason (current_wait (f)), ==, MEND_REASON_RATE_LIMIT);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1500);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

/* An HTTP-date in a script: @s seconds after the start of the virtual wall
 * clock. */
static char *
http_date (gint64 s)
{
  g_autoptr(GDateTime) at = g_date_time_new_from_unix_utc (WALL_START_S + s);

  return soup_date_time_to_string (at, SOUP_DATE_HTTP);
}

static void
test_http_date_retry_after (Fixture       *f,
                            gconstpointer  data)
{
  static Reply script[] = {
    { REPLY_BODY, 503, "text/plain", "busy", "Retry-After", NULL },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  g_autofree char *date = http_date (3);
  g_autofree char *server_now = http_date (0);

  /* The server's clock agrees with the virtual one. */
  script[0].header_value = date;
  script[0].date = server_now;
  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (current_wait (f)), ==, 3000);
  g_assert_true (mend_retry_wait_get_server_hint (current_wait (f)));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 3000);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  script[0].header_value = NULL;
  script[0].date = NULL;
}

/* A server whose clock is @skew_s seconds off this machine's asks for 5 s
 * with a date: the wait is 5 s, whichever way the clock is off. */
static void
test_http_date_retry_after_reads_the_servers_date (Fixture       *f,
                                                   gconstpointer  data)
{
  const gint64 skew_s = GPOINTER_TO_INT (data) * 7200;
  static Reply script[] = {
    { REPLY_BODY, 429, "application/json",
      "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}}",
      "Retry-After", NULL, NULL },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  g_autofree char *retry_at = http_date (skew_s + 5);
  g_autofree char *server_now = http_date (skew_s);
  MendFailure *failure;

  g_test_message ("Date: %s, Retry-After: %s", server_now, retry_at);
  script[0].header_value = retry_at;
  script[0].date = server_now;
  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  failure = mend_turn_get_last_failure (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 5000);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (current_wait (f)), ==, 5000);
  g_assert_true (mend_retry_wait_get_server_hint (current_wait (f)));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 4999);
  g_assert_cmpuint (f->served, ==, 1);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  script[0].header_value = NULL;
  script[0].date = NULL;
}

/* Without a Date header, a date two hours past this machine's clock is
 * more likely this clock's error than a reset to wait for: not a usage
 * limit, and the policy's own backoff. */
static void
test_http_date_retry_after_past_the_horizon_without_date_is_backoff (Fixture       *f,
                                                                     gconstpointer  data)
{
  static Reply script[] = {
    { REPLY_BODY, 429, "text/plain", "slow down", "Retry-After", NULL, "" },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  g_autofree char *retry_at = http_date (7200 + 5);
  MendFailure *failure;

  script[0].header_value = retry_at;
  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  failure = mend_turn_get_last_failure (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, -1);
  /* A rate limit with no hint: the default schedule of a rate limit. */
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (current_wait (f)), ==, 5000);
  g_assert_false (mend_retry_wait_get_server_hint (current_wait (f)));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 5000);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  script[0].header_value = NULL;
}

static void
test_stream_error_before_content_is_retried (Fixture       *f,
                                             gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_ERROR_FIRST },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  MendFailure *failure;

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  failure = mend_turn_get_last_failure (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_false (mend_failure_get_partial (failure));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
on_turn_finished (MendChat  *chat,
                  MendTurn  *turn,
                  MendTurn **out)
{
  g_set_object (out, turn);
}

static void
test_stream_error_after_content_is_not_retried (Fixture       *f,
                                                gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_ERROR_AFTER_CONTENT },
  };
  g_autoptr(MendTurn) finished = NULL;
  MendFailure *failure;

  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), &finished);
  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  g_assert_nonnull (finished);
  g_assert_cmpint (mend_turn_get_state (finished), ==, MEND_TURN_FAILED);
  failure = mend_turn_get_last_failure (finished);
  g_assert_true (mend_failure_get_partial (failure));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpuint (f->content_events, ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
}

static void
test_connection_closed_mid_response_is_retried (Fixture       *f,
                                                gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_CUT },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpint (mend_retry_wait_get_reason (current_wait (f)), ==, MEND_REASON_TRANSPORT);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  assert_same_key_and_body (f);
}

static void
test_server_slower_than_the_timeout (Fixture       *f,
                                     gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_HANG },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  guint id;

  start (f, script, G_N_ELEMENTS (script));
  id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());
  while (f->served < 1)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);

  /* The attempt's timeout runs on the turn's clock. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 4999);
  g_assert_cmpint (mend_turn_get_state (mend_chat_get_turn (f->chat)), ==, MEND_TURN_RUNNING);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1);
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpint (mend_retry_wait_get_reason (current_wait (f)), ==, MEND_REASON_TIMEOUT);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_401_is_one_request (Fixture       *f,
                         gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 401, "application/json",
      "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}" },
  };

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 600000);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
}

static void
test_malformed_error_body (Fixture       *f,
                           gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 503, "application/json", "{\"type\":\"error\",\"error\":{\"type\":" },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  MendFailure *failure;

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  failure = mend_turn_get_last_failure (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "{\"type\":\"error\""));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_plain_json_success (Fixture       *f,
                         gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "application/json",
      "{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}]}" },
  };

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (f->content_events, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (f->api_keys, 0), ==, SECRET);
}

/* A Messages answer in three text deltas, one of them empty, after a
 * tool call's input in pieces. */
static const char SSE_THREE_DELTAS[] =
  "event: message_start\n"
  "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"role\":\"assistant\",\"content\":[]}}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"The build \"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"failed: “tests” \\n\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Read\",\"input\":{}}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"build.log\\\"}\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Reading it.\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
  "event: message_delta\n"
  "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

static void
test_text_deltas_join_to_the_answer (Fixture       *f,
                                     gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_ERROR_AFTER_CONTENT },
  };
  static const Reply script2[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_THREE_DELTAS },
  };
  g_autofree char *answer = NULL;

  g_assert_null (mend_http_sender_get_answer (f->sender));

  /* A failed attempt's text is emitted, but is no answer. */
  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  g_assert_cmpstr (f->deltas->str, ==, "Half an ans");
  g_assert_null (mend_http_sender_get_answer (f->sender));
  g_assert_cmpuint (f->answer_notifies, ==, 0);

  g_string_truncate (f->deltas, 0);
  f->n_deltas = 0;
  f->script = script2;
  f->n_script = G_N_ELEMENTS (script2);
  f->served = 0;
  g_assert_true (mend_chat_submit (f->chat, "Why did it fail?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 1);

  /* Empty deltas are not emitted; the rest join to the answer exactly. */
  g_assert_cmpuint (f->n_deltas, ==, 3);
  g_assert_cmpstr (f->deltas->str, ==, "The build failed: “tests” \nReading it.");
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, f->deltas->str);
  g_object_get (f->sender, "answer", &answer, NULL);
  g_assert_cmpstr (answer, ==, f->deltas->str);
  g_assert_cmpuint (f->answer_notifies, ==, 1);
}

static void
on_turn_text_delta (MendTurn   *turn,
                    const char *text,
                    GString    *joined)
{
  g_string_append (joined, text);
}

static void
on_turn_started_follow (MendChat *chat,
                        MendTurn *turn,
                        GString  *joined)
{
  g_signal_connect (turn, "text-delta", G_CALLBACK (on_turn_text_delta), joined);
}

/* The sender looks for handlers of the turn's ::text-delta as it reads:
 * one connected when the turn starts gets every delta, as the sender's
 * own ::text-delta does. */
static void
test_turn_text_delta_follows_the_sender (Fixture       *f,
                                         gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_THREE_DELTAS },
  };
  g_autoptr(GString) joined = g_string_new (NULL);
  gulong id = g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started_follow), joined);

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (f->n_deltas, ==, 3);
  g_assert_cmpstr (joined->str, ==, f->deltas->str);
  g_assert_cmpuint (f->content_events, >=, 3);
  g_signal_handler_disconnect (f->chat, id);
}

static void
test_json_answer_is_one_text_delta (Fixture       *f,
                                    gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "application/json",
      "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
      "{\"type\":\"text\",\"text\":\"Two failing tests. \"},"
      "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Read\",\"input\":{\"path\":\"a.log\"}},"
      "{\"type\":\"text\",\"text\":\"Reading the log.\"}],"
      "\"stop_reason\":\"tool_use\"}" },
    { REPLY_BODY, 200, "application/json",
      "{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"content\":["
      "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"Read\",\"input\":{}}]}" },
  };

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (f->n_deltas, ==, 1);
  g_assert_cmpstr (f->deltas->str, ==, "Two failing tests. Reading the log.");
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Two failing tests. Reading the log.");
  g_assert_cmpuint (f->answer_notifies, ==, 1);
  /* The raw answer is still there for those who read it. */
  g_assert_cmpuint (f->content_events, ==, 1);

  /* An answer of tool calls only: no delta, an empty answer, notified. */
  g_assert_true (mend_chat_submit (f->chat, "Go on", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_cmpuint (f->n_deltas, ==, 1);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "");
  g_assert_cmpuint (f->answer_notifies, ==, 2);
}

static void
on_max_tokens_notify (MendHttpSender *sender,
                      GParamSpec     *pspec,
                      guint          *count)
{
  (*count)++;
}

static void
test_max_tokens_is_in_the_body (Fixture       *f,
                                gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  guint notified = 0;
  guint value = 0;

  g_assert_cmpuint (mend_http_sender_get_max_tokens (f->sender), ==, 4096);
  g_signal_connect (f->sender, "notify::max-tokens", G_CALLBACK (on_max_tokens_notify), &notified);
  mend_http_sender_set_max_tokens (f->sender, 321);
  mend_http_sender_set_max_tokens (f->sender, 321);
  g_assert_cmpuint (notified, ==, 1);
  g_object_get (f->sender, "max-tokens", &value, NULL);
  g_assert_cmpuint (value, ==, 321);
  g_assert_cmpuint (mend_http_sender_get_max_tokens (f->sender), ==, 321);

  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 0), "\"max_tokens\":321,"));
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
}

/* A handler that sends the messages in a body of its own. */
static void
on_build_own_body (MendHttpSender *sender,
                   SoupMessage    *message,
                   MendTurn       *turn,
                   guint           attempt,
                   gpointer        data)
{
  g_autofree char *messages = mend_http_sender_build_messages (sender, turn);
  g_autofree char *body = g_strdup_printf ("{\"model\":\"other\",\"max_tokens\":7,\"system\":\"Be brief.\","
                                           "\"stream\":true,\"messages\":%s}", messages);
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));

  soup_message_set_request_body_from_bytes (message, "application/json", bytes);
}

static void
test_build_message_builds_from_the_messages (Fixture       *f,
                                             gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 529, "application/json", OVERLOADED },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };

  g_signal_connect (f->sender, "build-message", G_CALLBACK (on_build_own_body), NULL);
  start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_true (mend_chat_submit (f->chat, "And the tests?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 3);

  /* The handler's body went out, the same for both attempts, and the
   * conversation went on in it. */
  g_assert_cmpstr (g_ptr_array_index (f->bodies, 0), ==, g_ptr_array_index (f->bodies, 1));
  g_assert_cmpstr (g_ptr_array_index (f->bodies, 0), ==,
                   "{\"model\":\"other\",\"max_tokens\":7,\"system\":\"Be brief.\",\"stream\":true,"
                   "\"messages\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"}]}");
  g_assert_cmpstr (g_ptr_array_index (f->bodies, 2), ==,
                   "{\"model\":\"other\",\"max_tokens\":7,\"system\":\"Be brief.\",\"stream\":true,"
                   "\"messages\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"},"
                   "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}]},"
                   "{\"role\":\"user\",\"content\":\"And the tests?\"}]}");
}

/* One faulty reply, retried after the first wait, then a success. */
static void
assert_fault_is_retried (Fixture    *f,
                         const Reply *fault,
                         MendReason  reason)
{
  Reply *script = g_new0 (Reply, 2);

  script[0] = *fault;
  script[1] = (Reply) { REPLY_BODY, 200, "text/event-stream", SSE_OK };
  start (f, script, 2);
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpint (mend_retry_wait_get_reason (current_wait (f)), ==, reason);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_free (script);
}

static void
test_empty_200_is_retried (Fixture       *f,
                           gconstpointer  data)
{
  assert_fault_is_retried (f, &(Reply) { REPLY_BODY, 200, "application/json", "" }, MEND_REASON_EMPTY);
}

static void
test_reset_after_headers_is_retried (Fixture       *f,
                                     gconstpointer  data)
{
  assert_fault_is_retried (f, &(Reply) { REPLY_HEADERS }, MEND_REASON_TRANSPORT);
}

static void
test_garbage_is_retried (Fixture       *f,
                         gconstpointer  data)
{
  assert_fault_is_retried (f, &(Reply) { REPLY_GARBAGE }, MEND_REASON_TRANSPORT);
}

static void
test_alternating_503_and_success_loses_nothing (Fixture       *f,
                                                gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_BODY, 503, "application/json", OVERLOADED },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
    { REPLY_BODY, 503, "application/json", OVERLOADED },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
    { REPLY_BODY, 503, "application/json", OVERLOADED },
    { REPLY_BODY, 200, "text/event-stream", SSE_OK },
  };
  MendQueue *queue = mend_chat_get_queue (f->chat);

  start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "second", NULL, NULL));
  g_assert_true (mend_chat_submit (f->chat, "third", NULL, NULL));

  for (guint turn = 0; turn < 3; turn++)
    {
      run_until (f, MEND_TURN_WAITING, 2 * turn + 1);
      /* While it retries, nothing left the queue. */
      g_assert_cmpuint (mend_queue_get_length (queue), ==, 2 - turn);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
      if (turn < 2)
        run_until (f, MEND_TURN_RUNNING, 2 * turn + 2);
    }
  run_until (f, MEND_TURN_SUCCEEDED, 6);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
}

static void
test_stop_cancels_the_request (Fixture       *f,
                               gconstpointer  data)
{
  static const Reply script[] = {
    { REPLY_HANG },
  };
  guint id;

  start (f, script, G_N_ELEMENTS (script));
  id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());
  while (f->served < 1)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);

  mend_chat_stop (f->chat);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 600000);
  g_assert_cmpuint (f->served, ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  /* The isolated test directories hold no GSettings schemas: no system
   * proxy settings to read on loopback. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_log_set_handler ("Mend", G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO | G_LOG_LEVEL_MESSAGE,
                     capture_log, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/Mend/HttpSender/503-with-retry-after-then-success", test_503_with_retry_after_then_success);
  ADD ("/Mend/HttpSender/529-overloaded-is-retried", test_529_overloaded_is_retried);
  ADD ("/Mend/HttpSender/empty-stream-is-retried", test_empty_stream_is_retried);
  ADD ("/Mend/HttpSender/429-with-retry-after-ms", test_429_with_retry_after_ms);
  ADD ("/Mend/HttpSender/http-date-retry-after", test_http_date_retry_after);
  g_test_add ("/Mend/HttpSender/http-date-retry-after-reads-the-date-of-a-server-2h-ahead", Fixture,
              GINT_TO_POINTER (1), fixture_set_up, test_http_date_retry_after_reads_the_servers_date,
              fixture_tear_down);
  g_test_add ("/Mend/HttpSender/http-date-retry-after-reads-the-date-of-a-server-2h-behind", Fixture,
              GINT_TO_POINTER (-1), fixture_set_up, test_http_date_retry_after_reads_the_servers_date,
              fixture_tear_down);
  ADD ("/Mend/HttpSender/http-date-retry-after-past-the-horizon-without-date-is-backoff",
       test_http_date_retry_after_past_the_horizon_without_date_is_backoff);
  ADD ("/Mend/HttpSender/stream-error-before-content-is-retried", test_stream_error_before_content_is_retried);
  ADD ("/Mend/HttpSender/stream-error-after-content-is-not-retried", test_stream_error_after_content_is_not_retried);
  ADD ("/Mend/HttpSender/connection-closed-mid-response-is-retried", test_connection_closed_mid_response_is_retried);
  ADD ("/Mend/HttpSender/server-slower-than-the-timeout", test_server_slower_than_the_timeout);
  ADD ("/Mend/HttpSender/401-is-one-request", test_401_is_one_request);
  ADD ("/Mend/HttpSender/malformed-error-body", test_malformed_error_body);
  ADD ("/Mend/HttpSender/plain-json-success", test_plain_json_success);
  ADD ("/Mend/HttpSender/empty-200-is-retried", test_empty_200_is_retried);
  ADD ("/Mend/HttpSender/stop-cancels-the-request", test_stop_cancels_the_request);
  ADD ("/Mend/HttpSender/reset-after-headers-is-retried", test_reset_after_headers_is_retried);
  ADD ("/Mend/HttpSender/garbage-is-retried", test_garbage_is_retried);
  ADD ("/Mend/HttpSender/text-deltas-join-to-the-answer", test_text_deltas_join_to_the_answer);
  ADD ("/Mend/HttpSender/turn-text-delta-follows-the-sender", test_turn_text_delta_follows_the_sender);
  ADD ("/Mend/HttpSender/json-answer-is-one-text-delta", test_json_answer_is_one_text_delta);
  ADD ("/Mend/HttpSender/max-tokens-is-in-the-body", test_max_tokens_is_in_the_body);
  ADD ("/Mend/HttpSender/build-message-builds-from-the-messages", test_build_message_builds_from_the_messages);
  ADD ("/Mend/HttpSender/alternating-503-and-success-loses-nothing", test_alternating_503_and_success_loses_nothing);

#undef ADD

  return g_test_run ();
}
