/* test-attack-acp-typed.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on what MendAcpAgent reads of a failed prompt, against
 * tests/support/hostile-acp-agent.py: hostile values in the typed-failure
 * extension (sessionFailure on a result and as a warning), codex-acp's
 * _meta, the held error chunks, the subagents' own sessions; handlers
 * that stop, close, end, drop or submit from a turn's agent status or the
 * chat's record of a restart; a Stop's late answer; a kept prompt and
 * the user's Retry when the agent comes back in a new session. Run them under
 * AddressSanitizer and valgrind too.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-acp.h"
#include "mend-test-bounds.h"

typedef MendTestHostileAcp Fixture;
typedef MendTestAct Action;

static const char *action_names[] = { NULL, "stop", "close", "terminate", "unref", "submit", "set-profile" };

#define CLAUDE_INFO "{'answer': {'protocolVersion': 1, 'agentInfo': {'name': '@agentclientprotocol/claude-agent-acp'}}}"
#define CODEX_INFO "{'answer': {'protocolVersion': 1, 'agentInfo': {'name': '@agentclientprotocol/codex-acp'}}}"
#define SECRET "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
#define BEARER "Bearer eyJhbGciOiJIUzI1NiJ9abcdefghijklmnop"
/* A warning of the agent's own retry, with @title (JSON). */
#define WARNING(title) \
  "{'update': {'sessionUpdate': 'session_info_update', '_meta': {'jetbrains': {'air': {'version': 1," \
  " 'sessionFailure': {'id': 'w-1', 'category': 'service', 'severity': 'warning', 'title': " title "}}}}}}"

static gboolean
is_finished (MendTurn *turn)
{
  MendTurnState state = mend_turn_get_state (turn);

  return state == MEND_TURN_SUCCEEDED || state == MEND_TURN_FAILED || state == MEND_TURN_STOPPED;
}

/* Words an app may show: valid UTF-8, no secret in them. */
static void
assert_showable (const char *text)
{
  g_assert_nonnull (text);
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_null (strstr (text, "abcdefghijklmnop"));
}

/* Warnings and codex retries with hostile words and types: the agent's
 * status is shown valid, redacted and short; nothing fails. */
static void
test_hostile_retry_status (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(GPtrArray) statuses = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) script = g_string_new ("{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [[");
  g_autofree char *huge = g_strnfill (100000, 'w');
  MendTurn *turn;

  g_string_append (script, WARNING ("'Retrying \\ud800 now (" SECRET ")'") ",");
  g_string_append (script, WARNING ("'Retrying, " BEARER "'") ",");
  g_string_append_printf (script, WARNING ("'%s'") ",", huge);
  g_string_append (script, WARNING ("42") "," WARNING ("['a']") "," WARNING ("null") ",");
  g_string_append (script, "{'update': {'sessionUpdate': 'session_info_update', '_meta': {'jetbrains': {'air': "
                           "{'sessionFailure': [1, 2]}}}}},");
  g_string_append (script, "{'update': {'sessionUpdate': 'session_info_update', '_meta': {'codex': "
                           "{'error': {'message': 'Reconnecting 1/5 \\udc00 " BEARER "', 'willRetry': 1}}}}},");
  g_string_append (script, "{'update': {'sessionUpdate': 'session_info_update', '_meta': {'codex': "
                           "{'error': {'message': ['no'], 'willRetry': 'yes'}, 'threadStatus': [1]}}}},");
  g_string_append (script, "{'update': {'sessionUpdate': 'session_info_update', '_meta': {'codex': "
                           "{'error': {'message': 'x', 'willRetry': {'a': 1}}, 'threadStatus': {'type': 7}}}}},");
  g_string_append (script, MEND_TEST_ACP_END_TURN "]]}]}");

  mend_test_hostile_acp_start_chat (f, script->str);
  mend_test_acp_watch_agent_status (f->chat, statuses);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (statuses->len, >=, 4);
  for (guint i = 0; i < statuses->len; i++)
    {
      const char *status = g_ptr_array_index (statuses, i);

      assert_showable (status);
      g_assert_cmpuint (strlen (status), <=, 400);
    }
  g_signal_handlers_disconnect_by_data (f->chat, statuses);
  g_signal_handlers_disconnect_by_data (turn, statuses);
}

/* Typed reports on a result with hostile values: a report that is no
 * object is none; one with no usable words fails with words of its own;
 * huge and secret-bearing titles are cut and redacted; a report on a
 * "cancelled" end, or beside refusal, is the prompt's failure. */
static const char *hostile_reports[] = {
  "{'answer': {'stopReason': 'end_turn', '_meta': {'jetbrains': {'air': {'sessionFailure': [1]}}}}}",
  "{'answer': {'stopReason': 'end_turn', '_meta': {'jetbrains': {'air': {'sessionFailure': {"
  "  'title': 42, 'category': ['service'], 'severity': null}}}}}}",
  "{'answer': {'stopReason': 'end_turn', '_meta': {'jetbrains.air': {'sessionFailure': {"
  "  'title': 'API Error: 503 \\ud800 " SECRET "', 'category': 'service'}}}}}",
  "{'answer': {'stopReason': 'cancelled', '_meta': {'jetbrains': {'air': {'sessionFailure': {"
  "  'title': 'Overloaded " BEARER "', 'category': 'service', 'severity': 'error'}}}}}}",
  "{'answer': {'stopReason': 'refusal', '_meta': {'jetbrains': {'air': {'sessionFailure': {"
  "  'title': '', 'category': {'a': 1}}}}}}}",
  "{'answer': {'stopReason': 7, '_meta': {'jetbrains': 'air'}}}",
  "{'answer': {'stopReason': 'end_turn', '_meta': {'jetbrains': {'air': {'sessionFailure': {"
  "  'title': 'HUGE', 'category': 'connection'}}}}}}",
};

static void
test_hostile_session_failure (Fixture       *f,
                              gconstpointer  data)
{
  const char *report = data;
  g_autoptr(GString) prompt = g_string_new (report);
  g_autofree char *script = NULL;
  g_autofree char *huge = g_strnfill (200000, 'h');
  MendTurn *turn;

  if (strstr (report, "HUGE") != NULL)
    {
      g_autofree char *title = g_strdup_printf ("Overloaded %s %s", BEARER, huge);

      g_string_replace (prompt, "HUGE", title, 1);
    }
  script = g_strdup_printf ("{'runs': [{'initialize': [" CLAUDE_INFO "],"
                            " 'session/prompt': [[%s], [" MEND_TEST_ACP_END_TURN "]]}]}", prompt->str);
  turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_true (is_finished (turn));
  for (guint i = 0; i < f->failures->len; i++)
    {
      MendFailure *failure = g_ptr_array_index (f->failures, i);

      assert_showable (mend_failure_get_message (failure));
      g_assert_cmpuint (strlen (mend_failure_get_message (failure)), <=, 8192);
    }
  if (mend_turn_get_last_failure (turn) != NULL)
    assert_showable (mend_failure_get_message (mend_turn_get_last_failure (turn)));
}

/* Words that begin as an error does, on and on in one message, then the
 * model's output: all of it is the model's, none of it lost to the held
 * text's bound. */
static void
test_held_past_its_bound_is_output (Fixture       *f,
                                    gconstpointer  data)
{
  g_autoptr(GString) texts = g_string_new (NULL);
  g_autoptr(GString) script = g_string_new ("{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [[");
  g_autoptr(GString) expected = g_string_new ("API Error: 503 is what the log says. ");
  g_autofree char *line = g_strnfill (3000, 'x');
  MendTurn *turn;

  g_string_append (script, "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm1',"
                           " 'content': {'type': 'text', 'text': 'API Error: 503 is what the log says. '}}},");
  for (guint i = 0; i < 6; i++)
    {
      g_string_append_printf (script, "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm1',"
                                      " 'content': {'type': 'text', 'text': '%s'}}},", line);
      g_string_append (expected, line);
    }
  g_string_append (script, "{'update': {'sessionUpdate': 'tool_call', 'toolCallId': 't1', 'title': 'Read log'}},"
                           "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm2',"
                           " 'content': {'type': 'text', 'text': 'The end.'}}}," MEND_TEST_ACP_ANSWER_END_TURN "]]}]}");
  g_string_append (expected, "The end.");

  mend_test_hostile_acp_start_chat (f, script->str);
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_hostile_acp_submit (f, "Why did the build fail?");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (texts->len, ==, expected->len);
  g_assert_cmpstr (texts->str, ==, expected->str);
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* A held error of many chunks, ended with a plain end_turn: the failure
 * has its words, cut and valid. */
static void
test_held_flood_fails_bounded (Fixture       *f,
                               gconstpointer  data)
{
  g_autoptr(GString) script = g_string_new ("{'runs': [{'initialize': [" CODEX_INFO "], 'session/prompt': [[");
  g_autofree char *line = g_strnfill (1000, 'y');
  MendFailure *failure;
  MendTurn *turn;

  g_string_append (script, "{'update': {'sessionUpdate': 'session_info_update', "
                           "'_meta': {'codex': {'threadStatus': {'type': 'systemError'}}}}},");
  for (guint i = 0; i < 200; i++)
    g_string_append_printf (script, "{'update': {'sessionUpdate': 'agent_message_chunk',"
                                    " 'content': {'type': 'text', 'text': '\\u00e9%s'}}},", line);
  g_string_append (script, MEND_TEST_ACP_ANSWER_END_TURN "], [" MEND_TEST_ACP_END_TURN "]]}]}");

  turn = mend_test_hostile_acp_run_one_turn (f, script->str);
  /* Words that say nothing known: not retried. */
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  failure = mend_turn_get_last_failure (turn);
  assert_showable (mend_failure_get_message (failure));
  g_assert_true (g_str_has_prefix (mend_failure_get_message (failure), "\xc3\xa9yyy"));
}

static MendSubagent *
subagent_named (Fixture    *f,
                const char *id)
{
  GListModel *model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(MendSubagent) s = g_list_model_get_item (model, i);

      if (g_strcmp0 (mend_subagent_get_agent_id (s), id) == 0)
        return s;
    }
  return NULL;
}

/* A subagent's last words, longer than they are kept, of characters of
 * two bytes: its failure says them whole characters. */
static void
test_subagent_words_cut_in_a_character (Fixture       *f,
                                        gconstpointer  data)
{
  g_autoptr(GString) words = g_string_new ("API Error: 503 ");
  g_autofree char *script = NULL;
  MendSubagent *s;

  for (guint i = 0; i < 3000; i++)
    g_string_append (words, "\\u00e9");
  script = g_strdup_printf (
    "{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [["
    "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': 'sub-1', 'name': 'Survey'}},"
    "{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'sessionId': 'sub-1', 'update': {"
    "  'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': '%s'}}}}},"
    "{'update': {'sessionUpdate': 'subagent_state_update', 'subagentSessionId': 'sub-1', 'state': 'failed'}},"
    MEND_TEST_ACP_END_TURN "]]}]}", words->str);
  mend_test_hostile_acp_run_one_turn (f, script);

  s = subagent_named (f, "sub-1");
  g_assert_nonnull (s);
  g_assert_nonnull (mend_subagent_get_failure (s));
  assert_showable (mend_failure_get_message (mend_subagent_get_failure (s)));
  /* No character cut in two, shown as a replacement. */
  g_assert_null (strstr (mend_failure_get_message (mend_subagent_get_failure (s)), "\xef\xbf\xbd"));
}

/* Odd session ids: empty, a generation mark alone, the chat's own
 * session, a huge one, hostile types; a flood of subagents, each with
 * words. The chat's answer stays the answer, and nothing breaks. */
static void
test_subagent_odd_ids_and_flood (Fixture       *f,
                                 gconstpointer  data)
{
  static const char *ids[] = { "''", "':generation:'", "':generation:2'", "'hostile-session'", "42", "null",
                               "['a']", "'x:generation:'" };
  g_autoptr(GString) texts = g_string_new (NULL);
  g_autoptr(GString) script = g_string_new ("{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [[");
  g_autofree char *huge = g_strnfill (100000, 'i');
  g_autofree char *words = g_strnfill (10000, 'z');
  GListModel *model;
  MendTurn *turn;

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    g_string_append_printf (script,
      "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': %s, 'name': 'Odd'}},"
      "{'update': {'sessionUpdate': 'subagent_update', 'sessionId': %s, 'title': ['t'], 'state': {'state': 'running'}}},"
      "{'update': {'sessionUpdate': 'subagent_update', 'sessionId': %s, 'state': {'state': 'idle', "
      "  'stopReason': 'error', 'error': {'message': 7}}}},"
      "{'update': {'sessionUpdate': 'subagent_state_update', 'subagentSessionId': %s, 'state': 'failed'}},"
      "{'update': {'sessionUpdate': 'subagent_update', 'sessionId': %s, 'state': 'idle'}},",
      ids[i], ids[i], ids[i], ids[i], ids[i]);
  g_string_append_printf (script, "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': '%s'}},"
                                  "{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'sessionId': '%s',"
                                  " 'update': {'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': 'w'}}}}},",
                          huge, huge);
  for (guint i = 0; i < 400; i++)
    g_string_append_printf (script,
      "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': 's%u:generation:%u', 'name': 'Flood %u'}},"
      "{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'sessionId': 's%u:generation:%u', 'update': {"
      "  'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': '%s'}}}}},"
      "{'update': {'sessionUpdate': 'subagent_state_update', 'subagentSessionId': 's%u:generation:%u', 'state': 'failed'}},",
      i, i, i, i, i, words, i, i);
  g_string_append (script, MEND_TEST_ACP_END_TURN "]]}]}");

  mend_test_hostile_acp_start_chat (f, script->str);
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_hostile_acp_submit (f, "Start the surveys");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (texts->str, ==, "Done.");
  model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));
  g_assert_cmpuint (g_list_model_get_n_items (model), <=, 1024);
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(MendSubagent) s = g_list_model_get_item (model, i);

      g_assert_cmpuint (strlen (mend_subagent_get_agent_id (s)), <=, MEND_SUBAGENT_MAX_ID_BYTES);
      if (mend_subagent_get_failure (s) != NULL)
        assert_showable (mend_failure_get_message (mend_subagent_get_failure (s)));
    }
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* The resident memory of this process, in kB. */
static gsize
resident_kb (void)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, "VmRSS:");
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + strlen ("VmRSS:"), NULL, 10);
}

/* Subagent sessions with ids of a megabyte each, each with words: no
 * subagent has such an id, and nothing of them is kept. */
static void
test_subagent_huge_session_ids (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(GString) script = g_string_new ("{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [[");
  g_autofree char *id = g_strnfill (1024 * 1024, 'i');
  gsize before;
  MendTurn *turn;

#ifdef MEND_TEST_ASAN
  g_test_skip ("resident memory is the sanitizer's own");
  return;
#endif
  if (RUNNING_ON_VALGRIND)
    {
      g_test_skip ("resident memory is valgrind's own");
      return;
    }
  for (guint i = 0; i < 64; i++)
    g_string_append_printf (script,
      "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': '%s%u', 'name': 'Wide'}},"
      "{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'sessionId': '%s%u', 'update': {"
      "  'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': 'API Error: 503'}}}}},",
      id, i, id, i);
  g_string_append (script, MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_hostile_acp_start_chat (f, script->str);
  g_string_free (g_steal_pointer (&script), TRUE);
  before = resident_kb ();

  mend_test_hostile_acp_submit (f, "Start the surveys");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat))), ==, 0);
  /* 64 MB of ids, were they kept; the fixture's copies of the updates
   * go first. */
  g_ptr_array_set_size (f->updates, 0);
  g_assert_cmpuint (resident_kb (), <, before + 32 * 1024);
}

/* Re-entrant handlers */

/* After a handler did @action once: the first turn is over (stopped by a
 * Stop or a close), and the one a submit made succeeds. */
static void
assert_handler_acted (Fixture *f,
                      Action   action)
{
  MendTurn *turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_true (is_finished (turn));
  if (action == MEND_TEST_ACT_STOP || action == MEND_TEST_ACT_CLOSE)
    g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  if (action == MEND_TEST_ACT_SUBMIT)
    {
      mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
      g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
    }
}



static void
on_status_act (MendTurn   *turn,
               GParamSpec *pspec,
               Fixture    *f)
{
  if (mend_turn_get_agent_status (turn) != NULL)
    mend_test_hostile_acp_act (f);
}

static void
on_started_status_act (MendChat *chat,
                       MendTurn *turn,
                       Fixture  *f)
{
  g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_status_act), f);
}

/* A handler of the agent status the agent's own retry sets, in the same
 * update as held error text and then output. */
static void
test_status_handler_reentrant (Fixture       *f,
                               gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data);

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CODEX_INFO "], 'session/prompt': [["
    "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm1',"
    " 'content': {'type': 'text', 'text': 'unexpected status 503'}}},"
    "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm1', 'content': {'type': 'text', 'text': ' more'},"
    " '_meta': {'codex': {'error': {'message': 'Reconnecting 1/5', 'willRetry': true}}}}},"
    "{'update': {'sessionUpdate': 'tool_call', 'toolCallId': 't1', 'title': 'Read',"
    " '_meta': {'jetbrains': {'air': {'sessionFailure': {'severity': 'warning', 'title': 'Retrying 2'}}}}}},"
    MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_status_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  assert_handler_acted (f, action);
}

/* The turn's signals one update may emit, one after the other: the agent
 * status its warning sets, then, as its output lets held error text go,
 * output-seen and the text, twice. */
typedef enum
{
  SIGNAL_STATUS,
  SIGNAL_OUTPUT_SEEN,
  SIGNAL_TEXT,
  N_TURN_SIGNALS
} TurnSignal;

static const char *turn_signal_names[] = { "agent-status", "output-seen", "text-delta" };

/* notify:: (a GParamSpec) or text-delta (the text). */
static void
on_turn_signal_act (MendTurn *turn,
                    gpointer  arg,
                    Fixture  *f)
{
  mend_test_hostile_acp_act (f);
}

static void
on_started_connect_signal (MendChat *chat,
                           MendTurn *turn,
                           Fixture  *f)
{
  static const char *detailed[] = { "notify::agent-status", "notify::output-seen", "text-delta" };
  TurnSignal signal = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (chat), "turn-signal"));

  g_signal_connect (turn, detailed[signal], G_CALLBACK (on_turn_signal_act), f);
}

/* A handler of each turn signal that one update emits, in the middle of
 * the update: the rest of the update is read without the turn, the chat
 * or the agent the handler let go. */
static void
test_turn_signal_handler_reentrant (Fixture       *f,
                                    gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data) % 16;
  TurnSignal signal = GPOINTER_TO_INT (data) / 16;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CODEX_INFO "], 'session/prompt': [["
    "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm1',"
    " 'content': {'type': 'text', 'text': 'unexpected status 503'}}},"
    "{'update': {'sessionUpdate': 'agent_message_chunk', 'messageId': 'm2', 'content': {'type': 'text', 'text': 'Fixed.'},"
    " '_meta': {'jetbrains': {'air': {'sessionFailure': {'severity': 'warning', 'title': 'Retrying 2'}}}}}},"
    MEND_TEST_ACP_END_TURN "]]}]}");
  g_object_set_data (G_OBJECT (f->chat), "turn-signal", GINT_TO_POINTER (signal));
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_connect_signal), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  assert_handler_acted (f, action);
}

static void
on_record_restart_act (MendChat   *chat,
                       const char *json,
                       Fixture    *f)
{
  if (strstr (json, "\"agent_restart\"") != NULL)
    mend_test_hostile_acp_act (f);
}

/* A handler of the chat's record that the agent was started again. */
static void
test_restart_record_reentrant (Fixture       *f,
                               gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data);
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[{'exit': 1}]]}, {}]}");
  g_signal_connect (f->chat, "record", G_CALLBACK (on_record_restart_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  turn = mend_test_hostile_acp_finished (f, 0);
  g_assert_true (is_finished (turn));
  g_assert_cmpint (f->action, ==, MEND_TEST_ACT_NONE);
  if (action == MEND_TEST_ACT_STOP || action == MEND_TEST_ACT_CLOSE)
    g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  if (action == MEND_TEST_ACT_SUBMIT)
    {
      mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
      g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
    }
}

static void
on_subagent_waiting_act (MendSubagentRetry *retry,
                         MendSubagent      *subagent,
                         MendRetryWait     *wait,
                         Fixture           *f)
{
  mend_test_hostile_acp_act (f);
}

/* A handler of the resume a subagent's failure schedules, the failure
 * read from its own session's words, in the middle of the turn's
 * updates. */
static void
test_subagent_failure_handler_reentrant (Fixture       *f,
                                         gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data);

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [["
    "{'update': {'sessionUpdate': 'subagent_spawned', 'subagentSessionId': 'sub-1', 'name': 'Survey'}},"
    "{'send': {'jsonrpc': '2.0', 'method': 'session/update', 'params': {'sessionId': 'sub-1', 'update': {"
    "  'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': 'API Error: 503 upstream'}}}}},"
    "{'update': {'sessionUpdate': 'subagent_update', 'sessionId': 'sub-1', 'state': {'state': 'idle',"
    "  'stopReason': 'error', 'error': {'message': 'API Error: 529 Overloaded'}}}},"
    "{'update': {'sessionUpdate': 'subagent_state_update', 'subagentSessionId': 'sub-1', 'state': 'failed'}},"
    MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (mend_chat_get_subagents (f->chat), "waiting", G_CALLBACK (on_subagent_waiting_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Start the survey");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  g_assert_cmpint (f->action, ==, MEND_TEST_ACT_NONE);
  g_assert_true (is_finished (mend_test_hostile_acp_finished (f, 0)));
  g_signal_handlers_disconnect_by_data (mend_chat_get_subagents (f->chat), f);
}

/* A Stop, and the cancelled prompt's late answer: held error text, and a
 * typed failure on the answer. Neither is the next turn's: its prompt
 * goes whole (no continue), its answer is its own. */
static void
test_stop_then_late_typed_answer (Fixture       *f,
                                  gconstpointer  data)
{
  g_autoptr(GString) texts = g_string_new (NULL);
  MendTurn *second;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [["
    MEND_TEST_ACP_CHUNK ("API Error: 503 upstream") ", {'wait': 'session/cancel'},"
    "{'answer': {'stopReason': 'cancelled', '_meta': {'jetbrains': {'air': {'sessionFailure': {"
    " 'category': 'service', 'severity': 'error', 'title': 'API Error: 503 upstream'}}}}}}],"
    "[" MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_log_has, "session/prompt");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (0));
  mend_chat_stop (f->chat);
  mend_test_hostile_acp_submit (f, "Then update the changelog");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));

  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_STOPPED);
  second = mend_test_hostile_acp_finished (f, 1);
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (second), ==, 1);
  g_assert_true (mend_test_file_nth_line_has (f->log, "\"session/prompt\"", 2, "Then update the changelog"));
  g_assert_false (mend_test_file_nth_line_has (f->log, "\"session/prompt\"", 2, mend_chat_get_continue_prompt (f->chat)));
  g_assert_cmpstr (texts->str, ==, "Done.");
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* The agent kept the failed prompt, then exited at the retry; started again, it
 * cannot load the session and opens a new one, which has no history:
 * the retry sends the user's words, not a continue that would have
 * nothing to continue. One that loads it is asked to continue. */
static void
test_kept_prompt_across_a_new_session (Fixture       *f,
                                       gconstpointer  data)
{
  gboolean loads = data != NULL;
  g_autofree char *script = NULL;
  MendTurn *turn;

  script = g_strdup_printf ("{'runs': [{'initialize': [%s], 'session/prompt': [["
                            "{'answer': {'stopReason': 'end_turn', '_meta': {'jetbrains': {'air': {'sessionFailure': {"
                            " 'category': 'service', 'severity': 'error', 'title': 'API Error: 503 overloaded'}}}}}}"
                            "], [{'exit': 1}]]},"
                            " {'initialize': [%s], 'session/load': [{'answer': {}}],"
                            "  'session/prompt': [[" MEND_TEST_ACP_END_TURN "]]}]}",
                            loads ? "{'answer': {'protocolVersion': 1, 'agentCapabilities': {'loadSession': true},"
                                    " 'agentInfo': {'name': '@agentclientprotocol/claude-agent-acp'}}}" : CLAUDE_INFO,
                            loads ? "{'answer': {'protocolVersion': 1, 'agentCapabilities': {'loadSession': true},"
                                    " 'agentInfo': {'name': '@agentclientprotocol/claude-agent-acp'}}}" : CLAUDE_INFO);
  mend_test_hostile_acp_start_chat (f, script);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 3);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "\"session/load\""), ==, loads ? 1 : 0);
  g_assert_true (mend_test_file_nth_line_has (f->log, "\"session/prompt\"", 1, "Fix the build"));
  if (loads)
    g_assert_true (mend_test_file_nth_line_has (f->log, "\"session/prompt\"", 3, mend_chat_get_continue_prompt (f->chat)));
  else
    g_assert_true (mend_test_file_nth_line_has (f->log, "\"session/prompt\"", 3, "Fix the build"));
}

/* The user's Retry of a turn whose prompt the agent kept, after the agent
 * exited: started again without its session (no loadSession), it has no
 * history to continue, and gets the prompt. */
static void
test_retry_into_a_new_session_gets_the_prompt (Fixture       *f,
                                               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [" CLAUDE_INFO "], 'session/prompt': [["
                                       "{'error': {'code': -32603, 'message': 'API Error: 400 invalid_request_error'}},"
                                       "{'exit': 1}]]},"
                                       " {'initialize': [" CLAUDE_INFO "], 'session/prompt': [[" MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_FAILED);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_not_running, NULL);

  g_assert_true (mend_chat_retry (f->chat, &error));
  g_assert_no_error (error);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  turn = mend_test_hostile_acp_finished (f, 1);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_true (mend_test_file_nth_line_has (f->log, "\"session/prompt\"", 2, "Fix the build"));
}

int
main (int   argc,
      char *argv[])
{
  static const Action actions[] = { MEND_TEST_ACT_STOP, MEND_TEST_ACT_CLOSE, MEND_TEST_ACT_TERMINATE,
                                    MEND_TEST_ACT_UNREF, MEND_TEST_ACT_SUBMIT };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func, data) \
  g_test_add ("/Mend/AttackAcpTyped/" path, Fixture, data, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)
#define ADD_ACTIONS(prefix, func) \
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++) \
    { \
      g_autofree char *path = g_strdup_printf ("/Mend/AttackAcpTyped/" prefix "/%s", action_names[actions[i]]); \
      g_test_add (path, Fixture, GINT_TO_POINTER (actions[i]), mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down); \
    }

  ADD ("status/hostile-words-and-types", test_hostile_retry_status, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (hostile_reports); i++)
    {
      g_autofree char *path = g_strdup_printf ("/Mend/AttackAcpTyped/session-failure/hostile-%u", i);

      g_test_add (path, Fixture, hostile_reports[i], mend_test_hostile_acp_set_up,
                  test_hostile_session_failure, mend_test_hostile_acp_tear_down);
    }
  ADD ("held/past-its-bound-is-output", test_held_past_its_bound_is_output, NULL);
  ADD ("held/flood-fails-bounded", test_held_flood_fails_bounded, NULL);
  ADD ("subagents/words-cut-in-a-character", test_subagent_words_cut_in_a_character, NULL);
  ADD ("subagents/huge-session-ids-are-not-kept", test_subagent_huge_session_ids, NULL);
  ADD ("subagents/odd-ids-and-flood", test_subagent_odd_ids_and_flood, NULL);
  ADD ("kept/new-session-gets-the-prompt", test_kept_prompt_across_a_new_session, NULL);
  ADD ("kept/loaded-session-is-asked-to-continue", test_kept_prompt_across_a_new_session, "loads");
  ADD ("kept/retry-into-a-new-session-gets-the-prompt", test_retry_into_a_new_session_gets_the_prompt, NULL);
  ADD ("stop/late-typed-answer-is-not-the-next-turns", test_stop_then_late_typed_answer, NULL);
  ADD_ACTIONS ("reentrant/agent-status-handler", test_status_handler_reentrant);
  ADD_ACTIONS ("reentrant/restart-record-handler", test_restart_record_reentrant);
  ADD_ACTIONS ("reentrant/subagent-failure-handler", test_subagent_failure_handler_reentrant);
  for (TurnSignal signal = 0; signal < N_TURN_SIGNALS; signal++)
    for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
      {
        g_autofree char *path = g_strdup_printf ("/Mend/AttackAcpTyped/reentrant/turn-signal-in-an-update/%s/%s",
                                                 turn_signal_names[signal], action_names[actions[i]]);

        g_test_add (path, Fixture, GINT_TO_POINTER (signal * 16 + actions[i]), mend_test_hostile_acp_set_up,
                    test_turn_signal_handler_reentrant, mend_test_hostile_acp_tear_down);
      }

#undef ADD_ACTIONS
#undef ADD

  return g_test_run ();
}
