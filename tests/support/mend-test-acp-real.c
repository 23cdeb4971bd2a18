/* mend-test-acp-real.c — the scenarios every real ACP agent plays against tests/support/model-server.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the end-to-end tests of the ACP agents other than
 * claude-code-acp (test-gemini-acp, test-codex-acp, test-claude-agent-acp):
 * each names its agent (how to find it, how to launch it offline against
 * the scripted server: mend-test-agents.c) and the defects it is known to
 * have, and runs the same scenarios. The agent and the server run in real
 * time, libmend's retry waits in virtual time; every object is finalized
 * at the end. A missing agent skips the tests, unless MEND_REQUIRE_AGENTS=1.
 * Built with -Dacp only.
 */

#include "config.h"

#include <string.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"
#include "mend-test-acp-real.h"

#include "mend-acp-agent-private.h"

#define HELLO "Say hello"
#define HELLO_ANSWER "Hello from the stub."
#define FIRST "Fix the build"
#define FIRST_ANSWER "Build fixed."
/* The first prompt's rules also answer its retries, which ask an agent
 * that kept the failed prompt to continue. */
#define FIRST_OR_CONTINUE "[\"" FIRST "\", \"" MEND_CHAT_DEFAULT_CONTINUE_PROMPT "\"]"
#define SECOND "Then update the changelog"
#define SECOND_ANSWER "Changelog updated."

static void
fixture_set_up (MendTestAgentChat *f,
                gconstpointer      data)
{
  mend_test_agent_chat_set_up (f, data);
  g_test_timer_start ();
}

/* The server with @rules, the agent, and a chat with the agent as its
 * sender; FALSE (the test skipped or failed) when the agent is missing. */
static gboolean
start_chat (MendTestAgentChat          *f,
            const MendTestRealAcpAgent *kind,
            const char                 *rules)
{
  g_autofree char *path = kind->find ();
  g_autofree char *base_url = NULL;

  if (path == NULL)
    return FALSE;

  mend_test_model_server_start (&f->server, rules);
  base_url = mend_test_model_server_dup_base_url (&f->server);
  mend_test_agent_chat_attach (f, MEND_AGENT (kind->make (path, base_url)), "chat-acp");
  return TRUE;
}

static void
fixture_tear_down (MendTestAgentChat *f,
                   gconstpointer      data)
{
  const MendTestRealAcpAgent *kind = data;

  g_test_message ("%s: %.1f s in real time", kind->name, g_test_timer_elapsed ());
  mend_test_agent_chat_tear_down (f, data);
}

/* Submits @prompt and runs until its turn finished. */
static MendTurn *
play (MendTestAgentChat *f,
      const char        *prompt)
{
  g_autoptr(GError) error = NULL;

  guint n = f->finished->len + 1;

  g_assert_true (mend_chat_submit (f->chat, prompt, NULL, &error));
  g_assert_no_error (error);
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), (MendTestAgentCheck) mend_test_agent_chat_turn_is_waiting,
                             MEND_SENDER (f->agent), (MendTestAgentCheck) mend_test_agent_chat_n_finished_is,
                             f, GUINT_TO_POINTER (n), "the turn to finish");
  return g_ptr_array_index (f->finished, n - 1);
}

/* A prompt, answered: the app sees the model's text, in one attempt and
 * one model request. */
static void
test_prompt_is_answered (MendTestAgentChat *f,
                         gconstpointer      data)
{
  MendTurn *turn;

  if (!start_chat (f, data,
                   "[{\"match\": \"" HELLO "\", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" HELLO_ANSWER "\"}}]"))
    return;

  turn = play (f, HELLO);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, HELLO);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_null (mend_turn_get_last_failure (turn));
  g_assert_true (mend_turn_get_output_seen (turn));
  g_assert_cmpstr (f->text->str, ==, HELLO_ANSWER);
  g_assert_cmpstr (mend_acp_agent_get_stop_reason (MEND_ACP_AGENT (f->agent)), ==, "end_turn");
  g_assert_nonnull (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 1);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "scheduled"), ==, 0);
}

/* Two 503s, then the answer: with the agent's own retries off, each of
 * libmend's attempts is one model request, and the third succeeds in the
 * same process and session, after two of libmend's waits. */
static void
test_503_twice_then_success (MendTestAgentChat *f,
                             gconstpointer      data)
{
  const MendTestRealAcpAgent *kind = data;
  g_autofree char *session = NULL;
  const char *defect;
  MendFailure *failure;
  MendTurn *turn;

  if (!start_chat (f, kind,
                   "[{\"match\": " FIRST_OR_CONTINUE ", \"times\": 2, \"answer\": {\"kind\": \"status\", \"status\": 503}},"
                   " {\"match\": " FIRST_OR_CONTINUE ", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" FIRST_ANSWER "\"}}]"))
    return;

  turn = play (f, FIRST);
  failure = mend_turn_get_last_failure (turn);
  g_test_message ("attempt %u, %s; the 503 over ACP: %s", mend_turn_get_attempt (turn),
                  mend_turn_get_state (turn) == MEND_TURN_SUCCEEDED ? "succeeded" : "did not succeed",
                  failure ? mend_failure_get_message (failure) : "(no failure)");
  g_test_message ("model requests: %u (503: %u, answer: %u); the text seen: \"%s\"",
                  mend_test_model_server_n_requests (&f->server), mend_test_model_server_n_answered (&f->server, MEND_TEST_RULE_503),
                  mend_test_model_server_n_answered (&f->server, MEND_TEST_RULE_ANSWER), f->text->str);

  defect = kind->defect_503_twice ? kind->defect_503_twice (f, turn) : NULL;
  if (defect != NULL)
    {
      g_test_incomplete (defect);
      return;
    }

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 3);
  g_assert_nonnull (failure);
  g_assert_cmpint (mend_failure_get_reason (failure), ==,
                   kind->false_end_turn_after_failure ? MEND_REASON_EMPTY : MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_true (mend_turn_get_output_seen (turn));
  g_assert_cmpstr (f->text->str, ==, FIRST_ANSWER);
  g_assert_cmpstr (mend_acp_agent_get_stop_reason (MEND_ACP_AGENT (f->agent)), ==, "end_turn");

  /* libmend's own two waits, in virtual time. */
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "scheduled"), ==, 2);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "fired"), ==, 2);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);

  /* One model request per attempt: the chat's, which the rules answer. */
  g_assert_cmpuint (mend_test_model_server_n_answered (&f->server, MEND_TEST_RULE_503), ==, 2);
  g_assert_cmpuint (mend_test_model_server_n_answered (&f->server, MEND_TEST_RULE_ANSWER), ==, 1);
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 3);

  /* One process, one session, all along; an agent that ended a prompt
   * falsely was started again once, and loaded the same session. */
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_nonnull (session);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==,
                    kind->false_end_turn_after_failure ? 2 : 1);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (MEND_ACP_AGENT (f->agent)), ==, kind->false_end_turn_after_failure ? 1 : 0);

  if (kind->check_503_twice != NULL)
    kind->check_503_twice (f, turn);
}

/* A turn that a 503 failed once, then a follow-up: each gets its own
 * answer, none the other's or an empty one (an agent whose answers
 * shifted by a prompt after a failure would give the follow-up the first
 * one's). */
static void
test_follow_up_after_a_failure_gets_its_own_answer (MendTestAgentChat *f,
                                                    gconstpointer      data)
{
  const MendTestRealAcpAgent *kind = data;
  MendTurn *first, *second;

  if (!start_chat (f, kind,
                   "[{\"match\": " FIRST_OR_CONTINUE ", \"times\": 1, \"answer\": {\"kind\": \"status\", \"status\": 503}},"
                   " {\"match\": " FIRST_OR_CONTINUE ", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" FIRST_ANSWER "\"}},"
                   " {\"match\": \"" SECOND "\", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" SECOND_ANSWER "\"}}]"))
    return;

  first = play (f, FIRST);
  g_test_message ("first: attempt %u, text \"%s\"", mend_turn_get_attempt (first), f->text->str);
  g_assert_cmpint (mend_turn_get_state (first), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (f->text->str, ==, FIRST_ANSWER);

  g_string_truncate (f->text, 0);
  second = play (f, SECOND);
  g_test_message ("second: attempt %u, text \"%s\"", mend_turn_get_attempt (second), f->text->str);
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (f->text->str, ==, SECOND_ANSWER);
  g_assert_cmpuint (mend_turn_get_attempt (second), ==, 1);
}

void
mend_test_real_acp_add_tests (const MendTestRealAcpAgent *kind)
{
  g_autofree char *answered = g_strdup_printf ("/Mend/%s/prompt-is-answered-with-the-model-text", kind->name);
  g_autofree char *twice = g_strdup_printf ("/Mend/%s/503-twice-then-success-on-the-third-attempt", kind->name);
  g_autofree char *follow_up = g_strdup_printf ("/Mend/%s/follow-up-after-a-failure-gets-its-own-answer", kind->name);

  g_test_add (answered, MendTestAgentChat, kind, fixture_set_up, test_prompt_is_answered, fixture_tear_down);
  g_test_add (twice, MendTestAgentChat, kind, fixture_set_up, test_503_twice_then_success, fixture_tear_down);
  g_test_add (follow_up, MendTestAgentChat, kind, fixture_set_up, test_follow_up_after_a_failure_gets_its_own_answer,
              fixture_tear_down);
}

void
mend_test_real_acp_init (int    *argc,
                         char ***argv)
{
  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
}
