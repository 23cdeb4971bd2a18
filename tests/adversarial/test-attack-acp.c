/* test-attack-acp.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAcpAgent against tests/support/hostile-acp-agent.py, an Agent Client
 * Protocol agent that breaks the protocol on purpose: malformed JSON-RPC,
 * exits at every step, an endless standard error, requests answered
 * late, twice or wrongly, and handlers that stop, close, end or drop the
 * chat and the agent from inside the agent's own events. Each test names
 * the behaviour it expects; run them under AddressSanitizer too.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-acp-agent-private.h"
#include "mend-test-utils.h"
#include "mend-test-acp.h"
#include "mend-test-bounds.h"

/* The chat in front of tests/support/hostile-acp-agent.py (tests/support/mend-test-acp.c). */
typedef MendTestHostileAcp Fixture;
typedef MendTestAct Action;

/* The first run misbehaves in its first prompt; the run is ended, and the
 * retry starts the agent again, which answers. */
static void
assert_run_ended_and_retried (Fixture    *f,
                              const char *first_prompt)
{
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[%s]]}, {}]}", first_prompt);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (f->failures->len, ==, 1);
  g_assert_cmpint (mend_failure_get_reason (g_ptr_array_index (f->failures, 0)), ==, MEND_REASON_TRANSPORT);
}

/* An agent that floods requests and never reads the answers */

/* Enough to see the memory of a missing bound; under the sanitizers,
 * where each request costs more, enough to pass the bound many times. */
#ifdef MEND_TEST_ASAN
#define N_FLOOD 1000
#else
#define N_FLOOD 20000
#endif

static gboolean
on_request_taken (MendAcpAgent *agent,
                  const char   *method,
                  const char   *params,
                  guint         request,
                  Fixture      *f)
{
  f->n_requests++;
  /* Taken, and never answered. */
  return TRUE;
}

/* @data: the method flooded; a handler takes every request it is given
 * for fs/read_text_file, none for session/request_permission (denied,
 * so every answer is written back to an agent that reads none). */
static void
test_request_flood (Fixture       *f,
                    gconstpointer  data)
{
  const char *method = data;
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'flood': %u, 'method': '%s'}, %s, %s, "
                                             "{'deaf': true}]]}]}",
                                             N_FLOOD, method, MEND_TEST_ACP_CHUNK ("flooded"), MEND_TEST_ACP_END_TURN);
  gboolean take = g_str_equal (method, "fs/read_text_file");
  MendAcpBacklog backlog;
  gsize before;
  gsize after;
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, script);
  if (take)
    g_signal_connect (f->agent, "request", G_CALLBACK (on_request_taken), f);
  before = mend_test_resident_bytes ();
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  after = mend_test_resident_bytes ();
  turn = mend_test_hostile_acp_finished (f, 0);

  g_test_message ("%u requests of %s: resident %" G_GSIZE_FORMAT " kB before, %" G_GSIZE_FORMAT " kB after",
                  N_FLOOD, method, before / 1024, after / 1024);
  /* The prompt's answer came after every request: all were read. */
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  mend_acp_agent_get_request_backlog (f->agent, &backlog);
  g_test_message ("kept %u, answers unread %u, %" G_GSIZE_FORMAT " bytes; "
                  "%" G_GUINT64_FORMAT " refused, %" G_GUINT64_FORMAT " unanswered",
                  backlog.n_kept, backlog.n_unwritten, backlog.bytes, backlog.n_refused, backlog.n_dropped);
  /* Kept for the app: the bound; answers unread: the bound's refusals too. */
  g_assert_cmpuint (backlog.n_kept, <=, MEND_ACP_AGENT_MAX_REQUESTS);
  g_assert_cmpuint (backlog.n_unwritten, <=, 2 * MEND_ACP_AGENT_MAX_REQUESTS);
  g_assert_cmpuint (backlog.bytes, <=, MEND_ACP_AGENT_MAX_REQUEST_BYTES + 2 * MEND_ACP_AGENT_MAX_REQUESTS * 1024);
  g_assert_cmpuint (backlog.n_refused, >, 0);
  g_assert_cmpuint (backlog.n_dropped, >, 0);
  g_assert_cmpuint (backlog.n_kept + backlog.n_refused + backlog.n_dropped, <=, N_FLOOD);
  if (take)
    {
      g_assert_cmpuint (f->n_requests, ==, MEND_ACP_AGENT_MAX_REQUESTS);
      g_assert_cmpuint (backlog.n_kept, ==, MEND_ACP_AGENT_MAX_REQUESTS);
    }
#ifndef MEND_TEST_ASAN
  if (!RUNNING_ON_VALGRIND)
    g_assert_cmpuint (after, <, before + 8 * 1024 * 1024);
#endif
}

/* Malformed JSON-RPC */

static void
test_not_json (Fixture       *f,
               gconstpointer  data)
{
  assert_run_ended_and_retried (f, "{'raw': 'this is not JSON'}");
}

static void
test_reply_to_unknown_id (Fixture       *f,
                          gconstpointer  data)
{
  assert_run_ended_and_retried (f, "{'send': {'jsonrpc': '2.0', 'id': 4242, 'result': {'stopReason': 'end_turn'}}}");
}

static void
test_batch (Fixture       *f,
            gconstpointer  data)
{
  assert_run_ended_and_retried (f,
    "{'raw': '[{\\'jsonrpc\\': \\'2.0\\', \\'method\\': \\'session/update\\', \\'params\\': {}},"
    "          {\\'jsonrpc\\': \\'2.0\\', \\'method\\': \\'session/update\\', \\'params\\': {}}]'}");
}

/* Past MEND_ACP_FRAMING_MAX_MESSAGE_BYTES (16 MiB): not read whole. */
static void
test_line_over_the_limit (Fixture       *f,
                          gconstpointer  data)
{
  assert_run_ended_and_retried (f, "{'big': 17000000}");
  /* Only the retry's answer. */
  g_assert_cmpuint (f->updates->len, ==, 1);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Done."), ==, 1);
}

/* A line past the strict parser's bounds: a session/update nested
 * @data levels deep, or holding an array of more values than it reads.
 * It is read by no other parser: the attempt fails with what was wrong,
 * the prompt it may have answered is cancelled, and the agent and the
 * app live on; the next turn goes to the same agent. */
static void
test_line_past_the_bounds (Fixture       *f,
                           gconstpointer  data)
{
  gboolean deep = g_str_equal (data, "deep");
  g_autoptr(GString) line = g_string_new ("{'raw': '{\\'jsonrpc\\': \\'2.0\\', \\'method\\': \\'session/update\\', "
                                          "\\'params\\': {\\'sessionId\\': \\'hostile-session\\', \\'update\\': ");
  g_autofree char *script = NULL;
  MendFailure *failure;
  MendTurn *turn;

  if (deep)
    {
      for (guint i = 0; i < 50000; i++)
        g_string_append_c (line, '[');
      for (guint i = 0; i < 50000; i++)
        g_string_append_c (line, ']');
    }
  else
    {
      g_string_append_c (line, '[');
      for (guint i = 0; i < 300000; i++)
        g_string_append (line, i ? ",0" : "0");
      g_string_append_c (line, ']');
    }
  g_string_append (line, "}}'}");
  script = g_strdup_printf ("{'runs': [{'session/prompt': [[%s, {'wait': 'session/cancel'}, "
                            "{'answer': {'stopReason': 'cancelled'}}], [" MEND_TEST_ACP_END_TURN "]]}]}",
                            line->str);

  turn = mend_test_hostile_acp_run_one_turn (f, script);

  failure = mend_turn_get_last_failure (turn);
  g_assert_nonnull (failure);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), deep ? "deeper than 64" : "more than 262144 values"));
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "hostile-session"), ==, 0);

  /* The same agent answers the next turn, once the cancelled prompt is. */
  mend_test_hostile_acp_submit (f, "Try again");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_true (mend_test_hostile_acp_log_has (f, "session/cancel"));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
  g_assert_true (mend_agent_get_running (MEND_AGENT (f->agent)));
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Done."), ==, 1);
}

/* Under the sanitizers every step is slower: fewer values (a
 * conversion quadratic in them took 11 s for 60 000), and more time. */
#ifdef MEND_TEST_ASAN
#define WIDE_LINE_VALUES 60000
#define WIDE_LINE_MAX_SECONDS 60
#else
#define WIDE_LINE_VALUES 200000
#define WIDE_LINE_MAX_SECONDS 20
#endif

/* A line of many small values, under the bounds, is read in one parse,
 * in time linear in its length: a tool call's update echoing 200 000
 * numbers is emitted whole within seconds (a conversion quadratic in
 * the array's length took minutes). */
static void
test_wide_line_is_read_at_once (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(GString) line = g_string_new ("{'update': {'sessionUpdate': 'tool_call_update', 'toolCallId': 'toolu_1', "
                                          "'rawOutput': [");
  g_autofree char *script = NULL;
  gint64 start = g_get_monotonic_time ();
  MendTurn *turn;

  for (guint i = 0; i < WIDE_LINE_VALUES; i++)
    g_string_append (line, i ? ",0" : "0");
  g_string_append (line, "]}}");
  script = g_strdup_printf ("{'runs': [{'session/prompt': [[%s, " MEND_TEST_ACP_END_TURN "]]}]}", line->str);

  turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_test_message ("read in %" G_GINT64_FORMAT " ms", (g_get_monotonic_time () - start) / 1000);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "rawOutput"), ==, 1);
  g_assert_cmpint (g_get_monotonic_time () - start, <, WIDE_LINE_MAX_SECONDS * G_USEC_PER_SEC);
}

/* A handler of the turn's end that terminates the agent, then runs a
 * nested main loop (a modal dialog): the run's close completes each of
 * its calls once (the answered prompt's is done already), and nothing of
 * the closed run is left to dispatch after. */
static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
on_finished_terminate_and_nest (MendChat *chat,
                                MendTurn *turn,
                                Fixture  *f)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);

  mend_agent_terminate (MEND_AGENT (f->agent));
  g_timeout_add (300, quit_loop, loop);
  g_main_loop_run (loop);
}

static void
test_terminate_then_nested_loop (Fixture       *f,
                                 gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{}]}");
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished_terminate_and_nest), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_signal_handlers_disconnect_by_func (f->chat, on_finished_terminate_and_nest, f);

  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
  for (guint i = 0; i < 100 && g_main_context_iteration (NULL, FALSE); i++)
    ;

  /* The next turn starts the agent again. */
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

/* The chat's saved state keeps the ACP agent's session: restored after
 * the agent ended and forgot it, the next start loads that session. */
static void
test_saved_state_loads_the_session (Fixture       *f,
                                    gconstpointer  data)
{
  g_autofree char *state = NULL;
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, 'agentCapabilities': {'loadSession': true}}}],"
    "           'session/load': [{'answer': {}}]}]}");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  state = mend_chat_save_state (f->chat);
  g_assert_nonnull (strstr (state, "hostile-session"));

  mend_agent_terminate (MEND_AGENT (f->agent));
  mend_agent_set_session_id (MEND_AGENT (f->agent), NULL);
  g_assert_true (mend_chat_restore_state (f->chat, state, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "hostile-session");

  mend_test_hostile_acp_submit (f, "Go on");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (f->agent), ==, 1);
  g_assert_true (mend_test_hostile_acp_log_has (f, "session/load"));
}

/* A line well under the limit is an update like any other. */
static void
test_large_line_is_read (Fixture       *f,
                         gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'session/prompt': [[{'big': 2000000}, "
                                                          MEND_TEST_ACP_ANSWER_END_TURN "]]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (f->updates->len, ==, 1);
  g_assert_cmpuint (strlen (g_ptr_array_index (f->updates, 0)), >, 2000000);
}

/* A prompt far larger than a pipe's buffer reaches the agent whole, and
 * at once. */
static void
test_large_prompt (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *prompt = g_strnfill (200000, 'p');

  mend_test_hostile_acp_start_chat (f, "{'runs': [{}]}");
  mend_test_hostile_acp_submit (f, prompt);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_true (mend_test_hostile_acp_log_has (f, prompt));
}

/* The prompt answered twice: the turn keeps its first answer; the run is
 * ended, and the next turn starts the agent again. */
static void
test_second_answer (Fixture       *f,
                    gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'session/prompt': [["
                                                          MEND_TEST_ACP_END_TURN ", " MEND_TEST_ACP_END_TURN "]]}, {}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_not_running, NULL);

  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 1)), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

/* An error answer to no call of ours, and a reply with neither result
 * nor error, are skipped: the turn goes on. */
static void
test_stray_error_is_logged (Fixture       *f,
                            gconstpointer  data)
{
  MendTurn *turn;

  turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'session/prompt': [[{'send': {'jsonrpc': '2.0', 'id': 4242, 'error': {'code': 1, 'message': 'no'}}},"
    "                               {'send': {'jsonrpc': '2.0', 'id': 4243}}, " MEND_TEST_ACP_END_TURN "]]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

static void
test_session_new_wrong_type (Fixture       *f,
                             gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'session/new': [{'answer': 'hostile-session'}]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
  g_assert_null (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_false (mend_test_hostile_acp_log_has (f, "session/prompt"));
}

static void
test_prompt_result_wrong_type (Fixture       *f,
                               gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'session/prompt': [[{'answer': 'end_turn'}], ["
                                                          MEND_TEST_ACP_END_TURN "]]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_PERMANENT);
  g_assert_null (mend_acp_agent_get_stop_reason (f->agent));

  /* The run is sound: the next turn goes to it. */
  mend_chat_send_next (f->chat);
  mend_test_hostile_acp_submit (f, "Try again");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

static void
test_initialize_wrong_type (Fixture       *f,
                            gconstpointer  data)
{
  MendTurn *turn;

  turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'initialize': [{'answer': [1, 'two', {'agentCapabilities': true}]}]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "hostile-session");
}

/* A "request" with no id is a notification: nothing to answer. */
static gboolean
on_request_count (MendAcpAgent *agent,
                  const char   *method,
                  const char   *params,
                  guint         request,
                  Fixture      *f)
{
  f->n_requests++;
  return FALSE;
}

static void
test_request_without_id (Fixture       *f,
                         gconstpointer  data)
{
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f,
    "{'runs': [{'session/prompt': [[{'send': {'jsonrpc': '2.0', 'method': 'session/request_permission',"
    "  'params': {'sessionId': '$SESSION', 'options': []}}}, " MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_count), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (f->n_requests, ==, 0);
}

static void
test_update_for_another_session (Fixture       *f,
                                 gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'session/prompt': [[{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {"
    "  'sessionId': 'another-session', 'update': {'sessionUpdate': 'agent_message_chunk',"
    "  'content': {'type': 'text', 'text': 'Not yours'}}}}}, " MEND_TEST_ACP_CHUNK ("Yours") ", " MEND_TEST_ACP_END_TURN "]]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Not yours"), ==, 0);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Yours"), ==, 1);
}

/* Before session/new is answered there is no session an update can be
 * of: one that names a session, or none, is not emitted. */
static void
test_update_before_session (Fixture       *f,
                            gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'session/new': [" MEND_TEST_ACP_CHUNK ("Too early") ","
    "  {'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'update': {"
    "    'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': 'No session'}}}}},"
    "  {'answer': {'sessionId': '$SESSION'}}]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Too early"), ==, 0);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "No session"), ==, 0);
  /* Only the prompt's answer. */
  g_assert_cmpuint (f->updates->len, ==, 1);
}

/* Exits */

static void
assert_exit_fails_the_attempt (Fixture    *f,
                               const char *phase)
{
  g_autofree char *script = g_strdup_printf ("{'runs': [{'%s': [{'stderr': 'fatal: the config is unreadable'},"
                                             " {'exit': 3}]}, {}]}", phase);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);
  MendFailure *failure;

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (f->failures->len, ==, 1);
  failure = g_ptr_array_index (f->failures, 0);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "fatal: the config is unreadable"));
}

static void
test_exit_during_initialize (Fixture       *f,
                             gconstpointer  data)
{
  assert_exit_fails_the_attempt (f, "initialize");
}

static void
test_exit_during_session_new (Fixture       *f,
                              gconstpointer  data)
{
  assert_exit_fails_the_attempt (f, "session/new");
}

/* An agent that never answers initialize (or session/new) holds the
 * attempt until a Stop; after the Stop, it has the grace period to open
 * the session, as a cancelled prompt has to be answered, and is then
 * started again for the next turn. */
static void
test_never_answers (Fixture       *f,
                    gconstpointer  data)
{
  g_autofree char *script = g_strdup_printf ("{'runs': [{'%s': [{'hang': true}]}, {}]}", (const char *) data);

  mend_test_hostile_acp_start_chat (f, script);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_log_has, data);

  mend_chat_stop (f->chat);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_STOPPED);

  mend_test_hostile_acp_submit (f, "Fix the build again");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 1)), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

/* The agent exits instead of answering a cancelled prompt: it did not
 * answer within the grace period, and the prompt held behind the
 * cancelled one goes to the agent started again, in the same attempt. */
static void
test_exit_during_grace (Fixture       *f,
                        gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[{'wait': 'session/cancel'}, {'exit': 0}]]}, {}]}");
  mend_acp_agent_set_cancel_grace_ms (f->agent, 60000);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_log_has, "session/prompt");

  mend_chat_stop (f->chat);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_STOPPED);

  mend_chat_send_next (f->chat);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 1)), ==, 1);
  g_assert_cmpuint (f->failures->len, ==, 0);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

static gboolean
stderr_is_read (Fixture       *f,
                gconstpointer  data)
{
  g_autofree char *tail = mend_agent_dup_stderr (MEND_AGENT (f->agent));

  return tail != NULL;
}

/* Standard error that never ends does not hold up the agent's answers (it
 * is read below them), and is read when they leave room, its tail kept. */
static void
test_stderr_without_end (Fixture       *f,
                         gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'initialize': [{'stderr_forever': true},"
    "  {'answer': {'protocolVersion': 1, 'agentCapabilities': {}}}]}]}");
  g_autofree char *tail = NULL;

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  mend_test_hostile_acp_run_until (f, stderr_is_read, NULL);
  tail = mend_agent_dup_stderr (MEND_AGENT (f->agent));
  g_assert_nonnull (tail);
  g_assert_cmpuint (strlen (tail), <=, MEND_AGENT_PROCESS_STDERR_MAX_BYTES);
}

/* A key the agent was given, on its standard error where the shown
 * tail's cut falls inside it: neither the exit failure nor the tail
 * shows a piece of it. */
#define CUT_KEY "q8Zr3xV0pL9wT2mN5bK7cutKEYsecondHALF0123456"

static void
test_stderr_cut_inside_a_key (Fixture       *f,
                              gconstpointer  data)
{
  g_autofree char *noise = g_strnfill (5000, 'n');
  g_autofree char *after = g_strnfill (MEND_AGENT_STDERR_MAX_BYTES - (strlen (CUT_KEY) - 20) - 1, 't');
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'stderr': '%s%s\\n%s'}, {'exit': 1}]]}, {}]}",
                                             noise, CUT_KEY, after);
  g_autofree char *tail = NULL;
  MendFailure *failure;

  mend_test_hostile_acp_start_chat (f, script);
  mend_agent_setenv (MEND_AGENT (f->agent), "ANTHROPIC_API_KEY", CUT_KEY);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));

  g_assert_cmpuint (f->failures->len, ==, 1);
  failure = g_ptr_array_index (f->failures, 0);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "ttt"));
  g_assert_null (strstr (mend_failure_get_message (failure), "secondHALF"));
  tail = mend_agent_dup_stderr (MEND_AGENT (f->agent));
  g_assert_true (tail == NULL || strstr (tail, "secondHALF") == NULL);
}

/* Requests */

static gboolean
on_request_hold (MendAcpAgent *agent,
                 const char   *method,
                 const char   *params,
                 guint         request,
                 Fixture      *f)
{
  f->n_requests++;
  f->held_request = request;
  return TRUE;
}

static gboolean
request_held (Fixture       *f,
              gconstpointer  data)
{
  return f->held_request != 0;
}

/* The agent asks, then exits before the app answers: the answer has
 * nowhere to go. */
static void
test_request_then_exit (Fixture       *f,
                        gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_PERMISSION ", {'exit': 0}]]}, {}]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_hold), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, request_held, NULL);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_not_running, NULL);

  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, "{\"outcome\": {\"outcome\": \"cancelled\"}}"));
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 0)), ==, 2);
  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, NULL));
}

/* The agent asks and ends the turn without waiting: the app's late
 * answer still reaches the running agent, once. */
static void
test_answer_after_turn (Fixture       *f,
                        gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_PERMISSION ", " MEND_TEST_ACP_END_TURN "],"
                                       " [" MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_hold), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (f->held_request, !=, 0);

  g_assert_true (mend_acp_agent_respond (f->agent, f->held_request,
                                         "{\"outcome\": {\"outcome\": \"selected\", \"optionId\": \"yes\"}}"));
  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, NULL));
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"perm-1\""), ==, 1);
  g_assert_true (mend_test_hostile_acp_log_has (f, "\"yes\""));
}

/* An answer that is not JSON is refused and the request kept: the app
 * can still answer it, and the agent is not left waiting for ever. */
static void
test_bad_answer_keeps_the_request (Fixture       *f,
                                   gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_PERMISSION ", {'wait_reply': 'perm-1'}, "
                                       MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_hold), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, request_held, NULL);

  g_assert_false (mend_acp_agent_respond (f->agent, f->held_request, "{\"outcome\": "));
  g_assert_true (mend_acp_agent_respond (f->agent, f->held_request,
                                         "{\"outcome\": {\"outcome\": \"selected\", \"optionId\": \"yes\"}}"));
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"perm-1\""), ==, 1);
}

/* Re-entrant handlers */

typedef enum
{
  HOOK_REQUEST,
  HOOK_UPDATE,
  HOOK_WAITING,
  HOOK_TURN_FINISHED,
  HOOK_RUNNING,
} Hook;

typedef struct
{
  Hook   hook;
  Action action;
} Reentry;

static gboolean
on_request_act (MendAcpAgent *agent,
                const char   *method,
                const char   *params,
                guint         request,
                Fixture      *f)
{
  f->n_requests++;
  mend_test_hostile_acp_act (f);
  return FALSE;
}

static void
on_update_act (MendAcpAgent *agent,
               const char   *kind,
               const char   *json,
               Fixture      *f)
{
  mend_test_hostile_acp_act (f);
}

/* As the agent starts, before the attempt is under way. */
static void
on_running_act (MendAcpAgent *agent,
                GParamSpec   *pspec,
                Fixture      *f)
{
  if (mend_agent_get_running (MEND_AGENT (agent)))
    mend_test_hostile_acp_act (f);
}

static gboolean
settled (Fixture       *f,
         gconstpointer  data)
{
  GObject * const *weak = data;

  if (f->chat == NULL)
    return weak[0] == NULL && weak[1] == NULL;
  return f->finished->len >= 1;
}

static void
test_reentrant (Fixture       *f,
                gconstpointer  data)
{
  const Reentry *r = data;
  gpointer weak[2];
  MendTurnState state;

  /* The first prompt: an overloaded model; or a success; or output, a
   * permission request, then the answer to a Stop. */
  if (r->hook == HOOK_WAITING)
    mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_OVERLOADED "], ["
                                         MEND_TEST_ACP_END_TURN "]]}, {}]}");
  else if (r->hook == HOOK_TURN_FINISHED || r->hook == HOOK_RUNNING)
    mend_test_hostile_acp_start_chat (f, "{'runs': [{}]}");
  else
    mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_CHUNK ("Working") ", " MEND_TEST_ACP_PERMISSION ","
                                         " {'wait': 'session/cancel'}, {'wait_reply': 'perm-1'},"
                                         " {'answer': {'stopReason': 'cancelled'}}], [" MEND_TEST_ACP_END_TURN "]]}, {}]}");

  f->action = r->action;
  switch (r->hook)
    {
    case HOOK_REQUEST:
      g_signal_connect (f->agent, "request", G_CALLBACK (on_request_act), f);
      break;
    case HOOK_UPDATE:
      g_signal_connect (f->agent, "update", G_CALLBACK (on_update_act), f);
      break;
    case HOOK_WAITING:
      g_signal_connect (f->chat, "turn-started", G_CALLBACK (mend_test_hostile_acp_on_turn_started_act), f);
      break;
    case HOOK_RUNNING:
      g_signal_connect (f->agent, "notify::running", G_CALLBACK (on_running_act), f);
      break;
    case HOOK_TURN_FINISHED:
    default:
      g_signal_connect (f->chat, "turn-finished", G_CALLBACK (mend_test_hostile_acp_on_turn_finished_act), f);
      break;
    }

  weak[0] = f->chat;
  weak[1] = f->agent;
  g_object_add_weak_pointer (weak[0], &weak[0]);
  g_object_add_weak_pointer (weak[1], &weak[1]);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, settled, weak);
  g_assert_cmpint (f->action, ==, MEND_TEST_ACT_NONE);

  if (r->action == MEND_TEST_ACT_UNREF)
    {
      g_assert_null (weak[0]);
      g_assert_null (weak[1]);
      return;
    }
  g_object_remove_weak_pointer (weak[0], &weak[0]);
  g_object_remove_weak_pointer (weak[1], &weak[1]);

  state = mend_turn_get_state (mend_test_hostile_acp_finished (f, 0));
  if (r->hook == HOOK_TURN_FINISHED)
    g_assert_cmpint (state, ==, MEND_TURN_SUCCEEDED);
  else if (r->action == MEND_TEST_ACT_STOP || r->action == MEND_TEST_ACT_CLOSE)
    {
      g_assert_cmpint (state, ==, MEND_TURN_STOPPED);
      /* The permission request was answered once, as cancelled by the
       * Stop or denied after it; what the agent read before the next
       * prompt holds every answer. */
      /* Stopped as the agent started: its prompt never went. */
      if (r->hook == HOOK_RUNNING && r->action == MEND_TEST_ACT_STOP)
        {
          mend_test_hostile_acp_submit (f, "Post the notes");
          mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
          g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
          g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "session/prompt"), ==, 1);
          g_assert_true (mend_test_hostile_acp_log_has (f, "Post the notes"));
        }
      if ((r->hook == HOOK_REQUEST || r->hook == HOOK_UPDATE) && r->action == MEND_TEST_ACT_STOP)
        {
          mend_test_hostile_acp_submit (f, "Post the notes");
          mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
          g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
          g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"perm-1\""), ==, 1);
          g_assert_cmpuint (f->n_requests, <=, 1);
        }
    }
  else if (r->hook == HOOK_WAITING || r->hook == HOOK_RUNNING)
    {
      /* The agent ended while the retry waited, or as it started: the
       * retry starts it again. */
      g_assert_cmpint (state, ==, MEND_TURN_SUCCEEDED);
      g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 0)), ==, 2);
      g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
    }
  else
    {
      /* Ended after its output: not replayed. */
      g_assert_cmpint (state, ==, MEND_TURN_FAILED);
      g_assert_true (mend_failure_get_partial (mend_turn_get_last_failure (mend_test_hostile_acp_finished (f, 0))));
    }

  if (r->action == MEND_TEST_ACT_CLOSE)
    g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_CLOSED);
  if (r->action == MEND_TEST_ACT_TERMINATE)
    g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, r->hook == HOOK_WAITING || r->hook == HOOK_RUNNING ? 2 : 1);
}

/* An error code no integer holds (1e300 is one in JSON) is still an
 * error answer: its message is read, and the code is not converted. */
static void
test_error_code_out_of_range (Fixture       *f,
                              gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'session/prompt': [[{'error': {'code': 1e300, 'message': 'Internal error: Invalid API key'}}]]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_AUTH);
  g_assert_true (mend_agent_get_running (MEND_AGENT (f->agent)));
}

/* A turn made by the app, not queued by a chat, whose prompt is not
 * UTF-8: JSON cannot carry it, and the attempt fails, never retried,
 * without sending it. */
static void
on_turn_finished_alone (MendTurn      *turn,
                        MendTurnState  state,
                        gboolean      *done)
{
  *done = TRUE;
}

static void
test_prompt_not_utf8 (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(MendTurn) turn = NULL;
  gboolean done = FALSE;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{}]}");
  turn = g_object_new (MEND_TYPE_TURN, "prompt", "Fix the build \xff\xfe", "clock", f->clock, NULL);
  mend_turn_set_sender (turn, MEND_SENDER (f->agent));
  g_signal_connect (turn, "finished", G_CALLBACK (on_turn_finished_alone), &done);
  mend_turn_start (turn, NULL);
  while (!done)
    g_main_context_iteration (NULL, TRUE);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_false (mend_test_hostile_acp_log_has (f, "session/prompt"));
  g_signal_handlers_disconnect_by_data (turn, &done);
}

/* A working directory whose name is not UTF-8 cannot be the session's
 * cwd, a JSON string: the attempt fails, and no agent is left running. */
static void
test_cwd_not_utf8 (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *dir = g_build_filename (g_get_home_dir (), "build-\xff", NULL);
  MendTurn *turn;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  mend_test_hostile_acp_start_chat (f, "{'runs': [{}]}");
  mend_agent_set_cwd (MEND_AGENT (f->agent), dir);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
  g_assert_false (mend_test_hostile_acp_log_has (f, "session/new"));
}

/* A session id to load that is not UTF-8 (from a saved state, say) is
 * not sent: a new session opens. */
static void
test_session_id_not_utf8 (Fixture       *f,
                          gconstpointer  data)
{
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, 'agentCapabilities': {'loadSession': true}}}]}]}");
  mend_agent_set_session_id (MEND_AGENT (f->agent), "saved-\xff");
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_false (mend_test_hostile_acp_log_has (f, "session/load"));
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "hostile-session");
}

int
main (int   argc,
      char *argv[])
{
  static const char *hooks[] = { "request", "update", "waiting", "turn-finished", "running-notify" };
  static const char *actions[] = { NULL, "stop", "close", "terminate", "unref" };
  static Reentry reentries[G_N_ELEMENTS (hooks) * 4];

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/Mend/AttackAcp/" path, Fixture, NULL, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)
#define ADD_DATA(path, data, func) \
  g_test_add ("/Mend/AttackAcp/" path, Fixture, data, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)

  ADD ("not-json-ends-the-run-and-the-retry-starts-it-again", test_not_json);
  ADD ("reply-to-an-unknown-id-ends-the-run", test_reply_to_unknown_id);
  ADD ("batch-ends-the-run", test_batch);
  ADD ("line-over-the-size-limit-ends-the-run", test_line_over_the_limit);
  ADD ("large-line-under-the-limit-is-read", test_large_line_is_read);
  ADD ("saved-state-loads-the-session", test_saved_state_loads_the_session);
  ADD ("terminate-from-the-turn-end-then-a-nested-loop-completes-each-call-once", test_terminate_then_nested_loop);
  ADD_DATA ("line-nested-past-the-bounds-fails-the-attempt-and-the-agent-lives", "deep", test_line_past_the_bounds);
  ADD_DATA ("line-of-too-many-values-fails-the-attempt-and-the-agent-lives", "wide", test_line_past_the_bounds);
  ADD ("line-of-many-values-is-read-at-once", test_wide_line_is_read_at_once);
  ADD ("large-prompt-reaches-the-agent-whole", test_large_prompt);
  ADD ("second-answer-to-a-prompt-ends-the-run-after-the-turn", test_second_answer);
  ADD ("error-for-an-unknown-id-is-ignored", test_stray_error_is_logged);
  ADD ("session-new-result-of-the-wrong-type-fails-the-turn", test_session_new_wrong_type);
  ADD ("prompt-result-of-the-wrong-type-fails-the-turn", test_prompt_result_wrong_type);
  ADD ("initialize-result-of-the-wrong-type-is-tolerated", test_initialize_wrong_type);
  ADD ("request-without-an-id-is-not-a-request", test_request_without_id);
  ADD ("update-for-another-session-is-not-emitted", test_update_for_another_session);
  ADD ("update-before-session-new-answered-is-not-emitted", test_update_before_session);
  ADD ("exit-during-initialize-fails-the-attempt-with-stderr", test_exit_during_initialize);
  ADD ("exit-during-session-new-fails-the-attempt-with-stderr", test_exit_during_session_new);
  ADD_DATA ("never-answered-initialize-is-restarted-after-a-stop", "initialize", test_never_answers);
  ADD_DATA ("never-answered-session-new-is-restarted-after-a-stop", "session/new", test_never_answers);
  ADD ("exit-during-the-cancel-grace-sends-the-held-prompt-to-a-new-agent", test_exit_during_grace);
  ADD ("stderr-without-end-does-not-hold-up-the-answers", test_stderr_without_end);
  ADD ("stderr-cut-inside-a-key-shows-none-of-it", test_stderr_cut_inside_a_key);
  ADD ("request-then-exit-cannot-be-answered", test_request_then_exit);
  ADD ("answer-after-the-turn-ended-reaches-the-agent-once", test_answer_after_turn);
  ADD ("answer-that-is-not-json-keeps-the-request", test_bad_answer_keeps_the_request);
  ADD ("error-code-out-of-range-is-an-error-answer", test_error_code_out_of_range);
  ADD ("prompt-that-is-not-utf8-fails-the-attempt", test_prompt_not_utf8);
  ADD ("cwd-that-is-not-utf8-fails-the-attempt", test_cwd_not_utf8);
  ADD ("session-id-that-is-not-utf8-is-not-loaded", test_session_id_not_utf8);
  ADD_DATA ("request-flood-unread-taken-requests-stay-bounded", "fs/read_text_file", test_request_flood);
  ADD_DATA ("request-flood-unread-denied-answers-stay-bounded", "session/request_permission", test_request_flood);

  for (guint h = 0; h < G_N_ELEMENTS (hooks); h++)
    for (guint a = MEND_TEST_ACT_STOP; a <= MEND_TEST_ACT_UNREF; a++)
      {
        Reentry *r = &reentries[h * 4 + a - MEND_TEST_ACT_STOP];
        g_autofree char *path = g_strdup_printf ("/Mend/AttackAcp/reentrant/%s-handler-%s", hooks[h], actions[a]);

        r->hook = h;
        r->action = a;
        g_test_add (path, Fixture, r, mend_test_hostile_acp_set_up, test_reentrant, mend_test_hostile_acp_tear_down);
      }

#undef ADD_DATA
#undef ADD

  return g_test_run ();
}
