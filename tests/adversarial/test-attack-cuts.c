/* test-attack-cuts.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Credentials an app gives a sender, echoed back where libmend cuts the
 * text before it shows it: an HTTP error body past the bytes read of it,
 * cut all along the key; an agent's standard error past the tail
 * kept, without spaces; an error event's data split over lines at every byte of the key;
 * the agent-status an api_retry line composes. No piece of the key may
 * reach a failure, a status or a signal.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-bounds.h"
#include "mend-test-hostile-server.h"

#ifdef MEND_TEST_ASAN
#define SLOW_BUILD 1
#else
#define SLOW_BUILD (RUNNING_ON_VALGRIND ? 1 : 0)
#endif

/* A long bearer token (an OAuth access token, a JWT), registered by the
 * sender that sends it. Its pieces are distinct: any 8 bytes of it are
 * found nowhere else. */
#define TOKEN_BYTES 600

static char *
make_token (void)
{
  GString *token = g_string_new ("Tk");

  for (guint i = 0; token->len < TOKEN_BYTES; i++)
    g_string_append_printf (token, "%03uq", i);
  g_string_truncate (token, TOKEN_BYTES);
  return g_string_free (token, FALSE);
}

/* Whether @text holds 8 bytes in a row of @token. */
static gboolean
holds_a_piece (const char *text,
               const char *token)
{
  gsize n = strlen (token);

  for (gsize i = 0; i + 8 <= n; i++)
    {
      g_autofree char *piece = g_strndup (token + i, 8);

      if (strstr (text, piece) != NULL)
        return TRUE;
    }
  return FALSE;
}

/* An error body of echoes of the token, one of them across @cut: the
 * redacted echoes are short, so that what is shown reaches the cut. */
static GString *
echoes_across (const char *token,
               gsize       cut,
               gsize       offset)
{
  GString *body = g_string_new ("{\"detail\": \"");
  gsize echo = strlen ("bad token ") + strlen (token) + 1;

  while (body->len + echo < cut - offset)
    g_string_append_printf (body, "bad token %s ", token);
  while (body->len < cut - offset)
    g_string_append_c (body, '.');
  g_string_append (body, token);
  g_string_append (body, " is refused\"}");
  g_assert_cmpuint (body->len, >, cut);
  return body;
}

/* An error body past the bytes the classifier reads (its first 64 kB),
 * cut inside the token all along it: no piece shows. */
static void
test_error_body_cut_at_every_byte_of_a_key (void)
{
  g_autofree char *token = make_token ();
  g_autofree char *header = g_strdup_printf ("Bearer %s", token);
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  /* Each of the first and last bytes of the token, and every seventh
   * between: the classifier reads each 64 kB body whole, some 50 ms
   * (ten times as long under the sanitizers, fifty under valgrind, where
   * the ends and the middle are enough). */
  gsize step = SLOW_BUILD ? TOKEN_BYTES / 2 - 8 : 7;

  g_assert_true (mend_http_sender_set_header (sender, "Authorization", header, NULL));
  for (gsize offset = 8; offset < TOKEN_BYTES; offset += offset < 16 || offset >= TOKEN_BYTES - 16 ? 1 + SLOW_BUILD * 7 : step)
    {
      g_autoptr(GString) body = echoes_across (token, MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES, offset);
      g_autoptr(GBytes) bytes = g_bytes_new (body->str, body->len);
      g_autoptr(MendFailure) failure = mend_failure_new_from_http (401, NULL, bytes);
      const char *message = mend_failure_get_message (failure);

      if (holds_a_piece (message, token))
        g_error ("cut %" G_GSIZE_FORMAT " bytes into the key, the message shows a piece of it: …%s",
                 offset, message + MAX (strlen (message), 80) - 80);
    }
  g_assert_finalize_object (sender);
}

/* A body with no space near the cut, whose drop before the cut falls
 * inside a character: the text shown still ends where a character does,
 * so that the message is the body's, redacted. */
static void
test_error_body_cut_inside_a_character (void)
{
  g_autofree char *token = make_token ();
  g_autofree char *header = g_strdup_printf ("Bearer %s", token);
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(MendFailure) failure = NULL;
  gsize unit = strlen ("\u20ac") + TOKEN_BYTES;
  gsize drop_at = MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES - 1024;

  g_assert_true (mend_http_sender_set_header (sender, "Authorization", header, NULL));
  /* The drop lands one byte into a "€". */
  while ((drop_at - body->len) % unit != 1)
    g_string_append_c (body, 'x');
  while (body->len < MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES + unit)
    g_string_append_printf (body, "\u20ac%s", token);
  bytes = g_bytes_new (body->str, body->len);

  failure = mend_failure_new_from_http (401, NULL, bytes);
  g_test_message ("%.80s…", mend_failure_get_message (failure));
  g_assert_true (g_str_has_prefix (mend_failure_get_message (failure), "HTTP 401: xx"));
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "\u20ac[redacted]\u20ac"));
  g_assert_false (holds_a_piece (mend_failure_get_message (failure), token));
  g_assert_finalize_object (sender);
}

/* The same through the sender, which reads no more than
 * MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES of an error. */
static void
echo_past_the_error_cap (MendTestHostileServer *server,
                         GSocket               *connection,
                         const char            *request)
{
  const GString *body = server->data;
  g_autofree char *head = g_strdup_printf ("HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n"
                                           "Content-Length: %" G_GSIZE_FORMAT "\r\nConnection: close\r\n\r\n",
                                           body->len);

  if (mend_test_hostile_write_str (server, connection, head) &&
      mend_test_hostile_write (server, connection, body->str, body->len))
    mend_test_hostile_wait_for_close (server, connection);
}

static void
on_turn_finished (MendChat  *chat,
                  MendTurn  *turn,
                  MendTurn **finished)
{
  g_set_object (finished, turn);
}

static void
test_error_body_read_cut_inside_a_key (void)
{
  g_autofree char *token = make_token ();
  g_autofree char *header = g_strdup_printf ("Bearer %s", token);
  g_autoptr(GString) body = echoes_across (token, MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES, TOKEN_BYTES / 2);
  MendTestHostileServer *server = mend_test_hostile_server_new (echo_past_the_error_cap, body, 2);
  g_autofree char *uri = mend_test_hostile_server_uri (server);
  MendClock *clock = mend_manual_clock_new (0);
  MendHttpSender *sender = mend_http_sender_new (uri);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, NULL);
  guint id = g_timeout_add_seconds (mend_test_real_time (20), mend_test_watchdog, (gpointer) g_test_get_path ());
  MendTurn *finished = NULL;
  MendFailure *failure;

  g_assert_true (mend_http_sender_set_header (sender, "Authorization", header, NULL));
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), &finished);
  mend_test_submit (chat, "Summarize the build logs");
  while (finished == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);

  failure = mend_turn_get_last_failure (finished);
  g_assert_nonnull (failure);
  g_test_message ("…%s", mend_failure_get_message (failure) + MAX (strlen (mend_failure_get_message (failure)), 80) - 80);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_AUTH);
  g_assert_false (holds_a_piece (mend_failure_get_message (failure), token));

  g_clear_object (&finished);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
  mend_test_hostile_server_free (server);
}

/* An error event whose data: lines split the key the sender sends, at
 * @offset bytes into it: inside a JSON string, in plain text, with
 * CRLF line ends, and over three lines. The request's prompt names the
 * shape and the offset. */
#define SPLIT_KEY "Vb7Nm3Qw9Er1Ty5Ui2Op8SPLITkey0123456789"

static void
split_key_event (MendTestHostileServer *server,
                 GSocket               *connection,
                 const char            *request)
{
  const char *cut = strstr (request, "cut-");
  g_autofree char *head = NULL;
  g_autofree char *tail = NULL;
  g_autofree char *answer = NULL;
  const char *eol;
  char shape;
  guint64 offset;

  g_assert_nonnull (cut);
  shape = cut[4];
  offset = g_ascii_strtoull (cut + 6, NULL, 10);
  head = g_strndup (SPLIT_KEY, offset);
  tail = g_strdup (SPLIT_KEY + offset);
  eol = shape == 'r' ? "\r\n" : shape == 'c' ? "\r" : "\n";

  if (shape == 't')
    answer = g_strdup_printf ("event: error%sdata: invalid key %s%sdata: %s given%s%s", eol, head, eol, tail, eol, eol);
  else if (shape == '3')
    answer = g_strdup_printf ("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                              "\"message\":\"invalid key %.*s\ndata: %s\ndata: %s given\"}}\n\n",
                              (int) offset / 2, head, head + offset / 2, tail);
  else
    answer = g_strdup_printf ("event: error%sdata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                              "\"message\":\"invalid key %s%sdata: %s given\"}}%s%s", eol, head, eol, tail, eol, eol);
  if (mend_test_hostile_write_str (server, connection,
                                   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n") &&
      mend_test_hostile_write_str (server, connection, answer))
    mend_test_hostile_wait_for_close (server, connection);
}

static void
test_event_data_split_at_every_byte_of_a_key (gconstpointer data)
{
  const char *shape = data;
  MendTestHostileServer *server = mend_test_hostile_server_new (split_key_event, NULL, strlen (SPLIT_KEY));
  g_autofree char *uri = mend_test_hostile_server_uri (server);
  MendClock *clock = mend_manual_clock_new (0);
  MendHttpSender *sender = mend_http_sender_new (uri);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendChat *chat;
  MendTurn *finished = NULL;

  mend_error_policy_set_max_retries (policy, 0);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, "policy", policy, NULL);
  g_object_unref (policy);
  g_assert_true (mend_http_sender_set_header (sender, "x-api-key", SPLIT_KEY, NULL));
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), &finished);

  /* Every byte; every third under the sanitizers and valgrind. */
  for (guint offset = 1; offset < strlen (SPLIT_KEY); offset += 1 + 2 * SLOW_BUILD)
    {
      g_autofree char *prompt = g_strdup_printf ("cut-%s-%u", shape, offset);
      guint id = g_timeout_add_seconds (mend_test_real_time (20), mend_test_watchdog, (gpointer) g_test_get_path ());
      const char *message;

      mend_test_submit (chat, prompt);
      while (finished == NULL)
        g_main_context_iteration (NULL, TRUE);
      g_source_remove (id);

      g_assert_cmpint (mend_turn_get_state (finished), ==, MEND_TURN_FAILED);
      message = mend_failure_get_message (mend_turn_get_last_failure (finished));
      if (offset == 1)
        g_test_message ("%s", message);
      if (holds_a_piece (message, SPLIT_KEY) || strstr (message, "given") == NULL)
        g_error ("split %u bytes into the key: %s", offset, message);
      g_clear_object (&finished);
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
  mend_test_hostile_server_free (server);
}

/* An api_retry line whose error holds the key the agent was given, the
 * status's cut (its 200 bytes) at every byte of the key: neither the
 * turn's agent-status nor the agent-retry signal shows a piece of it. */
#define STATUS_MAX_ERROR_BYTES 200

static void
on_agent_retry (MendStreamObserver *observer,
                MendTurn           *turn,
                guint               attempt,
                guint               max_retries,
                guint               status,
                const char         *error,
                guint               delay_ms,
                char              **out)
{
  g_free (*out);
  *out = g_strdup (error);
}

static void
test_retry_status_cut_at_every_byte_of_a_key (void)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  MendClock *clock = mend_manual_clock_new (0);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendStreamObserver *observer = mend_stream_observer_new (chat);
  g_autofree char *signalled = NULL;

  g_assert_true (mend_http_sender_set_header (sender, "x-api-key", SPLIT_KEY, NULL));
  g_signal_connect (observer, "agent-retry", G_CALLBACK (on_agent_retry), &signalled);
  mend_test_submit (chat, "Fix the build");
  for (guint offset = 0; offset <= strlen (SPLIT_KEY); offset++)
    {
      g_autofree char *before = g_strnfill (STATUS_MAX_ERROR_BYTES - offset, 'e');
      g_autofree char *line = g_strdup_printf ("{\"type\": \"system\", \"subtype\": \"api_retry\", \"attempt\": %u, "
                                               "\"max_retries\": 100, \"retry_delay_ms\": 500, \"error_status\": null, "
                                               "\"error\": \"%s%s refused\"}", offset + 1, before, SPLIT_KEY);
      const char *status;

      mend_stream_observer_feed_line (observer, line, -1);
      status = mend_turn_get_agent_status (mend_chat_get_turn (chat));
      g_assert_nonnull (status);
      g_assert_nonnull (signalled);
      if (holds_a_piece (status, SPLIT_KEY) || holds_a_piece (signalled, SPLIT_KEY))
        g_error ("cut %u bytes into the key: %s / %s", offset, status, signalled);
    }

  mend_chat_close (chat);
  g_assert_finalize_object (observer);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
}

#if MEND_HAS_AGENTS
/* An agent's standard error past the tail kept of it (its last 16 kB),
 * written without a space or a line end: the key the agent was given,
 * again and again, the kept tail's start then each byte of a key. The
 * tail shown, and the exit's failure, hold no piece of it. */
static void
test_stderr_without_spaces_cut_at_every_byte_of_a_key (void)
{
  for (guint shift = 0; shift <= strlen (SPLIT_KEY); shift += 1 + 2 * SLOW_BUILD)
    {
      g_autofree char *script = g_strdup_printf ("read line; i=0; while [ $i -lt 800 ]; do printf '%%s,' \"$KEY\"; "
                                                 "i=$((i+1)); done >&2; head -c %u /dev/zero | tr '\\0' , >&2; exit 1",
                                                 shift);
      const char *argv[] = { "/bin/sh", "-c", script, NULL };
      MendAgentProcess *agent = mend_agent_process_new (argv);
      MendClock *clock = mend_manual_clock_new (0);
      MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
      guint id = g_timeout_add_seconds (mend_test_real_time (20), mend_test_watchdog, (gpointer) g_test_get_path ());
      g_autofree char *tail = NULL;
      MendTurn *turn;
      const char *message;

      mend_agent_setenv (MEND_AGENT (agent), "KEY", SPLIT_KEY);
      mend_test_submit (chat, "Fix the build");
      turn = g_object_ref (mend_chat_get_turn (chat));
      while (mend_turn_get_state (turn) == MEND_TURN_RUNNING)
        g_main_context_iteration (NULL, TRUE);
      g_source_remove (id);

      message = mend_failure_get_message (mend_turn_get_last_failure (turn));
      tail = mend_agent_dup_stderr (MEND_AGENT (agent));
      g_assert_nonnull (tail);
      if (holds_a_piece (message, SPLIT_KEY) || holds_a_piece (tail, SPLIT_KEY))
        g_error ("shifted by %u: %.120s", shift, tail);

      mend_chat_close (chat);
      mend_agent_terminate (MEND_AGENT (agent));
      g_object_unref (turn);
      g_assert_finalize_object (chat);
      while (g_main_context_iteration (NULL, FALSE))
        ;
      mend_test_finalize_eventually (agent);
      g_assert_finalize_object (clock);
    }
}
#endif

int
main (int   argc,
      char *argv[])
{
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/AttackCuts/error-body-cut-all-along-a-key",
                   test_error_body_cut_at_every_byte_of_a_key);
  g_test_add_func ("/Mend/AttackCuts/error-body-cut-inside-a-character", test_error_body_cut_inside_a_character);
  g_test_add_func ("/Mend/AttackCuts/error-body-read-cut-inside-a-key",
                   test_error_body_read_cut_inside_a_key);

  g_test_add_data_func ("/Mend/AttackCuts/event-data-split-at-every-byte-of-a-key/json-string", "j",
                        test_event_data_split_at_every_byte_of_a_key);
  g_test_add_data_func ("/Mend/AttackCuts/event-data-split-at-every-byte-of-a-key/text", "t",
                        test_event_data_split_at_every_byte_of_a_key);
  g_test_add_data_func ("/Mend/AttackCuts/event-data-split-at-every-byte-of-a-key/crlf", "r",
                        test_event_data_split_at_every_byte_of_a_key);
  g_test_add_data_func ("/Mend/AttackCuts/event-data-split-at-every-byte-of-a-key/cr", "c",
                        test_event_data_split_at_every_byte_of_a_key);
  g_test_add_data_func ("/Mend/AttackCuts/event-data-split-at-every-byte-of-a-key/three-lines", "3",
                        test_event_data_split_at_every_byte_of_a_key);

  g_test_add_func ("/Mend/AttackCuts/retry-status-cut-at-every-byte-of-a-key", test_retry_status_cut_at_every_byte_of_a_key);
#if MEND_HAS_AGENTS
  g_test_add_func ("/Mend/AttackCuts/stderr-without-spaces-cut-at-every-byte-of-a-key",
                   test_stderr_without_spaces_cut_at_every_byte_of_a_key);
#endif

  return g_test_run ();
}
