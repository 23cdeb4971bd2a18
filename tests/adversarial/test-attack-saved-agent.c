/* test-attack-saved-agent.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An agent's session saved with the chat, read back from hostile state:
 * a session id that is not text, is huge or looks like an option of the
 * agent's command line, and a state whose sender part is sound while
 * another part is not. A refused restore changes nothing; a session the
 * agent resumes is never read as one of its options.
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000

/* Logs its arguments, then answers each prompt in stream-json: the
 * session it resumes, or a new one. */
static const char session_agent[] =
  "import json, os, sys\n"
  "open(os.environ['ARGV_LOG'], 'a').write('\\x1f'.join(sys.argv[1:]) + '\\n')\n"
  "session = sys.argv[sys.argv.index('--resume') + 1] if '--resume' in sys.argv else 's-new'\n"
  "for line in sys.stdin:\n"
  "    print(json.dumps({'type': 'system', 'subtype': 'init', 'session_id': session}), flush=True)\n"
  "    print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'Done.',\n"
  "                      'session_id': session}), flush=True)\n";

typedef struct
{
  MendClock        *clock;
  MendChat         *chat;
  MendAgentProcess *agent;
  char             *log;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  const char *argv[] = { MEND_TEST_PYTHON, "-c", session_agent, "-", NULL };

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->log = g_build_filename (g_get_home_dir (), "argv", NULL);
  f->clock = mend_manual_clock_new (WALL_START);
  f->agent = mend_agent_process_new (argv);
  mend_agent_process_set_resume_option (f->agent, "--resume");
  mend_agent_setenv (MEND_AGENT (f->agent), "ARGV_LOG", f->log);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "sender", f->agent, NULL);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  mend_chat_close (f->chat);
  mend_agent_terminate (MEND_AGENT (f->agent));
  g_assert_finalize_object (f->chat);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  mend_test_finalize_eventually (f->agent);
  g_assert_finalize_object (f->clock);
  g_free (f->log);
}

/* A chat's saved state, its agent on session @session_id, with @subagents
 * (JSON) in place of its subagents. */
static char *
state_with (Fixture    *f,
            const char *sender_state,
            const char *subagents)
{
  g_autofree char *saved = mend_chat_save_state (f->chat);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  JsonObject *object;

  g_assert_true (json_parser_load_from_data (parser, saved, -1, NULL));
  object = json_node_get_object (json_parser_get_root (parser));
  if (sender_state != NULL)
    json_object_set_string_member (object, "senderState", sender_state);
  if (subagents != NULL)
    {
      g_autoptr(JsonParser) sub = json_parser_new ();

      g_assert_true (json_parser_load_from_data (sub, subagents, -1, NULL));
      json_object_set_member (object, "subagents", json_node_copy (json_parser_get_root (sub)));
    }
  json_generator_set_root (generator, json_parser_get_root (parser));
  return json_generator_to_data (generator, NULL);
}

/* Runs one turn to its end: the arguments the agent was started with. */
static char *
run_turn (Fixture *f)
{
  g_autofree char *log = NULL;
  guint id = g_timeout_add_seconds (mend_test_real_time (20), mend_test_watchdog, (gpointer) g_test_get_path ());
  MendTurn *turn;

  mend_test_submit (f->chat, "Fix the build");
  turn = g_object_ref (mend_chat_get_turn (f->chat));
  while (mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_object_unref (turn);

  g_assert_true (g_file_get_contents (f->log, &log, NULL, NULL));
  return g_steal_pointer (&log);
}

/* A state whose agent part is sound but whose subagents are not: refused,
 * and the agent, which had no session, still has none. */
static void
test_refused_restore_leaves_no_session (Fixture       *f,
                                        gconstpointer  data)
{
  g_autofree char *state = state_with (f, "{\"sessionId\": \"s-foreign\"}", "[42]");
  g_autoptr(GError) error = NULL;

  g_assert_null (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_false (mend_chat_restore_state (f->chat, state, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_test_message ("%s", error->message);
  g_assert_null (mend_agent_get_session_id (MEND_AGENT (f->agent)));
}

/* The same for an agent on a session of its own: it keeps it. */
static void
test_refused_restore_keeps_the_session (Fixture       *f,
                                        gconstpointer  data)
{
  g_autofree char *state = state_with (f, "{\"sessionId\": \"s-foreign\"}", "[{\"subagentId\": 7}]");
  g_autoptr(GError) error = NULL;

  mend_agent_set_session_id (MEND_AGENT (f->agent), "s-own");
  g_assert_false (mend_chat_restore_state (f->chat, state, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "s-own");
}

/* A saved session id that reads as an option of the agent's command
 * line ("--resume --dangerously-skip-permissions" would be that flag to a
 * parser of optional values) is never passed after the resume option:
 * the agent starts a session of its own. */
static void
test_session_like_an_option_is_not_one (Fixture       *f,
                                        gconstpointer  data)
{
  const char *session = data;
  g_autofree char *sender_state = NULL;
  g_autofree char *state = NULL;
  g_autofree char *argv = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) args = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "sessionId");
  json_builder_add_string_value (builder, session);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  sender_state = json_generator_to_data (generator, NULL);
  state = state_with (f, sender_state, NULL);

  if (!mend_chat_restore_state (f->chat, state, &error))
    {
      /* Refused is as good: nothing changed. */
      g_test_message ("refused: %s", error->message);
      g_assert_null (mend_agent_get_session_id (MEND_AGENT (f->agent)));
    }
  argv = run_turn (f);
  g_strchomp (argv);
  g_test_message ("argv: %s", argv);
  args = g_strsplit (argv, "\x1f", -1);
  for (guint i = 0; args[i] != NULL; i++)
    {
      g_assert_cmpstr (args[i], !=, session);
      if (g_str_equal (args[i], "--resume"))
        g_assert_false (args[i + 1] != NULL && args[i + 1][0] == '-');
    }
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "s-new");
}

/* Sender states of every wrong shape: each refused with an error that
 * says so, the agent's session as it was. */
static void
test_hostile_sender_states_change_nothing (Fixture       *f,
                                           gconstpointer  data)
{
  static const char *states[] = {
    "", "null", "42", "\"s-1\"", "[]", "[{\"sessionId\": \"s-1\"}]",
    "{\"sessionId\": 42}", "{\"sessionId\": true}", "{\"sessionId\": [\"s-1\"]}",
    "{\"sessionId\": {\"id\": \"s-1\"}}", "{\"sessionId\": \"s-\\ud800\"}",
    "{\"sessionId\": \"s-1\"} trailing", "{\"sessionId\": \"s-1\"", "{\"sessionId\": \"s-1\" /* hidden */}",
  };

  mend_agent_set_session_id (MEND_AGENT (f->agent), "s-own");
  for (guint i = 0; i < G_N_ELEMENTS (states); i++)
    {
      g_autofree char *state = state_with (f, states[i], NULL);
      g_autoptr(GError) error = NULL;

      if (mend_chat_restore_state (f->chat, state, &error))
        g_error ("sender state %s was taken", states[i]);
      g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
      g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "s-own");
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, data, func) \
  g_test_add ("/Mend/AttackSavedAgent/" path, Fixture, data, fixture_set_up, func, fixture_tear_down)

  ADD ("refused-restore-leaves-no-session", NULL, test_refused_restore_leaves_no_session);
  ADD ("refused-restore-keeps-the-session", NULL, test_refused_restore_keeps_the_session);
  ADD ("session-like-an-option-is-not-one/flag", "--dangerously-skip-permissions",
       test_session_like_an_option_is_not_one);
  ADD ("session-like-an-option-is-not-one/flag-with-value", "--mcp-config=/tmp/evil.json",
       test_session_like_an_option_is_not_one);
  ADD ("session-like-an-option-is-not-one/short", "-p", test_session_like_an_option_is_not_one);
  ADD ("hostile-sender-states-change-nothing", NULL, test_hostile_sender_states_change_nothing);

#undef ADD

  return g_test_run ();
}
