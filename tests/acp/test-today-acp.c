/* test-today-acp.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end through the ACP adapters users install today,
 * @agentclientprotocol/claude-agent-acp 0.101.0 and
 * @agentclientprotocol/codex-acp 2.6.0 (installed with the node 22 they
 * run on by tools/setup.sh), as a chat's sender, against
 * tests/support/model-server.py: what the agent matrix does not play —
 * the agent process killed mid-session and started again, a Stop that
 * keeps the follow-up, no process left after close, and a background
 * subagent that died on a 503 resumed through its parent's session. The
 * adapters' own retries are off; libmend's waits run in virtual time. A
 * missing adapter skips these tests, or fails them with
 * MEND_REQUIRE_AGENTS=1, as CI sets.
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"

#include "mend-acp-agent-private.h"

typedef MendTestAgentChat Fixture;

#define TASK_PROMPT "Survey the source tree and list the modules"

/* The adapter named by @data ("claude" or "codex") in front of the model
 * server playing @rules; FALSE when it is not installed. */
static gboolean
start_chat (Fixture    *f,
            const char *which,
            const char *rules)
{
  gboolean claude = g_str_equal (which, "claude");
  g_autofree char *script = claude ? mend_test_ac_claude_agent_acp_find () : mend_test_ac_codex_acp_find ();
  g_autofree char *base_url = NULL;
  MendAcpAgent *agent;

  if (script == NULL)
    return FALSE;

  mend_test_model_server_start (&f->server, rules);
  base_url = mend_test_model_server_dup_base_url (&f->server);
  agent = claude ? mend_test_ac_claude_agent_acp_agent_new_with_retries (script, base_url, 0)
                 : mend_test_ac_codex_acp_agent_new_with_retries (script, base_url, 0);
  mend_test_agent_chat_attach (f, MEND_AGENT (agent), "chat-today-acp");
  return TRUE;
}

static gboolean
server_was_asked (Fixture       *f,
                  gconstpointer  data)
{
  return mend_test_model_server_n_requests (&f->server) >= GPOINTER_TO_UINT (data);
}

static guint
queue_length (Fixture *f)
{
  return g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat)));
}

/* Whether any process is left in the process group the agent led, once
 * its end (SIGTERM, then SIGKILL after the grace period) is over. */
static gboolean
group_is_gone (pid_t group)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) mend_test_real_time (20) * G_USEC_PER_SEC;

  while (kill (-group, 0) == 0 && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return kill (-group, 0) == -1 && errno == ESRCH;
}

/* The adapter is killed while its model request hangs: the attempt fails
 * as a dropped connection, the next one starts it again and loads the
 * same session; the queue moves after. */
static void
test_killed_mid_session_restarts (Fixture       *f,
                                  gconstpointer  data)
{
  g_autofree char *session = NULL;
  MendTurn *turn;
  pid_t pid;

  if (!start_chat (f, data,
                   "[{\"match\": \"Say hello\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Hello.\"}},"
                   " {\"match\": \"Then update the changelog\", \"times\": 0, \"answer\": {\"kind\": \"text\"}},"
                   " {\"match\": \"Fix the build\", \"times\": 1, \"answer\": {\"kind\": \"hang\"}},"
                   " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Build fixed.\"}}]"))
    return;

  mend_test_agent_chat_submit (f, "Say hello");
  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Then update the changelog");

  f->auto_advance = FALSE;
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (1), "the first turn");
  mend_test_agent_chat_run_until (f, (MendTestAgentChatCheck) server_was_asked, GUINT_TO_POINTER (2),
                                  "the second turn's request");
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_nonnull (session);
  pid = (pid_t) g_ascii_strtoll (mend_agent_get_identifier (MEND_AGENT (f->agent)), NULL, 10);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);

  f->auto_advance = TRUE;
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (3), "the three turns");

  turn = mend_test_agent_chat_finished (f, 1);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Fix the build");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpint (mend_turn_get_state (mend_test_agent_chat_finished (f, 2)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (queue_length (f), ==, 0);
  g_assert_nonnull (strstr (f->text->str, "Build fixed."));

  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (MEND_ACP_AGENT (f->agent)), ==, 1);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);

  /* The chat's record says the agent was started again, for which turn. */
  {
    g_autofree char *want = g_strdup_printf ("\"turnId\":\"%s\",\"attempt\":2,\"starts\":2,\"sessionId\":\"%s\"",
                                             mend_turn_get_id (turn), session);
    guint n = 0;

    for (guint i = 0; i < f->records->len; i++)
      {
        const char *record = g_ptr_array_index (f->records, i);

        n += strstr (record, "\"kind\":\"agent_restart\"") != NULL;
        if (strstr (record, "agent_restart") != NULL)
          g_assert_nonnull (strstr (record, want));
      }
    g_assert_cmpuint (n, ==, 1);
  }
}

/* A Stop while the model request hangs: the turn is stopped, never
 * retried, the follow-up kept and then answered; after the chat closes
 * and the agent ends, nothing of its process group is left. */
static void
test_stop_keeps_the_follow_up (Fixture       *f,
                               gconstpointer  data)
{
  MendTurn *turn;
  pid_t pid;

  if (!start_chat (f, data,
                   "[{\"match\": \"Then update the changelog\", \"times\": 0,"
                   "   \"answer\": {\"kind\": \"text\", \"text\": \"Changelog updated.\"}},"
                   " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"hang\"}}]"))
    return;

  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Then update the changelog");
  f->auto_advance = FALSE;
  mend_test_agent_chat_run_until (f, (MendTestAgentChatCheck) server_was_asked, GUINT_TO_POINTER (1),
                                  "the first request");
  pid = (pid_t) g_ascii_strtoll (mend_agent_get_identifier (MEND_AGENT (f->agent)), NULL, 10);

  mend_chat_stop (f->chat);
  g_assert_cmpuint (f->finished->len, ==, 1);
  turn = mend_test_agent_chat_finished (f, 0);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (queue_length (f), ==, 1);

  f->auto_advance = TRUE;
  g_assert_true (mend_chat_send_next (f->chat));
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (2), "the follow-up");
  turn = mend_test_agent_chat_finished (f, 1);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Then update the changelog");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  /* The stopped prompt was not sent again. */
  g_assert_cmpuint (mend_test_model_server_n_answered (&f->server, 1), ==, 1);

  mend_chat_close (f->chat);
  mend_agent_terminate (MEND_AGENT (f->agent));
  g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
  g_assert_true (group_is_gone (pid));
}

/* claude-agent-acp reports a background subagent to a client that asks
 * (subagent_update, or subagent_spawned and subagent_state_update with
 * typed failures): one that died on a 503 is a failed subagent, resumed
 * through its parent's session (the resume prompt makes the model call
 * SendMessage to it), in the same process. */
static void
test_background_subagent_503_is_resumed (Fixture       *f,
                                         gconstpointer  data)
{
  g_autofree char *session = NULL;
  MendSubagent *s;

  if (!start_chat (f, data,
                   "[{\"match\": \"with SendMessage to\", \"times\": 1,"
                   "   \"answer\": {\"kind\": \"send_message\", \"message\": \"Please continue the survey.\"}},"
                   " {\"match\": \"Please continue the survey\", \"times\": 0,"
                   "   \"answer\": {\"kind\": \"text\", \"text\": \"Survey done.\"}},"
                   " {\"match\": \"Start the survey\", \"times\": 1,"
                   "   \"answer\": {\"kind\": \"task\", \"description\": \"Survey the tree\", \"prompt\": \"" TASK_PROMPT "\"}},"
                   " {\"match\": \"" TASK_PROMPT "\", \"times\": 0, \"answer\": {\"kind\": \"status\", \"status\": 503}},"
                   " {\"match\": null, \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"The survey runs.\"}}]"))
    return;

  mend_test_agent_chat_submit (f, "Start the survey in the background");
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_subagent_in_state, GINT_TO_POINTER (MEND_SUBAGENT_FAILED), "the subagent to fail");
  s = mend_test_agent_chat_the_subagent (f);
  g_assert_cmpstr (mend_subagent_get_name (s), ==, "Survey the tree");
  g_assert_nonnull (mend_subagent_get_agent_id (s));
  g_assert_nonnull (mend_subagent_get_failure (s));
  g_test_message ("the subagent's failure: %s", mend_failure_get_message (mend_subagent_get_failure (s)));
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_CAPACITY);
  /* Its words are no answer of the prompt's. */
  g_assert_null (strstr (f->text->str, "API Error"));
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));

  mend_test_agent_chat_run_until (f, mend_test_agent_chat_subagent_in_state, GINT_TO_POINTER (MEND_SUBAGENT_RUNNING), "the subagent to run again");
  g_assert_true (mend_test_agent_chat_the_subagent (f) == s);
  g_assert_cmpuint (mend_test_count_records (f->records, "subagent_retry", "scheduled"), ==, 1);
  g_assert_cmpuint (mend_test_count_records (f->records, "subagent_retry", "fired"), ==, 1);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  static const char * const adapters[] = { "claude", "codex" };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  /* The server's request count is read over loopback: no proxy settings. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (adapters); i++)
    {
      g_autofree char *killed = g_strdup_printf ("/Mend/TodayAcp/%s/killed-mid-session-restarts", adapters[i]);
      g_autofree char *stop = g_strdup_printf ("/Mend/TodayAcp/%s/stop-keeps-the-follow-up", adapters[i]);

      g_test_add (killed, Fixture, adapters[i], mend_test_agent_chat_set_up, test_killed_mid_session_restarts,
                  mend_test_agent_chat_tear_down);
      g_test_add (stop, Fixture, adapters[i], mend_test_agent_chat_set_up, test_stop_keeps_the_follow_up,
                  mend_test_agent_chat_tear_down);
    }
  /* Codex 0.166 offered no subagent tool in this setup (REAL-AGENTS.md). */
  g_test_add ("/Mend/TodayAcp/claude/background-subagent-503-is-resumed", Fixture, "claude",
              mend_test_agent_chat_set_up, test_background_subagent_503_is_resumed, mend_test_agent_chat_tear_down);

  return g_test_run ();
}
