/* test-secrets.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Credentials never leave libmend in text. Distinctive keys are seeded
 * into every header a sender is given, its endpoint and its build-message
 * handler, and a hostile upstream echoes them back in every shape seen in
 * the wild: JSON bodies, URLs, "Bearer", key-shaped tokens, headers quoted
 * back, an error event inside a 200 stream, a redirect. Every output is
 * then searched: failures (message, GError, API error type), records, log
 * lines at G_MESSAGES_DEBUG=all, saved state.
 */

#include "config.h"

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-hostile-server.h"
#include "mend-test-agents.h"

/* The raw-socket server (tests/support/mend-test-hostile-server.c). */
typedef MendTestHostileServer HostileServer;

#define WALL_START_S 1764500000

/* Given to the sender. */
#define K_HEADER  "sk-ant-api03-SEEDEDheaderKEY0123456789"
#define K_BEARER  "SEEDEDbearerTOKEN0123456789"
#define K_CUSTOM  "SEEDEDcustom0123456789"
#define K_HANDLER "SEEDEDhandler0123456789"
#define K_URI     "SEEDEDuriKEY0123456789"
/* Never given to libmend: caught by their shape alone. */
#define K_SK      "sk-proj-SEEDEDunregistered0123456789"
#define K_AIZA    "AIzaSyUNREGISTEREDseed0123456789abcdef"
#define K_JWT     "eyJhbGciOiJIUzI1NiJ9.eyJTRUVERUQiOjF9.SEEDEDsig0123456789"
#define K_VALUE   "q8Zr3xV0pL9wT2mN5bK7SEEDED"

static const char * const all_keys[] = {
  K_HEADER, K_BEARER, K_CUSTOM, K_HANDLER, K_URI, K_SK, K_AIZA, K_JWT, K_VALUE,
};

static GString *logged;

static void
capture_log (const char     *domain,
             GLogLevelFlags  level,
             const char     *message,
             gpointer        data)
{
  g_string_append_printf (logged, "%s: %s\n", domain ? domain : "", message);
  /* What ends the test is shown. */
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
    g_printerr ("%s: %s\n", domain ? domain : "", message);
}

static void
assert_no_key (const char *what,
               const char *text)
{
  if (text == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (all_keys); i++)
    if (strstr (text, all_keys[i]) != NULL)
      g_error ("%s leaks %s: %s", what, all_keys[i], text);
}

static void
assert_failure_clean (MendFailure *failure)
{
  const GError *error = mend_failure_get_error (failure);

  g_test_message ("%s", mend_failure_get_message (failure));
  assert_no_key ("a failure message", mend_failure_get_message (failure));
  assert_no_key ("a failure's API error type", mend_failure_get_api_error_type (failure));
  if (error != NULL)
    assert_no_key ("a failure's GError", error->message);
}

/* The shapes, one at a time, on text */

static void
test_every_echo_shape_is_redacted (void)
{
  static const char * const shapes[] = {
    "{\"type\":\"error\",\"error\":{\"message\":\"bad request\",\"api_key\":\"" K_VALUE "\"}}",
    "{\"headers\":{\"x-api-key\":\"" K_VALUE "\"}}",
    "{\"authorization\": \"Bearer " K_VALUE "\"}",
    "GET https://example.com/v1/models?key=" K_VALUE "&alt=json failed",
    "POST https://example.com/v1?api_key=" K_VALUE " returned 401",
    "cannot reach https://user:" K_VALUE "@example.com/v1",
    "request rejected: Bearer " K_VALUE,
    "invalid key " K_HEADER " (401)",
    "Incorrect API key provided: " K_SK ".",
    "API key not valid: " K_AIZA,
    "x-api-key: " K_VALUE "\r\nanthropic-version: 2023-06-01",
    "Authorization: Basic " K_VALUE,
    "Cookie: session=" K_VALUE "; theme=dark",
    "X-Goog-Api-Key: " K_VALUE,
    "token expired: access_token=" K_VALUE,
    "{'client_secret': '" K_VALUE "'}",
    "jwt " K_JWT " is expired",
    /* After a reason phrase, a credential is still one. */
    "401 Unauthorized: Bearer " K_VALUE,
    "401 Unauthorized: " K_SK,
  };

  for (guint i = 0; i < G_N_ELEMENTS (shapes); i++)
    {
      g_autoptr(GError) gerror = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "%s", shapes[i]);
      g_autoptr(GBytes) body = g_bytes_new (shapes[i], strlen (shapes[i]));
      MendFailure *failures[3];

      failures[0] = mend_failure_new_from_text (shapes[i]);
      failures[1] = mend_failure_new_from_error (gerror);
      failures[2] = mend_failure_new_from_http (401, NULL, body);
      /* The text is kept, the key is not. */
      g_assert_nonnull (strstr (mend_failure_get_message (failures[0]), "[redacted]"));
      for (guint j = 0; j < G_N_ELEMENTS (failures); j++)
        {
          assert_failure_clean (failures[j]);
          g_assert_finalize_object (failures[j]);
        }
    }
}

static void
test_what_is_not_a_key_stays_readable (void)
{
  static const char * const plain[] = {
    "max_tokens: 4096 is greater than the maximum",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},"
      "\"request_id\":\"req_011CSHoEeqs5C35K2UUqR7Fy\"}",
    "Token limit exceeded for this session",
    "Basic authentication is not supported",
    /* An HTTP status's reason phrase is no label: the words after it stay
     * (Codex over ACP, against an OpenAI 401 body). */
    "401 Unauthorized: Incorrect API key",
    "unexpected status 401 Unauthorized: Incorrect API key provided: sk-stub***key. You can find "
      "your API key at https://platform.openai.com/account/api-keys.",
    "UNAUTHENTICATED: Credentials are missing or invalid",
  };

  for (guint i = 0; i < G_N_ELEMENTS (plain); i++)
    {
      MendFailure *failure = mend_failure_new_from_text (plain[i]);

      g_test_message ("%s", mend_failure_get_message (failure));
      g_assert_null (strstr (mend_failure_get_message (failure), "[redacted]"));
      g_assert_finalize_object (failure);
    }
}

/* End to end: a sender with seeded keys, an upstream that echoes them */

static const char *
echo_shape (guint n)
{
  static const char * const answers[] = {
    /* The request's head, quoted back in a 401 body. */
    "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
    "invalid credentials in request: @REQUEST@",
    /* A JSON error whose message and type quote the headers. */
    "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
    "{\"type\":\"error\",\"error\":{\"type\":\"" K_SK "\",\"message\":\"rejected @REQUEST@\"}}",
    /* An error event inside a 200 stream. */
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
    "\"message\":\"Overloaded; your request was @REQUEST@\"}}\n\n",
    /* A gateway that prints the URL, and keys of its own. */
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
    "no upstream for @REQUEST@ (tried " K_AIZA ", " K_JWT ")",
    /* A redirect that carries a key in its Location. */
    "HTTP/1.1 302 Found\r\nLocation: https://user:" K_VALUE "@example.com/v1?key=" K_VALUE "\r\n"
    "Connection: close\r\nContent-Length: 0\r\n\r\n",
  };

  return n < G_N_ELEMENTS (answers) ? answers[n] : NULL;
}

static gint current_shape;

static void
echo (HostileServer *server,
      GSocket       *connection,
      const char    *request)
{
  g_autofree char *escaped = g_strescape (request, NULL);
  GString *answer = g_string_new (echo_shape (g_atomic_int_get (&current_shape)));

  g_string_replace (answer, "@REQUEST@", escaped, 0);
  mend_test_hostile_write_str (server, connection, answer->str);
  g_string_free (answer, TRUE);
}

static void
on_build_message (MendHttpSender *sender,
                  SoupMessage    *message,
                  MendTurn       *turn,
                  guint           attempt)
{
  soup_message_headers_replace (soup_message_get_request_headers (message), "api-key", K_HANDLER);
}

static void
on_record (GObject    *source,
           const char *json,
           GString    *out)
{
  g_string_append_printf (out, "%s\n", json);
}

static gboolean
watchdog (gpointer data)
{
  g_error ("the secrets test did not settle in time");
  return G_SOURCE_REMOVE;
}

static void
run_until (MendChat      *chat,
           MendTurnState  state)
{
  guint id = g_timeout_add_seconds (60, watchdog, NULL);

  for (;;)
    {
      MendTurn *turn = mend_chat_get_turn (chat);

      if (turn == NULL || mend_turn_get_state (turn) == state)
        break;
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (id);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  MendTurn **out)
{
  g_set_object (out, turn);
}

/* Closes @chat and finalizes it and what it used (with the last turn
 * finished, when @finished is set). */
static void
finish_http_chat (MendChat        *chat,
                  MendTurn       **finished,
                  MendHttpSender  *sender,
                  MendClock       *clock,
                  HostileServer   *server)
{
  mend_chat_close (chat);
  if (finished != NULL)
    g_clear_object (finished);
  g_assert_finalize_object (chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
  mend_test_hostile_server_free (server);
}

static void
test_keys_never_leave_through_any_output (void)
{
  HostileServer *server = mend_test_hostile_server_new (echo, NULL, 16);
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u/v1/messages?key=%s", server->port, K_URI);
  MendClock *clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  MendErrorPolicy *policy = mend_error_policy_new ();
  g_autoptr(GString) records = g_string_new (NULL);
  g_autoptr(MendTurn) finished = NULL;
  MendHttpSender *sender;
  MendChat *chat;
  guint shapes = 0;

  sender = mend_http_sender_new (uri);
  g_assert_true (mend_http_sender_set_header (sender, "x-api-key", K_HEADER, NULL));
  g_assert_true (mend_http_sender_set_header (sender, "Authorization", "Bearer " K_BEARER, NULL));
  g_assert_true (mend_http_sender_set_header (sender, "x-org-credential", K_CUSTOM, NULL));
  g_signal_connect (sender, "build-message", G_CALLBACK (on_build_message), NULL);

  /* Every failure is retried once, so that a wait is saved too. */
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  mend_error_policy_set_max_retries (policy, 1);
  mend_error_policy_set_retry_partial (policy, TRUE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, "sender", sender, NULL);
  g_object_unref (policy);
  g_signal_connect (chat, "record", G_CALLBACK (on_record), records);
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), &finished);

  for (; echo_shape (shapes) != NULL; shapes++)
    {
      MendTurn *turn;
      g_autofree char *saved = NULL;

      g_atomic_int_set (&current_shape, shapes);
      g_assert_true (mend_chat_submit (chat, "Summarize the build logs", NULL, NULL));
      run_until (chat, MEND_TURN_WAITING);
      turn = mend_chat_get_turn (chat);
      if (turn != NULL)
        {
          /* A wait: its failure, its JSON and the saved state. */
          g_autofree char *wait_json = mend_retry_wait_to_json (mend_turn_get_wait (turn));

          assert_failure_clean (mend_turn_get_last_failure (turn));
          assert_no_key ("a wait's JSON", wait_json);
          saved = mend_chat_save_state (chat);
          g_assert_nonnull (strstr (saved, "[redacted]"));
          assert_no_key ("saved state", saved);
          mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 60000);
          run_until (chat, MEND_TURN_SUCCEEDED);
        }

      g_assert_nonnull (finished);
      g_assert_cmpint (mend_turn_get_state (finished), ==, MEND_TURN_FAILED);
      assert_failure_clean (mend_turn_get_last_failure (finished));
      g_clear_pointer (&saved, g_free);
      saved = mend_chat_save_state (chat);
      assert_no_key ("saved state", saved);
    }

  /* The upstream did receive every key: the test seeded what it meant to. */
  {
    const char *first = g_ptr_array_index (server->requests, 0);

    g_assert_nonnull (strstr (first, K_HEADER));
    g_assert_nonnull (strstr (first, K_BEARER));
    g_assert_nonnull (strstr (first, K_CUSTOM));
    g_assert_nonnull (strstr (first, K_HANDLER));
    g_assert_nonnull (strstr (first, K_URI));
  }
  g_assert_cmpuint (shapes, ==, 5);

  g_assert_cmpuint (records->len, >, 0);
  assert_no_key ("a record", records->str);
  g_assert_cmpuint (logged->len, >, 0);
  assert_no_key ("a log line", logged->str);

  finish_http_chat (chat, &finished, sender, clock, server);
}

/* The app's own credentials outlive any number of per-request ones */

/* An error event whose data a server splits over two data: lines inside
 * a key it echoes: the lines joined are redacted, not only each half. */
static void
echo_split_key (HostileServer *server,
                GSocket       *connection,
                const char    *request)
{
  mend_test_hostile_write_str (server, connection,
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
    "\"message\":\"invalid key SEEDEDcus\n"
    "data: tom0123456789 given\"}}\n\n");
}

static void
test_key_split_over_data_lines_is_redacted (void)
{
  HostileServer *server = mend_test_hostile_server_new (echo_split_key, NULL, 4);
  g_autofree char *uri = mend_test_hostile_server_uri (server);
  MendClock *clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  MendErrorPolicy *policy = mend_error_policy_new ();
  g_autoptr(MendTurn) finished = NULL;
  MendHttpSender *sender;
  MendChat *chat;
  const char *message;

  sender = mend_http_sender_new (uri);
  g_assert_true (mend_http_sender_set_header (sender, "x-org-credential", K_CUSTOM, NULL));
  mend_error_policy_set_max_retries (policy, 0);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, "sender", sender, NULL);
  g_object_unref (policy);
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), &finished);

  g_assert_true (mend_chat_submit (chat, "Summarize the build logs", NULL, NULL));
  run_until (chat, MEND_TURN_SUCCEEDED);
  g_assert_nonnull (finished);
  message = mend_failure_get_message (mend_turn_get_last_failure (finished));
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, "invalid key"));
  g_assert_null (strstr (message, "SEEDEDcus"));
  g_assert_null (strstr (message, "tom0123456789"));

  finish_http_chat (chat, &finished, sender, clock, server);
}

/* No known prefix: only its registration catches it. */
#define K_PINNED "SEEDEDpinnedAPIkey0123456789"

static void
echo_pinned_key (HostileServer *server,
                 GSocket       *connection,
                 const char    *request)
{
  mend_test_hostile_write_str (server, connection,
                               "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
                               "the key " K_PINNED " is not valid");
}

static void
on_build_message_session (MendHttpSender *sender,
                          SoupMessage    *message,
                          MendTurn       *turn,
                          guint           attempt)
{
  g_autofree char *id = g_strdup_printf ("session-%s-%u", mend_turn_get_id (turn), attempt);

  soup_message_headers_replace (soup_message_get_request_headers (message), "x-session-id", id);
}

#define N_ROTATION_TURNS 130

static void
test_app_key_outlives_per_request_credentials (void)
{
  HostileServer *server = mend_test_hostile_server_new (echo_pinned_key, NULL, N_ROTATION_TURNS);
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u/v1/messages", server->port);
  MendClock *clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  MendErrorPolicy *policy = mend_error_policy_new ();
  g_autoptr(MendTurn) finished = NULL;
  MendHttpSender *sender;
  MendChat *chat;

  sender = mend_http_sender_new (uri);
  g_assert_true (mend_http_sender_set_header (sender, "x-api-key", K_PINNED, NULL));
  g_signal_connect (sender, "build-message", G_CALLBACK (on_build_message_session), NULL);

  mend_error_policy_set_max_retries (policy, 0);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, "sender", sender, NULL);
  g_object_unref (policy);
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), &finished);

  /* Each turn sends a session id of its own, named like a credential. */
  for (guint i = 0; i < N_ROTATION_TURNS; i++)
    {
      const char *message;

      g_assert_true (mend_chat_submit (chat, "Summarize the build logs", NULL, NULL));
      run_until (chat, MEND_TURN_SUCCEEDED);
      g_assert_nonnull (finished);
      g_assert_cmpint (mend_turn_get_state (finished), ==, MEND_TURN_FAILED);
      message = mend_failure_get_message (mend_turn_get_last_failure (finished));
      if (strstr (message, K_PINNED) != NULL)
        g_error ("turn %u shows the key: %s", i + 1, message);
      g_assert_nonnull (strstr (message, "[redacted]"));
      g_clear_object (&finished);
    }
  {
    g_autofree char *saved = mend_chat_save_state (chat);

    g_assert_null (strstr (saved, K_PINNED));
  }
  g_assert_null (strstr (logged->str, K_PINNED));

  finish_http_chat (chat, NULL, sender, clock, server);
}

#if MEND_HAS_AGENTS
/* Agents: what the app gives through the environment and the command line */

/* No known prefix, no label in the echo: only registration catches them. */
#define K_ENV     "SEEDEDenvTOKEN0123456789"
#define K_ARGV    "SEEDEDargvKEY0123456789"
#define K_ARGV_EQ "SEEDEDargvEQUALS0123456789"
/* Shaped like keys: the failures are redacted by shape; the log must be too. */
#define K_LOAD    "sk-ant-api03-SEEDEDsessionLOAD0123456789"
#define K_PROMPT  "sk-ant-api03-SEEDEDpromptERROR0123456789"
#define K_DATA    "sk-proj-SEEDEDerrorDATA0123456789"

static const char * const agent_keys[] = { K_ENV, K_ARGV, K_ARGV_EQ, K_LOAD, K_PROMPT, K_DATA };

static void
assert_no_agent_key (const char *what,
                     const char *text)
{
  if (text == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (agent_keys); i++)
    if (strstr (text, agent_keys[i]) != NULL)
      g_error ("%s leaks %s: %s", what, agent_keys[i], text);
}

typedef struct
{
  MendChat  *chat;
  MendTurn  *finished;
  GString   *records;
} AgentRun;

static void
on_agent_turn_finished (MendChat *chat,
                        MendTurn *turn,
                        AgentRun *run)
{
  g_set_object (&run->finished, turn);
}

static gboolean
turn_finished (gpointer      fixture,
               gconstpointer data)
{
  return ((AgentRun *) fixture)->finished != NULL;
}

static void
assert_agent_failure_clean (MendFailure *failure)
{
  const GError *error = mend_failure_get_error (failure);

  g_test_message ("%s", mend_failure_get_message (failure));
  assert_no_agent_key ("a failure message", mend_failure_get_message (failure));
  assert_no_agent_key ("a failure's API error type", mend_failure_get_api_error_type (failure));
  if (error != NULL)
    assert_no_agent_key ("a failure's GError", error->message);
}

/* One turn that fails, through the whole chat; every output searched. */
static void
run_failing_turn (MendClock  *clock,
                  MendSender *sender)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autofree char *saved = NULL;
  AgentRun run = { NULL, NULL, g_string_new (NULL) };

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  mend_error_policy_set_max_retries (policy, 1);
  run.chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, "sender", sender, NULL);
  g_signal_connect (run.chat, "record", G_CALLBACK (on_record), run.records);
  g_signal_connect (run.chat, "turn-finished", G_CALLBACK (on_agent_turn_finished), &run);

  g_assert_true (mend_chat_submit (run.chat, "Summarize the build logs", NULL, NULL));
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (clock), mend_test_agent_always, sender,
                             turn_finished, &run, NULL, "the turn's end");

  g_assert_cmpint (mend_turn_get_state (run.finished), ==, MEND_TURN_FAILED);
  assert_agent_failure_clean (mend_turn_get_last_failure (run.finished));
  g_assert_cmpuint (run.records->len, >, 0);
  assert_no_agent_key ("a record", run.records->str);
  saved = mend_chat_save_state (run.chat);
  assert_no_agent_key ("saved state", saved);
  {
    g_autofree char *err = mend_agent_dup_stderr (MEND_AGENT (sender));

    assert_no_agent_key ("the agent's stderr", err);
  }
  assert_no_agent_key ("a log line", logged->str);

  mend_chat_close (run.chat);
  g_clear_object (&run.finished);
  g_assert_finalize_object (run.chat);
  g_string_free (run.records, TRUE);
}

/* An agent that says back, on its stderr, every credential it was given. */
static void
test_agent_process_credentials_are_redacted (void)
{
  const char *argv[] = {
    "/bin/sh", "-c",
    "echo \"rejected: $MY_SERVICE_TOKEN, $2, ${3#--secret=}\" >&2; exit 1",
    "sh", "--api-key", K_ARGV, "--secret=" K_ARGV_EQ, NULL
  };
  MendClock *clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  MendAgentProcess *agent = mend_agent_process_new (argv);

  mend_agent_setenv (MEND_AGENT (agent), "MY_SERVICE_TOKEN", K_ENV);
  g_string_truncate (logged, 0);
  run_failing_turn (clock, MEND_SENDER (agent));

  /* The agent did say them: the test seeded what it meant to. */
  {
    g_autofree char *err = mend_agent_dup_stderr (MEND_AGENT (agent));

    g_assert_nonnull (strstr (err, "rejected: [redacted], [redacted], [redacted]"));
  }

  mend_agent_terminate (MEND_AGENT (agent));
  mend_test_finalize_eventually (agent);
  g_assert_finalize_object (clock);
}

#if MEND_HAS_ACP
/* An ACP agent whose errors quote keys: the session it was asked to load,
 * and the prompt, whose error also says back the key in its environment. */
static void
test_acp_agent_errors_are_redacted_in_logs (void)
{
  g_autofree char *script_path = g_build_filename (g_get_home_dir (), "script.json", NULL);
  g_autofree char *log = g_build_filename (g_get_home_dir (), "agent.log", NULL);
  g_autofree char *count = g_build_filename (g_get_home_dir (), "agent.count", NULL);
  const char *argv[] = {
    MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/hostile-acp-agent.py", script_path, "--token", K_ARGV, NULL
  };
  static const char script[] =
    "{\"runs\": [{"
    "  \"initialize\": [{\"answer\": {\"protocolVersion\": 1, \"agentCapabilities\": {\"loadSession\": true}}}],"
    "  \"session/load\": [{\"error\": {\"code\": -32603, \"message\": \"Internal error: key " K_LOAD " has no such session\"}}],"
    "  \"session/prompt\": [[{\"error\": {\"code\": -32603,"
    "     \"message\": \"Internal error: API Error: 401 invalid key " K_PROMPT "\","
    "     \"data\": {\"detail\": \"the request carried " K_DATA " and " K_ENV " and " K_ARGV "\"}}}]]"
    "}]}";
  MendClock *clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  g_autoptr(GError) error = NULL;
  MendAcpAgent *agent;

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (script_path, script, -1, &error));
  g_assert_no_error (error);

  agent = mend_acp_agent_new (argv);
  mend_agent_setenv (MEND_AGENT (agent), "MEND_HOSTILE_ACP_LOG", log);
  mend_agent_setenv (MEND_AGENT (agent), "MEND_HOSTILE_ACP_COUNT", count);
  mend_agent_setenv (MEND_AGENT (agent), "UPSTREAM_AUTH_TOKEN", K_ENV);
  mend_agent_set_cwd (MEND_AGENT (agent), g_get_home_dir ());
  mend_agent_set_session_id (MEND_AGENT (agent), "an-old-session");
  g_string_truncate (logged, 0);
  run_failing_turn (clock, MEND_SENDER (agent));

  /* The errors were logged, and the session load was tried. */
  g_assert_nonnull (strstr (logged->str, "ACP error"));
  g_assert_nonnull (strstr (logged->str, "could not load session"));

  mend_agent_terminate (MEND_AGENT (agent));
  mend_test_finalize_eventually (agent);
  g_assert_finalize_object (clock);
}
#endif
#endif /* MEND_HAS_AGENTS */

int
main (int   argc,
      char *argv[])
{
  g_setenv ("G_MESSAGES_DEBUG", "all", TRUE);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  mend_test_limit_memory ();
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  logged = g_string_new (NULL);
  g_log_set_default_handler (capture_log, NULL);

  g_test_add_func ("/Mend/Secrets/every-echo-shape-is-redacted", test_every_echo_shape_is_redacted);
  g_test_add_func ("/Mend/Secrets/what-is-not-a-key-stays-readable", test_what_is_not_a_key_stays_readable);
  g_test_add_func ("/Mend/Secrets/keys-never-leave-through-any-output", test_keys_never_leave_through_any_output);
  g_test_add_func ("/Mend/Secrets/key-split-over-data-lines-is-redacted", test_key_split_over_data_lines_is_redacted);
  g_test_add_func ("/Mend/Secrets/app-key-outlives-per-request-credentials",
                   test_app_key_outlives_per_request_credentials);
#if MEND_HAS_AGENTS
  g_test_add_func ("/Mend/Secrets/agent-process-credentials-are-redacted",
                   test_agent_process_credentials_are_redacted);
#endif
#if MEND_HAS_ACP
  g_test_add_func ("/Mend/Secrets/acp-agent-errors-are-redacted-in-logs",
                   test_acp_agent_errors_are_redacted_in_logs);
#endif

  return g_test_run ();
}
