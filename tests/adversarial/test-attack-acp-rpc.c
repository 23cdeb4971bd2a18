/* test-attack-acp-rpc.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The JSON-RPC of an ACP agent (json-glib and the bounded parser) against
 * tests/support/hostile-acp-agent.py: requests whose ids are of every
 * JSON type, huge ids that would bring a flood past the bounds on what
 * is kept, answers to our calls with ids of the wrong type, a line that
 * is not UTF-8, and handlers that run nested main loops, restart the
 * agent or stop the chat from inside its events.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-acp-agent-private.h"
#include "mend-acp-framing-private.h"
#include "mend-test-utils.h"
#include "mend-test-acp.h"
#include "mend-test-bounds.h"

typedef MendTestHostileAcp Fixture;

/* Requests whose ids are of every JSON type */

/* The ids, in the script's quotes ('), and how many requests they make. */
static const char *request_ids[] = {
  "true", "false", "0", "-1", "1.5", "1e300", "''", "'an id with \\u00e9 and \\\\n'",
  "{}", "{'a': [1, null]}", "[]", "[1, 'a']", "9223372036854775807", "-9223372036854775808", "3",
};

static gboolean
on_request_count (MendAcpAgent *agent,
                  const char   *method,
                  const char   *params,
                  guint         request,
                  Fixture      *f)
{
  f->n_requests++;
  /* Not taken: denied, with the request's reject option. */
  return FALSE;
}

/* Each is a request: emitted, denied, and the denial carries the id as
 * the agent gave it (the agent waits for exactly that id), whatever its
 * type; "3" is also the id of our own prompt, a name of another space. */
static void
test_request_ids_of_every_type (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(GString) actions = g_string_new (NULL);
  g_autofree char *script = NULL;
  MendTurn *turn;

  for (guint i = 0; i < G_N_ELEMENTS (request_ids); i++)
    g_string_append_printf (actions,
                            "{'send': {'jsonrpc': '2.0', 'id': %s, 'method': 'session/request_permission', 'params': {"
                            "  'sessionId': '$SESSION', 'toolCall': {'toolCallId': 'toolu_%u', 'title': 'rm -rf build'},"
                            "  'options': [{'optionId': 'no', 'name': 'Reject', 'kind': 'reject_once'}]}}},"
                            " {'wait_reply': %s}, ",
                            request_ids[i], i, request_ids[i]);
  script = g_strdup_printf ("{'runs': [{'session/prompt': [[%s" MEND_TEST_ACP_END_TURN "]]}]}", actions->str);

  mend_test_hostile_acp_start_chat (f, script);
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_count), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
  g_assert_cmpuint (f->n_requests, ==, G_N_ELEMENTS (request_ids));
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"optionId\":\"no\""), ==, G_N_ELEMENTS (request_ids));
}

/* Requests whose ids are huge */

#ifdef MEND_TEST_ASAN
#define N_HUGE_IDS 40
#else
#define N_HUGE_IDS 200
#endif
#define HUGE_ID_BYTES (256 * 1024)

static gboolean
on_request_taken (MendAcpAgent *agent,
                  const char   *method,
                  const char   *params,
                  guint         request,
                  Fixture      *f)
{
  f->n_requests++;
  return TRUE;
}

/* An agent that floods requests with ids of 256 kB each and reads none
 * of the answers: the ids count toward the bounds on what is kept and on
 * the answers not written yet, as the parameters do; @data, the method,
 * taken by the app (kept) or denied (answered). */
static void
test_huge_ids_stay_bounded (Fixture       *f,
                            gconstpointer  data)
{
  const char *method = data;
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'flood': %u, 'method': '%s', 'id_bytes': %u}, "
                                             "%s, {'deaf': true}]]}]}",
                                             N_HUGE_IDS, method, HUGE_ID_BYTES, MEND_TEST_ACP_END_TURN);
  MendAcpBacklog backlog;
  gsize before;
  gsize after;

  mend_test_hostile_acp_start_chat (f, script);
  if (g_str_equal (method, "fs/read_text_file"))
    g_signal_connect (f->agent, "request", G_CALLBACK (on_request_taken), f);
  before = mend_test_resident_bytes ();
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  after = mend_test_resident_bytes ();

  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_SUCCEEDED);
  mend_acp_agent_get_request_backlog (f->agent, &backlog);
  g_test_message ("kept %u, answers unread %u, %" G_GSIZE_FORMAT " bytes; %" G_GUINT64_FORMAT " refused, "
                  "%" G_GUINT64_FORMAT " unanswered; resident %" G_GSIZE_FORMAT " kB before, %" G_GSIZE_FORMAT " kB after",
                  backlog.n_kept, backlog.n_unwritten, backlog.bytes, backlog.n_refused, backlog.n_dropped,
                  before / 1024, after / 1024);
  /* What is held counts the ids, and stays within twice the bound (kept,
   * and answers not read). */
  g_assert_cmpuint (backlog.bytes, >=, (gsize) (backlog.n_kept + backlog.n_unwritten) * HUGE_ID_BYTES);
  g_assert_cmpuint (backlog.bytes, <=, 2 * MEND_ACP_AGENT_MAX_REQUEST_BYTES);
  g_assert_cmpuint (backlog.n_kept + backlog.n_refused + backlog.n_dropped, <=, N_HUGE_IDS);
  g_assert_cmpuint (backlog.n_dropped, >, 0);
#ifndef MEND_TEST_ASAN
  if (!RUNNING_ON_VALGRIND)
    g_assert_cmpuint (after, <, before + 16 * 1024 * 1024);
#endif
}

/* Answers to our calls whose ids are of the wrong type */

/* The prompt, our third call (id 3), answered with its id as @data: no
 * call of ours has that id, so the client and the agent no longer agree
 * on what was asked: the run ends, and the retry starts the agent again,
 * which answers. */
static void
test_answer_id_of_the_wrong_type (Fixture       *f,
                                  gconstpointer  data)
{
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'send': {'jsonrpc': '2.0', 'id': %s, "
                                             "'result': {'stopReason': 'end_turn'}}}, {'hang': true}]]}, {}]}",
                                             (const char *) data);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_true (mend_test_hostile_acp_log_has (f, "\"id\":3,"));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (f->failures->len, ==, 1);
  g_assert_cmpint (mend_failure_get_reason (g_ptr_array_index (f->failures, 0)), ==, MEND_REASON_TRANSPORT);
}

/* The same ids on error answers: no call of ours, and nothing to read in
 * them: skipped, and the prompt's own answer ends the turn. */
static void
test_error_id_of_the_wrong_type (Fixture       *f,
                                 gconstpointer  data)
{
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'send': {'jsonrpc': '2.0', 'id': %s, "
                                             "'error': {'code': -32603, 'message': 'Internal error: overloaded'}}}, %s]]}]}",
                                             (const char *) data, MEND_TEST_ACP_END_TURN);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

/* A line that is not UTF-8 */

/* A session/update whose text holds a byte that is no character (Latin-1
 * é): JSON is UTF-8, so the line is no message; the run ends, and the
 * retry starts the agent again. No critical on the way. */
static void
test_line_not_utf8 (Fixture       *f,
                    gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f,
    "{'runs': [{'session/prompt': [[{'bytes': '{\\'jsonrpc\\': \\'2.0\\', \\'method\\': \\'session/update\\', \\'params\\': "
    "{\\'sessionId\\': \\'hostile-session\\', \\'update\\': {\\'sessionUpdate\\': \\'agent_message_chunk\\', "
    "\\'content\\': {\\'type\\': \\'text\\', \\'text\\': \\'caf\\u00e9 \\u00ff\\'}}}}'}, {'hang': true}]]}, {}]}");

  for (guint i = 0; i < f->failures->len; i++)
    g_test_message ("wait %u: %s", i, mend_failure_get_message (g_ptr_array_index (f->failures, i)));
  if (mend_turn_get_last_failure (turn) != NULL)
    g_test_message ("last: %s", mend_failure_get_message (mend_turn_get_last_failure (turn)));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "caf"), ==, 0);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Done."), ==, 1);
}

/* Handlers that nest main loops, restart the agent or stop the chat */

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

/* A modal dialog: a nested main loop for @ms of real time. */
static void
nest (guint ms)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);

  g_timeout_add (ms, quit_loop, loop);
  g_main_loop_run (loop);
}

typedef struct
{
  Fixture *f;
  GString *order;
} Nested;

static void
on_update_nest (MendAcpAgent *agent,
                const char   *kind,
                const char   *json,
                Nested       *n)
{
  const char *words[] = { "alpha", "beta", "gamma", "Done." };

  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    if (strstr (json, words[i]) != NULL)
      g_string_append_printf (n->order, "%s ", words[i]);
  /* The first update opens a dialog, in which the rest may come. */
  if (n->order->len == strlen ("alpha "))
    nest (300);
}

/* The agent's output goes on while an update handler runs a nested main
 * loop: every update is emitted once, in order, and the turn ends when
 * its answer came, after the handler. */
static void
test_update_handler_nests_a_loop (Fixture       *f,
                                  gconstpointer  data)
{
  g_autoptr(GString) order = g_string_new (NULL);
  Nested n = { f, order };
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_CHUNK ("alpha") ", "
                                       MEND_TEST_ACP_CHUNK ("beta") ", " MEND_TEST_ACP_CHUNK ("gamma") ", "
                                       MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update_nest), &n);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_signal_handlers_disconnect_by_func (f->agent, on_update_nest, &n);
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpstr (order->str, ==, "alpha beta gamma Done. ");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
}

/* An update handler that ends the agent and submits the next prompt,
 * whose turn starts the agent again, all while the first agent's line is
 * being read: the first turn fails after its output (not replayed), the
 * second runs on a new agent, and nothing of the first run is read
 * after. */
static void
on_update_restart (MendAcpAgent *agent,
                   const char   *kind,
                   const char   *json,
                   Fixture      *f)
{
  if (strstr (json, "Working") == NULL || f->n_requests++ > 0)
    return;
  mend_agent_terminate (MEND_AGENT (f->agent));
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_chat_send_next (f->chat);
}

static void
test_update_handler_restarts_the_agent (Fixture       *f,
                                        gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_CHUNK ("Working") ", "
                                       MEND_TEST_ACP_CHUNK ("Not read") ", " MEND_TEST_ACP_END_TURN "]]},"
                                       " {'session/prompt': [[" MEND_TEST_ACP_CHUNK ("Second") ", "
                                       MEND_TEST_ACP_ANSWER_END_TURN "]]}]}");
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update_restart), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_signal_handlers_disconnect_by_func (f->agent, on_update_restart, f);

  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_FAILED);
  g_assert_true (mend_failure_get_partial (mend_turn_get_last_failure (mend_test_hostile_acp_finished (f, 0))));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Not read"), ==, 0);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "Second"), ==, 1);
}

/* A request handler that answers at once, then opens a dialog in which
 * the app stops the chat: the answer reaches the agent once, the turn is
 * stopped, and the next is answered (by the same agent, or by one
 * started again if the cancelled prompt's grace ran out in virtual time). */
static gboolean
stop_chat (gpointer data)
{
  Fixture *f = data;

  mend_chat_stop (f->chat);
  return G_SOURCE_REMOVE;
}

static gboolean
on_request_answer_then_nest (MendAcpAgent *agent,
                             const char   *method,
                             const char   *params,
                             guint         request,
                             Fixture      *f)
{
  if (f->n_requests++ > 0)
    return FALSE;
  g_assert_true (mend_acp_agent_respond (agent, request, "{\"outcome\": {\"outcome\": \"selected\", \"optionId\": \"yes\"}}"));
  g_timeout_add (100, stop_chat, f);
  nest (300);
  /* Answered already: not answered again. */
  g_assert_false (mend_acp_agent_respond (agent, request, NULL));
  return TRUE;
}

static void
test_request_handler_answers_then_stops_in_a_nested_loop (Fixture       *f,
                                                          gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_PERMISSION ", {'wait_reply': 'perm-1'}, "
                                       "{'wait': 'session/cancel'}, {'answer': {'stopReason': 'cancelled'}}], ["
                                       MEND_TEST_ACP_END_TURN "]]}, {}]}");
  g_signal_connect (f->agent, "request", G_CALLBACK (on_request_answer_then_nest), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_STOPPED);

  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_signal_handlers_disconnect_by_func (f->agent, on_request_answer_then_nest, f);
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (f->n_requests, ==, 1);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"perm-1\""), ==, 1);
}

/* A line past the parser's bounds fails the turn from inside the
 * agent's read; the turn-finished handler then does @data's action
 * (stop, close, terminate, drop the chat and the agent). Nothing is read
 * of the closed run after, and what is left settles. */
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
test_refused_line_then_act (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GString) deep = g_string_new ("{'raw': '{\\'jsonrpc\\': \\'2.0\\', \\'method\\': \\'session/update\\', "
                                          "\\'params\\': {\\'sessionId\\': \\'hostile-session\\', \\'update\\': ");
  g_autofree char *script = NULL;
  gpointer weak[2];

  for (guint i = 0; i < 100; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 100; i++)
    g_string_append_c (deep, ']');
  g_string_append (deep, "}}'}");
  script = g_strdup_printf ("{'runs': [{'session/prompt': [[%s, " MEND_TEST_ACP_CHUNK ("After") ", {'wait': 'session/cancel'}, "
                            "{'answer': {'stopReason': 'cancelled'}}], [" MEND_TEST_ACP_END_TURN "]]}, {}]}", deep->str);

  mend_test_hostile_acp_start_chat (f, script);
  f->action = GPOINTER_TO_INT (data);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (mend_test_hostile_acp_on_turn_finished_act), f);
  weak[0] = f->chat;
  weak[1] = f->agent;
  g_object_add_weak_pointer (weak[0], &weak[0]);
  g_object_add_weak_pointer (weak[1], &weak[1]);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, settled, weak);
  g_assert_cmpint (f->action, ==, MEND_TEST_ACT_NONE);
  if (GPOINTER_TO_INT (data) == MEND_TEST_ACT_UNREF)
    {
      g_assert_null (weak[0]);
      g_assert_null (weak[1]);
      return;
    }
  g_object_remove_weak_pointer (weak[0], &weak[0]);
  g_object_remove_weak_pointer (weak[1], &weak[1]);
  if (GPOINTER_TO_INT (data) == MEND_TEST_ACT_CLOSE)
    return;

  /* The chat goes on: the next prompt is answered. */
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_FAILED);
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "hostile-session"), ==, 0);
}

/* A line of exactly MEND_ACP_FRAMING_MAX_MESSAGE_BYTES (16 MiB), or
 * one byte more, with the prompt's answer in the same write: the bound is
 * on each line, not on the bytes read with it. The one at the bound is
 * read, and the turn ends on the answer after it; the one past it ends
 * the run, and the retry goes to the agent started again. */
static void
test_line_at_the_bound_then_answer (Fixture       *f,
                                    gconstpointer  data)
{
  gsize over = GPOINTER_TO_SIZE (data);
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'batch': [{'exact': %" G_GSIZE_FORMAT "}, "
                                             MEND_TEST_ACP_ANSWER_END_TURN "]}]]}, {}]}",
                                             (gsize) MEND_ACP_FRAMING_MAX_MESSAGE_BYTES + over);
  MendTurn *turn;

  turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, (over == 0 ? 1 : 2));
  g_assert_cmpuint (mend_test_hostile_acp_count_updates (f, "xxxxxxxxxxxxxxxx"), ==, (over == 0 ? 1 : 0));
}

int
main (int   argc,
      char *argv[])
{
  static const char *wrong_ids[] = { "'3'", "3.0", "true", "[3]", "{'id': 3}", "-3" };
  static const char *acts[] = { NULL, "stop", "close", "terminate", "unref" };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, data, func) \
  g_test_add ("/Mend/AttackAcpRpc/" path, Fixture, data, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)

  ADD ("request-ids-of-every-type-are-answered-as-given", NULL, test_request_ids_of_every_type);
  ADD ("huge-ids-stay-bounded/taken", "fs/read_text_file", test_huge_ids_stay_bounded);
  ADD ("huge-ids-stay-bounded/denied", "session/request_permission", test_huge_ids_stay_bounded);
  ADD ("line-not-utf8-ends-the-run", NULL, test_line_not_utf8);
  ADD ("update-handler-nests-a-loop", NULL, test_update_handler_nests_a_loop);
  ADD ("update-handler-restarts-the-agent", NULL, test_update_handler_restarts_the_agent);
  ADD ("request-handler-answers-then-stops-in-a-nested-loop", NULL, test_request_handler_answers_then_stops_in_a_nested_loop);
  ADD ("line-at-the-bound-then-answer-is-read", GSIZE_TO_POINTER (0), test_line_at_the_bound_then_answer);
  ADD ("line-past-the-bound-then-answer-ends-the-run", GSIZE_TO_POINTER (1), test_line_at_the_bound_then_answer);

  for (guint i = 0; i < G_N_ELEMENTS (wrong_ids); i++)
    {
      g_autofree char *result = g_strdup_printf ("/Mend/AttackAcpRpc/answer-id-of-the-wrong-type-ends-the-run/%u", i);
      g_autofree char *error = g_strdup_printf ("/Mend/AttackAcpRpc/error-id-of-the-wrong-type-is-skipped/%u", i);

      g_test_add (result, Fixture, wrong_ids[i], mend_test_hostile_acp_set_up, test_answer_id_of_the_wrong_type,
                  mend_test_hostile_acp_tear_down);
      g_test_add (error, Fixture, wrong_ids[i], mend_test_hostile_acp_set_up, test_error_id_of_the_wrong_type,
                  mend_test_hostile_acp_tear_down);
    }
  for (guint a = MEND_TEST_ACT_STOP; a <= MEND_TEST_ACT_UNREF; a++)
    {
      g_autofree char *path = g_strdup_printf ("/Mend/AttackAcpRpc/refused-line-then-turn-finished-handler-%s", acts[a]);

      g_test_add (path, Fixture, GINT_TO_POINTER (a), mend_test_hostile_acp_set_up, test_refused_line_then_act,
                  mend_test_hostile_acp_tear_down);
    }

#undef ADD

  return g_test_run ();
}
