/* test-attack-acp-turns.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAcpAgent's handling of a turn's failures against
 * tests/support/hostile-acp-agent.py: the idle timeout, the error codes read as
 * HTTP statuses, the agent's profile, the restart after an empty end of a
 * prompt, the lost session, the dropped prompt that Continue sends, and
 * the Gemini CLI's delegations; with handlers that stop, close, end, drop
 * or submit from inside each of them. Run them under AddressSanitizer and
 * valgrind too.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"
#include "mend-test-acp.h"

#include "mend-acp-agent-private.h"

/* The chat in front of tests/support/hostile-acp-agent.py (tests/support/mend-test-acp.c). */
typedef MendTestHostileAcp Fixture;
typedef MendTestAct Action;

static const char *action_names[] = { NULL, "stop", "close", "terminate", "unref", "submit", "set-profile" };

static void
on_profile_act (MendAcpAgent *agent,
                GParamSpec   *pspec,
                Fixture      *f)
{
  mend_test_hostile_acp_act (f);
}

static MendFailure *
first_failure (Fixture *f)
{
  if (f->failures->len > 0)
    return g_ptr_array_index (f->failures, 0);
  return mend_turn_get_last_failure (mend_test_hostile_acp_finished (f, 0));
}

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

/* Lets @ms of real time pass, with virtual time standing still. */
static void
run_for_ms (Fixture *f,
            guint    ms)
{
  gboolean over = FALSE;

  g_timeout_add (ms, set_flag, &over);
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), NULL, NULL,
                             (MendTestAgentCheck) flag_is_set, f, &over, "the time to pass");
}

/* The idle timeout */

/* Long enough for the agent to start and answer under a loaded machine. */
#define IDLE_MS 1000


static void
on_update_idle_off (MendAcpAgent *agent,
                    const char   *kind,
                    const char   *json,
                    Fixture      *f)
{
  mend_agent_set_idle_timeout_ms (MEND_AGENT (agent), 0);
}

/* The idle timeout set to none during an attempt applies from the next
 * one, as documented: the attempt in flight keeps its own, and an agent
 * that speaks within it is not timed out. Its timer comes while the
 * agent is quiet. */
static void
test_idle_timeout_changed_mid_attempt (Fixture       *f,
                                       gconstpointer  data)
{
  g_autofree char *script =
    g_strdup_printf ("{'runs': [{'session/prompt': [[" MEND_TEST_ACP_CHUNK ("Working") ", {'sleep': %u}, "
                     MEND_TEST_ACP_CHUNK ("Still working") ","
                     " {'sleep': %u}, " MEND_TEST_ACP_END_TURN "]]}]}", mend_test_real_time (IDLE_MS * 6 / 10), mend_test_real_time (IDLE_MS * 6 / 10));
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, script);
  mend_agent_set_idle_timeout_ms (MEND_AGENT (f->agent), mend_test_real_time (IDLE_MS));
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update_idle_off), f);
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (f->failures->len, ==, 0);
  g_assert_cmpuint (mend_agent_get_idle_timeout_ms (MEND_AGENT (f->agent)), ==, 0);
}

/* A cancelled prompt's grace period is not silence; when it ends and the
 * agent is started again, the agent has the whole idle timeout to speak,
 * not what was left of it. The grace period is set so that the attempt's
 * timer, set again while it waited, comes soon after the restart. */
static void
test_idle_timeout_restarts_with_the_agent (Fixture       *f,
                                           gconstpointer  data)
{
  g_autofree char *script =
    g_strdup_printf ("{'runs': [{'session/prompt': [[{'hang': true}]]},"
                     "          {'initialize': [{'sleep': %u}, {'answer': {'protocolVersion': 1}}]}]}", mend_test_real_time (IDLE_MS / 4));
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, script);
  mend_agent_set_idle_timeout_ms (MEND_AGENT (f->agent), mend_test_real_time (IDLE_MS));
  mend_acp_agent_set_cancel_grace_ms (f->agent, mend_test_real_time (2 * IDLE_MS - IDLE_MS / 10));
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  turn = mend_test_hostile_acp_finished (f, 0);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (f->failures->len, ==, 1);
  g_assert_cmpint (mend_failure_get_reason (first_failure (f)), ==, MEND_REASON_TIMEOUT);
}

static gboolean
both_gone (Fixture       *f,
           gconstpointer  data)
{
  GObject * const *weak = data;

  return weak[0] == NULL && weak[1] == NULL;
}

/* The chat and the agent dropped while the attempt's idle timer is set:
 * both are finalized, and no timer fires after them. */
static void
test_idle_timer_outlived (Fixture       *f,
                          gconstpointer  data)
{
  gpointer weak[2];

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[{'hang': true}]]}]}");
  mend_agent_set_idle_timeout_ms (MEND_AGENT (f->agent), mend_test_real_time (IDLE_MS / 5));
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_log_has, "session/prompt");

  weak[0] = f->chat;
  weak[1] = f->agent;
  g_object_add_weak_pointer (weak[0], &weak[0]);
  g_object_add_weak_pointer (weak[1], &weak[1]);
  f->action = MEND_TEST_ACT_UNREF;
  mend_test_hostile_acp_act (f);
  mend_test_hostile_acp_run_until (f, both_gone, weak);
  run_for_ms (f, mend_test_real_time (IDLE_MS));
}

/* In a test's data, beside the action: the handler is the chat's record
 * handler, not the turn's waiting handler. */
#define ON_RECORD 16

static void
on_record_scheduled_act (MendChat   *chat,
                         const char *json,
                         Fixture    *f)
{
  if (strstr (json, "\"scheduled\"") != NULL)
    mend_test_hostile_acp_act (f);
}

/* The idle timeout's failure is transient: the turn waits for its retry,
 * and a handler of that wait, or of its record, acts. */
static void
test_idle_timeout_reentrant (Fixture       *f,
                             gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data) % ON_RECORD;
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'session/prompt': [[{'hang': true}]]}, {}]}");
  mend_agent_set_idle_timeout_ms (MEND_AGENT (f->agent), mend_test_real_time (IDLE_MS));
  if (GPOINTER_TO_INT (data) & ON_RECORD)
    g_signal_connect (f->chat, "record", G_CALLBACK (on_record_scheduled_act), f);
  else
    g_signal_connect (f->chat, "turn-started", G_CALLBACK (mend_test_hostile_acp_on_turn_started_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  turn = mend_test_hostile_acp_finished (f, 0);
  g_assert_cmpint (mend_failure_get_reason (first_failure (f)), ==, MEND_REASON_TIMEOUT);
  switch (action)
    {
    case MEND_TEST_ACT_STOP:
    case MEND_TEST_ACT_CLOSE:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
      break;
    case MEND_TEST_ACT_TERMINATE:
    case MEND_TEST_ACT_SUBMIT:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
      g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
      g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
      if (action == MEND_TEST_ACT_SUBMIT)
        {
          mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
          g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
        }
      break;
    default:
      g_assert_not_reached ();
    }
}

/* The profile */

/* A handler of notify::profile, as the agent answers initialize. */
static void
test_profile_reentrant (Fixture       *f,
                        gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data);
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, 'agentInfo': {'name': 'gemini-cli'}}}]}]}");
  g_signal_connect (f->agent, "notify::profile", G_CALLBACK (on_profile_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  turn = mend_test_hostile_acp_finished (f, 0);
  switch (action)
    {
    case MEND_TEST_ACT_STOP:
    case MEND_TEST_ACT_CLOSE:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
      break;
    case MEND_TEST_ACT_TERMINATE:
      /* Ended as it answered: the retry starts it again. */
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
      g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
      g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
      break;
    case MEND_TEST_ACT_SET_PROFILE:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
      g_assert_cmpstr (mend_acp_profile_get_name (mend_acp_agent_get_profile (f->agent)), ==, "the-apps");
      break;
    case MEND_TEST_ACT_SUBMIT:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
      mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
      g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
      break;
    default:
      g_assert_not_reached ();
    }
}

/* The restart after an empty end of a prompt that followed a failed one */

#define LOADS "'agentCapabilities': {'loadSession': true}"

/* claude-agent-acp 0.23.1 after a failed prompt: the next one ends at
 * once with nothing. */
#define FALSE_END_TURN \
  "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, " LOADS "}}]," \
  "           'session/prompt': [[" MEND_TEST_ACP_OVERLOADED "], [" MEND_TEST_ACP_ANSWER_END_TURN "]]}," \
  "          {'initialize': [{'answer': {'protocolVersion': 1, " LOADS "}}]," \
  "           'session/load': [%s]}]}"

static void
on_waiting_empty_act (MendTurn      *turn,
                      MendRetryWait *wait,
                      Fixture       *f)
{
  if (mend_failure_get_reason (mend_retry_wait_get_failure (wait)) == MEND_REASON_EMPTY)
    mend_test_hostile_acp_act (f);
}

static void
on_turn_started_empty_act (MendChat *chat,
                           MendTurn *turn,
                           Fixture  *f)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting_empty_act), f);
}

/* A handler of the wait that follows the run ended on the empty end. */
static void
test_false_end_turn_reentrant (Fixture       *f,
                               gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data);
  g_autofree char *script = g_strdup_printf (FALSE_END_TURN, "{'answer': {}}");
  MendTurn *turn;

  mend_test_hostile_acp_start_chat (f, script);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started_empty_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  turn = mend_test_hostile_acp_finished (f, 0);
  g_assert_cmpuint (f->failures->len, >=, 2);
  g_assert_cmpint (mend_failure_get_reason (g_ptr_array_index (f->failures, 1)), ==, MEND_REASON_EMPTY);
  switch (action)
    {
    case MEND_TEST_ACT_STOP:
    case MEND_TEST_ACT_CLOSE:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
      break;
    case MEND_TEST_ACT_TERMINATE:
    case MEND_TEST_ACT_SUBMIT:
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
      g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 3);
      g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
      g_assert_cmpuint (mend_acp_agent_get_n_loads (f->agent), ==, 1);
      if (action == MEND_TEST_ACT_SUBMIT)
        {
          mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
          g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
        }
      break;
    default:
      g_assert_not_reached ();
    }
}

/* The run started again after the empty end cannot load the session: the
 * retry fails as the session lost, never answered from a new session;
 * the next turn goes to the new one. */
static void
test_false_end_turn_then_load_fails (Fixture       *f,
                                     gconstpointer  data)
{
  g_autofree char *script = g_strdup_printf (FALSE_END_TURN,
                                             "{'error': {'code': -32603, 'message': 'Internal error',"
                                             " 'data': {'details': 'No previous sessions found for this project.'}}}");
  MendTurn *turn = mend_test_hostile_acp_run_one_turn (f, script);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 3);
  g_assert_error ((GError *) mend_failure_get_error (mend_turn_get_last_failure (turn)),
                  MEND_RETRY_ERROR, MEND_RETRY_ERROR_SESSION_LOST);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "session/prompt"), ==, 2);

  mend_chat_send_next (f->chat);
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

/* The lost session */

#define LOAD_FAILS \
  "{'error': {'code': -32603, 'message': 'Internal error'," \
  " 'data': {'details': 'No previous sessions found for this project.'}}}"

static void
assert_session_lost (MendTurn *turn)
{
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_error ((GError *) mend_failure_get_error (mend_turn_get_last_failure (turn)),
                  MEND_RETRY_ERROR, MEND_RETRY_ERROR_SESSION_LOST);
}

/* A handler of turn-finished, as the lost session fails the turn. */
static void
test_lost_reentrant (Fixture       *f,
                     gconstpointer  data)
{
  Action action = GPOINTER_TO_INT (data);

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, " LOADS "}}],"
                                       "           'session/load': [" LOAD_FAILS "]}, {}]}");
  mend_agent_set_session_id (MEND_AGENT (f->agent), "a-session-the-agent-lost");
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (mend_test_hostile_acp_on_turn_finished_act), f);
  f->action = action;
  mend_test_hostile_acp_submit (f, "Fix the build");
  if (!mend_test_hostile_acp_run_settled (f))
    return;

  assert_session_lost (mend_test_hostile_acp_finished (f, 0));
  if (action == MEND_TEST_ACT_SUBMIT)
    {
      /* Sent to the new session. */
      mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
      g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
      g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "hostile-session");
      g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
    }
  if (action == MEND_TEST_ACT_CLOSE)
    g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_CLOSED);
}

/* Every run loses its session: each loss is told to the turn it hits,
 * and the turn after goes to the new session. */
static void
test_lost_again_and_again (Fixture       *f,
                           gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, " LOADS "}}],"
                                       "           'session/load': [" LOAD_FAILS "], 'session/prompt': [[{'exit': 1}]]},"
                                       "          {'initialize': [{'answer': {'protocolVersion': 1, " LOADS "}}],"
                                       "           'session/load': [" LOAD_FAILS "]}]}");
  mend_agent_set_session_id (MEND_AGENT (f->agent), "a-session-the-agent-lost");
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  assert_session_lost (mend_test_hostile_acp_finished (f, 0));
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 0)), ==, 1);

  /* The agent exits during the prompt; started again, it cannot load the
   * session it opened. */
  mend_chat_send_next (f->chat);
  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  assert_session_lost (mend_test_hostile_acp_finished (f, 1));
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_hostile_acp_finished (f, 1)), ==, 2);

  mend_chat_send_next (f->chat);
  mend_test_hostile_acp_submit (f, "Post the notes again");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (3));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 2)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "session/load"), ==, 2);
}

static void
on_running_stop (MendAcpAgent *agent,
                 GParamSpec   *pspec,
                 Fixture      *f)
{
  if (mend_agent_get_running (MEND_AGENT (agent)))
    mend_test_hostile_acp_act (f);
}

/* The session could not be loaded after a Stop that came as the agent
 * started: no attempt was there to be told, so the next one is, and its
 * prompt does not go to the new session as if nothing was lost. */
static void
test_lost_without_an_attempt (Fixture       *f,
                              gconstpointer  data)
{
  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, " LOADS "}}],"
                                       "           'session/load': [{'sleep': 300}, " LOAD_FAILS "]}]}");
  mend_acp_agent_set_cancel_grace_ms (f->agent, 10000);
  mend_agent_set_session_id (MEND_AGENT (f->agent), "a-session-the-agent-lost");
  g_signal_connect (f->agent, "notify::running", G_CALLBACK (on_running_stop), f);
  f->action = MEND_TEST_ACT_STOP;
  mend_test_hostile_acp_submit (f, "Fix the build");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_STOPPED);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_log_has, "session/new");

  mend_test_hostile_acp_submit (f, "Post the notes");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));
  assert_session_lost (mend_test_hostile_acp_finished (f, 1));
  g_assert_false (mend_test_hostile_acp_log_has (f, "Post the notes"));

  /* Told once: the next prompt goes to the new session. */
  mend_chat_send_next (f->chat);
  mend_test_hostile_acp_submit (f, "Post the notes again");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (3));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 2)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

/* Continue and the dropped prompt */

/* The Gemini CLI drops a failed prompt: Continue sends it again. A chat
 * that has the agent after another gets its own Continue, not the other
 * chat's prompt. */
static void
test_dropped_prompt_stays_with_its_chat (Fixture       *f,
                                         gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  const char *continue_prompt;

  mend_test_hostile_acp_start_chat (f, "{'runs': [{'initialize': [{'answer': {'protocolVersion': 1, 'agentInfo': {'name': 'gemini-cli'}}}],"
                                       "           'session/prompt': [[{'error': {'code': 400, 'message': 'Request contains an invalid argument.'}}],"
                                       "                              [" MEND_TEST_ACP_END_TURN "]]}]}");
  mend_test_hostile_acp_submit (f, "The first chat's prompt");
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (1));
  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 0)), ==, MEND_TURN_FAILED);

  /* The first chat goes; another has the agent. */
  mend_chat_close (f->chat);
  g_signal_handlers_disconnect_by_data (f->chat, f);
  g_assert_finalize_object (g_steal_pointer (&f->chat));
  f->chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-attack-acp-2", "clock", f->clock, "sender", f->agent, NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (mend_test_hostile_acp_on_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (mend_test_hostile_acp_on_turn_finished), f);
  continue_prompt = mend_chat_get_continue_prompt (f->chat);
  g_assert_true (mend_chat_submit (f->chat, continue_prompt, NULL, &error));
  g_assert_no_error (error);
  mend_test_hostile_acp_run_until (f, mend_test_hostile_acp_n_finished_is, GUINT_TO_POINTER (2));

  g_assert_cmpint (mend_turn_get_state (mend_test_hostile_acp_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_test_hostile_acp_log_count (f, "The first chat's prompt"), ==, 1);
  g_assert_true (mend_test_hostile_acp_log_has (f, continue_prompt));
}

int
main (int   argc,
      char *argv[])
{
  static const Action idle_actions[] = { MEND_TEST_ACT_STOP, MEND_TEST_ACT_CLOSE, MEND_TEST_ACT_TERMINATE,
                                         MEND_TEST_ACT_UNREF, MEND_TEST_ACT_SUBMIT };
  static const int record_actions[] = {
    ON_RECORD | MEND_TEST_ACT_STOP, ON_RECORD | MEND_TEST_ACT_CLOSE, ON_RECORD | MEND_TEST_ACT_TERMINATE,
    ON_RECORD | MEND_TEST_ACT_UNREF, ON_RECORD | MEND_TEST_ACT_SUBMIT
  };
  static const Action profile_actions[] = { MEND_TEST_ACT_STOP, MEND_TEST_ACT_CLOSE, MEND_TEST_ACT_TERMINATE,
                                            MEND_TEST_ACT_UNREF, MEND_TEST_ACT_SET_PROFILE, MEND_TEST_ACT_SUBMIT };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/Mend/AttackAcp/" path, Fixture, NULL, mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down)
#define ADD_ACTIONS(prefix, actions, func) \
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++) \
    { \
      g_autofree char *path = g_strdup_printf ("/Mend/AttackAcp/" prefix "/%s", action_names[actions[i] % ON_RECORD]); \
      g_test_add (path, Fixture, GINT_TO_POINTER (actions[i]), mend_test_hostile_acp_set_up, func, mend_test_hostile_acp_tear_down); \
    }

  ADD ("idle/changed-mid-attempt-applies-from-the-next", test_idle_timeout_changed_mid_attempt);
  ADD ("idle/restarted-agent-gets-the-whole-timeout", test_idle_timeout_restarts_with_the_agent);
  ADD ("idle/timer-outlived-by-nothing", test_idle_timer_outlived);
  ADD_ACTIONS ("idle/reentrant-waiting-handler", idle_actions, test_idle_timeout_reentrant);
  ADD_ACTIONS ("idle/reentrant-record-handler", record_actions, test_idle_timeout_reentrant);
  ADD_ACTIONS ("profile/reentrant-notify-handler", profile_actions, test_profile_reentrant);
  ADD_ACTIONS ("false-end-turn/reentrant-waiting-handler", idle_actions, test_false_end_turn_reentrant);
  ADD ("false-end-turn/load-fails-as-the-session-lost", test_false_end_turn_then_load_fails);
  ADD_ACTIONS ("lost/reentrant-turn-finished-handler", profile_actions, test_lost_reentrant);
  ADD ("lost/without-an-attempt-is-told-to-the-next", test_lost_without_an_attempt);
  ADD ("lost/again-and-again-each-told", test_lost_again_and_again);
  ADD ("continue/dropped-prompt-stays-with-its-chat", test_dropped_prompt_stays_with_its_chat);

#undef ADD_ACTIONS
#undef ADD

  return g_test_run ();
}
