/* test-attack-acp-input.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAcpAgent against what tests/support/hostile-acp-agent.py sends where the
 * agent's words are read: JSON-RPC error codes as HTTP statuses and their
 * texts, huge or broken; half an emoji; initialize's agentInfo of every
 * wrong shape; the Gemini CLI's delegations with odd titles, by the
 * hundred, and a handler that drops the chat as one starts. Run them
 * under AddressSanitizer too.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-acp.h"

/* The chat in front of tests/support/hostile-acp-agent.py (tests/support/mend-test-acp.c). */
typedef MendTestHostileAcp Fixture;

static MendFailure *
first_failure (Fixture *f)
{
  if (f->failures->len > 0)
    return g_ptr_array_index (f->failures, 0);
  return mend_turn_get_last_failure (mend_test_hostile_acp_finished (f, 0));
}

/* JSON-RPC error codes */

typedef struct
{
  const char *name;
  const char *error;     /* the error object, in the script's quotes */
  guint       status;    /* the failure's HTTP status */
} ErrorCase;

static const ErrorCase error_cases[] = {
  { "int32-max", "{'code': 2147483647, 'message': 'the upstream is away'}", 0 },
  { "negative-status", "{'code': -503, 'message': 'the upstream is away'}", 0 },
  { "int64", "{'code': 5030000000000, 'message': 'the upstream is away'}", 0 },
  { "fraction", "{'code': 599.5, 'message': 'the upstream is away'}", 0 },
  { "whole-double", "{'code': 503.0, 'message': 'the upstream is away'}", 503 },
  { "lone-surrogate", "{'code': 503, 'message': 'Service \\ud800 Unavailable'}", 503 },
  { "no-message", "{'code': 503}", 503 },
  { "message-not-a-string", "{'code': 503, 'message': {'text': 'Unavailable'}}", 503 },
  { "internal-error-in-an-http-status", "{'code': 502, 'message': 'Internal error',"
                                        " 'data': {'details': 'upstream connect error'}}", 502 },
};

/* A code is read as an HTTP status only when it is one, whole; the turn
 * fails or is retried, and the failure's text is valid UTF-8 within its
 * bound. */
static void
test_error_code (Fixture       *f,
                 gconstpointer  data)
{
  const ErrorCase *c = data;
  g_autofree char *reason = NULL;
  g_autofree char *script = g_strdup_printf ("{'runs': [{'session/prompt': [[{'error': %s}], [" MEND_TEST_ACP_END_TURN "]]}]}",
                                             c->error);
  MendFailure *failure;

  mend_test_hostile_acp_run_one_turn (f, script);
  failure = first_failure (f);

  reason = g_enum_to_string (MEND_TYPE_REASON, mend_failure_get_reason (failure));
  g_test_message ("%s: %u, %s: %s", c->name, mend_failure_get_status (failure), reason,
                  mend_failure_get_message (failure));
  g_assert_cmpuint (mend_failure_get_status (failure), ==, c->status);
  g_assert_true (g_utf8_validate (mend_failure_get_message (failure), -1, NULL));
  g_assert_cmpuint (strlen (mend_failure_get_message (failure)), <=, MEND_FAILURE_MAX_MESSAGE_BYTES);
}

/* A 429 whose message is far larger than a failure's text, in two-byte
 * characters: the text is cut at a character, and still says what the
 * agent said. */
static void
test_error_code_huge_message (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GString) script = g_string_new ("{'runs': [{'session/prompt': [[{'error': {'code': 429, 'message': 'x");
  MendFailure *failure;

  for (guint i = 0; i < 6000; i++)
    g_string_append (script, "\xc3\xa9");
  g_string_append (script, "'}}], [" MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_hostile_acp_run_one_turn (f, script->str);
  failure = first_failure (f);

  g_assert_cmpuint (mend_failure_get_status (failure), ==, 429);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_true (g_utf8_validate (mend_failure_get_message (failure), -1, NULL));
  g_assert_cmpuint (strlen (mend_failure_get_message (failure)), <=, MEND_FAILURE_MAX_MESSAGE_BYTES);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "x\xc3\xa9\xc3\xa9"));
}

/* codex-acp's codex_error_info with two thousand kinds, its text ten
 * times a failure's: the failure is read, its text bounded. (A hundred
 * thousand take 2 s to read, linear in the size; under the sanitizers,
 * minutes.) */
static void
test_error_data_huge_info (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(GString) script = g_string_new ("{'runs': [{'session/prompt': [[{'error': {'code': -32603, 'message': 'Internal error',"
                                            " 'data': {'message': 'unexpected status 503 Service Unavailable',"
                                            " 'codex_error_info': {");
  MendFailure *failure;

  for (guint i = 0; i < 2000; i++)
    g_string_append_printf (script, "%s'kind_%u': {'n': %u}", i > 0 ? ", " : "", i, i);
  g_string_append (script, "}}}}], [" MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_hostile_acp_run_one_turn (f, script->str);
  failure = first_failure (f);

  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "unexpected status 503"));
  g_assert_cmpuint (strlen (mend_failure_get_message (failure)), <=, MEND_FAILURE_MAX_MESSAGE_BYTES);
}

/* Half an emoji: a JavaScript agent's chunk cut between the two halves
 * of a surrogate pair, as JSON.stringify writes a lone half. It is read as
 * U+FFFD, and the reading goes on. */
static void
test_lone_surrogate_in_a_chunk (Fixture       *f,
                                gconstpointer  data)
{
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, "{'runs': [{'session/prompt': [["
                                                          MEND_TEST_ACP_CHUNK ("Fixed \\ud83d") ", "
                                                          MEND_TEST_ACP_CHUNK ("\\ude00 and \\\\ud83d") ", "
                                                          MEND_TEST_ACP_CHUNK ("whole \\ud83d\\ude00") ", "
                                                          MEND_TEST_ACP_END_TURN "]]}]}");

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (f->updates->len, ==, 4);
  g_assert_nonnull (strstr (g_ptr_array_index (f->updates, 0), "Fixed \xef\xbf\xbd"));
  g_assert_nonnull (strstr (g_ptr_array_index (f->updates, 1), "\xef\xbf\xbd and \\\\ud83d"));
  g_assert_nonnull (strstr (g_ptr_array_index (f->updates, 2), "whole \xf0\x9f\x98\x80"));
}

/* The profile from initialize's agentInfo */

typedef struct
{
  const char *name;
  const char *agent_info;  /* in the script's quotes */
  const char *profile;
} InfoCase;

static const InfoCase info_cases[] = {
  { "string", "'gemini-cli'", "default" },
  { "list", "['gemini-cli']", "default" },
  { "name-a-number", "{'name': 42}", "default" },
  { "name-an-object", "{'name': {'name': 'gemini-cli'}}", "default" },
  { "name-null", "{'name': null}", "default" },
  { "name-huge", NULL, "default" },
  { "known", "{'name': 'gemini-cli'}", "gemini-cli" },
};

/* agentInfo that is not an object, or whose name is not a known agent's
 * string: the default profile, and the turn goes on. */
static void
test_agent_info (Fixture       *f,
                 gconstpointer  data)
{
  const InfoCase *c = data;
  /* Long enough to be no name; not longer, as the debug log has it whole
   * and a line over 64 kB breaks the test's TAP output. */
  g_autofree char *huge = c->agent_info ? NULL : g_strnfill (60000, 'n');
  g_autofree char *info = c->agent_info ? g_strdup (c->agent_info) : g_strdup_printf ("{'name': '%s'}", huge);
  g_autofree char *script = g_strdup_printf ("{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, 'agentInfo': %s}}]}]}",
                                             info);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_nonnull (mend_acp_agent_get_profile (f->agent));
  g_assert_cmpstr (mend_acp_profile_get_name (mend_acp_agent_get_profile (f->agent)), ==, c->profile);
}

/* The Gemini CLI's delegations */

#define DELEGATION(id, title, status) \
  "{'update': {'sessionUpdate': 'tool_call', 'toolCallId': '" id "', 'title': '" title "'," \
  " 'kind': 'think', 'status': '" status "'}}"
#define DELEGATION_DONE(id, status) \
  "{'update': {'sessionUpdate': 'tool_call_update', 'toolCallId': '" id "', 'status': '" status "'," \
  " 'content': [{'type': 'content', 'content': {'type': 'text', 'text': 'It broke.'}}]}}"

static MendSubagent *
subagent (Fixture *f,
          guint    i)
{
  GListModel *model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));
  g_autoptr(MendSubagent) item = NULL;

  g_assert_cmpuint (i, <, g_list_model_get_n_items (model));
  item = g_list_model_get_item (model, i);
  return item;
}

typedef struct
{
  const char *name;
  const char *title;     /* in the script's quotes */
  const char *agent;     /* the subagent's name */
} TitleCase;

/* \u0027 is an apostrophe, which the script's quotes cannot hold. */
static const TitleCase title_cases[] = {
  { "quoted", "Delegating to agent \\u0027codebase_investigator\\u0027", "codebase_investigator" },
  { "no-name", "Delegating to agent ", "" },
  { "only-quotes", "Delegating to agent \\u0027\\u0027", "" },
  { "one-quote", "Delegating to agent \\u0027", "'" },
  { "unquoted", "Delegating to agent  helper  ", "helper" },
};

/* Whatever the title after "Delegating to agent ", the call is one
 * subagent of the chat, ended by its update. */
static void
test_delegation_title (Fixture       *f,
                       gconstpointer  data)
{
  const TitleCase *c = data;
  g_autofree char *script =
    g_strdup_printf ("{'runs': [{'session/prompt': [[" DELEGATION ("call-1", "%s", "in_progress") ", "
                     DELEGATION_DONE ("call-1", "completed") ", " MEND_TEST_ACP_END_TURN "]]}]}", c->title);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat))), ==, 1);
  g_assert_cmpstr (mend_subagent_get_name (subagent (f, 0)), ==, c->agent);
  g_assert_cmpint (mend_subagent_get_state (subagent (f, 0)), ==, MEND_SUBAGENT_COMPLETED);
}

/* A name of a megabyte. */
static void
test_delegation_huge_name (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *name = g_strnfill (1024 * 1024, 'n');
  g_autofree char *script =
    g_strdup_printf ("{'runs': [{'session/prompt': [[" DELEGATION ("call-1", "Delegating to agent %s", "in_progress") ", "
                     DELEGATION_DONE ("call-1", "failed") ", " MEND_TEST_ACP_END_TURN "]]}]}", name);
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat))), ==, 1);
  g_assert_cmpint (mend_subagent_get_state (subagent (f, 0)), ==, MEND_SUBAGENT_FAILED);
}

/* More delegations over the session than the calls remembered, one of
 * them running all along: each still ends. */
static void
test_delegation_flood (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(GString) script = g_string_new ("{'runs': [{'session/prompt': [[" DELEGATION ("long", "Delegating to agent long", "in_progress") ", ");
  GListModel *model;
  guint n_running = 0;

  for (guint i = 0; i < 300; i++)
    g_string_append_printf (script, "{'update': {'sessionUpdate': 'tool_call', 'toolCallId': 'call-%u',"
                            " 'title': 'Delegating to agent helper_%u', 'status': 'in_progress'}}, "
                            "{'update': {'sessionUpdate': 'tool_call_update', 'toolCallId': 'call-%u',"
                            " 'status': 'completed'}}, ", i, i, i);
  g_string_append (script, DELEGATION_DONE ("long", "completed") ", " MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_hostile_acp_run_one_turn (f, script->str);

  model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));
  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    n_running += mend_subagent_get_state (subagent (f, i)) == MEND_SUBAGENT_RUNNING;
  g_test_message ("%u subagents listed, %u running", g_list_model_get_n_items (model), n_running);
  g_assert_cmpuint (n_running, ==, 0);
}

static gboolean
both_gone (Fixture       *f,
           gconstpointer  data)
{
  GObject * const *weak = data;

  return weak[0] == NULL && weak[1] == NULL;
}

/* The test's are the last references: dropped, the chat and the agent
 * go, and the turns the test kept with them. */
static void
on_subagents_changed_drop (GListModel *model,
                           guint       position,
                           guint       removed,
                           guint       added,
                           Fixture    *f)
{
  g_signal_handlers_disconnect_by_data (model, f);
  g_signal_handlers_disconnect_by_data (f->chat, f);
  g_signal_handlers_disconnect_by_data (f->agent, f);
  for (guint i = 0; i < f->finished->len; i++)
    g_object_unref (g_ptr_array_index (f->finished, i));
  g_ptr_array_set_size (f->finished, 0);
  g_clear_object (&f->chat);
  g_clear_object (&f->agent);
}

/* A handler of the chat's subagents that drops the chat and the agent as
 * the delegation starts, in the update that also fails it. */
static void
test_delegation_handler_drops_the_chat (Fixture       *f,
                                        gconstpointer  data)
{
  gpointer weak[2];

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[" DELEGATION ("call-1", "Delegating to agent helper", "failed") ", "
                                       MEND_TEST_ACP_END_TURN "]]}]}");
  g_signal_connect (mend_chat_get_subagents (f->chat), "items-changed", G_CALLBACK (on_subagents_changed_drop), f);
  weak[0] = f->chat;
  weak[1] = f->agent;
  g_object_add_weak_pointer (weak[0], &weak[0]);
  g_object_add_weak_pointer (weak[1], &weak[1]);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, both_gone, weak);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/Mend/AttackAcp/" path, Fixture, NULL, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)
#define ADD_EACH(prefix, cases, func) \
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) \
    { \
      g_autofree char *path = g_strdup_printf ("/Mend/AttackAcp/" prefix "/%s", cases[i].name); \
      g_test_add (path, Fixture, &cases[i], mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down); \
    }

  ADD_EACH ("error-code", error_cases, test_error_code);
  ADD ("error-code/huge-message", test_error_code_huge_message);
  ADD ("error-code/huge-codex-error-info", test_error_data_huge_info);
  ADD ("lone-surrogate-in-a-chunk-is-read-as-a-replacement", test_lone_surrogate_in_a_chunk);
  ADD_EACH ("agent-info", info_cases, test_agent_info);
  ADD_EACH ("delegation/title", title_cases, test_delegation_title);
  ADD ("delegation/huge-name", test_delegation_huge_name);
  ADD ("delegation/flood-past-the-calls-remembered", test_delegation_flood);
  ADD ("delegation/handler-drops-the-chat", test_delegation_handler_drops_the_chat);

#undef ADD_EACH
#undef ADD

  return g_test_run ();
}
