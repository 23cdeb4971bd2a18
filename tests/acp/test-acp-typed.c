/* test-acp-typed.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What an ACP agent says of a failed prompt, as today's adapters say it
 * (@agentclientprotocol/claude-agent-acp 0.101.0 and
 * @agentclientprotocol/codex-acp 2.6.0, REAL-AGENTS.md), played by
 * tests/support/hostile-acp-agent.py through MendAcpAgent and MendChat:
 * the typed-failure extension the client asks for (a prompt's
 * sessionFailure, the agent's own retries as warnings), the error chunks
 * an adapter writes to a client that did not ask (never the model's
 * output), typed JSON-RPC error data, and a cancellation the user did not
 * ask for. A retry of a prompt the agent kept asks it to continue.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-acp.h"

typedef MendTestHostileAcp Fixture;

#define CLAUDE_INFO "{'answer': {'protocolVersion': 1, 'agentInfo': {'name': '@agentclientprotocol/claude-agent-acp'}}}"
#define CODEX_INFO "{'answer': {'protocolVersion': 1, 'agentInfo': {'name': '@agentclientprotocol/codex-acp'}}}"

/* A prompt that failed with a typed report (end_turn, the report in the
 * result's _meta). */
#define SESSION_FAILURE(category, title, actions) \
  "{'answer': {'stopReason': 'end_turn', '_meta': {'jetbrains': {'air': {'version': 1, " \
  "  'sessionFailure': {'id': 'f-1', 'revision': 1, 'category': '" category "', 'severity': 'error', " \
  "  'title': '" title "', 'actions': " actions "}}}}}}"
/* The words claude-agent-acp 0.101.0 sent for the gateway's 503. */
#define CLAUDE_503 "API Error: 503 no non-exhausted claude accounts available for model claude-sonnet-4-5. " \
                   "This is a server-side issue, usually temporary"
/* codex-acp 2.6.0's words for a 503. */
#define CODEX_503 "unexpected status 503 Service Unavailable: That model is currently overloaded with other requests."

/* The agent's status lines, as a turn showed them. */
static gboolean
statuses_have (GPtrArray  *statuses,
               const char *text)
{
  for (guint i = 0; i < statuses->len; i++)
    if (strstr (g_ptr_array_index (statuses, i), text) != NULL)
      return TRUE;
  return FALSE;
}

/* The Nth session/prompt line the agent read has @text. */
static gboolean
prompt_has (Fixture    *f,
            guint       n,
            const char *text)
{
  return mend_test_file_nth_line_has (f->log, "\"session/prompt\"", n, text);
}

/* The agent playing @script, the chat's text stream into @texts, and one
 * turn, "Fix the build", played to its end. */
static MendTurn *
play_first (Fixture    *f,
            const char *script,
            GString    *texts)
{
  mend_test_hostile_acp_start_chat (f, script);
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  return mend_test_hostile_acp_finished (f, 0);
}

/* The client asks for typed failures and subagents in initialize. */
static void
test_initialize_asks_for_typed_failures (Fixture       *f,
                                         gconstpointer  data)
{
  MendTurn *turn;

  turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'session/prompt': [[" MEND_TEST_ACP_END_TURN "]]}]}");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"capabilities\":[\"sessionFailure\"]"), ==, 1);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"jetbrains\":{\"air\":{\"version\":1"), ==, 1);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"subagents\":{}"), ==, 1);
}

/* A typed "service" failure is transient: retried, and the retry asks the
 * agent, which kept the prompt, to continue; the model's answer is the
 * only text the app sees. */
static void
test_typed_service_failure_is_retried_with_continue (Fixture       *f,
                                                     gconstpointer  data)
{
  g_autoptr(GString) texts = g_string_new (NULL);
  MendTurn *turn;
  MendFailure *failure;

  turn = play_first (f, "{'runs': [{'initialize': [" CLAUDE_INFO "],"
                                       " 'session/prompt': [[" SESSION_FAILURE ("service", CLAUDE_503, "['retry']") "],"
                                       "                    [" MEND_TEST_ACP_END_TURN "]]}]}", texts);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  failure = g_ptr_array_index (f->failures, 0);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_false (mend_failure_get_partial (failure));
  /* The user's words went once; the retry asked to continue. */
  g_assert_true (prompt_has (f, 1, "Fix the build"));
  g_assert_true (prompt_has (f, 2, mend_chat_get_continue_prompt (f->chat)));
  g_assert_false (prompt_has (f, 2, "Fix the build"));
  g_assert_cmpstr (texts->str, ==, "Done.");
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* The typed classes: a limit is never retried and keeps its reset time;
 * access is the key; a "service" failure whose words say the request is
 * wrong (both adapters call a 400 so) is not retried either. */
static void
test_typed_failures_by_category (Fixture       *f,
                                 gconstpointer  data)
{
  static const struct {
    const char      *report;
    MendReason       reason;
    MendFailureKind  kind;
  } cases[] = {
    { SESSION_FAILURE ("limit", "You have hit your limit · resets 12:39am (UTC)", "['retry']"),
      MEND_REASON_USAGE_LIMIT, MEND_FAILURE_LIMIT },
    { SESSION_FAILURE ("limit", "Quota exceeded. Check your plan and billing details.", "[]"),
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
    { SESSION_FAILURE ("access", "Please run /login", "[]"),
      MEND_REASON_AUTH, MEND_FAILURE_PERMANENT },
    { SESSION_FAILURE ("service", "API Error: 400 messages: text content blocks must be non-empty", "['retry']"),
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
    { SESSION_FAILURE ("request", "Something about the request", "[]"),
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *script = g_strdup_printf ("{'runs': [{'initialize': [" CLAUDE_INFO "],"
                                                 " 'session/prompt': [[%s], [" MEND_TEST_ACP_END_TURN "]]}]}",
                                                 cases[i].report);
      MendTurn *turn;
      MendFailure *failure;

      g_test_message ("case %u", i);
      if (i > 0)
        {
          mend_test_hostile_acp_tear_down (f, NULL);
          mend_test_hostile_acp_set_up (f, NULL);
        }
      turn = mend_test_hostile_acp_run_one_turn (f, script);
      failure = mend_turn_get_last_failure (turn);
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
      g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
      g_assert_cmpint (mend_failure_get_reason (failure), ==, cases[i].reason);
      g_assert_cmpint (mend_failure_get_kind (failure), ==, cases[i].kind);
      if (i == 0)
        g_assert_cmpint (mend_failure_get_resets_at (failure), >, 0);
    }
}

/* The agent's own retries, as typed warnings: the turn's agent status,
 * its words redacted; not a failure of the prompt. */
static void
test_typed_warning_is_the_agents_retry (Fixture       *f,
                                        gconstpointer  data)
{
  g_autoptr(GPtrArray) statuses = g_ptr_array_new_with_free_func (g_free);
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CLAUDE_INFO "],"
                                       " 'session/prompt': [["
                                       "  {'update': {'sessionUpdate': 'session_info_update', '_meta': {'jetbrains': {'air': {"
                                       "   'version': 1, 'sessionFailure': {'id': 'w-1', 'revision': 1, 'category': 'service',"
                                       "   'severity': 'warning', 'title': 'Retrying Claude, attempt 1 of 2 (key sk-ant-api03-"
                                       "abcdefghijklmnopqrstuvwxyz0123456789)', 'actions': []}}}}}},"
                                       "  " MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_acp_watch_agent_status (f->chat, statuses);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_true (statuses_have (statuses, "The agent is retrying (Retrying Claude, attempt 1 of 2"));
  g_assert_false (statuses_have (statuses, "abcdefghijklmnop"));
  g_signal_handlers_disconnect_by_data (f->chat, statuses);
  g_signal_handlers_disconnect_by_data (turn, statuses);
}

/* To a client that did not ask for typed failures, claude-agent-acp
 * writes its error as a chunk, then answers with -32603: the chunk is no
 * output (the failure is not partial, and retried) and no text the app
 * is shown. */
static void
test_claude_error_chunk_is_not_output (Fixture       *f,
                                       gconstpointer  data)
{
  g_autoptr(GString) texts = g_string_new (NULL);
  MendTurn *turn;
  MendFailure *failure;

  turn = play_first (f, "{'runs': [{'initialize': [" CLAUDE_INFO "],"
                                       " 'session/prompt': [[" MEND_TEST_ACP_CHUNK (CLAUDE_503) ","
                                       "  {'error': {'code': -32603, 'message': 'Internal error: " CLAUDE_503 "',"
                                       "             'data': {'errorKind': 'server_error'}}}],"
                                       "  [" MEND_TEST_ACP_END_TURN "]]}]}", texts);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  failure = g_ptr_array_index (f->failures, 0);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_false (mend_failure_get_partial (failure));
  g_assert_cmpstr (texts->str, ==, "Done.");
  g_assert_true (prompt_has (f, 2, mend_chat_get_continue_prompt (f->chat)));
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* codex-acp's shape: its thread status says systemError, the error comes
 * as a chunk, and the prompt ends with a plain end_turn. That is the
 * prompt's failure, with the chunk's words; the same with no status,
 * where the profile knows the words. */
static void
test_codex_error_then_end_turn_fails (Fixture       *f,
                                      gconstpointer  data)
{
  const char *status = data;
  g_autoptr(GString) texts = g_string_new (NULL);
  g_autofree char *script = NULL;
  MendTurn *turn;
  MendFailure *failure;

  script = g_strdup_printf ("{'runs': [{'initialize': [" CODEX_INFO "],"
                            " 'session/prompt': [[%s" MEND_TEST_ACP_CHUNK (CODEX_503) ", "
                            MEND_TEST_ACP_ANSWER_END_TURN "],"
                            "  [" MEND_TEST_ACP_END_TURN "]]}]}",
                            status ? "{'update': {'sessionUpdate': 'session_info_update', "
                                     "'_meta': {'codex': {'threadStatus': {'type': 'systemError'}}}}}, " : "");
  turn = play_first (f, script, texts);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  failure = g_ptr_array_index (f->failures, 0);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "unexpected status 503"));
  g_assert_cmpstr (texts->str, ==, "Done.");
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* Words that begin as an error does, followed by more of the model's
 * output: they were the model's after all, shown, and the turn
 * succeeded. */
static void
test_held_chunk_is_released_by_output (Fixture       *f,
                                       gconstpointer  data)
{
  g_autoptr(GString) texts = g_string_new (NULL);
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CLAUDE_INFO "],"
                                       " 'session/prompt': [["
                                       "  {'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm1',"
                                       "              'content': {'type': 'text', 'text': 'API Error: 503 is what the log says. '}}},"
                                       "  {'update': {'sessionUpdate': 'tool_call', 'toolCallId': 't1', 'title': 'Read log',"
                                       "              'status': 'pending'}},"
                                       "  {'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm2',"
                                       "              'content': {'type': 'text', 'text': 'The gateway was down.'}}},"
                                       "  " MEND_TEST_ACP_ANSWER_END_TURN "]]}]}");
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_hostile_acp_submit (f, "Why did the build fail?");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpstr (texts->str, ==, "API Error: 503 is what the log says. The gateway was down.");
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* codex-acp's typed JSON-RPC error data: usageLimitExceeded is a limit,
 * whatever the words. */
static void
test_codex_error_info_is_typed (Fixture       *f,
                                gconstpointer  data)
{
  MendTurn *turn;

  turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'initialize': [" CODEX_INFO "],"
                                                " 'session/prompt': [[{'error': {'code': -32603, 'message': 'Internal error',"
                                                "   'data': {'message': 'Something went wrong.',"
                                                "            'codexErrorInfo': 'usageLimitExceeded'}}}]]}]}");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_USAGE_LIMIT);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_LIMIT);
}

/* A cancellation libmend did not ask for (ACP lets an agent send -32800,
 * or end a prompt "cancelled", for its own) is no Stop of the user's: a
 * transient failure, retried, the queue untouched. */
static void
test_agents_own_cancel_is_retried (Fixture       *f,
                                   gconstpointer  data)
{
  const char *answer = data;
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[%s], [" MEND_TEST_ACP_END_TURN "]]}]}",
                                             answer);
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, script);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_submit (f, "Then update the changelog");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpint (mend_failure_get_kind (g_ptr_array_index (f->failures, 0)), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_turn_get_prompt (mend_test_hostile_acp_finished (f, 1)), ==, "Then update the changelog");
}

static MendSubagent *
the_subagent (Fixture *f)
{
  GListModel *model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));
  g_autoptr(MendSubagent) s = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (model), ==, 1);
  s = g_list_model_get_item (model, 0);
  return s;
}

/* claude-agent-acp 0.101.0's subagents, to a client that asks: a
 * subagent_update that ends idle on an error fails the subagent with its
 * words; the older shape (subagent_spawned, subagent_state_update
 * "failed") with the words of the subagent's own session, whose chunks
 * are never the answer. A new generation of its session is the same
 * subagent, running again. */
static void
test_subagent_sessions (Fixture       *f,
                        gconstpointer  data)
{
  gboolean older = data != NULL;
  g_autoptr(GString) texts = g_string_new (NULL);
  g_autofree char *script = NULL;
  MendSubagent *s;

  script = g_strdup_printf (
    "{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [[%s, " MEND_TEST_ACP_END_TURN "]]}]}",
    older
    ? "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': 'a50be9c0', 'name': 'Survey the tree'}},"
      "{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'sessionId': 'a50be9c0', 'update': {"
      "  'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': '" CLAUDE_503 "'}}}}},"
      "{'update': {'sessionUpdate': 'subagent_state_update', 'subagentSessionId': 'a50be9c0', 'state': 'failed'}},"
      "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': 'a50be9c0:generation:2',"
      "            'name': 'Survey the tree'}}"
    : "{'update': {'sessionUpdate': 'subagent_update', 'sessionId': 'a50be9c0', 'title': 'Survey the tree',"
      "            'state': {'state': 'running'}}},"
      "{'update': {'sessionUpdate': 'subagent_update', 'sessionId': 'a50be9c0', 'state': {'state': 'idle',"
      "            'stopReason': 'error', 'error': {'code': -32603, 'message': 'Agent terminated early due to an "
      "API error: " CLAUDE_503 "'}}}}");
  mend_test_hostile_acp_start_chat (f, script);
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_hostile_acp_submit (f, "Start the survey in the background");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));

  s = the_subagent (f);
  g_assert_cmpstr (mend_subagent_get_agent_id (s), ==, "a50be9c0");
  g_assert_cmpstr (mend_subagent_get_name (s), ==, "Survey the tree");
  g_assert_nonnull (mend_subagent_get_failure (s));
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_subagent_get_state (s), ==, older ? MEND_SUBAGENT_RUNNING : MEND_SUBAGENT_FAILED);
  g_assert_cmpstr (texts->str, ==, "Done.");
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func, data) \
  g_test_add ("/Mend/AcpTyped/" path, Fixture, data, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)

  ADD ("initialize-asks-for-typed-failures", test_initialize_asks_for_typed_failures, NULL);
  ADD ("typed-service-failure-is-retried-with-continue", test_typed_service_failure_is_retried_with_continue, NULL);
  ADD ("typed-failures-by-category", test_typed_failures_by_category, NULL);
  ADD ("typed-warning-is-the-agents-retry", test_typed_warning_is_the_agents_retry, NULL);
  ADD ("claude-error-chunk-is-not-output", test_claude_error_chunk_is_not_output, NULL);
  ADD ("codex-error-then-end-turn-fails/after-system-error", test_codex_error_then_end_turn_fails, "status");
  ADD ("codex-error-then-end-turn-fails/by-its-words", test_codex_error_then_end_turn_fails, NULL);
  ADD ("held-chunk-is-released-by-output", test_held_chunk_is_released_by_output, NULL);
  ADD ("codex-error-info-is-typed", test_codex_error_info_is_typed, NULL);
  ADD ("agents-own-cancel-is-retried/stop-reason", test_agents_own_cancel_is_retried,
       "{'answer': {'stopReason': 'cancelled'}}");
  ADD ("agents-own-cancel-is-retried/-32800", test_agents_own_cancel_is_retried,
       "{'error': {'code': -32800, 'message': 'Request cancelled'}}");

  ADD ("subagent-sessions/subagent-update", test_subagent_sessions, NULL);
  ADD ("subagent-sessions/older-shape-and-a-new-generation", test_subagent_sessions, "older");

#undef ADD

  return g_test_run ();
}
