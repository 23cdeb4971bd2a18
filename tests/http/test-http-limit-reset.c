/* test-http-limit-reset.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Continue when the usage limit resets, through the public API: a chat
 * over MendHttpSender against a loopback server that answers as
 * Anthropic does when a subscription window is spent (429,
 * anthropic-ratelimit-unified-status: rejected, its reset in Unix
 * seconds), in virtual time. Off by default: the turn gives up at once,
 * as before. On (MendErrorPolicy:continue-at-reset): one attempt at the
 * reset, the queue kept until then; still limited, the next reset; a
 * balance to pay (MEND_REASON_BILLING) never waits; Stop
 * during the wait; a wall clock that jumps past the reset (a machine that
 * slept); the wait saved and restored across the reset. The failure
 * words' reset times ("resets 9:23pm (UTC)", "try again at Dec 2nd, 2026
 * 3:05 PM", "resets in 3h 12m") and the headers' are read as
 * MendFailure:resets-at.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-server.h"

typedef MendTestHttpChat Fixture;
typedef MendTestHttpReply Reply;

#define WALL_S (MEND_TEST_WALL_START / G_USEC_PER_SEC)
#define LIMITED_BODY \
  "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"," \
  "\"message\":\"This request would exceed your account's rate limit. Please try again later.\"}}"
#define SSE_OK \
  "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\"," \
  "\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\"}}\n\n" \
  "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0," \
  "\"delta\":{\"type\":\"text_delta\",\"text\":\"Done.\"}}\n\n" \
  "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

static char *
limited_headers (gint64 reset_s)
{
  return g_strdup_printf ("anthropic-ratelimit-unified-status: rejected\n"
                          "anthropic-ratelimit-unified-reset: %" G_GINT64_FORMAT, reset_s);
}

static void
set_up (Fixture       *f,
        gconstpointer  data)
{
  mend_test_http_chat_set_up_at (f, "/v1/messages");
}

static MendManualClock *
clock_of (Fixture *f)
{
  return MEND_MANUAL_CLOCK (f->clock);
}

static void
run_until (Fixture       *f,
           MendTurnState  state,
           guint          requests)
{
  mend_test_run_chat_until (f->chat, &f->served, state, requests);
}

static void
run_until_waiting_at_reset (Fixture *f)
{
  while (mend_chat_get_wait (f->chat) == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (mend_retry_wait_get_at_reset (mend_chat_get_wait (f->chat)));
}

static void
continue_at_reset (Fixture *f)
{
  mend_error_policy_set_continue_at_reset (mend_chat_get_policy (f->chat), TRUE);
}

static MendTurn *
last_finished (Fixture *f)
{
  g_assert_cmpuint (f->finished->len, >, 0);
  return g_ptr_array_index (f->finished, f->finished->len - 1);
}

/* Off, the default: a spent window gives up at once, the queue kept with
 * Continue at its head, and the failure and the chat's sentence say when
 * the limit resets. */
static void
test_default_off_gives_up (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *headers = limited_headers (WALL_S + 3600);
  Reply script[] = { { 429, "application/json", LIMITED_BODY, headers } };
  g_autoptr(GDateTime) reset = g_date_time_new_from_unix_local (WALL_S + 3600);
  g_autofree char *at = g_date_time_format (reset, "%H:%M");
  g_autofree char *expected = g_strdup_printf ("The usage limit was reached — resets at %s", at);
  MendFailure *failure;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until (f, MEND_TURN_FAILED, 1);
  failure = mend_chat_get_last_failure (f->chat);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_USAGE_LIMIT);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_failure_get_resets_at (failure), ==, (WALL_S + 3600) * G_USEC_PER_SEC);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, expected);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 2);
  g_assert_true (mend_chat_get_can_retry (f->chat));
}

/* On: the turn waits for the reset on the wall clock, says so, keeps the
 * follow-up queued, tries once at the reset and then the queue moves. */
static void
test_on_waits_for_the_reset (Fixture       *f,
                             gconstpointer  data)
{
  g_autofree char *headers = limited_headers (WALL_S + 3600);
  Reply script[] = {
    { 429, "application/json", LIMITED_BODY, headers },
    { 200, "text/event-stream", SSE_OK, NULL },
    { 200, "text/event-stream", SSE_OK, NULL },
  };
  g_autoptr(GDateTime) reset = g_date_time_new_from_unix_local (WALL_S + 3600);
  g_autofree char *at = g_date_time_format (reset, "%H:%M");
  g_autofree char *expected = g_strdup_printf ("Usage limit reached — continues at %s", at);
  MendRetryWait *wait;

  continue_at_reset (f);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until_waiting_at_reset (f);
  wait = mend_chat_get_wait (f->chat);
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_USAGE_LIMIT);
  g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, (WALL_S + 3600) * G_USEC_PER_SEC);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, expected);
  /* The follow-up waits; no Continue. */
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);

  mend_manual_clock_advance (clock_of (f), 3599 * 1000);
  g_assert_cmpuint (f->served, ==, 1);
  mend_manual_clock_advance (clock_of (f), 1000);
  run_until (f, MEND_TURN_SUCCEEDED, 3);
  g_assert_cmpuint (f->finished->len, ==, 2);
  g_assert_cmpuint (mend_turn_get_attempt (g_ptr_array_index (f->finished, 0)), ==, 2);
  g_assert_cmpstr (mend_turn_get_prompt (last_finished (f)), ==, "Then update the changelog");
}

/* Still limited at the reset: the next reset, never a loop; after
 * MEND_ERROR_POLICY_MAX_RESET_WAITS resets the turn gives up. */
static void
test_still_limited_waits_for_the_next_reset (Fixture       *f,
                                             gconstpointer  data)
{
  g_autofree char *h1 = limited_headers (WALL_S + 600);
  g_autofree char *h2 = limited_headers (WALL_S + 1200);
  g_autofree char *h3 = limited_headers (WALL_S + 1800);
  g_autofree char *h4 = limited_headers (WALL_S + 2400);
  Reply script[] = {
    { 429, "application/json", LIMITED_BODY, h1 },
    { 429, "application/json", LIMITED_BODY, h2 },
    { 429, "application/json", LIMITED_BODY, h3 },
    { 429, "application/json", LIMITED_BODY, h4 },
  };
  gint64 resets[] = { WALL_S + 600, WALL_S + 1200, WALL_S + 1800 };

  continue_at_reset (f);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  for (guint i = 0; i < G_N_ELEMENTS (resets); i++)
    {
      run_until_waiting_at_reset (f);
      g_assert_cmpuint (f->served, ==, i + 1);
      g_assert_cmpint (mend_retry_wait_get_next_at (mend_chat_get_wait (f->chat)), ==, resets[i] * G_USEC_PER_SEC);
      mend_manual_clock_advance (clock_of (f), 600 * 1000);
    }
  run_until (f, MEND_TURN_FAILED, 4);
  g_assert_cmpuint (f->served, ==, 4);
  g_assert_cmpint (mend_failure_get_resets_at (mend_chat_get_last_failure (f->chat)), ==,
                   (WALL_S + 2400) * G_USEC_PER_SEC);
}

/* A balance to pay is not a window: with continue-at-reset on and a reset
 * in the headers, a credit balance too low gives up at once and says so. */
static void
test_billing_never_waits (Fixture       *f,
                          gconstpointer  data)
{
  g_autofree char *headers = g_strdup_printf ("anthropic-ratelimit-unified-reset: %" G_GINT64_FORMAT,
                                              WALL_S + 600);
  Reply script[] = {
    { 400, "application/json",
      "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":"
      "\"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing "
      "to upgrade or purchase credits.\"}}", headers },
  };
  MendFailure *failure;

  continue_at_reset (f);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until (f, MEND_TURN_FAILED, 1);
  failure = mend_chat_get_last_failure (f->chat);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_BILLING);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_failure_get_resets_at (failure), ==, (WALL_S + 600) * G_USEC_PER_SEC);
  g_assert_null (mend_chat_get_wait (f->chat));
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==,
                   "The account’s credit or spending limit is used up");
  mend_manual_clock_advance (clock_of (f), 3600 * 1000);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 2);
}

/* Stop during the wait: the turn ends stopped, nothing in the queue moves,
 * no request follows. */
static void
test_stop_during_the_wait (Fixture       *f,
                           gconstpointer  data)
{
  g_autofree char *headers = limited_headers (WALL_S + 3600);
  Reply script[] = { { 429, "application/json", LIMITED_BODY, headers } };

  continue_at_reset (f);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until_waiting_at_reset (f);
  mend_chat_stop (f->chat);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_STOPPED);
  g_assert_null (mend_chat_get_wait (f->chat));
  mend_manual_clock_advance (clock_of (f), 7200 * 1000);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 1);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (mend_chat_get_queue (f->chat))), ==,
                   "Then update the changelog");
}

/* A laptop asleep through the reset: the monotonic clock stood still,
 * the wall clock moved on; the wait tries soon after the wake. */
static void
test_wall_clock_jump_past_the_reset (Fixture       *f,
                                     gconstpointer  data)
{
  g_autofree char *headers = limited_headers (WALL_S + 3600);
  Reply script[] = {
    { 429, "application/json", LIMITED_BODY, headers },
    { 200, "text/event-stream", SSE_OK, NULL },
  };

  continue_at_reset (f);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until_waiting_at_reset (f);
  mend_manual_clock_advance (clock_of (f), 10 * 1000);
  mend_manual_clock_jump_real_time (clock_of (f), 2 * 3600 * 1000);
  g_assert_cmpint (mend_retry_wait_get_remaining_ms (mend_chat_get_wait (f->chat)), ==, 0);
  /* Within half a minute of the monotonic clock. */
  mend_manual_clock_advance (clock_of (f), 30 * 1000);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
restore_and_check (Fixture    *f,
                   const char *saved,
                   gint64      wall_us,
                   gboolean    passed)
{
  g_autoptr(GError) error = NULL;
  MendClock *clock = mend_manual_clock_new (wall_us);
  MendHttpSender *sender = mend_http_sender_new (f->endpoint);
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  MendChat *chat;

  mend_http_sender_set_model (sender, "llama3.2");
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  mend_error_policy_set_continue_at_reset (policy, TRUE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, "sender", sender, NULL);
  g_assert_true (mend_chat_restore_state (chat, saved, &error));
  g_assert_no_error (error);
  g_assert_nonnull (mend_chat_get_wait (chat));
  g_assert_true (mend_retry_wait_get_at_reset (mend_chat_get_wait (chat)));
  if (!passed)
    {
      /* The same wall-clock reset, however long the chat was away. */
      g_assert_cmpint (mend_retry_wait_get_next_at (mend_chat_get_wait (chat)), ==, (WALL_S + 3600) * G_USEC_PER_SEC);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), (WALL_S + 3600) * 1000 - wall_us / 1000 - 1000);
      g_assert_cmpuint (f->served, ==, 1);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 1000);
    }
  else
    mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 0);
  mend_test_run_chat_until (chat, &f->served, MEND_TURN_SUCCEEDED, 2);
  g_assert_cmpuint (f->served, ==, 2);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
}

/* Saved during the wait, restored in a new process later: it waits for
 * the same wall-clock reset, or tries at once when that passed. */
static void
test_restored_across_the_reset (Fixture       *f,
                                gconstpointer  data)
{
  gboolean passed = GPOINTER_TO_INT (data);
  g_autofree char *headers = limited_headers (WALL_S + 3600);
  Reply script[] = {
    { 429, "application/json", LIMITED_BODY, headers },
    { 200, "text/event-stream", SSE_OK, NULL },
  };
  g_autofree char *saved = NULL;

  continue_at_reset (f);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until_waiting_at_reset (f);
  saved = mend_chat_save_state (f->chat);
  mend_chat_close (f->chat);

  restore_and_check (f, saved, MEND_TEST_WALL_START + (passed ? 2 * G_TIME_SPAN_HOUR : 10 * G_TIME_SPAN_MINUTE),
                     passed);
}

/* The words and headers that say when a limit resets. */
static void
test_reset_times_in_words (void)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  gint64 now_us = g_date_time_to_unix (now) * G_USEC_PER_SEC;
  g_autoptr(GDateTime) today = g_date_time_new_utc (g_date_time_get_year (now), g_date_time_get_month (now),
                                                    g_date_time_get_day_of_month (now), 21, 23, 0);
  gint64 at_923 = g_date_time_to_unix (today) * G_USEC_PER_SEC;
  g_autoptr(MendFailure) claude = NULL;
  g_autoptr(MendFailure) in = NULL;
  g_autoptr(MendFailure) codex = NULL;
  g_autoptr(MendFailure) iso = NULL;
  g_autoptr(MendFailure) rate = NULL;

  /* Within the minute the words name, its end; past it, tomorrow's. */
  if (at_923 < now_us && now_us - at_923 < G_TIME_SPAN_MINUTE)
    at_923 += G_TIME_SPAN_MINUTE;
  else if (at_923 < now_us)
    at_923 += G_TIME_SPAN_DAY;

  /* The real CLI's words (tests/data/claude-code-2.1.332/subagent-session-limit.jsonl). */
  claude = mend_failure_new_from_text ("You've hit your 5-hour limit · resets 9:23pm (UTC)");
  g_assert_cmpint (mend_failure_get_kind (claude), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_failure_get_resets_at (claude), ==, at_923);

  in = mend_failure_new_from_text ("You've hit your usage limit. Upgrade to Pro, or try again in 3h 12m.");
  g_assert_cmpint (mend_failure_get_kind (in), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_failure_get_resets_at (in), >=, now_us + (gint64) (3 * 3600 + 12 * 60) * G_USEC_PER_SEC);
  g_assert_cmpint (mend_failure_get_resets_at (in), <=, now_us + (gint64) (3 * 3600 + 12 * 60 + 5) * G_USEC_PER_SEC);

  codex = mend_failure_new_from_text ("You've hit your usage limit. Upgrade to Plus to continue using Codex "
                                      "(https://openai.com/chatgpt/pricing), or try again at Dec 2nd, 2099 3:05 PM.");
  g_assert_cmpint (mend_failure_get_kind (codex), ==, MEND_FAILURE_LIMIT);
  {
    g_autoptr(GDateTime) expected = g_date_time_new_local (2099, 12, 2, 15, 5, 0);

    g_assert_cmpint (mend_failure_get_resets_at (codex), ==, g_date_time_to_unix (expected) * G_USEC_PER_SEC);
  }

  iso = mend_failure_new_from_text ("Weekly usage limit reached; resets at 2099-12-02T21:23:00Z");
  g_assert_cmpint (mend_failure_get_resets_at (iso), ==, G_GINT64_CONSTANT (4099929780) * G_USEC_PER_SEC);

  /* A rate limit is not waited for: no reset read. */
  rate = mend_failure_new_from_text ("API Error: 429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit");
  g_assert_cmpint (mend_failure_get_kind (rate), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_resets_at (rate), ==, 0);
}

static void
test_reset_times_in_headers (void)
{
  g_autoptr(SoupMessageHeaders) openai = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  g_autoptr(SoupMessageHeaders) rate = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  static const char monthly_body[] = "{\"error\":{\"message\":\"You have reached your monthly request limit\"}}";
  static const char daily_body[] =
    "{\"error\":{\"code\":429,\"message\":\"You have exhausted your daily quota on this model.\",\"status\":\"RESOURCE_EXHAUSTED\","
    "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"43200s\"}]}}";
  static const char per_minute_body[] = "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}}";
  g_autoptr(GBytes) monthly = g_bytes_new_static (monthly_body, strlen (monthly_body));
  g_autoptr(GBytes) daily = g_bytes_new_static (daily_body, strlen (daily_body));
  g_autoptr(GBytes) per_minute = g_bytes_new_static (per_minute_body, strlen (per_minute_body));
  g_autoptr(MendFailure) a = NULL;
  g_autoptr(MendFailure) b = NULL;
  g_autoptr(MendFailure) c = NULL;
  gint64 now_us = g_get_real_time ();

  soup_message_headers_append (openai, "x-ratelimit-reset-requests", "6m0s");
  soup_message_headers_append (openai, "x-ratelimit-reset-tokens", "20ms");
  a = mend_failure_new_from_http (429, openai, monthly);
  g_assert_cmpint (mend_failure_get_kind (a), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_failure_get_resets_at (a), >=, now_us + 360 * G_USEC_PER_SEC);
  g_assert_cmpint (mend_failure_get_resets_at (a), <=, now_us + 365 * G_USEC_PER_SEC);

  b = mend_failure_new_from_http (429, NULL, daily);
  g_assert_cmpint (mend_failure_get_kind (b), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_failure_get_resets_at (b), >=, now_us + (gint64) 43200 * G_USEC_PER_SEC);

  /* A wait past what a gint64 of µs holds (a fuzzer's): the end of
   * time, not a reset in the past. */
  {
    static const char far_body[] =
      "{\"error\":{\"code\":429,\"message\":\"You have exhausted your daily quota on this model.\",\"status\":\"RESOURCE_EXHAUSTED\","
      "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"99999999999999999999s\"}]}}";
    g_autoptr(GBytes) far = g_bytes_new_static (far_body, strlen (far_body));
    g_autoptr(MendFailure) d = mend_failure_new_from_http (429, NULL, far);

    g_assert_cmpint (mend_failure_get_kind (d), ==, MEND_FAILURE_LIMIT);
    g_assert_cmpint (mend_failure_get_resets_at (d), >, now_us + (gint64) 3650 * 86400 * G_USEC_PER_SEC);
  }

  /* Allowed, not rejected: a per-minute rate limit, retried as before. */
  soup_message_headers_append (rate, "anthropic-ratelimit-unified-status", "allowed");
  soup_message_headers_append (rate, "anthropic-ratelimit-unified-reset", "1796160217");
  c = mend_failure_new_from_http (429, rate, per_minute);
  g_assert_cmpint (mend_failure_get_reason (c), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_kind (c), ==, MEND_FAILURE_TRANSIENT);
}

int
main (int   argc,
      char *argv[])
{
  /* The times people read are the machine's: UTC here. */
  g_setenv ("TZ", "UTC", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

#define ADD(path, func, data) \
  g_test_add ("/Mend/LimitReset/" path, Fixture, data, set_up, func, mend_test_http_chat_tear_down)

  ADD ("default-off-gives-up", test_default_off_gives_up, NULL);
  ADD ("on-waits-for-the-reset", test_on_waits_for_the_reset, NULL);
  ADD ("still-limited-waits-for-the-next-reset", test_still_limited_waits_for_the_next_reset, NULL);
  ADD ("billing-never-waits", test_billing_never_waits, NULL);
  ADD ("stop-during-the-wait", test_stop_during_the_wait, NULL);
  ADD ("wall-clock-jump-past-the-reset", test_wall_clock_jump_past_the_reset, NULL);
  ADD ("restored-before-the-reset", test_restored_across_the_reset, GINT_TO_POINTER (FALSE));
  ADD ("restored-after-the-reset", test_restored_across_the_reset, GINT_TO_POINTER (TRUE));
  g_test_add_func ("/Mend/LimitReset/reset-times-in-words", test_reset_times_in_words);
  g_test_add_func ("/Mend/LimitReset/reset-times-in-headers", test_reset_times_in_headers);

#undef ADD

  return g_test_run ();
}
