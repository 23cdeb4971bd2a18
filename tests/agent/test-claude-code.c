/* test-claude-code.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end: the real Claude Code CLI (installed by tools/setup.sh, or
 * MEND_CLAUDE) as a chat's sender through MendAgentProcess, against the
 * scripted model server tests/support/model-server.py on 127.0.0.1. libmend's own
 * waits run in virtual time; the CLI's own retries are kept short by
 * CLAUDE_CODE_MAX_RETRIES. A missing CLI or adapter skips these tests, or fails them
 * with MEND_REQUIRE_AGENTS=1, as CI sets: it is part of the build's setup.
 */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"

/* The chat in front of a real agent (tests/support/mend-test-agents.c). */
typedef MendTestAgentChat Fixture;

#define TASK_PROMPT "Survey the source tree and list the modules"

/* The CLI's environment: offline, a private home, its own retries few. */
static void
start_chat (Fixture    *f,
            guint       max_retries,
            const char *rules)
{
  g_autofree char *cli = mend_test_claude_code_cli_find ();
  g_autofree char *base_url = NULL;

  if (cli == NULL)
    return;

  mend_test_model_server_start (&f->server, rules);
  base_url = mend_test_model_server_dup_base_url (&f->server);
  mend_test_agent_chat_attach (f, MEND_AGENT (mend_test_claude_code_process_new (cli, base_url, max_retries)),
                               "chat-e2e");
}

static gboolean
idle_chat (Fixture       *f,
           gconstpointer  data)
{
  return mend_chat_get_turn (f->chat) == NULL && !mend_chat_get_external_turn (f->chat);
}

/* Seed 001 through the real CLI */

/* The CLI gives up on 529 after its own retry; libmend's next attempt
 * succeeds. One app turn, and the follow-up runs after it. */
static void
test_529_give_up_then_success (Fixture       *f,
                               gconstpointer  data)
{
  MendTurn *turn;

  start_chat (f, 1,
    "[{\"match\": \"Fix the build\", \"times\": 2, \"answer\": {\"kind\": \"status\", \"status\": 529}},"
    " {\"match\": \"Then update the changelog\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Changelog updated.\"}},"
    " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Build fixed.\"}}]");
  if (g_test_failed ())
    return;

  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Then update the changelog");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 1);

  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (2), "two turns");

  turn = mend_test_agent_chat_finished (f, 0);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Fix the build");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (mend_failure_get_status (mend_turn_get_last_failure (turn)), ==, 529);
  g_assert_false (mend_failure_get_partial (mend_turn_get_last_failure (turn)));

  turn = mend_test_agent_chat_finished (f, 1);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Then update the changelog");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);

  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "scheduled"), ==, 1);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "fired"), ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 0);
  /* 2 requests for the CLI's give-up, 1 for the success, 1 for the follow-up. */
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 4);
  /* One CLI, one session, all along. */
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
}

/* Five give-ups: the turn gives up, the chat is in ERROR, and "Continue
 * the current turn" heads the queue in front of the follow-up. */
static void
test_five_give_ups_continue_at_head (Fixture       *f,
                                     gconstpointer  data)
{
  MendTurn *turn;
  g_autofree char *head = NULL;
  g_autoptr(MendQueueItem) second = NULL;

  start_chat (f, 0,
    "[{\"match\": \"Post the release notes\", \"times\": 0, \"answer\": {\"kind\": \"text\"}},"
    " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"status\", \"status\": 529}}]");
  if (g_test_failed ())
    return;

  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Post the release notes");
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (1), "the turn to give up");

  turn = mend_test_agent_chat_finished (f, 0);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 5);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 2);
  head = mend_test_queue_head (f->chat);
  g_assert_cmpstr (head, ==, "Continue the current turn");
  second = g_list_model_get_item (G_LIST_MODEL (mend_chat_get_queue (f->chat)), 1);
  g_assert_cmpstr (mend_queue_item_get_text (second), ==, "Post the release notes");
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "exhausted"), ==, 1);
  /* With CLAUDE_CODE_MAX_RETRIES=0, one request per attempt. */
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 5);
  g_assert_true (mend_agent_get_running (MEND_AGENT (f->agent)));
}

static void
test_401_one_attempt (Fixture       *f,
                      gconstpointer  data)
{
  MendTurn *turn;

  start_chat (f, 0,
    "[{\"match\": null, \"times\": 0, \"answer\": {\"kind\": \"status\", \"status\": 401}}]");
  if (g_test_failed ())
    return;

  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Post the release notes");
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (1), "the turn to fail");

  turn = mend_test_agent_chat_finished (f, 0);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_AUTH);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 1);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "scheduled"), ==, 0);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
}

static void
on_agent_status (MendTurn   *turn,
                 GParamSpec *pspec,
                 Fixture    *f)
{
  if (mend_turn_get_agent_status (turn) != NULL)
    mend_chat_stop (f->chat);
}

static void
on_turn_started_stop_when_retrying (MendChat *chat,
                                    MendTurn *turn,
                                    Fixture  *f)
{
  if (g_str_equal (mend_turn_get_prompt (turn), "Fix the build"))
    g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_agent_status), f);
}

/* Stop while the CLI retries on its own: STOPPED at once, no Continue, the
 * queue untouched, and the same CLI answers the next turn. */
static void
test_stop_during_the_cli_retries (Fixture       *f,
                                  gconstpointer  data)
{
  g_autofree char *pid = NULL;
  g_autofree char *session = NULL;
  g_autofree char *head = NULL;

  start_chat (f, 10,
    "[{\"match\": \"Post the release notes\", \"times\": 0, \"answer\": {\"kind\": \"text\"}},"
    " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"status\", \"status\": 529}}]");
  if (g_test_failed ())
    return;

  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started_stop_when_retrying), f);
  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Post the release notes");
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (1), "the Stop");

  g_assert_cmpint (mend_turn_get_state (mend_test_agent_chat_finished (f, 0)), ==, MEND_TURN_STOPPED);
  g_assert_cmpuint (mend_turn_get_attempt (mend_test_agent_chat_finished (f, 0)), ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  head = mend_test_queue_head (f->chat);
  g_assert_cmpstr (head, ==, "Post the release notes");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 1);
  g_assert_true (mend_agent_get_running (MEND_AGENT (f->agent)));
  pid = g_strdup (mend_agent_get_identifier (MEND_AGENT (f->agent)));
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_nonnull (session);

  /* The queue moves on the idle send; the interrupted turn's result is
   * not taken for this one's. */
  mend_chat_send_next (f->chat);
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (2), "the next turn");
  g_assert_cmpstr (mend_turn_get_prompt (mend_test_agent_chat_finished (f, 1)), ==, "Post the release notes");
  if (mend_turn_get_last_failure (mend_test_agent_chat_finished (f, 1)))
    g_test_message ("failure: %s", mend_failure_get_message (mend_turn_get_last_failure (mend_test_agent_chat_finished (f, 1))));
  g_assert_cmpint (mend_turn_get_state (mend_test_agent_chat_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_agent_get_identifier (MEND_AGENT (f->agent)), ==, pid);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "stopped"), <=, 1);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 0);
}

/* The CLI dies in the middle of a turn */

static gboolean
server_was_asked (Fixture       *f,
                  gconstpointer  data)
{
  const char *session = mend_agent_get_session_id (MEND_AGENT (f->agent));

  return session != NULL && mend_test_model_server_n_requests (&f->server) >= 1 && mend_test_claude_transcript_has (session, "Fix the build");
}

static void
test_killed_mid_turn_resumes_the_session (Fixture       *f,
                                          gconstpointer  data)
{
  g_autofree char *session = NULL;
  MendTurn *turn;
  const char *pid;

  start_chat (f, 0,
    "[{\"match\": \"Then update the changelog\", \"times\": 0, \"answer\": {\"kind\": \"text\"}},"
    " {\"match\": \"Fix the build\", \"times\": 1, \"answer\": {\"kind\": \"hang\"}},"
    " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Build fixed.\"}}]");
  if (g_test_failed ())
    return;

  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_submit (f, "Then update the changelog");

  /* The model hangs on the request: kill the CLI there. */
  f->auto_advance = FALSE;
  mend_test_agent_chat_run_until (f, server_was_asked, NULL, "the CLI's request");
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  pid = mend_agent_get_identifier (MEND_AGENT (f->agent));
  g_assert_nonnull (pid);
  g_assert_cmpint (kill ((pid_t) g_ascii_strtoll (pid, NULL, 10), SIGKILL), ==, 0);

  f->auto_advance = TRUE;
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (2), "both turns");

  turn = mend_test_agent_chat_finished (f, 0);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Fix the build");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpstr (mend_turn_get_prompt (mend_test_agent_chat_finished (f, 1)), ==, "Then update the changelog");
  g_assert_cmpint (mend_turn_get_state (mend_test_agent_chat_finished (f, 1)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (f->chat))), ==, 0);

  /* Started again, on the same session. */
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);
}

/* Seed 003 through the real CLI */

#define SUBAGENT_RULES(status) \
  "[{\"match\": \"with SendMessage to\", \"times\": 1," \
  "   \"answer\": {\"kind\": \"send_message\", \"message\": \"Please continue the survey.\"}}," \
  " {\"match\": \"Please continue the survey\", \"times\": 0," \
  "   \"answer\": {\"kind\": \"text\", \"text\": \"Survey done.\"}}," \
  " {\"match\": \"Start the survey\", \"times\": 1," \
  "   \"answer\": {\"kind\": \"task\", \"description\": \"Survey the tree\", \"prompt\": \"" TASK_PROMPT "\"}}," \
  " {\"match\": \"" TASK_PROMPT "\", \"times\": 0, \"answer\": {\"kind\": \"status\", \"status\": " status "}}," \
  " {\"match\": null, \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"The survey runs in the background.\"}}]"

static gboolean
subagent_failed_and_settled (Fixture       *f,
                             gconstpointer  data)
{
  return mend_test_agent_chat_subagent_in_state (f, GINT_TO_POINTER (MEND_SUBAGENT_FAILED)) &&
         f->finished->len >= 1 && idle_chat (f, NULL);
}

/* A plan's five-hour limit reached at the top level, with continue-at-reset
 * on: the CLI signed in with a plan (a dummy OAuth token, as
 * tests/support/record-claude-code.py records it) meets the model server's
 * 429 whose unified rate-limit headers say "rejected" until a reset 5 s
 * away. The chat's wall clock starts at the real time, so that the
 * reset the server names is 5 s ahead of it; the wait for the reset runs
 * in virtual time, and the one attempt at it succeeds. */
#define SESSION_RESETS_IN_S 5

static void
test_session_limit_continues_at_the_reset (Fixture       *f,
                                           gconstpointer  data)
{
  MendErrorPolicy *policy;
  MendRetryWait *wait;
  MendFailure *failure;
  MendTurn *turn;
  gint64 start_us = g_get_real_time ();
  gint64 next_at;

  start_chat (f, 0,
    "[{\"match\": \"Fix the build\", \"times\": 1, \"answer\": {\"kind\": \"status\", \"status\": 429,"
    "  \"limit\": \"session\", \"resets_in\": " G_STRINGIFY (SESSION_RESETS_IN_S) "}},"
    " {\"match\": \"Fix the build\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Build fixed.\"}}]");
  if (g_test_failed ())
    return;

  mend_test_claude_sign_in_with_plan (f->agent);
  mend_manual_clock_jump_real_time (MEND_MANUAL_CLOCK (f->clock), (start_us - MEND_TEST_WALL_START) / 1000);
  policy = mend_chat_get_policy (f->chat);
  mend_error_policy_set_continue_at_reset (policy, TRUE);
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  f->auto_advance = FALSE;

  mend_test_agent_chat_submit (f, "Fix the build");
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_waits_at_reset, NULL, "the wait for the reset");

  turn = mend_chat_get_turn (f->chat);
  failure = mend_turn_get_last_failure (turn);
  g_test_message ("the CLI said: %s", mend_failure_get_message (failure));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_USAGE_LIMIT);
  wait = mend_chat_get_wait (f->chat);
  next_at = mend_retry_wait_get_next_at (wait);
  /* The server's reset: 5 s after its clock read the request, to the
   * second, from the CLI's rate_limit_event. */
  g_assert_cmpint (next_at % G_USEC_PER_SEC, ==, 0);
  g_assert_cmpint (next_at, >=, start_us - G_USEC_PER_SEC + SESSION_RESETS_IN_S * G_USEC_PER_SEC);
  g_assert_cmpint (next_at, <=, g_get_real_time () + SESSION_RESETS_IN_S * G_USEC_PER_SEC);
  g_assert_nonnull (strstr (mend_chat_get_status_text (f->chat), "Usage limit reached"));
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 1);

  /* A second before the reset nothing is sent; at it, one attempt. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), mend_retry_wait_get_remaining_ms (wait) - 1000);
  g_assert_true (mend_test_agent_chat_waits_at_reset (f, NULL));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1000);
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_n_finished_is, GUINT_TO_POINTER (1), "the turn");

  turn = mend_test_agent_chat_finished (f, 0);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 2);
}

static void
test_subagent_503_is_resumed (Fixture       *f,
                              gconstpointer  data)
{
  g_autofree char *session = NULL;
  MendSubagent *s;

  start_chat (f, 0, SUBAGENT_RULES ("503"));
  if (g_test_failed ())
    return;

  mend_test_agent_chat_submit (f, "Start the survey in the background");

  /* Fails on 503, waits the resume delay (virtual), sends the resume
   * prompt; the CLI calls SendMessage and the agent runs again. */
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_subagent_in_state, GINT_TO_POINTER (MEND_SUBAGENT_FAILED), "the subagent to fail");
  s = mend_test_agent_chat_the_subagent (f);
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_CAPACITY);
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));

  mend_test_agent_chat_run_until (f, mend_test_agent_chat_subagent_in_state, GINT_TO_POINTER (MEND_SUBAGENT_RUNNING), "the subagent to run again");
  g_assert_true (mend_test_agent_chat_the_subagent (f) == s);
  g_assert_cmpuint (mend_test_count_records (f->records, "subagent_retry", "scheduled"), ==, 1);
  g_assert_cmpuint (mend_test_count_records (f->records, "subagent_retry", "fired"), ==, 1);
  g_assert_false (mend_subagent_get_retryable (s));

  /* It completes, in the same session, with the same CLI. */
  mend_test_agent_chat_run_until (f, mend_test_agent_chat_subagent_in_state, GINT_TO_POINTER (MEND_SUBAGENT_COMPLETED), "the subagent to complete");
  mend_test_agent_chat_run_until (f, idle_chat, NULL, "the chat to settle");
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, session);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_cmpint (mend_turn_get_state (mend_test_agent_chat_finished (f, i)), ==, MEND_TURN_SUCCEEDED);
}

static void
test_subagent_401_is_not_resumed (Fixture       *f,
                                  gconstpointer  data)
{
  MendSubagent *s;

  start_chat (f, 0, SUBAGENT_RULES ("401"));
  if (g_test_failed ())
    return;

  mend_test_agent_chat_submit (f, "Start the survey in the background");
  mend_test_agent_chat_run_until (f, subagent_failed_and_settled, NULL, "the subagent to fail");

  s = mend_test_agent_chat_the_subagent (f);
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (s)), ==, MEND_REASON_AUTH);
  g_assert_null (mend_subagent_get_retry (s));
  g_assert_cmpuint (mend_test_count_records (f->records, "subagent_retry", "scheduled"), ==, 0);
  g_assert_cmpuint (mend_test_count_records (f->records, "subagent_retry", "fired"), ==, 0);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  /* The server's request count is read over loopback: no proxy settings. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

#define ADD(path, func) \
  g_test_add ("/Mend/ClaudeCode/" path, Fixture, NULL, mend_test_agent_chat_set_up, func, mend_test_agent_chat_tear_down)

  ADD ("529-give-up-then-success-is-one-turn", test_529_give_up_then_success);
  ADD ("five-give-ups-put-continue-at-the-head", test_five_give_ups_continue_at_head);
  ADD ("401-is-one-attempt", test_401_one_attempt);
  ADD ("stop-during-the-cli-retries-keeps-the-cli", test_stop_during_the_cli_retries);
  ADD ("killed-mid-turn-resumes-the-session", test_killed_mid_turn_resumes_the_session);
  ADD ("session-limit-continues-at-the-reset", test_session_limit_continues_at_the_reset);
  ADD ("subagent-503-is-resumed-with-send-message", test_subagent_503_is_resumed);
  ADD ("subagent-401-is-not-resumed", test_subagent_401_is_not_resumed);

#undef ADD

  return g_test_run ();
}
