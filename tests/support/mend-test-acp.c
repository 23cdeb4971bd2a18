/* mend-test-acp.c — a chat whose sender is tests/support/hostile-acp-agent.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the tests that attack MendAcpAgent: the chat runs on a
 * virtual clock, the agent in real time; every turn finished, update
 * emitted and wait's failure is kept; the agent's log of what it read and
 * its number of starts are files in the test's home. Every object is
 * finalized at the end. Built with -Dacp only.
 */

#include "config.h"

#include <string.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"
#include "mend-test-acp.h"

#define GRACE_MS 200

void
mend_test_hostile_acp_on_turn_finished (MendChat           *chat,
                                        MendTurn           *turn,
                                        MendTestHostileAcp *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_update (MendAcpAgent       *agent,
           const char         *kind,
           const char         *json,
           MendTestHostileAcp *f)
{
  g_ptr_array_add (f->updates, g_strdup_printf ("%s %s", kind, json));
}

static void
on_waiting (MendTurn           *turn,
            MendRetryWait      *wait,
            MendTestHostileAcp *f)
{
  g_ptr_array_add (f->failures, g_object_ref (mend_retry_wait_get_failure (wait)));
}

void
mend_test_hostile_acp_on_turn_started (MendChat           *chat,
                                       MendTurn           *turn,
                                       MendTestHostileAcp *f)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), f);
}

void
mend_test_hostile_acp_set_up (MendTestHostileAcp *f,
                              gconstpointer       data)
{
  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  f->finished = g_ptr_array_new ();
  f->updates = g_ptr_array_new_with_free_func (g_free);
  f->failures = g_ptr_array_new_with_free_func (g_object_unref);
  f->log = g_build_filename (g_get_home_dir (), "agent.log", NULL);
  f->count = g_build_filename (g_get_home_dir (), "agent.count", NULL);
}

void
mend_test_hostile_acp_start_chat (MendTestHostileAcp *f,
                                  const char         *script)
{
  g_autofree char *path = g_build_filename (g_get_home_dir (), "script.json", NULL);
  g_autofree char *json = g_strdelimit (g_strdup (script), "'", '"');
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(GError) error = NULL;
  const char *argv[] = { MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/hostile-acp-agent.py", path, NULL };

  g_assert_true (g_file_set_contents (path, json, -1, &error));
  g_assert_no_error (error);

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  f->agent = mend_acp_agent_new (argv);
  mend_agent_setenv (MEND_AGENT (f->agent), "MEND_HOSTILE_ACP_LOG", f->log);
  mend_agent_setenv (MEND_AGENT (f->agent), "MEND_HOSTILE_ACP_COUNT", f->count);
  mend_agent_set_cwd (MEND_AGENT (f->agent), g_get_home_dir ());
  mend_acp_agent_set_cancel_grace_ms (f->agent, GRACE_MS);
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update), f);
  f->chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-attack-acp", "clock", f->clock,
                          "policy", policy, "sender", f->agent, NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (mend_test_hostile_acp_on_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (mend_test_hostile_acp_on_turn_finished), f);
}

void
mend_test_hostile_acp_tear_down (MendTestHostileAcp *f,
                                 gconstpointer       data)
{
  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      g_signal_handlers_disconnect_by_data (f->chat, f);
    }
  if (f->agent != NULL)
    {
      mend_agent_terminate (MEND_AGENT (f->agent));
      g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
      g_signal_handlers_disconnect_by_data (f->agent, f);
    }
  if (f->chat != NULL)
    g_assert_finalize_object (f->chat);

  while (g_main_context_iteration (NULL, FALSE))
    ;

  for (guint i = 0; i < f->finished->len; i++)
    {
      g_signal_handlers_disconnect_by_data (g_ptr_array_index (f->finished, i), f);
      g_assert_finalize_object (g_ptr_array_index (f->finished, i));
    }
  g_ptr_array_unref (f->finished);
  g_ptr_array_unref (f->failures);
  if (f->agent != NULL)
    mend_test_finalize_eventually (f->agent);
  g_ptr_array_unref (f->updates);
  g_free (f->log);
  g_free (f->count);
  g_assert_finalize_object (f->clock);
}

void
mend_test_hostile_acp_run_until (MendTestHostileAcp      *f,
                                 MendTestHostileAcpCheck  done,
                                 gconstpointer            data)
{
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), mend_test_agent_always, MEND_SENDER (f->agent),
                             (MendTestAgentCheck) done, f, data, "the agent");
}

gboolean
mend_test_hostile_acp_n_finished_is (MendTestHostileAcp *f,
                                     gconstpointer       data)
{
  return f->finished->len >= GPOINTER_TO_UINT (data);
}

gboolean
mend_test_hostile_acp_not_running (MendTestHostileAcp *f,
                                   gconstpointer       data)
{
  return !mend_agent_get_running (MEND_AGENT (f->agent));
}

gboolean
mend_test_hostile_acp_log_has (MendTestHostileAcp *f,
                               gconstpointer       data)
{
  g_autofree char *contents = NULL;

  return g_file_get_contents (f->log, &contents, NULL, NULL) && strstr (contents, data) != NULL;
}

guint
mend_test_hostile_acp_log_count (MendTestHostileAcp *f,
                                 const char         *text)
{
  g_autofree char *contents = NULL;
  guint n = 0;

  if (!g_file_get_contents (f->log, &contents, NULL, NULL))
    return 0;
  for (const char *p = strstr (contents, text); p != NULL; p = strstr (p + 1, text))
    n++;
  return n;
}

MendTurn *
mend_test_hostile_acp_finished (MendTestHostileAcp *f,
                                guint               i)
{
  return mend_test_turn_at (f->finished, i);
}

void
mend_test_hostile_acp_submit (MendTestHostileAcp *f,
                              const char         *text)
{
  mend_test_submit (f->chat, text);
}

guint
mend_test_hostile_acp_count_updates (MendTestHostileAcp *f,
                                     const char         *containing)
{
  guint n = 0;

  for (guint i = 0; i < f->updates->len; i++)
    n += strstr (g_ptr_array_index (f->updates, i), containing) != NULL;
  return n;
}

MendTurn *
mend_test_hostile_acp_run_one_turn (MendTestHostileAcp *f,
                                    const char         *script)
{
  mend_test_hostile_acp_start_chat (f, script);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  return mend_test_hostile_acp_finished (f, 0);
}

void
mend_test_hostile_acp_act (MendTestHostileAcp *f)
{
  MendTestAct action = f->action;

  f->action = MEND_TEST_ACT_NONE;
  switch (action)
    {
    case MEND_TEST_ACT_STOP:
      mend_chat_stop (f->chat);
      break;
    case MEND_TEST_ACT_CLOSE:
      mend_chat_close (f->chat);
      break;
    case MEND_TEST_ACT_TERMINATE:
      mend_agent_terminate (MEND_AGENT (f->agent));
      break;
    case MEND_TEST_ACT_SUBMIT:
      mend_test_hostile_acp_submit (f, "Post the notes");
      break;
    case MEND_TEST_ACT_SET_PROFILE:
      {
        g_autoptr(MendAcpProfile) profile = mend_acp_profile_new ("the-apps");

        mend_acp_agent_set_profile (f->agent, profile);
      }
      break;
    case MEND_TEST_ACT_UNREF:
      /* The test's are the last references: the turns it kept go too. */
      g_signal_handlers_disconnect_by_data (f->chat, f);
      g_signal_handlers_disconnect_by_data (f->agent, f);
      g_signal_handlers_disconnect_by_data (mend_chat_get_subagents (f->chat), f);
      for (guint i = 0; i < f->finished->len; i++)
        {
          g_signal_handlers_disconnect_by_data (g_ptr_array_index (f->finished, i), f);
          g_object_unref (g_ptr_array_index (f->finished, i));
        }
      g_ptr_array_set_size (f->finished, 0);
      g_clear_object (&f->chat);
      g_clear_object (&f->agent);
      break;
    case MEND_TEST_ACT_NONE:
    default:
      break;
    }
}

void
mend_test_hostile_acp_on_waiting_act (MendTurn           *turn,
                                      MendRetryWait      *wait,
                                      MendTestHostileAcp *f)
{
  mend_test_hostile_acp_act (f);
}

void
mend_test_hostile_acp_on_turn_started_act (MendChat           *chat,
                                           MendTurn           *turn,
                                           MendTestHostileAcp *f)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (mend_test_hostile_acp_on_waiting_act), f);
}

void
mend_test_hostile_acp_on_turn_finished_act (MendChat           *chat,
                                            MendTurn           *turn,
                                            MendTestHostileAcp *f)
{
  mend_test_hostile_acp_act (f);
}

static gboolean
settled (MendTestHostileAcp *f,
         gconstpointer       data)
{
  GObject * const *weak = data;

  if (f->chat == NULL)
    return weak[0] == NULL && weak[1] == NULL;
  return f->action == MEND_TEST_ACT_NONE && f->finished->len >= 1 &&
         mend_chat_get_turn (f->chat) == NULL;
}

gboolean
mend_test_hostile_acp_run_settled (MendTestHostileAcp *f)
{
  gpointer weak[2] = { f->chat, f->agent };

  g_object_add_weak_pointer (weak[0], &weak[0]);
  g_object_add_weak_pointer (weak[1], &weak[1]);
  mend_test_hostile_acp_run_until (f, settled, weak);
  if (f->chat == NULL)
    {
      g_assert_null (weak[0]);
      g_assert_null (weak[1]);
      return FALSE;
    }
  g_object_remove_weak_pointer (weak[0], &weak[0]);
  g_object_remove_weak_pointer (weak[1], &weak[1]);
  return TRUE;
}

static void
on_agent_status (MendTurn   *turn,
                 GParamSpec *pspec,
                 GPtrArray  *statuses)
{
  const char *status = mend_turn_get_agent_status (turn);

  if (status != NULL)
    g_ptr_array_add (statuses, g_strdup (status));
}

static void
on_turn_started_watch_status (MendChat  *chat,
                              MendTurn  *turn,
                              GPtrArray *statuses)
{
  g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_agent_status), statuses);
}

void
mend_test_acp_watch_agent_status (MendChat  *chat,
                                  GPtrArray *statuses)
{
  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started_watch_status), statuses);
}
