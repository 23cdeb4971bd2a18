/* test-stream-observer.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Claude Code's stream-json feeds a chat: results end turns, the agent's
 * own turns are seen, subagents reach the retry, token deltas cost no
 * parse, and bad input changes nothing.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-stream-observer-private.h"

#define WALL_START 1764500000000000

#define INIT_LINE \
  "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"/src\",\"session_id\":\"s-1\"," \
  "\"tools\":[\"Task\"],\"model\":\"claude-sonnet-4-5\",\"uuid\":\"u-1\"}"
#define SUCCESS_LINE \
  "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"duration_ms\":12," \
  "\"result\":\"Done.\",\"session_id\":\"s-1\",\"uuid\":\"u-2\"}"
#define DELTA_LINE(text) \
  "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0," \
  "\"delta\":{\"type\":\"text_delta\",\"text\":\"" text "\"}},\"session_id\":\"s-1\"," \
  "\"parent_tool_use_id\":null,\"uuid\":\"u-3\"}"
#define SUMMARY_503 \
  "API Error: 503 no non-exhausted claude accounts available for model claude-sonnet-4-5 " \
  "(error type server_error, HTTP 503)"
#define STARTED_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a7c41e2\"," \
  "\"tool_use_id\":\"toolu_01\",\"description\":\"Push relay for GCP lane bundles\"," \
  "\"session_id\":\"s-1\",\"uuid\":\"u-4\"}"
#define FAILED_503_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41e2\"," \
  "\"status\":\"failed\",\"summary\":\"" SUMMARY_503 "\",\"session_id\":\"s-1\"}"

typedef struct
{
  MendClock *clock;
  MendChat *chat;
  MendStreamObserver *observer;
  GPtrArray *finished;   /* MendTurn, owned */
} Fixture;

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "id", "chat-1",
                          "clock", f->clock,
                          NULL);
  f->observer = mend_stream_observer_new (f->chat);
  f->finished = g_ptr_array_new ();
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->observer);
  g_assert_finalize_object (f->chat);
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  g_assert_finalize_object (f->clock);
}

static gboolean
feed (Fixture    *f,
      const char *line)
{
  return mend_stream_observer_feed_line (f->observer, line, -1);
}

static MendTurn *
submit (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  g_assert_true (mend_chat_submit (f->chat, "Review the relay", NULL, &error));
  g_assert_no_error (error);
  turn = mend_chat_get_turn (f->chat);
  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  return turn;
}

static MendTurn *
last_finished (Fixture *f)
{
  g_assert_cmpuint (f->finished->len, >, 0);
  return g_ptr_array_index (f->finished, f->finished->len - 1);
}

static MendSubagent *
lookup (Fixture    *f,
        const char *id)
{
  return mend_subagent_retry_lookup (mend_chat_get_subagents (f->chat), id);
}

static guint
n_subagents (Fixture *f)
{
  return g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat)));
}

/* The agent's own retry */

static void
on_agent_retry (MendStreamObserver *observer,
                MendTurn           *turn,
                guint               attempt,
                guint               max_retries,
                guint               status,
                const char         *error,
                guint               delay_ms,
                char              **out)
{
  g_free (*out);
  *out = g_strdup (error);
}

/* The status composed from an api_retry quotes the agent's error: a key
 * in it is redacted, here and in the signal, and a long one is cut. */
static void
test_api_retry_status_is_redacted_and_capped (Fixture       *f,
                                              gconstpointer  data)
{
  g_autofree char *padding = g_strnfill (20000, 'e');
  g_autofree char *line = g_strdup_printf ("{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,"
                                           "\"max_retries\":10,\"retry_delay_ms\":500,\"error_status\":null,"
                                           "\"error\":\"bad key sk-ant-api03-STATUSleak0123456789abcdef %s\"}",
                                           padding);
  g_autofree char *signalled = NULL;
  MendTurn *turn = submit (f);
  const char *status;

  g_signal_connect (f->observer, "agent-retry", G_CALLBACK (on_agent_retry), &signalled);
  feed (f, line);

  status = mend_turn_get_agent_status (turn);
  g_assert_nonnull (status);
  g_assert_null (strstr (status, "STATUSleak"));
  g_assert_nonnull (strstr (status, "bad key"));
  g_assert_cmpuint (strlen (status), <, 1024);
  g_assert_nonnull (signalled);
  g_assert_null (strstr (signalled, "STATUSleak"));
  mend_chat_stop (f->chat);
}

/* Results and app turns */

static void
test_result_succeeds_the_app_turn (Fixture       *f,
                                   gconstpointer  data)
{
  submit (f);

  /* init with an app turn in flight is that turn's start. */
  g_assert_false (feed (f, INIT_LINE));
  g_assert_false (mend_chat_get_external_turn (f->chat));

  g_assert_true (feed (f, SUCCESS_LINE "\n"));
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);
}

static void
test_result_529_waits_to_retry (Fixture       *f,
                                gconstpointer  data)
{
  MendTurn *turn = submit (f);
  MendRetryWait *wait;
  MendFailure *failure;

  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":529,"
    "\"result\":\"API Error: 529 {\\\"type\\\":\\\"error\\\",\\\"error\\\":{\\\"type\\\":"
    "\\\"overloaded_error\\\",\\\"message\\\":\\\"Overloaded\\\"}}\",\"session_id\":\"s-1\"}\r\n"));

  g_assert_true (mend_chat_get_turn (f->chat) == turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);
  wait = mend_turn_get_wait (turn);
  g_assert_nonnull (wait);
  g_assert_cmpuint (mend_retry_wait_get_attempt (wait), ==, 1);
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_CAPACITY);
  failure = mend_turn_get_last_failure (turn);
  g_assert_cmpuint (mend_failure_get_status (failure), ==, 529);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);

  /* A turn waiting to retry has no attempt a result could end. */
  g_assert_false (feed (f, SUCCESS_LINE));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpuint (f->finished->len, ==, 0);

  /* The retry runs, and its result ends the turn. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), mend_retry_wait_get_remaining_ms (wait));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_true (feed (f, SUCCESS_LINE));
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);
}

static void
test_failure_after_output_is_not_replayed (Fixture       *f,
                                           gconstpointer  data)
{
  MendTurn *turn = submit (f);
  guint64 parsed = mend_stream_observer_get_n_parsed (f->observer);
  MendFailure *failure;

  /* Token deltas mark the turn's output as seen, still without a parse. */
  g_assert_false (feed (f, DELTA_LINE ("Half of the answer")));
  g_assert_true (mend_turn_get_output_seen (turn));
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, parsed);

  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true,"
    "\"api_error_status\":529,\"result\":\"API Error: 529 Overloaded\"}"));
  g_assert_null (mend_chat_get_turn (f->chat));
  failure = mend_turn_get_last_failure (last_finished (f));
  g_assert_true (mend_failure_get_partial (failure));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (mend_turn_get_attempt (last_finished (f)), ==, 1);
}

static void
test_result_400_gives_up (Fixture       *f,
                          gconstpointer  data)
{
  MendFailure *failure;

  submit (f);
  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":400,"
    "\"result\":\"API Error: 400 messages.3: tool_use ids must be unique "
    "(error type invalid_request_error)\"}"));

  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_FAILED);
  failure = mend_turn_get_last_failure (last_finished (f));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_BAD_REQUEST);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (mend_turn_get_attempt (last_finished (f)), ==, 1);
}

static void
test_result_usage_limit_is_a_limit (Fixture       *f,
                                    gconstpointer  data)
{
  MendFailure *failure;

  submit (f);
  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
    "\"result\":\"You've hit your usage limit \xc2\xb7 resets 3pm\"}"));

  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  failure = mend_turn_get_last_failure (last_finished (f));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_USAGE_LIMIT);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
}

#define RATE_LIMIT_LINE(info) \
  "{\"type\":\"rate_limit_event\",\"rate_limit_info\":" info ",\"session_id\":\"s-1\"}"

/* The CLI's rate_limit_event says when the window resets (the lines of
 * Claude Code 2.1.332): a usage limit whose words name no time then
 * waits for it with continue-at-reset on; an event that is not rejected
 * forgets it, and the turn's next limit knows no reset. */
static void
test_rate_limit_event_gives_the_reset (Fixture       *f,
                                       gconstpointer  data)
{
  MendErrorPolicy *policy = mend_chat_get_policy (f->chat);
  gint64 reset_s = WALL_START / G_USEC_PER_SEC + 7200;
  g_autofree char *rejected = g_strdup_printf (
    RATE_LIMIT_LINE ("{\"status\":\"rejected\",\"resetsAt\":%" G_GINT64_FORMAT ","
                     "\"rateLimitType\":\"five_hour\",\"isUsingOverage\":false}"), reset_s);
  const char *limited =
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":429,"
    "\"result\":\"Claude AI usage limit reached\",\"session_id\":\"s-1\"}";
  MendTurn *turn;
  MendRetryWait *wait;
  guint64 parsed;

  mend_error_policy_set_continue_at_reset (policy, TRUE);
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  turn = submit (f);

  /* Parsed, though no "system" or "result" is in it; it changes nothing
   * by itself. */
  parsed = mend_stream_observer_get_n_parsed (f->observer);
  g_assert_false (feed (f, rejected));
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, parsed + 1);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);

  g_assert_true (feed (f, limited));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_resets_at (mend_turn_get_last_failure (turn)), ==,
                   reset_s * G_USEC_PER_SEC);
  wait = mend_turn_get_wait (turn);
  g_assert_true (mend_retry_wait_get_at_reset (wait));
  g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, reset_s * G_USEC_PER_SEC);

  /* At the reset, one attempt; the window open again, the event says so. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 7200 * 1000);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_false (feed (f, RATE_LIMIT_LINE ("{\"status\":\"allowed\",\"isUsingOverage\":false}")));

  /* Limited again without an event: no reset known, the turn gives up. */
  g_assert_true (feed (f, limited));
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_resets_at (mend_turn_get_last_failure (last_finished (f))), ==, 0);

  /* An event whose reset has passed names no reset for a new limit. */
  g_free (rejected);
  rejected = g_strdup_printf (RATE_LIMIT_LINE ("{\"status\":\"rejected\",\"resetsAt\":%" G_GINT64_FORMAT "}"),
                              reset_s - 60);
  turn = submit (f);
  g_assert_false (feed (f, rejected));
  g_assert_true (feed (f, limited));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_resets_at (mend_turn_get_last_failure (turn)), ==, 0);
}

/* A reset in words names its minute: read within that minute (the
 * clock's 10:53:20), "resets 10:53am" is at its end, 10:54, not a day
 * later; a minute that has passed is tomorrow's. */
static void
test_reset_in_words_within_its_minute (Fixture       *f,
                                       gconstpointer  data)
{
  gint64 minute_us = WALL_START - 20 * G_USEC_PER_SEC;   /* 10:53:00 UTC */
  MendTurn *turn;

  mend_error_policy_set_continue_at_reset (mend_chat_get_policy (f->chat), TRUE);
  turn = submit (f);
  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
    "\"result\":\"You've hit your session limit \xc2\xb7 resets 10:53am (UTC)\"}"));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_resets_at (mend_turn_get_last_failure (turn)), ==,
                   minute_us + G_TIME_SPAN_MINUTE);
  mend_chat_stop (f->chat);

  turn = submit (f);
  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
    "\"result\":\"You've hit your session limit \xc2\xb7 resets 10:52am (UTC)\"}"));
  g_assert_cmpint (mend_failure_get_resets_at (mend_turn_get_last_failure (turn)), ==,
                   minute_us - G_TIME_SPAN_MINUTE + G_TIME_SPAN_DAY);
}

static void
test_error_text_falls_back_to_error_member (Fixture       *f,
                                            gconstpointer  data)
{
  MendTurn *turn = submit (f);

  /* No "result" text: the "error" member is the text. */
  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true,"
    "\"error\":\"Connection error: ECONNRESET\"}"));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==,
                   MEND_REASON_TRANSPORT);
}

static void
test_subtype_alone_never_decides (Fixture       *f,
                                  gconstpointer  data)
{
  MendTurn *turn;

  /* An error subtype without is_error is a success. */
  submit (f);
  g_assert_true (feed (f, "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":false}"));
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);

  /* A "success" subtype with is_error and a 503 is retried. */
  turn = submit (f);
  g_assert_true (feed (f,
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":503,"
    "\"result\":\"" SUMMARY_503 "\"}"));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==,
                   MEND_REASON_CAPACITY);
  mend_chat_stop (f->chat);

  /* An error subtype with nothing else to classify fails closed. */
  submit (f);
  g_assert_true (feed (f, "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true}"));
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (last_finished (f))), ==,
                   MEND_FAILURE_PERMANENT);
}

/* The agent's own turn */

static void
test_init_and_result_without_app_turn_are_the_agents_own (Fixture       *f,
                                                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (feed (f, INIT_LINE));
  g_assert_true (mend_chat_get_external_turn (f->chat));
  /* A second init changes nothing. */
  g_assert_false (feed (f, INIT_LINE));

  /* Submissions queue behind the agent's own turn. */
  g_assert_true (mend_chat_submit (f->chat, "Later", NULL, &error));
  g_assert_no_error (error);
  g_assert_null (mend_chat_get_turn (f->chat));

  g_assert_true (feed (f, SUCCESS_LINE));
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_cmpuint (f->finished->len, ==, 0);

  /* What queued runs now, as an app turn, and the next result is its. */
  g_assert_nonnull (mend_chat_get_turn (f->chat));
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "Later");
  g_assert_true (feed (f, SUCCESS_LINE));
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);

  /* A result with nothing in flight is ignored. */
  g_assert_false (feed (f, SUCCESS_LINE));

  /* An error in the agent's own turn just ends it. */
  g_assert_true (feed (f, INIT_LINE));
  g_assert_true (feed (f, "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
                          "\"api_error_status\":529,\"result\":\"Overloaded\"}"));
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);
}

/* Subagents */

static void
test_task_started_reaches_the_subagents (Fixture       *f,
                                         gconstpointer  data)
{
  MendSubagent *subagent;

  g_assert_true (feed (f, STARTED_LINE));
  subagent = lookup (f, "toolu_01");
  g_assert_nonnull (subagent);
  g_assert_true (lookup (f, "a7c41e2") == subagent);
  g_assert_cmpstr (mend_subagent_get_id (subagent), ==, "toolu_01");
  g_assert_cmpstr (mend_subagent_get_agent_id (subagent), ==, "a7c41e2");
  g_assert_cmpstr (mend_subagent_get_name (subagent), ==, "Push relay for GCP lane bundles");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_RUNNING);

  /* Without a tool_use_id the task id is the subagent's id. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"b9\","
                          "\"description\":\"Other\"}"));
  subagent = lookup (f, "b9");
  g_assert_nonnull (subagent);
  g_assert_cmpstr (mend_subagent_get_id (subagent), ==, "b9");
  g_assert_cmpstr (mend_subagent_get_agent_id (subagent), ==, "b9");
  g_assert_cmpuint (n_subagents (f), ==, 2);
}

static void
test_nested_tasks_are_ignored (Fixture       *f,
                               gconstpointer  data)
{
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"n1\","
                           "\"tool_use_id\":\"toolu_09\",\"description\":\"Nested\","
                           "\"parent_tool_use_id\":\"toolu_01\"}"));
  g_assert_null (lookup (f, "n1"));
  g_assert_null (lookup (f, "toolu_09"));
  g_assert_cmpuint (n_subagents (f), ==, 0);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);

  /* A null parent is top-level. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"t1\","
                          "\"tool_use_id\":\"toolu_10\",\"parent_tool_use_id\":null}"));
  g_assert_nonnull (lookup (f, "toolu_10"));
}

static void
test_failed_notification_schedules_a_resume (Fixture       *f,
                                             gconstpointer  data)
{
  MendSubagent *subagent;
  MendRetryWait *wait;

  g_assert_true (feed (f, STARTED_LINE));
  g_assert_true (feed (f, FAILED_503_LINE));

  subagent = lookup (f, "toolu_01");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_true (mend_subagent_get_retryable (subagent));
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (subagent)), ==,
                   MEND_REASON_CAPACITY);
  wait = mend_subagent_get_retry (subagent);
  g_assert_nonnull (wait);
  g_assert_cmpuint (mend_retry_wait_get_attempt (wait), ==, 1);
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_CAPACITY);

  /* The same notice again changes nothing. */
  g_assert_false (feed (f, FAILED_503_LINE));
  g_assert_true (mend_subagent_get_retry (subagent) == wait);

  /* The resume: a start for the same agent id. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a7c41e2\","
                          "\"tool_use_id\":\"toolu_02\",\"description\":\"Push relay for GCP lane bundles\"}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_RUNNING);
  g_assert_null (mend_subagent_get_retry (subagent));
  g_assert_cmpuint (n_subagents (f), ==, 1);

  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41e2\","
                          "\"status\":\"completed\",\"summary\":\"Done\"}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_COMPLETED);
  g_assert_false (mend_subagent_get_retryable (subagent));
}

static void
test_notifications_end_subagents (Fixture       *f,
                                  gconstpointer  data)
{
  MendSubagent *subagent;

  g_assert_true (feed (f, STARTED_LINE));
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41e2\","
                          "\"status\":\"stopped\",\"summary\":\"Stopped by the user\"}"));
  subagent = lookup (f, "toolu_01");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_CANCELLED);

  /* A failure that is not transient is not retried. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"c3\","
                          "\"tool_use_id\":\"toolu_03\",\"description\":\"Bad\"}"));
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"c3\","
                          "\"status\":\"failed\",\"summary\":\"API Error: 400 invalid_request_error\"}"));
  subagent = lookup (f, "toolu_03");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_null (mend_subagent_get_retry (subagent));

  /* Unknown statuses are ignored silently. */
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"c3\","
                           "\"status\":\"paused\"}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);
}

/* Lines in the shape Claude Code 2.1.328 writes for a background shell
 * command (tests/data/claude-code-2.1.328/background-bash.jsonl), with the
 * command failing (exit code 7) instead of completing: a shell task is not
 * a subagent, whether its start, its list entry or its end says so, and a
 * Retry must never ask the model to SendMessage a shell. */
static void
test_failed_shell_task_is_not_a_subagent (Fixture       *f,
                                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"background_tasks_changed\","
                           "\"tasks\":[{\"task_id\":\"bn7mv7tae\",\"run_id\":\"0mx3nr5cz-3b5b3ac9\","
                           "\"task_type\":\"local_bash\",\"description\":\"Run the slow check\"}]}"));
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"bn7mv7tae\","
                           "\"tool_use_id\":\"toolu_scripted0001\",\"description\":\"Run the slow check\","
                           "\"is_backgrounded\":true,\"task_type\":\"local_bash\"}"));
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"bn7mv7tae\","
                           "\"patch\":{\"status\":\"failed\",\"end_time\":1796066724588}}"));
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"bn7mv7tae\","
                           "\"tool_use_id\":\"toolu_scripted0001\",\"status\":\"failed\","
                           "\"summary\":\"Background command \\\"Run the slow check\\\" failed (exit code 7)\"}"));
  g_assert_cmpuint (n_subagents (f), ==, 0);
  g_assert_false (mend_subagent_retry_resume_now (mend_chat_get_subagents (f->chat), "bn7mv7tae", &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_UNKNOWN_SUBAGENT);
  g_clear_error (&error);

  /* Its end names its type itself, with no start seen before. */
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"bq2\","
                           "\"tool_use_id\":\"toolu_9\",\"task_type\":\"local_bash\",\"status\":\"failed\","
                           "\"summary\":\"exit code 7\"}"));
  g_assert_cmpuint (n_subagents (f), ==, 0);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);
}

/* A subagent's failure whose start was not seen (the observer came late):
 * it is the subagent of its tool_use_id, with the task's id as its agent
 * id, so that a later line by either id finds it. */
static void
test_failure_of_an_unseen_subagent_is_found_by_its_call (Fixture       *f,
                                                         gconstpointer  data)
{
  MendSubagent *subagent;

  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"ad8531770753b2b68\","
                          "\"tool_use_id\":\"toolu_scripted0001\",\"status\":\"failed\",\"summary\":\"" SUMMARY_503 "\"}"));
  subagent = lookup (f, "toolu_scripted0001");
  g_assert_nonnull (subagent);
  g_assert_cmpstr (mend_subagent_get_id (subagent), ==, "toolu_scripted0001");
  g_assert_cmpstr (mend_subagent_get_agent_id (subagent), ==, "ad8531770753b2b68");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_nonnull (mend_subagent_get_retry (subagent));
  g_assert_cmpuint (n_subagents (f), ==, 1);

  /* Its resume, by the agent id, finds the same subagent. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"ad8531770753b2b68\","
                          "\"tool_use_id\":\"toolu_scripted0002\",\"description\":\"Survey\",\"task_type\":\"local_agent\"}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_RUNNING);
  g_assert_cmpuint (n_subagents (f), ==, 1);
}

static void
test_task_updated_ends_subagents (Fixture       *f,
                                  gconstpointer  data)
{
  MendSubagent *subagent;

  g_assert_true (feed (f, STARTED_LINE));
  subagent = lookup (f, "toolu_01");

  /* Patches that end nothing are ignored, and not counted. */
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a7c41e2\","
                           "\"patch\":{\"description\":\"Renamed\"}}"));
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a7c41e2\","
                           "\"patch\":{\"status\":\"running\"}}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_RUNNING);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);

  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a7c41e2\","
                          "\"patch\":{\"status\":\"failed\",\"error\":\"Connection error: ECONNRESET\"}}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (subagent)), ==,
                   MEND_REASON_TRANSPORT);
  g_assert_nonnull (mend_subagent_get_retry (subagent));

  /* Killed ends it, and its retry with it. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a7c41e2\","
                          "\"patch\":{\"status\":\"killed\"}}"));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_CANCELLED);
  g_assert_null (mend_subagent_get_retry (subagent));

  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"d4\","
                          "\"tool_use_id\":\"toolu_04\",\"description\":\"Fourth\"}"));
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"d4\","
                          "\"patch\":{\"status\":\"completed\",\"end_time\":1764500000}}"));
  g_assert_cmpint (mend_subagent_get_state (lookup (f, "toolu_04")), ==, MEND_SUBAGENT_COMPLETED);

  /* A failure patch without text fails closed: not retried. */
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"e5\","
                          "\"tool_use_id\":\"toolu_05\",\"description\":\"Fifth\"}"));
  g_assert_true (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"e5\","
                          "\"patch\":{\"status\":\"failed\"}}"));
  subagent = lookup (f, "toolu_05");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_null (mend_subagent_get_retry (subagent));
}

/* The hot path */

static void
test_token_deltas_cost_no_parse (Fixture       *f,
                                 gconstpointer  data)
{
  const char *lines[] = {
    DELTA_LINE ("Hello"),
    DELTA_LINE ("The system result is fine: system, result."),
    DELTA_LINE ("She said \\\"system\\\" and \\\"result\\\""),
    DELTA_LINE ("{\\\"type\\\":\\\"system\\\",\\\"subtype\\\":\\\"init\\\"}"),
    DELTA_LINE ("{\\\"type\\\":\\\"result\\\",\\\"is_error\\\":false}"),
    /* Key order Claude Code may change: still no quoted keyword. */
    "{\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\","
      "\"text\":\"system \\\\\\\"result\\\\\\\"\"}},\"type\":\"stream_event\"}",
    "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":"
      "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"type\\\": \\\"system\\\"\"}}}",
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"system result\"}]}}",
    "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":\"ok\"}]}}",
    "",
    "\n",
  };
  MendTurn *turn = submit (f);

  for (guint round = 0; round < 2; round++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
        g_assert_false (feed (f, lines[i]));

      g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, 0);
      g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);
      g_assert_cmpuint (mend_stream_observer_get_n_lines (f->observer), ==,
                        (round + 1) * G_N_ELEMENTS (lines));
      g_assert_true (mend_chat_get_turn (f->chat) == turn);
      if (turn != NULL)
        g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
      g_assert_false (mend_chat_get_external_turn (f->chat));

      /* Once more with no app turn in flight. */
      mend_chat_stop (f->chat);
      turn = NULL;
    }

  g_assert_cmpuint (n_subagents (f), ==, 0);

  /* A line that names them with quotes is parsed. */
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"compact_boundary\"}"));
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, 1);
}

/* Bad input */

static char *
repeat (char  c,
        gsize n)
{
  char *s = g_malloc (n + 1);

  memset (s, c, n);
  s[n] = '\0';
  return s;
}

static void
assert_nothing_changed (Fixture *f)
{
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_cmpuint (f->finished->len, ==, 0);
}

static void
test_bad_input_is_ignored (Fixture       *f,
                          gconstpointer  data)
{
  /* Counted: they could have mattered. */
  const char *counted[] = {
    "{\"type\":\"system\",\"subtype\":\"init\"",
    "{\"type\":\"system\",\"subtype\":\"init\",}",
    "\"system\"",
    "[\"system\",\"init\"]",
    "{\"type\":5,\"subtype\":\"system\"}",
    "{\"kind\":\"system\"}",
    "{\"type\":\"system\",\"subtype\":7}",
    "{\"type\":\"system\"}",
    "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"\xff\xfe\"}",
    "{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"\xc3\"}",
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"tool_use_id\":\"toolu_01\",\"description\":\"x\"}",
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":42,\"tool_use_id\":\"toolu_01\"}",
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"\"}",
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a1\",\"tool_use_id\":[1]}",
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a1\",\"description\":{}}",
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a1\",\"parent_tool_use_id\":3}",
    "{\"type\":\"system\",\"subtype\":\"task_notification\",\"status\":\"failed\",\"summary\":\"503\"}",
    "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a1\",\"status\":true}",
    "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a1\"}",
    "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a1\",\"status\":\"failed\",\"summary\":5}",
    "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a1\"}",
    "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a1\",\"patch\":\"failed\"}",
    "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a1\",\"patch\":{\"status\":9}}",
    "{\"type\":\"system\",\"subtype\":\"task_updated\",\"patch\":{\"status\":\"failed\"}}",
    "{\"type\":\"result\",\"is_error\":\"yes\"}",
    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":\"529\"}",
    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":5290}",
    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":52.9}",
    "{\"type\":\"result\",\"subtype\":[],\"is_error\":false}",
    "{\"type\":\"rate_limit_event\"}",
    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":\"rejected\"}",
    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"resetsAt\":1796160217}}",
    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"rejected\",\"resetsAt\":\"9:23pm\"}}",
    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"rejected\",\"resetsAt\":-5}}",
    "{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"rejected\",\"resetsAt\":1e300}}",
  };
  /* Parsed, not counted: unknown types, subtypes and fields. */
  const char *silent[] = {
    "{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"compact_metadata\":{}}",
    "{\"type\":\"system\",\"subtype\":\"hook_response\",\"result\":\"x\"}",
    "{\"type\":\"telemetry\",\"result\":\"ok\"}",
    "{\"type\":\"result_v2\",\"system\":\"x\"}",
    "{\"type\":\"system\",\"subtype\":\"status\",\"status\":\"compacting\"}",
  };
  g_autofree char *deep = NULL;
  g_autofree char *deep_alone = repeat ('[', 100000);
  g_autofree char *huge = NULL;
  guint64 parsed;
  guint64 ignored;

  for (guint i = 0; i < G_N_ELEMENTS (counted); i++)
    {
      ignored = mend_stream_observer_get_n_ignored (f->observer);
      g_assert_false (feed (f, counted[i]));
      if (mend_stream_observer_get_n_ignored (f->observer) != ignored + 1)
        g_error ("line %u not counted: %s", i, counted[i]);
      assert_nothing_changed (f);
    }
  g_assert_cmpuint (n_subagents (f), ==, 0);

  ignored = mend_stream_observer_get_n_ignored (f->observer);
  for (guint i = 0; i < G_N_ELEMENTS (silent); i++)
    g_assert_false (feed (f, silent[i]));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored);
  assert_nothing_changed (f);

  /* An embedded NUL with an explicit length is not UTF-8 text. */
  {
    static const char with_nul[] = "{\"type\":\"system\",\"subtype\":\"init\",\"x\":\"a\0b\"}";

    g_assert_false (mend_stream_observer_feed_line (f->observer, with_nul, sizeof with_nul - 1));
    g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored + 1);
    assert_nothing_changed (f);
  }

  /* Deep nesting is refused before the recursive parser sees it. */
  deep = g_strconcat ("{\"type\":\"system\",\"subtype\":\"init\",\"x\":", deep_alone, NULL);
  ignored = mend_stream_observer_get_n_ignored (f->observer);
  g_assert_false (feed (f, deep));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored + 1);
  assert_nothing_changed (f);

  /* Nesting without a keyword is not even parsed. */
  parsed = mend_stream_observer_get_n_parsed (f->observer);
  g_assert_false (feed (f, deep_alone));
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, parsed);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored + 1);

  /* A 10 MiB line is over the cap: counted, never parsed. */
  huge = repeat (' ', 10 * 1024 * 1024);
  memcpy (huge, INIT_LINE, strlen (INIT_LINE));
  g_assert_false (feed (f, huge));
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, parsed);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored + 2);
  assert_nothing_changed (f);

  /* Bad results leave a running app turn running. */
  {
    MendTurn *turn = submit (f);

    g_assert_false (feed (f, "{\"type\":\"result\",\"is_error\":\"yes\"}"));
    g_assert_false (feed (f, "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":\"529\"}"));
    g_assert_false (feed (f, "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":-1}"));
    g_assert_true (mend_chat_get_turn (f->chat) == turn);
    g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
    g_assert_cmpuint (f->finished->len, ==, 0);
    g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored + 5);
  }
}

static void
test_bad_subagent_lines_change_nothing (Fixture       *f,
                                        gconstpointer  data)
{
  MendSubagent *subagent;
  guint64 ignored;

  g_assert_true (feed (f, STARTED_LINE));
  g_assert_true (feed (f, FAILED_503_LINE));
  subagent = lookup (f, "toolu_01");
  g_assert_nonnull (mend_subagent_get_retry (subagent));

  ignored = mend_stream_observer_get_n_ignored (f->observer);
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":7,"
                           "\"tool_use_id\":\"toolu_02\"}"));
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_notification\","
                           "\"task_id\":[\"a7c41e2\"],\"status\":\"completed\"}"));
  g_assert_false (feed (f, "{\"type\":\"system\",\"subtype\":\"task_updated\",\"task_id\":\"a7c41e2\","
                           "\"patch\":[\"killed\"]}"));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, ignored + 3);

  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_nonnull (mend_subagent_get_retry (subagent));
  g_assert_cmpuint (n_subagents (f), ==, 1);
}

/* Properties */

static void
on_notify (GObject    *object,
           GParamSpec *pspec,
           guint      *count)
{
  (*count)++;
}

static void
test_max_line_bytes (Fixture       *f,
                     gconstpointer  data)
{
  guint notified = 0;
  guint max = 0;
  g_autoptr(MendChat) chat = NULL;
  guint64 n_lines = 1;

  g_assert_cmpuint (mend_stream_observer_get_max_line_bytes (f->observer), ==,
                    MEND_STREAM_OBSERVER_DEFAULT_MAX_LINE_BYTES);
  g_signal_connect (f->observer, "notify::max-line-bytes", G_CALLBACK (on_notify), &notified);

  mend_stream_observer_set_max_line_bytes (f->observer, strlen (INIT_LINE));
  mend_stream_observer_set_max_line_bytes (f->observer, strlen (INIT_LINE));
  g_assert_cmpuint (notified, ==, 1);
  g_object_get (f->observer, "max-line-bytes", &max, "chat", &chat, NULL);
  n_lines = mend_stream_observer_get_n_lines (f->observer);
  g_assert_cmpuint (max, ==, strlen (INIT_LINE));
  g_assert_true (chat == f->chat);
  g_assert_true (mend_stream_observer_get_chat (f->observer) == f->chat);
  g_assert_cmpuint (n_lines, ==, 0);

  /* The limit is on the line without its line end. */
  g_assert_true (feed (f, INIT_LINE "\r\n"));
  g_assert_true (mend_chat_get_external_turn (f->chat));
  mend_chat_end_external_turn (f->chat);
  mend_stream_observer_set_max_line_bytes (f->observer, strlen (INIT_LINE) - 1);
  g_assert_false (feed (f, INIT_LINE));
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 1);
  g_assert_cmpuint (notified, ==, 2);
}

/* Watching a stream */

/* A stream that hands out at most @chunk bytes per read, asynchronously. */
#define TEST_TYPE_TRICKLE_STREAM (test_trickle_stream_get_type ())
G_DECLARE_FINAL_TYPE (TestTrickleStream, test_trickle_stream, TEST, TRICKLE_STREAM, GInputStream)

struct _TestTrickleStream
{
  GInputStream  parent_instance;
  GBytes       *data;
  gsize         offset;
  gsize         chunk;
};

G_DEFINE_FINAL_TYPE (TestTrickleStream, test_trickle_stream, G_TYPE_INPUT_STREAM)

static gssize
trickle_read (GInputStream  *stream,
              void          *buffer,
              gsize          count,
              GCancellable  *cancellable,
              GError       **error)
{
  TestTrickleStream *self = TEST_TRICKLE_STREAM (stream);
  gsize size;
  const guint8 *data = g_bytes_get_data (self->data, &size);
  gsize n = MIN (MIN (count, self->chunk), size - self->offset);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return -1;

  memcpy (buffer, data + self->offset, n);
  self->offset += n;
  return (gssize) n;
}

static void
trickle_read_async (GInputStream        *stream,
                    void                *buffer,
                    gsize                count,
                    int                  io_priority,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (stream, cancellable, callback, user_data);
  GError *error = NULL;
  gssize n = trickle_read (stream, buffer, count, cancellable, &error);

  /* Returned from an idle: a GTask made in this iteration defers. */
  if (n < 0)
    g_task_return_error (task, error);
  else
    g_task_return_int (task, n);
}

static gssize
trickle_read_finish (GInputStream  *stream,
                     GAsyncResult  *result,
                     GError       **error)
{
  return g_task_propagate_int (G_TASK (result), error);
}

static void
test_trickle_stream_finalize (GObject *object)
{
  g_bytes_unref (TEST_TRICKLE_STREAM (object)->data);
  G_OBJECT_CLASS (test_trickle_stream_parent_class)->finalize (object);
}

static void
test_trickle_stream_class_init (TestTrickleStreamClass *klass)
{
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = test_trickle_stream_finalize;
  stream_class->read_fn = trickle_read;
  stream_class->read_async = trickle_read_async;
  stream_class->read_finish = trickle_read_finish;
}

static void
test_trickle_stream_init (TestTrickleStream *self)
{
}

static GInputStream *
trickle_stream_new (const char *text,
                    gsize       chunk)
{
  TestTrickleStream *self = g_object_new (TEST_TYPE_TRICKLE_STREAM, NULL);

  self->data = g_bytes_new (text, strlen (text));
  self->chunk = chunk;
  return G_INPUT_STREAM (self);
}

typedef struct
{
  gboolean  done;
  gboolean  ok;
  GError   *error;
} WatchResult;

static void
on_watched (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  WatchResult *r = user_data;

  r->ok = mend_stream_observer_watch_finish (MEND_STREAM_OBSERVER (source), result, &r->error);
  r->done = TRUE;
}

static void
wait_for (WatchResult *r)
{
  while (!r->done)
    g_main_context_iteration (NULL, TRUE);
}

/* Counts the agent's own turns as the lines go by. */
static void
on_external_turn (MendChat   *chat,
                  GParamSpec *pspec,
                  guint      *begun)
{
  if (mend_chat_get_external_turn (chat))
    (*begun)++;
}

/* Lines: init, 3 deltas, the over-cap line, result, a delta split by
 * '\r\n', task_started, init without a line end. */
static char *
watch_script (gsize cap)
{
  GString *s = g_string_new (NULL);
  g_autofree char *padding = repeat ('x', cap * 3);

  g_string_append (s, INIT_LINE "\n");
  g_string_append (s, DELTA_LINE ("one") "\n" DELTA_LINE ("two \\\"system\\\"") "\n" DELTA_LINE ("3") "\n");
  /* Would begin nothing anyway: an init during the agent's own turn. */
  g_string_append_printf (s, "{\"type\":\"system\",\"subtype\":\"init\",\"pad\":\"%s\"}\n", padding);
  g_string_append (s, SUCCESS_LINE "\n");
  g_string_append (s, DELTA_LINE ("four") "\r\n");
  g_string_append (s, STARTED_LINE "\n");
  g_string_append (s, INIT_LINE);

  return g_string_free (s, FALSE);
}

static void
run_watch (Fixture      *f,
           GInputStream *stream,
           gsize         cap)
{
  WatchResult r = { 0 };
  guint begun = 0;

  mend_stream_observer_set_max_line_bytes (f->observer, cap);
  g_signal_connect (f->chat, "notify::external-turn", G_CALLBACK (on_external_turn), &begun);

  mend_stream_observer_watch_async (f->observer, stream, NULL, on_watched, &r);
  wait_for (&r);
  g_assert_no_error (r.error);
  g_assert_true (r.ok);

  g_assert_cmpuint (mend_stream_observer_get_n_lines (f->observer), ==, 9);
  /* init, result, task_started, init: each fed once, whole. */
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, 4);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 1);
  g_assert_cmpuint (begun, ==, 2);
  /* The stream ended during the agent's second turn of its own: over. */
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_nonnull (lookup (f, "toolu_01"));

  g_signal_handlers_disconnect_by_func (f->chat, on_external_turn, &begun);
}

static void
test_watch_memory_stream (Fixture       *f,
                          gconstpointer  data)
{
  g_autofree char *script = watch_script (400);
  GInputStream *stream = g_memory_input_stream_new_from_data (g_strdup (script), -1, g_free);

  run_watch (f, stream, 400);
  g_assert_finalize_object (stream);
}

static void
test_watch_one_byte_reads (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *script = watch_script (400);
  GInputStream *stream = trickle_stream_new (script, 1);

  run_watch (f, stream, 400);
  g_assert_finalize_object (stream);
}

static void
test_watch_odd_reads (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *script = watch_script (400);
  GInputStream *stream = trickle_stream_new (script, 7);

  run_watch (f, stream, 400);
  g_assert_finalize_object (stream);
}

static void
test_watch_long_lines_are_skipped_whole (Fixture       *f,
                                         gconstpointer  data)
{
  /* Longer than the read buffer, so the skip spans reads. */
  g_autofree char *padding = repeat ('y', 300 * 1024);
  g_autofree char *script = g_strdup_printf ("{\"type\":\"system\",\"subtype\":\"init\",\"p\":\"%s\"}\n"
                                             "%s\n" SUCCESS_LINE "\n" INIT_LINE "\n",
                                             padding, padding);
  GInputStream *stream = g_memory_input_stream_new_from_data (g_steal_pointer (&script), -1, g_free);
  WatchResult r = { 0 };
  guint begun = 0;

  g_signal_connect (f->chat, "notify::external-turn", G_CALLBACK (on_external_turn), &begun);
  mend_stream_observer_set_max_line_bytes (f->observer, 1024);
  mend_stream_observer_watch_async (f->observer, stream, NULL, on_watched, &r);
  wait_for (&r);
  g_assert_true (r.ok);

  g_assert_cmpuint (mend_stream_observer_get_n_lines (f->observer), ==, 4);
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 2);
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, 2);
  /* The result had nothing to end; the last init began the agent's turn,
   * which the end of the stream ended. */
  g_assert_cmpuint (begun, ==, 1);
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_signal_handlers_disconnect_by_func (f->chat, on_external_turn, &begun);
  g_assert_finalize_object (stream);
}

static void
test_watch_cancelled (Fixture       *f,
                      gconstpointer  data)
{
  GInputStream *stream = trickle_stream_new (INIT_LINE "\n" SUCCESS_LINE "\n", 4);
  GCancellable *cancellable = g_cancellable_new ();
  WatchResult r = { 0 };
  WatchResult second = { 0 };

  mend_stream_observer_watch_async (f->observer, stream, cancellable, on_watched, &r);
  /* One watch at a time. */
  mend_stream_observer_watch_async (f->observer, stream, NULL, on_watched, &second);
  wait_for (&second);
  g_assert_error (second.error, G_IO_ERROR, G_IO_ERROR_PENDING);
  g_clear_error (&second.error);

  g_cancellable_cancel (cancellable);
  wait_for (&r);
  g_assert_false (r.ok);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&r.error);
  g_assert_false (mend_chat_get_external_turn (f->chat));

  /* The observer can watch again after. */
  r = (WatchResult) { 0 };
  mend_stream_observer_watch_async (f->observer, stream, NULL, on_watched, &r);
  wait_for (&r);
  g_assert_true (r.ok);

  g_assert_finalize_object (cancellable);
  g_assert_finalize_object (stream);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/Mend/StreamObserver/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("result-succeeds-the-app-turn", test_result_succeeds_the_app_turn);
  ADD ("api-retry-status-is-redacted-and-capped", test_api_retry_status_is_redacted_and_capped);
  ADD ("failure-after-output-is-not-replayed", test_failure_after_output_is_not_replayed);
  ADD ("result-529-waits-to-retry", test_result_529_waits_to_retry);
  ADD ("result-400-gives-up", test_result_400_gives_up);
  ADD ("rate-limit-event-gives-the-reset", test_rate_limit_event_gives_the_reset);
  ADD ("reset-in-words-within-its-minute", test_reset_in_words_within_its_minute);
  ADD ("result-usage-limit-is-a-limit", test_result_usage_limit_is_a_limit);
  ADD ("error-text-falls-back-to-error-member", test_error_text_falls_back_to_error_member);
  ADD ("subtype-alone-never-decides", test_subtype_alone_never_decides);
  ADD ("init-and-result-without-app-turn-are-the-agents-own",
       test_init_and_result_without_app_turn_are_the_agents_own);
  ADD ("task-started-reaches-the-subagents", test_task_started_reaches_the_subagents);
  ADD ("nested-tasks-are-ignored", test_nested_tasks_are_ignored);
  ADD ("failed-notification-schedules-a-resume", test_failed_notification_schedules_a_resume);
  ADD ("notifications-end-subagents", test_notifications_end_subagents);
  ADD ("task-updated-ends-subagents", test_task_updated_ends_subagents);
  ADD ("failed-shell-task-is-not-a-subagent", test_failed_shell_task_is_not_a_subagent);
  ADD ("failure-of-an-unseen-subagent-is-found-by-its-call", test_failure_of_an_unseen_subagent_is_found_by_its_call);
  ADD ("token-deltas-cost-no-parse", test_token_deltas_cost_no_parse);
  ADD ("bad-input-is-ignored", test_bad_input_is_ignored);
  ADD ("bad-subagent-lines-change-nothing", test_bad_subagent_lines_change_nothing);
  ADD ("max-line-bytes", test_max_line_bytes);
  ADD ("watch-memory-stream", test_watch_memory_stream);
  ADD ("watch-one-byte-reads", test_watch_one_byte_reads);
  ADD ("watch-odd-reads", test_watch_odd_reads);
  ADD ("watch-long-lines-are-skipped-whole", test_watch_long_lines_are_skipped_whole);
  ADD ("watch-cancelled", test_watch_cancelled);

#undef ADD

  return g_test_run ();
}
