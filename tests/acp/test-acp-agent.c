/* test-acp-agent.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAcpAgent against tests/support/fake-acp-agent.py, a scripted ACP agent that
 * also replays the traffic recorded from claude-code-acp in
 * tests/data/claude-code-acp-0.16.2: what the protocol's answers,
 * requests and updates become, quickly and in virtual time.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"

#include "mend-acp-agent-private.h"
#include "mend-acp-framing-private.h"
#include "mend-acp-profile-private.h"

#define WALL_START 1764500000000000

/* The model's answer, before a prompt's end: a prompt that ends with none
 * is an empty response. */
#define SAY_DONE \
  "{\"update\": {\"sessionUpdate\": \"agent_message_chunk\"," \
  " \"content\": {\"type\": \"text\", \"text\": \"Done.\"}}}"

typedef struct
{
  MendClock    *clock;
  MendChat     *chat;
  MendAcpAgent *agent;
  GPtrArray    *finished;       /* MendTurn, owned */
  GPtrArray    *updates;        /* char *, "kind json", owned */
  GPtrArray    *records;        /* char *, owned */
  char         *log;            /* what the agent read */
  guint         held_request;   /* a request the test answers */
} Fixture;

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_update (MendAcpAgent *agent,
           const char   *kind,
           const char   *json,
           Fixture      *f)
{
  g_ptr_array_add (f->updates, g_strdup_printf ("%s %s", kind, json));
}

static void
on_record (GObject    *source,
           const char *json,
           Fixture    *f)
{
  g_ptr_array_add (f->records, g_strdup (json));
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->clock = mend_manual_clock_new (WALL_START);
  f->finished = g_ptr_array_new ();
  f->updates = g_ptr_array_new_with_free_func (g_free);
  f->records = g_ptr_array_new_with_free_func (g_free);
  f->log = g_build_filename (g_get_home_dir (), "agent.log", NULL);
}

static void
start_chat (Fixture    *f,
            const char *script)
{
  g_autofree char *path = g_build_filename (g_get_home_dir (), "script.json", NULL);
  g_autoptr(GError) error = NULL;
  const char *argv[] = { MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/fake-acp-agent.py", path, NULL };

  g_assert_true (g_file_set_contents (path, script, -1, &error));
  g_assert_no_error (error);

  f->agent = mend_acp_agent_new (argv);
  mend_agent_setenv (MEND_AGENT (f->agent), "MEND_FAKE_ACP_LOG", f->log);
  mend_agent_set_cwd (MEND_AGENT (f->agent), g_get_home_dir ());
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update), f);
  f->chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-acp", "clock", f->clock, "sender", f->agent, NULL);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect (f->chat, "record", G_CALLBACK (on_record), f);
}


static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      mend_agent_terminate (MEND_AGENT (f->agent));
      g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
      g_signal_handlers_disconnect_by_data (f->chat, f);
      g_signal_handlers_disconnect_by_data (f->agent, f);
      g_assert_finalize_object (f->chat);
    }

  while (g_main_context_iteration (NULL, FALSE))
    ;

  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  if (f->agent != NULL)
    mend_test_finalize_eventually (f->agent);
  g_ptr_array_unref (f->updates);
  g_ptr_array_unref (f->records);
  g_free (f->log);
  g_assert_finalize_object (f->clock);
}

typedef gboolean (*Predicate) (Fixture *f, gconstpointer data);

/* Real time for the agent; libmend's waits fire in virtual time when
 * nothing else is left to do. */
static void
run_until (Fixture       *f,
           Predicate      done,
           gconstpointer  data)
{
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), mend_test_agent_always, MEND_SENDER (f->agent),
                             (MendTestAgentCheck) done, f, data, "the agent");
}

static gboolean
n_finished_is (Fixture       *f,
               gconstpointer  data)
{
  return f->finished->len >= GPOINTER_TO_UINT (data);
}

static MendTurn *
finished (Fixture *f,
          guint    i)
{
  g_assert_cmpuint (i, <, f->finished->len);
  return g_ptr_array_index (f->finished, i);
}

static void
submit (Fixture    *f,
        const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (f->chat, text, NULL, &error));
  g_assert_no_error (error);
}

static guint
count_updates (Fixture    *f,
               const char *kind,
               const char *containing)
{
  g_autofree char *prefix = g_strconcat (kind, " ", NULL);
  guint n = 0;

  for (guint i = 0; i < f->updates->len; i++)
    {
      const char *u = g_ptr_array_index (f->updates, i);

      n += g_str_has_prefix (u, prefix) && (containing == NULL || strstr (u, containing) != NULL);
    }

  return n;
}

static guint
count_records (Fixture    *f,
               const char *outcome)
{
  g_autofree char *o = g_strdup_printf ("\"outcome\":\"%s\"", outcome);
  guint n = 0;

  for (guint i = 0; i < f->records->len; i++)
    {
      const char *record = g_ptr_array_index (f->records, i);

      n += strstr (record, "\"kind\":\"subagent_retry\"") != NULL && strstr (record, o) != NULL;
    }

  return n;
}

static gboolean
log_has (Fixture    *f,
         const char *text)
{
  g_autofree char *contents = NULL;

  return g_file_get_contents (f->log, &contents, NULL, NULL) && strstr (contents, text) != NULL;
}

/* Framing */

static char *
convert_in_pieces (gboolean    to_frames,
                   const char *input,
                   gsize       piece)
{
  g_autoptr(GInputStream) base = NULL;
  g_autoptr(GOutputStream) sink = g_memory_output_stream_new_resizable ();
  g_autoptr(GIOStream) stream = NULL;
  g_autoptr(GError) error = NULL;
  gsize length = strlen (input);

  if (to_frames)
    {
      g_autoptr(GOutputStream) unused = g_memory_output_stream_new_resizable ();
      char buffer[7];
      gssize n;

      base = g_memory_input_stream_new ();
      for (gsize i = 0; i < length; i += piece)
        g_memory_input_stream_add_data (G_MEMORY_INPUT_STREAM (base),
                                        g_strndup (input + i, MIN (piece, length - i)), -1, g_free);
      stream = mend_acp_framing_wrap (base, unused);
      while ((n = g_input_stream_read (g_io_stream_get_input_stream (stream), buffer, sizeof buffer, NULL, &error)) > 0)
        g_output_stream_write_all (sink, buffer, (gsize) n, NULL, NULL, NULL);
      g_assert_no_error (error);
    }
  else
    {
      base = g_memory_input_stream_new ();
      stream = mend_acp_framing_wrap (base, sink);
      for (gsize i = 0; i < length; i += piece)
        {
          g_output_stream_write_all (g_io_stream_get_output_stream (stream), input + i,
                                     MIN (piece, length - i), NULL, NULL, &error);
          g_assert_no_error (error);
        }
      g_output_stream_flush (g_io_stream_get_output_stream (stream), NULL, &error);
      g_assert_no_error (error);
    }

  g_output_stream_write_all (sink, "", 1, NULL, NULL, NULL);
  g_output_stream_close (sink, NULL, NULL);
  return g_memory_output_stream_steal_data (G_MEMORY_OUTPUT_STREAM (sink));
}

static void
test_framing (void)
{
  /* ACP's lines, cut anywhere, blank lines skipped, a last line without
   * its end kept. */
  const char *lines = "{\"a\":1}\n\n{\"b\":\"x\\ny\"}\r\n{\"c\":[]}";
  const char *frames = "Content-Length: 7\r\n\r\n{\"a\":1}"
                       "Content-Length: 12\r\n\r\n{\"b\":\"x\\ny\"}"
                       "Content-Length: 8\r\n\r\n{\"c\":[]}";
  const char *written = "Content-Length: 7\r\n\r\n{\"a\":1}"
                        "Content-Length: 12\r\nContent-Type: application/json\r\n\r\n{\"b\":\"x\\ny\"}";

  for (gsize piece = 1; piece <= 64; piece *= 4)
    {
      g_autofree char *framed = convert_in_pieces (TRUE, lines, piece);
      g_autofree char *unframed = convert_in_pieces (FALSE, written, piece);

      g_assert_cmpstr (framed, ==, frames);
      g_assert_cmpstr (unframed, ==, "{\"a\":1}\n{\"b\":\"x\\ny\"}\n");
    }
}

/* Recorded answers of claude-code-acp 0.16.2 */

static void
test_recorded_529_is_transient (Fixture       *f,
                                gconstpointer  data)
{
  MendFailure *failure;

  start_chat (f, "{\"prompts\": [[{\"replay\": \"529-error\"}], [{\"replay\": \"success\"}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 2);
  failure = mend_turn_get_last_failure (finished (f, 0));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (mend_failure_get_status (failure), ==, 529);
  g_assert_cmpstr (mend_failure_get_api_error_type (failure), ==, "overloaded_error");
  g_assert_true (mend_turn_get_output_seen (finished (f, 0)));
  g_assert_cmpuint (count_updates (f, "agent_message_chunk", "Hello."), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

static void
test_recorded_401_is_permanent (Fixture       *f,
                                gconstpointer  data)
{
  MendFailure *failure;

  start_chat (f, "{\"prompts\": [[{\"replay\": \"401-error\"}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 1);
  failure = mend_turn_get_last_failure (finished (f, 0));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_AUTH);
}

/* A JSON-RPC error's data is read with its message. */
static void
test_error_data_is_classified (Fixture       *f,
                               gconstpointer  data)
{
  MendFailure *failure;

  start_chat (f,
    "{\"prompts\": [[{\"error\": {\"code\": -32603, \"message\": \"Internal error\","
    "                 \"data\": {\"details\": \"429 rate_limit_error: too many requests\"}}}],"
    "               [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  failure = mend_turn_get_last_failure (finished (f, 0));
  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "too many requests"));
}

/* What adapters put in a prompt's JSON-RPC error, as REAL-AGENTS.md and
 * the recordings show: the Gemini CLI's code is the HTTP status and its
 * message the provider's; codex-acp's message is JSON-RPC's bare
 * "Internal error" with the details in data. Each fails the first
 * attempt; a transient one is retried and the second answers. */
typedef struct
{
  const char     *name;
  const char     *error;        /* the prompt's JSON-RPC error object */
  MendReason      reason;
  MendFailureKind kind;
  guint           status;
  gint64          retry_after_ms;
  const char     *words;        /* in the failure's message */
} RpcErrorCase;

static const RpcErrorCase rpc_error_cases[] = {
  { "gemini-503",
    "{\"code\": 503, \"message\": \"This model is currently experiencing high demand. Spikes in demand are "
    "usually temporary. Please try again later.\"}",
    MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT, 503, -1, "high demand" },
  { "gemini-429-per-minute",
    "{\"code\": 429, \"message\": \"You exceeded your current quota, please check your plan and billing details. "
    "For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\\n"
    "Suggested retry after 2s.\"}",
    MEND_REASON_RATE_LIMIT, MEND_FAILURE_TRANSIENT, 429, 2000, "exceeded your current quota" },
  { "gemini-429-daily",
    "{\"code\": 429, \"message\": \"You have exhausted your daily quota on this model.\"}",
    MEND_REASON_USAGE_LIMIT, MEND_FAILURE_LIMIT, 429, -1, "daily quota" },
  { "gemini-400-body",
    "{\"code\": 400, \"message\": \"{\\\"error\\\": {\\\"code\\\": 400, \\\"message\\\": \\\"API key not valid. "
    "Please pass a valid API key.\\\", \\\"status\\\": \\\"INVALID_ARGUMENT\\\"}}\"}",
    MEND_REASON_AUTH, MEND_FAILURE_PERMANENT, 400, -1, "API key not valid" },
  { "gemini-500-terminated",
    "{\"code\": 500, \"message\": \"terminated\"}",
    MEND_REASON_SERVER, MEND_FAILURE_TRANSIENT, 500, -1, "terminated" },
  { "codex-400-in-data",
    "{\"code\": -32603, \"message\": \"Internal error\", \"data\": {\"message\": \"unexpected status 400 Bad Request: "
    "{\\\"error\\\": {\\\"message\\\": \\\"Invalid value: 'input_text'.\\\", \\\"type\\\": \\\"invalid_request_error\\\"}}\"}}",
    MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT, 0, -1, "invalid_request_error" },
  /* codex-acp's words for a response.failed insufficient_quota: billing,
   * whatever codex_error_info calls it. */
  { "codex-quota-in-data",
    "{\"code\": -32603, \"message\": \"Internal error\", \"data\": {\"message\": \"Quota exceeded. Check your plan "
    "and billing details.\", \"codex_error_info\": \"usage_limit_exceeded\"}}",
    MEND_REASON_BILLING, MEND_FAILURE_LIMIT, 0, -1, "Quota exceeded" },
  { "codex-503-in-data",
    "{\"code\": -32603, \"message\": \"Internal error\", \"data\": {\"message\": \"unexpected status 503 Service "
    "Unavailable: upstream connect error\", \"codex_error_info\": {\"http_connection_failed\": {\"http_status_code\": 503}}}}",
    MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT, 0, -1, "unexpected status 503" },
  { "claude-internal-error-prefix",
    "{\"code\": -32603, \"message\": \"Internal error: API Error: 529 {\\\"type\\\":\\\"error\\\",\\\"error\\\":"
    "{\\\"type\\\":\\\"overloaded_error\\\",\\\"message\\\":\\\"Overloaded\\\"}}\"}",
    MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT, 0, -1, "API Error: 529" },
};

static void
test_rpc_error_is_read_where_the_agent_puts_it (Fixture       *f,
                                                gconstpointer  data)
{
  const RpcErrorCase *c = data;
  g_autofree char *script =
    g_strdup_printf ("{\"prompts\": [[{\"error\": %s}],"
                     " [{\"update\": {\"sessionUpdate\": \"agent_message_chunk\","
                     "                \"content\": {\"type\": \"text\", \"text\": \"Done.\"}}},"
                     "  {\"result\": {\"stopReason\": \"end_turn\"}}]]}", c->error);
  MendFailure *failure;
  gboolean transient = c->kind == MEND_FAILURE_TRANSIENT;

  start_chat (f, script);
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, transient ? MEND_TURN_SUCCEEDED : MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, transient ? 2 : 1);
  failure = mend_turn_get_last_failure (finished (f, 0));
  g_assert_nonnull (failure);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, c->reason);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, c->kind);
  if (c->status != 0)
    g_assert_cmpuint (mend_failure_get_status (failure), ==, c->status);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, c->retry_after_ms);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), c->words));
  g_assert_null (strstr (mend_failure_get_message (failure), "Internal error"));
}

/* A prompt that ends with nothing from the model (the Gemini CLI after
 * its own retries of an empty answer; claude-agent-acp 0.23.1 after a
 * failed prompt) was not answered: an empty response, retried. */
static void
test_end_turn_without_output_is_empty (Fixture       *f,
                                       gconstpointer  data)
{
  MendFailure *failure;

  start_chat (f, "{\"prompts\": [[{\"update\": {\"sessionUpdate\": \"agent_message_chunk\","
                 "                   \"content\": {\"type\": \"text\", \"text\": \"\"}}},"
                 "                 {\"result\": {\"stopReason\": \"end_turn\"}}],"
                 "                [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Fix the build");
  submit (f, "Then the changelog");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 2);
  failure = mend_turn_get_last_failure (finished (f, 0));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_EMPTY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpstr (mend_turn_get_prompt (finished (f, 0)), ==, "Fix the build");
}

/* claude-agent-acp 0.23.1 ends the prompt after a failed one at once,
 * with nothing (tests/data/claude-agent-acp-0.23.1/prompts-after-503.jsonl),
 * and its answers come a prompt late from then on: the run is ended, and
 * the retry goes to a fresh one that loads the session. */
static void
test_empty_end_after_a_failure_restarts (Fixture       *f,
                                         gconstpointer  data)
{
  start_chat (f, "{\"loadSession\": true,"
                 " \"prompts\": [[{\"error\": {\"code\": -32603, \"message\": \"Internal error: API Error: 503 "
                 "no non-exhausted claude accounts available\"}}],"
                 "              [{\"result\": {\"stopReason\": \"end_turn\", \"usage\": {\"totalTokens\": 0}}}]],"
                 " \"promptsAfterLoad\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 3);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (finished (f, 0))), ==, MEND_REASON_EMPTY);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (f->agent), ==, 1);
}

static void
test_refusal_is_not_retried (Fixture       *f,
                             gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[{\"result\": {\"stopReason\": \"refusal\"}}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 1);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (finished (f, 0))), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpstr (mend_acp_agent_get_stop_reason (f->agent), ==, "refusal");
}

static void
test_max_tokens_succeeds (Fixture       *f,
                          gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"max_tokens\"}}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 1);
}

/* A session that does not open fails the attempt with what the agent
 * said, and the next attempt starts the agent again. */
static void
test_session_error_restarts_the_agent (Fixture       *f,
                                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  start_chat (f, "{\"newError\": {\"code\": -32000, \"message\": \"Authentication required\"}}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (finished (f, 0))), ==, MEND_REASON_AUTH);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 1);

  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (finished (f, 1)), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

/* An agent that no longer reads: the prompt's write fails (a pipe would
 * raise SIGPIPE and end this process), and the attempt fails as a dropped
 * connection. */
static void
test_agent_that_stops_reading (Fixture       *f,
                               gconstpointer  data)
{
  start_chat (f, "{\"closeStdin\": true}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (finished (f, 0))), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), >=, 2);
}

/* Requests of the agent */

#define PERMISSION_REQUEST \
  "{\"request\": \"session/request_permission\", \"params\": {\"sessionId\": \"s\"," \
  " \"toolCall\": {\"toolCallId\": \"t1\", \"title\": \"rm -rf build\"}," \
  " \"options\": [{\"optionId\": \"yes\", \"name\": \"Allow\", \"kind\": \"allow_once\"}," \
  "              {\"optionId\": \"no\", \"name\": \"Reject\", \"kind\": \"reject_once\"}]}}"

static void
test_permission_is_denied_by_default (Fixture       *f,
                                      gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[" PERMISSION_REQUEST ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Clean the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpuint (count_updates (f, "agent_message_chunk",
                                   "answer: {\\\"outcome\\\": {\\\"optionId\\\": \\\"no\\\", \\\"outcome\\\": \\\"selected\\\"}}"), ==, 1);
}

static void
test_file_read_is_refused_by_default (Fixture       *f,
                                      gconstpointer  data)
{
  start_chat (f,
    "{\"prompts\": [[{\"request\": \"fs/read_text_file\", \"params\": {\"sessionId\": \"s\", \"path\": \"/etc/passwd\"}},"
    "                {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Read the file");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpuint (count_updates (f, "agent_message_chunk", "error: -32603"), ==, 1);
}

static gboolean
on_request_note (MendAcpAgent *agent,
                 const char   *method,
                 const char   *params,
                 guint         request,
                 Fixture      *f)
{
  g_assert_cmpstr (method, ==, "session/request_permission");
  g_assert_nonnull (strstr (params, "\"rm -rf build\""));
  f->held_request = request;
  return FALSE;
}

/* Recorded: claude-code-acp asks before a Bash call; unhandled, the
 * request gets its "reject" option, and the adapter fails the tool call. */
static void
test_recorded_permission_is_rejected (Fixture       *f,
                                      gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[{\"replay\": \"permission\"}]]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_note), f);
  submit (f, "Clean the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpuint (f->held_request, !=, 0);
  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, NULL));
  g_assert_cmpuint (count_updates (f, "agent_message_chunk",
                                   "answer: {\\\"outcome\\\": {\\\"optionId\\\": \\\"reject\\\", \\\"outcome\\\": \\\"selected\\\"}}"), ==, 1);
  g_assert_cmpuint (count_updates (f, "tool_call_update", "User refused permission"), ==, 1);
  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
}

static gboolean
on_request_hold (MendAcpAgent *agent,
                 const char   *method,
                 const char   *params,
                 guint         request,
                 Fixture      *f)
{
  g_assert_cmpstr (method, ==, "session/request_permission");
  g_assert_nonnull (strstr (params, "rm -rf build"));
  f->held_request = request;
  return TRUE;
}

static gboolean
request_held (Fixture       *f,
              gconstpointer  data)
{
  return f->held_request != 0;
}

/* The app answers later, as a dialog would. */
static void
test_app_answers_a_request (Fixture       *f,
                            gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[" PERMISSION_REQUEST ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_hold), f);
  submit (f, "Clean the build");
  run_until (f, request_held, NULL);

  g_assert_true (mend_acp_agent_respond (f->agent, f->held_request,
                                         "{\"outcome\": {\"outcome\": \"selected\", \"optionId\": \"yes\"}}"));
  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, NULL));
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpuint (count_updates (f, "agent_message_chunk", "\\\"optionId\\\": \\\"yes\\\""), ==, 1);
  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
}

/* Stop while the app has not answered a permission request: the request
 * is answered as cancelled, as the protocol asks, with session/cancel. */
static void
test_stop_cancels_a_held_request (Fixture       *f,
                                  gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[" PERMISSION_REQUEST ", {\"wait_cancel\": true}],"
                 " [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_hold), f);
  submit (f, "Clean the build");
  run_until (f, request_held, NULL);

  mend_chat_stop (f->chat);
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_STOPPED);
  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, NULL));

  /* The next turn waits for the cancelled prompt's answer. */
  submit (f, "Build it");
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (count_updates (f, "agent_message_chunk", "answer: {\\\"outcome\\\": {\\\"outcome\\\": \\\"cancelled\\\"}}"), ==, 1);
  g_assert_cmpstr (mend_acp_agent_get_stop_reason (f->agent), ==, "end_turn");
}

/* Profiles */

static MendTurn *
play_one (Fixture    *f,
          const char *prompt)
{
  guint n = f->finished->len + 1;

  submit (f, prompt);
  run_until (f, n_finished_is, GUINT_TO_POINTER (n));
  return finished (f, n - 1);
}

/* "Fix the build" with a follow-up queued behind it: a turn that fails
 * leaves "Continue the current turn" at the queue's head. */
static MendTurn *
play_with_follow_up (Fixture *f)
{
  submit (f, "Fix the build");
  submit (f, "Then update the changelog");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  return finished (f, 0);
}

/* The profile comes from initialize's agentInfo.name; an unknown agent
 * gets the default; an app's profile is kept. */
static void
test_profile_from_agent_info (Fixture       *f,
                              gconstpointer  data)
{
  MendAcpProfile *profile;

  start_chat (f, "{\"agentInfo\": {\"name\": \"gemini-cli\", \"version\": \"0.61.0\"},"
                 " \"prompts\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  g_assert_null (mend_acp_agent_get_profile (f->agent));
  play_one (f, "Fix the build");
  profile = mend_acp_agent_get_profile (f->agent);
  g_assert_nonnull (profile);
  g_assert_cmpstr (mend_acp_profile_get_name (profile), ==, "gemini-cli");
  g_assert_false (mend_acp_profile_get_keeps_failed_prompt (profile));
  g_assert_true (mend_acp_profile_get_restreams_partial (profile));
}

static void
test_profile_default_and_the_apps (Fixture       *f,
                                   gconstpointer  data)
{
  g_autoptr(MendAcpProfile) mine = mend_acp_profile_new ("mine");
  g_autoptr(MendAcpProfile) unknown = mend_acp_profile_lookup ("an-agent-nobody-knows");
  g_autoptr(MendAcpProfile) codex = mend_acp_profile_lookup ("codex-acp");

  g_assert_cmpstr (mend_acp_profile_get_name (unknown), ==, "default");
  g_assert_true (mend_acp_profile_get_keeps_failed_prompt (unknown));
  g_assert_false (mend_acp_profile_get_restreams_partial (unknown));
  g_assert_null (mend_acp_profile_get_notice_prefixes (unknown));
  g_assert_true (mend_acp_profile_is_notice (codex, "Model metadata for `gpt-9` not found. Defaulting to fallback metadata"));
  g_assert_false (mend_acp_profile_is_notice (codex, "Build fixed."));

  start_chat (f, "{\"agentInfo\": {\"name\": \"gemini-cli\"},"
                 " \"prompts\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  mend_acp_agent_set_profile (f->agent, mine);
  play_one (f, "Fix the build");
  g_assert_true (mend_acp_agent_get_profile (f->agent) == mine);
  mend_acp_agent_set_profile (f->agent, NULL);
  g_assert_finalize_object (g_steal_pointer (&mine));
}

/* Codex writes a warning as a message chunk before any request
 * (tests/data/codex-acp-0.16.0/unknown-model-warning.jsonl): not output,
 * so a 503 after it is retried, not partial. */
static void
test_notice_is_not_output (Fixture       *f,
                           gconstpointer  data)
{
  MendTurn *turn;

  start_chat (f, "{\"agentInfo\": {\"name\": \"codex-acp\"},"
                 " \"prompts\": [[{\"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\","
                 "                \"text\": \"Model metadata for `stub-model-9` not found. Defaulting to fallback metadata; "
                 "this can degrade performance and cause issues.\"}}},"
                 "               {\"error\": {\"code\": -32603, \"message\": \"Internal error\","
                 "                \"data\": {\"message\": \"unexpected status 503 Service Unavailable\"}}}],"
                 "              [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  turn = play_one (f, "Fix the build");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_false (mend_failure_get_partial (mend_turn_get_last_failure (turn)));
}

/* A stream cut after text: retried for an agent that answers each
 * attempt from the start (Gemini CLI), partial for one that is not known
 * to. */
static void
test_restreamed_text_is_retried (Fixture       *f,
                                 gconstpointer  data)
{
  const char *name = data;
  g_autofree char *script =
    g_strdup_printf ("{\"agentInfo\": {\"name\": \"%s\"},"
                     " \"prompts\": [[{\"update\": {\"sessionUpdate\": \"agent_message_chunk\","
                     "                 \"content\": {\"type\": \"text\", \"text\": \"The build\"}}},"
                     "                {\"error\": {\"code\": 500, \"message\": \"terminated\"}}],"
                     "               [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}", name);
  gboolean restreams = g_str_equal (name, "gemini-cli");
  MendTurn *turn;

  start_chat (f, script);
  turn = play_one (f, "Fix the build");

  g_assert_cmpint (mend_turn_get_state (turn), ==, restreams ? MEND_TURN_SUCCEEDED : MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, restreams ? 2 : 1);
  g_assert_cmpint (mend_failure_get_partial (mend_turn_get_last_failure (turn)), ==, !restreams);
}

static gboolean
log_has_prompt (Fixture    *f,
                guint       n,
                const char *text)
{
  return mend_test_file_nth_line_has (f->log, "\"session/prompt\"", n, text);
}

/* The Gemini CLI drops a failed prompt from its history: the chat's
 * "Continue the current turn" sends the failed prompt instead, once. An
 * agent that keeps it gets the Continue prompt. */
static void
test_continue_sends_the_dropped_prompt (Fixture       *f,
                                        gconstpointer  data)
{
  const char *name = data;
  g_autofree char *script =
    g_strdup_printf ("{\"agentInfo\": {\"name\": \"%s\"},"
                     " \"prompts\": [[{\"error\": {\"code\": 400, \"message\": \"Request contains an invalid argument.\"}}],"
                     "               [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}", name);
  gboolean drops = g_str_equal (name, "gemini-cli");
  MendTurn *turn;

  start_chat (f, script);
  turn = play_with_follow_up (f);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);

  g_assert_true (mend_chat_send_next (f->chat));
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  turn = finished (f, 1);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, mend_chat_get_continue_prompt (f->chat));
  g_assert_true (log_has_prompt (f, 1, "Fix the build"));
  g_assert_true (log_has_prompt (f, 2, drops ? "Fix the build" : mend_chat_get_continue_prompt (f->chat)));
  g_assert_false (log_has_prompt (f, 2, drops ? mend_chat_get_continue_prompt (f->chat) : "Fix the build"));
}

/* The user's Retry after a give-up, with nothing queued: one turn that
 * the agent keeps in its history is asked to continue; one that dropped
 * it (the Gemini CLI) gets the prompt again. Either way the model sees
 * the user's words once, and the chat's text stream carries the
 * agent_message_chunk text. */
static void
test_retry_sends_the_prompt_once (Fixture       *f,
                                  gconstpointer  data)
{
  const char *name = data;
  g_autofree char *script =
    g_strdup_printf ("{\"agentInfo\": {\"name\": \"%s\"},"
                     " \"prompts\": [[{\"error\": {\"code\": 400, \"message\": \"Request contains an invalid argument.\"}}],"
                     "               [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}", name);
  gboolean drops = g_str_equal (name, "gemini-cli");
  g_autoptr(GString) texts = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  start_chat (f, script);
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  turn = finished (f, 0);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 0);
  /* Nothing queued: send_next has nothing to send, Retry has. */
  g_assert_false (mend_chat_send_next (f->chat));
  g_assert_true (mend_chat_get_can_retry (f->chat));
  g_assert_cmpint (mend_failure_get_reason (mend_chat_get_last_failure (f->chat)), ==, MEND_REASON_BAD_REQUEST);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "The service could not accept the request");

  g_assert_true (mend_chat_retry (f->chat, &error));
  g_assert_no_error (error);
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  turn = finished (f, 1);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Fix the build");
  g_assert_cmpstr (mend_turn_get_retry_of (turn), ==, mend_turn_get_id (finished (f, 0)));
  g_assert_true (log_has_prompt (f, 1, "Fix the build"));
  g_assert_true (log_has_prompt (f, 2, drops ? "Fix the build" : mend_chat_get_continue_prompt (f->chat)));
  g_assert_false (log_has_prompt (f, 2, drops ? mend_chat_get_continue_prompt (f->chat) : "Fix the build"));
  g_assert_cmpstr (texts->str, ==, "Done.");
  g_assert_null (mend_chat_get_last_failure (f->chat));
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

static void
on_status_noted (MendChat   *chat,
                 GParamSpec *pspec,
                 GPtrArray  *statuses)
{
  g_ptr_array_add (statuses, g_strdup (mend_chat_get_status_text (chat)));
}

/* An ACP agent drops Retry-After: a per-minute rate limit comes as the
 * text of a JSON-RPC error. The default schedule of a rate limit rides it
 * out (5 s first), and the chat's status says so, once a second. */
static void
test_hintless_rate_limit_waits_the_rate_limit_schedule (Fixture       *f,
                                                        gconstpointer  data)
{
  g_autoptr(GPtrArray) statuses = g_ptr_array_new_with_free_func (g_free);
  MendRetryWait *wait;
  MendTurn *turn;

  start_chat (f, "{\"prompts\": [[{\"error\": {\"code\": -32603, \"message\": \"Internal error: API Error: 429 "
                 "{\\\"type\\\":\\\"error\\\",\\\"error\\\":{\\\"type\\\":\\\"rate_limit_error\\\",\\\"message\\\":"
                 "\\\"Number of request tokens has exceeded your per-minute rate limit\\\"}}\"}}],"
                 "               [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_noted), statuses);
  submit (f, "Fix the build");
  while (mend_chat_get_wait (f->chat) == NULL)
    g_main_context_iteration (NULL, TRUE);
  wait = mend_chat_get_wait (f->chat);
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_RATE_LIMIT);
  g_assert_false (mend_retry_wait_get_server_hint (wait));
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (wait), >=, 5000);
  g_assert_cmpuint (statuses->len, ==, 1);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (statuses, 0),
                                   "The service is limiting the rate of requests — retrying in 5 s (retry 1 of 4)"));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1000);
  g_assert_true (g_str_has_prefix (mend_chat_get_status_text (f->chat),
                                   "The service is limiting the rate of requests — retrying in 4 s"));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 5000);
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  turn = finished (f, 0);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
  g_signal_handlers_disconnect_by_data (f->chat, statuses);
}

/* session/load fails (the Gemini CLI after a crash: "No previous sessions
 * found for this project."): the turn fails, never retried, with
 * MEND_RETRY_ERROR_SESSION_LOST; the next prompt goes to a new session. */
static void
test_lost_session_is_told (Fixture       *f,
                           gconstpointer  data)
{
  MendTurn *turn;
  const GError *error;

  start_chat (f, "{\"loadSession\": true,"
                 " \"loadError\": {\"code\": -32603, \"message\": \"Internal error\","
                 "               \"data\": {\"details\": \"No previous sessions found for this project.\"}},"
                 " \"prompts\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  mend_agent_set_session_id (MEND_AGENT (f->agent), "a-session-the-agent-lost");
  turn = play_with_follow_up (f);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  error = mend_failure_get_error (mend_turn_get_last_failure (turn));
  g_assert_error ((GError *) error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_SESSION_LOST);
  g_assert_nonnull (strstr (mend_failure_get_message (mend_turn_get_last_failure (turn)), "No previous sessions found"));
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_PERMANENT);

  g_assert_true (mend_chat_send_next (f->chat));
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), !=, "a-session-the-agent-lost");
}

/* The idle timeout */

#define TEST_GRACE_MS 300
#define TEST_IDLE_MS 300

static gboolean
flag_is_set (Fixture       *f,
             gconstpointer  data)
{
  return *(const gboolean *) data;
}

static gboolean
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* An agent that never answers the prompt: after the idle timeout (real
 * time, as the agent's) the attempt is cancelled as a Stop cancels it and
 * fails as a transient timeout; the turn tries again and the agent,
 * started again after the cancel's grace period, answers. */
static void
test_silent_agent_times_out (Fixture       *f,
                             gconstpointer  data)
{
  MendFailure *failure;

  start_chat (f, "{\"loadSession\": true, \"prompts\": [[]],"
                 " \"promptsAfterLoad\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  g_assert_cmpuint (mend_agent_get_idle_timeout_ms (MEND_AGENT (f->agent)), ==, MEND_AGENT_IDLE_TIMEOUT_MS);
  /* Long enough for the agent started again to load and answer, even
   * under the sanitizers: a restart counts against the next attempt's. */
  mend_agent_set_idle_timeout_ms (MEND_AGENT (f->agent), 1500);
  mend_acp_agent_set_cancel_grace_ms (f->agent, TEST_GRACE_MS);
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 2);
  failure = mend_turn_get_last_failure (finished (f, 0));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TIMEOUT);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "said nothing for 2 s"));
  g_assert_cmpuint (mend_acp_agent_count_cancels (f->agent), ==, 1);
  g_assert_true (log_has (f, "session/cancel"));
}

/* A permission request the app takes its time over is not silence: the
 * agent waits on the app. */
static void
test_held_request_is_not_idle (Fixture       *f,
                               gconstpointer  data)
{
  gboolean thought = FALSE;

  start_chat (f, "{\"prompts\": [[" PERMISSION_REQUEST ", " SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  mend_agent_set_idle_timeout_ms (MEND_AGENT (f->agent), TEST_IDLE_MS);
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_hold), f);
  submit (f, "Clean the build");
  run_until (f, request_held, NULL);

  /* The user thinks for three idle timeouts. */
  g_timeout_add (3 * TEST_IDLE_MS, set_flag, &thought);
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), NULL, MEND_SENDER (f->agent),
                             (MendTestAgentCheck) flag_is_set, f, &thought, "the user");
  g_assert_cmpuint (f->finished->len, ==, 0);
  g_assert_true (mend_acp_agent_respond (f->agent, f->held_request,
                                         "{\"outcome\": {\"outcome\": \"selected\", \"optionId\": \"yes\"}}"));
  /* The agent answers in real time; virtual time stands still. */
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), NULL, MEND_SENDER (f->agent),
                             (MendTestAgentCheck) n_finished_is, f, GUINT_TO_POINTER (1), "the agent");

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 1);
  g_assert_cmpuint (mend_acp_agent_count_cancels (f->agent), ==, 0);
}

/* Stop and restarts */

static gboolean
stop_reason_is (Fixture       *f,
                gconstpointer  data)
{
  return g_strcmp0 (mend_acp_agent_get_stop_reason (f->agent), data) == 0;
}

static gboolean
prompt_sent (Fixture       *f,
             gconstpointer  data)
{
  return log_has (f, "session/prompt");
}

static void
test_stop_sends_cancel (Fixture       *f,
                        gconstpointer  data)
{
  start_chat (f, "{\"prompts\": [[{\"wait_cancel\": true}], [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Fix the build");
  submit (f, "Post the release notes");
  run_until (f, prompt_sent, NULL);

  mend_chat_stop (f->chat);
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_STOPPED);
  g_assert_cmpuint (mend_acp_agent_count_cancels (f->agent), ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 1);

  /* The next prompt goes after the cancelled one's answer. */
  mend_chat_send_next (f->chat);
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_true (log_has (f, "\"method\": \"session/cancel\"") || log_has (f, "\"method\":\"session/cancel\""));
  g_assert_true (stop_reason_is (f, "end_turn"));
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

/* The monotonic time of the agent's second start. */
static void
on_n_starts (MendAcpAgent *agent,
             GParamSpec   *pspec,
             gint64       *restarted_at)
{
  if (mend_agent_get_n_starts (MEND_AGENT (agent)) == 2)
    *restarted_at = g_get_monotonic_time ();
}


/* Stop sends session/cancel, but the agent never answers the cancelled
 * prompt: the next prompt waits for it for the grace period (real time,
 * as the agent runs), no longer; then the agent is ended and started
 * again, loads the session, and takes the next prompt in the same
 * attempt. */
static void
test_unanswered_cancel_restarts_after_grace (Fixture       *f,
                                             gconstpointer  data)
{
  g_autofree char *session = NULL;
  gint64 stopped_at;
  gint64 restarted_at = 0;

  start_chat (f, "{\"loadSession\": true, \"prompts\": [[]],"
                 " \"promptsAfterLoad\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  g_assert_cmpuint (mend_acp_agent_get_cancel_grace_ms (f->agent), ==, MEND_ACP_AGENT_CANCEL_GRACE_MS);
  mend_acp_agent_set_cancel_grace_ms (f->agent, TEST_GRACE_MS);
  g_signal_connect (f->agent, "notify::n-starts", G_CALLBACK (on_n_starts), &restarted_at);
  submit (f, "Fix the build");
  submit (f, "Post the release notes");
  run_until (f, prompt_sent, NULL);
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));

  stopped_at = g_get_monotonic_time ();
  mend_chat_stop (f->chat);
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_STOPPED);
  g_assert_cmpuint (mend_acp_agent_count_cancels (f->agent), ==, 1);

  mend_chat_send_next (f->chat);
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 1)), ==, 1);
  g_assert_true (log_has (f, "session/cancel"));
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (f->agent), ==, 1);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);
  /* Not before the grace period was over. */
  g_assert_cmpint (restarted_at - stopped_at, >=, TEST_GRACE_MS * 1000);
}

static void
test_exit_mid_turn_loads_the_session (Fixture       *f,
                                      gconstpointer  data)
{
  g_autofree char *session = NULL;

  start_chat (f,
    "{\"loadSession\": true, \"prompts\": [[" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}],"
    "  [{\"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\", \"text\": \"Wor\"}}},"
    "   {\"exit\": 3}],"
    "  [" SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Say hello");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));

  /* The fake starts over after a restart: its first prompt succeeds. */
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));

  g_assert_cmpint (mend_turn_get_state (finished (f, 1)), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (finished (f, 1))), ==, MEND_REASON_TRANSPORT);
  /* Output was seen before the agent died: not replayed (retry-partial). */
  g_assert_true (mend_failure_get_partial (mend_turn_get_last_failure (finished (f, 1))));
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 1)), ==, 1);

  mend_chat_send_next (f->chat);
  submit (f, "Fix the build again");
  run_until (f, n_finished_is, GUINT_TO_POINTER (3));
  g_assert_cmpint (mend_turn_get_state (finished (f, 2)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (f->agent), ==, 1);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);
  /* What the load replays is not emitted. */
  g_assert_cmpuint (count_updates (f, "user_message_chunk", NULL), ==, 0);
}

/* An agent that answers and exits at once: its answer is read before
 * its exit is taken for the end of the run. */
static void
test_answer_before_exit_is_read (Fixture       *f,
                                 gconstpointer  data)
{
  start_chat (f,
    "{\"prompts\": [[{\"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\", \"text\": \"Done.\"}}},"
    "               {\"result\": {\"stopReason\": \"end_turn\"}}, {\"exit\": 0}]]}");
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (finished (f, 0)), ==, 1);
  g_assert_cmpuint (count_updates (f, "agent_message_chunk", "Done."), ==, 1);
}

/* Subagents */

static MendSubagent *
the_subagent (Fixture *f)
{
  GListModel *model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));
  g_autoptr(MendSubagent) s = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (model), ==, 1);
  s = g_list_model_get_item (model, 0);
  return s;
}

#define NO_ACCOUNTS "API Error: 503 no non-exhausted claude accounts available for model claude-sonnet-4-5"

static void
test_acpmux_failed_subagent_waits_to_resume (Fixture       *f,
                                             gconstpointer  data)
{
  MendSubagent *s;

  start_chat (f,
    "{\"prompts\": [[{\"params_meta\": {\"acpmux\": {\"subagents\": [{\"subagentId\": \"toolu_1\","
    "   \"agentId\": \"a1b2\", \"name\": \"Survey the tree\", \"state\": \"running\"}]}},"
    "  \"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\", \"text\": \"Started.\"}}},"
    " {\"update\": {\"sessionUpdate\": \"agent_message_chunk\", \"content\": {\"type\": \"text\", \"text\": \"\"},"
    "   \"_meta\": {\"acpmux\": {\"subagents\": [{\"subagentId\": \"toolu_1\", \"agentId\": \"a1b2\","
    "   \"name\": \"Survey the tree\", \"state\": \"failed\", \"error\": \"" NO_ACCOUNTS "\"}]}}}},"
    " {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Start the survey");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  s = the_subagent (f);
  g_assert_cmpstr (mend_subagent_get_agent_id (s), ==, "a1b2");
  g_assert_cmpint (mend_subagent_get_state (s), ==, MEND_SUBAGENT_FAILED);
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (count_records (f, "scheduled"), ==, 1);

  /* The resume prompt goes to the same session when the wait fires. */
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_nonnull (strstr (mend_turn_get_prompt (finished (f, 1)), "a1b2"));
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

/* The Gemini CLI's invoke_agent: a tool_call "Delegating to agent 'NAME'"
 * then its update: a subagent that started and ended, with no id to
 * resume it by; one the agent says failed is failed, not retryable. */
static void
test_gemini_delegation_is_a_subagent (Fixture       *f,
                                      gconstpointer  data)
{
  const char *status = data;
  g_autofree char *script =
    g_strdup_printf ("{\"agentInfo\": {\"name\": \"gemini-cli\"},"
                     " \"prompts\": [[{\"update\": {\"sessionUpdate\": \"tool_call\", \"toolCallId\": \"invoke_agent-1\","
                     "   \"title\": \"Delegating to agent 'codebase_investigator'\", \"kind\": \"think\", \"status\": \"pending\"}},"
                     " {\"update\": {\"sessionUpdate\": \"tool_call_update\", \"toolCallId\": \"invoke_agent-1\","
                     "   \"status\": \"%s\", \"content\": []}},"
                     " " SAY_DONE ", {\"result\": {\"stopReason\": \"end_turn\"}}]]}", status);
  gboolean failed = g_str_equal (status, "failed");
  MendSubagent *s;

  start_chat (f, script);
  submit (f, "Investigate the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  s = the_subagent (f);
  g_assert_cmpstr (mend_subagent_get_id (s), ==, "invoke_agent-1");
  g_assert_cmpstr (mend_subagent_get_name (s), ==, "codebase_investigator");
  g_assert_cmpint (mend_subagent_get_state (s), ==, failed ? MEND_SUBAGENT_FAILED : MEND_SUBAGENT_COMPLETED);
  g_assert_false (mend_subagent_get_retryable (s));
  g_assert_cmpuint (count_records (f, "scheduled"), ==, 0);
}

static void
test_task_call_failure_and_send_message (Fixture       *f,
                                         gconstpointer  data)
{
  MendSubagent *s;

  start_chat (f,
    "{\"prompts\": [[{\"update\": {\"sessionUpdate\": \"tool_call\", \"toolCallId\": \"toolu_7\", \"title\": \"Task\","
    "   \"kind\": \"think\", \"status\": \"pending\", \"rawInput\": {\"description\": \"Survey the tree\"},"
    "   \"_meta\": {\"claudeCode\": {\"toolName\": \"Task\"}}}},"
    " {\"update\": {\"sessionUpdate\": \"tool_call_update\", \"toolCallId\": \"toolu_7\", \"status\": \"failed\","
    "   \"content\": [{\"type\": \"content\", \"content\": {\"type\": \"text\", \"text\": \"" NO_ACCOUNTS "\"}}],"
    "   \"_meta\": {\"claudeCode\": {\"toolName\": \"Task\", \"toolResponse\": {\"agentId\": \"c3d4\"}}}}},"
    " {\"result\": {\"stopReason\": \"end_turn\"}}],"
    " [{\"update\": {\"sessionUpdate\": \"tool_call\", \"toolCallId\": \"toolu_8\", \"title\": \"SendMessage\","
    "   \"kind\": \"other\", \"status\": \"pending\", \"rawInput\": {\"to\": \"c3d4\", \"message\": \"Please continue.\"},"
    "   \"_meta\": {\"claudeCode\": {\"toolName\": \"SendMessage\"}}}},"
    "  {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Start the survey");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  s = the_subagent (f);
  g_assert_cmpstr (mend_subagent_get_id (s), ==, "toolu_7");
  g_assert_cmpstr (mend_subagent_get_agent_id (s), ==, "c3d4");
  g_assert_cmpstr (mend_subagent_get_name (s), ==, "Survey the tree");
  g_assert_cmpint (mend_subagent_get_state (s), ==, MEND_SUBAGENT_FAILED);
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (count_records (f, "scheduled"), ==, 1);

  /* The resume prompt runs; the agent's SendMessage to c3d4 resumes it. */
  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_subagent_get_state (s), ==, MEND_SUBAGENT_RUNNING);
  g_assert_false (mend_subagent_get_retryable (s));
}

/* Recorded: a foreground Task whose subagent died on a 503 completes with
 * Claude Code's "API Error: 503 …" as its whole response. */
static void
test_recorded_foreground_task_503 (Fixture       *f,
                                   gconstpointer  data)
{
  MendSubagent *s;

  start_chat (f,
    "{\"prompts\": [[{\"replay\": \"foreground-task\"}],"
    " [{\"update\": {\"sessionUpdate\": \"tool_call\", \"toolCallId\": \"toolu_9\", \"title\": \"SendMessage\","
    "   \"kind\": \"other\", \"status\": \"pending\", \"rawInput\": {\"to\": \"a84a0bd\", \"message\": \"Please continue.\"},"
    "   \"_meta\": {\"claudeCode\": {\"toolName\": \"SendMessage\"}}}},"
    "  {\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  submit (f, "Run the survey now");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));

  s = the_subagent (f);
  g_assert_cmpstr (mend_subagent_get_agent_id (s), ==, "a84a0bd");
  g_assert_cmpstr (mend_subagent_get_name (s), ==, "Survey the tree");
  g_assert_cmpint (mend_subagent_get_state (s), ==, MEND_SUBAGENT_FAILED);
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (count_records (f, "scheduled"), ==, 1);

  run_until (f, n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_subagent_get_state (s), ==, MEND_SUBAGENT_RUNNING);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/AcpAgent/framing-turns-lines-into-frames-and-back", test_framing);

#define ADD(path, func) \
  g_test_add ("/Mend/AcpAgent/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("recorded-529-is-transient-capacity", test_recorded_529_is_transient);
  ADD ("recorded-401-is-permanent-auth", test_recorded_401_is_permanent);
  ADD ("error-data-is-classified-with-the-message", test_error_data_is_classified);
  ADD ("end-turn-without-output-is-an-empty-response", test_end_turn_without_output_is_empty);
  ADD ("empty-end-after-a-failure-restarts-the-agent", test_empty_end_after_a_failure_restarts);
  ADD ("refusal-is-not-retried", test_refusal_is_not_retried);
  ADD ("max-tokens-succeeds", test_max_tokens_succeeds);
  ADD ("session-error-fails-and-restarts-the-agent", test_session_error_restarts_the_agent);
  ADD ("agent-that-stops-reading-fails-the-attempt", test_agent_that_stops_reading);
  ADD ("permission-request-is-denied-by-default", test_permission_is_denied_by_default);
  ADD ("recorded-permission-is-rejected-by-default", test_recorded_permission_is_rejected);
  ADD ("file-read-is-refused-by-default", test_file_read_is_refused_by_default);
  ADD ("app-answers-a-request-later", test_app_answers_a_request);
  ADD ("stop-answers-a-held-permission-request-cancelled", test_stop_cancels_a_held_request);
  ADD ("stop-sends-cancel-and-holds-the-next-prompt", test_stop_sends_cancel);
  ADD ("exit-mid-turn-restarts-and-loads-the-session", test_exit_mid_turn_loads_the_session);
  ADD ("unanswered-cancel-restarts-the-agent-after-the-grace-period", test_unanswered_cancel_restarts_after_grace);
  ADD ("answer-written-just-before-exit-is-read", test_answer_before_exit_is_read);
  ADD ("silent-agent-times-out-and-is-retried", test_silent_agent_times_out);
  ADD ("held-request-is-not-idle", test_held_request_is_not_idle);
  ADD ("acpmux-failed-subagent-waits-to-resume", test_acpmux_failed_subagent_waits_to_resume);
  ADD ("task-call-failure-then-send-message-resumes", test_task_call_failure_and_send_message);
  ADD ("recorded-foreground-task-503-fails-the-subagent", test_recorded_foreground_task_503);

  ADD ("profile/from-agent-info", test_profile_from_agent_info);
  g_test_add ("/Mend/AcpAgent/gemini-delegation-is-a-subagent/completed", Fixture, "completed",
              fixture_set_up, test_gemini_delegation_is_a_subagent, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/gemini-delegation-is-a-subagent/failed", Fixture, "failed",
              fixture_set_up, test_gemini_delegation_is_a_subagent, fixture_tear_down);
  ADD ("profile/default-and-the-apps", test_profile_default_and_the_apps);
  ADD ("profile/notice-is-not-output", test_notice_is_not_output);
  ADD ("profile/lost-session-is-told", test_lost_session_is_told);
  g_test_add ("/Mend/AcpAgent/profile/restreamed-text-is-retried/gemini-cli", Fixture, "gemini-cli",
              fixture_set_up, test_restreamed_text_is_retried, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/profile/restreamed-text-is-retried/default", Fixture, "unknown",
              fixture_set_up, test_restreamed_text_is_retried, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/profile/continue-sends-the-dropped-prompt/gemini-cli", Fixture, "gemini-cli",
              fixture_set_up, test_continue_sends_the_dropped_prompt, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/hintless-rate-limit-waits-the-rate-limit-schedule", Fixture, NULL,
              fixture_set_up, test_hintless_rate_limit_waits_the_rate_limit_schedule, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/profile/retry-sends-the-prompt-once/gemini-cli", Fixture, "gemini-cli",
              fixture_set_up, test_retry_sends_the_prompt_once, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/profile/retry-sends-the-prompt-once/default", Fixture, "unknown",
              fixture_set_up, test_retry_sends_the_prompt_once, fixture_tear_down);
  g_test_add ("/Mend/AcpAgent/profile/continue-sends-the-dropped-prompt/default", Fixture, "unknown",
              fixture_set_up, test_continue_sends_the_dropped_prompt, fixture_tear_down);

#undef ADD

  for (guint i = 0; i < G_N_ELEMENTS (rpc_error_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/Mend/AcpAgent/rpc-error/%s", rpc_error_cases[i].name);

      g_test_add (path, Fixture, &rpc_error_cases[i], fixture_set_up,
                  test_rpc_error_is_read_where_the_agent_puts_it, fixture_tear_down);
    }

  return g_test_run ();
}
