/* test-gate.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendGate: chats that share an upstream share its outage. Every test runs
 * in virtual time against a simulated upstream driven from the turns'
 * attempt signal, and a fake network monitor.
 */

#include <string.h>

#include "mend-test-gate.h"

/* Records of one chat, outcome and nextAt, for comparing two runs. */
static void
on_record (MendChat   *chat,
           const char *json,
           GString    *out)
{
  g_autoptr(GRegex) id = g_regex_new ("\"turnId\":\"[^\"]*\"", 0, 0, NULL);
  g_autofree char *same = g_regex_replace_literal (id, json, -1, 0, "\"turnId\":\"T\"", 0, NULL);

  /* Turn ids are random: the rest must match. */
  g_string_append_printf (out, "%s\n", same);
}

static void
test_one_chat_alone_behaves_as_without_a_gate (void)
{
  g_autoptr(GString) with = g_string_new (NULL);
  g_autoptr(GString) without = g_string_new (NULL);

  for (guint run = 0; run < 2; run++)
    {
      MendTestGateSim sim;

      mend_test_gate_sim_init (&sim, run == 0, 1);
      sim.down = TRUE;
      g_signal_connect (g_ptr_array_index (sim.chats, 0), "record", G_CALLBACK (on_record),
                        run == 0 ? with : without);
      mend_test_gate_sim_submit_all (&sim);
      mend_test_gate_sim_advance (&sim, 20000);
      /* A second turn, after a give-up, still alone. */
      sim.down = FALSE;
      g_assert_true (mend_chat_send_next (g_ptr_array_index (sim.chats, 0)) ||
                     mend_chat_submit (g_ptr_array_index (sim.chats, 0), "Again", NULL, NULL));
      mend_test_gate_sim_advance (&sim, 1000);
      g_assert_cmpuint (sim.gave_up, ==, 1);
      g_assert_cmpuint (sim.served, ==, 1);
      g_assert_cmpuint (sim.attempt_ms->len, ==, 6);
      mend_test_gate_sim_clear (&sim);
    }

  g_assert_cmpstr (with->str, ==, without->str);
}

static void
test_shared_hint_holds_the_others_released_staggered (void)
{
  MendTestGateSim sim;
  GHashTable *distinct = g_hash_table_new (g_int64_hash, g_int64_equal);

  mend_test_gate_sim_init (&sim, TRUE, 10);
  sim.down = TRUE;
  sim.status = 429;
  sim.retry_after = "60";

  /* The first chat hears "come back in 60 s"... */
  g_assert_true (mend_chat_submit (g_ptr_array_index (sim.chats, 0), "First", NULL, NULL));
  g_assert_cmpuint (sim.attempt_ms->len, ==, 1);
  sim.down = FALSE;

  /* ...and the other nine wait for it too, without spending an attempt. */
  for (guint i = 1; i < 10; i++)
    {
      MendChat *chat = g_ptr_array_index (sim.chats, i);
      MendTurn *turn;
      g_autofree char *text = NULL;

      g_assert_true (mend_chat_submit (chat, "Next", NULL, NULL));
      turn = mend_chat_get_turn (chat);
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
      g_assert_true (mend_retry_wait_get_held (mend_turn_get_wait (turn)));
      g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
      text = mend_retry_wait_describe (mend_turn_get_wait (turn));
      g_assert_true (g_str_has_prefix (text, "Waiting for the service to recover"));
    }
  g_assert_cmpuint (sim.attempt_ms->len, ==, 1);

  mend_test_gate_sim_advance (&sim, 59900);
  g_assert_cmpuint (mend_test_gate_sim_attempts_between (&sim, 1, 60000), ==, 0);
  mend_test_gate_sim_advance (&sim, 2200);

  /* All ten served, the nine spread over the stagger window. */
  g_assert_cmpuint (sim.served, ==, 10);
  g_assert_cmpuint (mend_test_gate_sim_attempts_between (&sim, 60000, 62100), ==, 10);
  for (guint i = 1; i < sim.attempt_ms->len; i++)
    g_hash_table_add (distinct, &g_array_index (sim.attempt_ms, gint64, i));
  g_assert_cmpuint (g_hash_table_size (distinct), >=, 5);

  g_hash_table_unref (distinct);
  mend_test_gate_sim_clear (&sim);
}

static void
test_breaker_opens_probes_one_at_a_time_then_releases (void)
{
  MendTestGateSim sim;
  gint64 recovered_at;
  guint during;

  mend_test_gate_sim_init (&sim, TRUE, 10);
  sim.down = TRUE;
  mend_test_gate_sim_submit_all (&sim);
  mend_test_gate_sim_advance (&sim, 1000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_OPEN);

  /* While open, one probe per check (every second at most), not one attempt
   * per chat. */
  during = sim.attempt_ms->len;
  mend_test_gate_sim_advance (&sim, 59000);
  g_assert_cmpuint (sim.attempt_ms->len - during, <=, 59000 / 1000 + 1);
  for (gint64 second = 1000; second < 60000; second += 1000)
    g_assert_cmpuint (mend_test_gate_sim_attempts_between (&sim, second, second + 1000), <=, 1);
  g_assert_cmpuint (sim.gave_up, ==, 0);

  /* Back: the next probe succeeds and the others follow, staggered. */
  sim.down = FALSE;
  recovered_at = sim.now_ms;
  mend_test_gate_sim_advance (&sim, 5000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_CLOSED);
  g_assert_cmpuint (sim.served, ==, 10);
  g_assert_cmpuint (sim.gave_up, ==, 0);
  for (gint64 second = recovered_at; second < sim.now_ms; second += 1000)
    g_assert_cmpuint (mend_test_gate_sim_attempts_between (&sim, second, second + 1000), <=, 6);

  mend_test_gate_sim_clear (&sim);
}

static void
test_a_probe_that_never_answers_times_out_and_the_next_member_probes (void)
{
  MendTestGateSim sim;
  guint timeout_ms = 0;

  mend_test_gate_sim_init (&sim, TRUE, 10);
  g_object_get (sim.gate, "probe-timeout-ms", &timeout_ms, NULL);
  g_assert_cmpuint (timeout_ms, ==, 60000);

  sim.down = TRUE;
  mend_test_gate_sim_submit_all (&sim);
  mend_test_gate_sim_advance (&sim, 1000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_OPEN);

  /* The upstream is back, but the probe's request is lost: no answer. */
  sim.down = FALSE;
  sim.unanswered = 1;
  mend_test_gate_sim_advance (&sim, 2000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_HALF_OPEN);
  g_assert_cmpuint (sim.unanswered, ==, 0);

  /* The others wait for it only as long as the timeout... */
  mend_test_gate_sim_advance (&sim, timeout_ms - 3000);
  g_assert_cmpuint (sim.served, ==, 0);

  /* ...then the next member probes, and they are served. */
  mend_test_gate_sim_advance (&sim, 3000 + 5000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_CLOSED);
  g_assert_cmpuint (sim.served, ==, 9);
  g_assert_cmpuint (sim.gave_up, ==, 0);

  /* The lost probe's turn is still the sender's: stopped at the end, it
   * leaves the closed gate closed. */
  mend_test_gate_sim_clear (&sim);
}

static void
test_a_probe_with_output_closes_the_gate_before_it_ends (void)
{
  MendTestGateSim sim;

  mend_test_gate_sim_init (&sim, TRUE, 10);
  sim.down = TRUE;
  mend_test_gate_sim_submit_all (&sim);
  mend_test_gate_sim_advance (&sim, 1000);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_OPEN);

  /* The probe's answer streams for longer than the test: its first
   * output says the upstream is back. */
  sim.down = FALSE;
  sim.unanswered = 1;
  sim.streaming = TRUE;
  mend_test_gate_sim_advance (&sim, 1000);
  g_assert_cmpuint (sim.unanswered, ==, 0);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_CLOSED);
  mend_test_gate_sim_advance (&sim, 5000);
  g_assert_cmpuint (sim.served, ==, 9);

  mend_test_gate_sim_clear (&sim);
}

static void
test_offline_spends_no_attempt_and_resumes_staggered (void)
{
  MendTestGateSim sim;
  MendTurn *turn;
  g_autofree char *text = NULL;

  mend_test_gate_sim_init (&sim, TRUE, 5);
  mend_test_fake_monitor_set (sim.monitor, FALSE);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_OFFLINE);

  mend_test_gate_sim_submit_all (&sim);
  mend_test_gate_sim_advance (&sim, 10 * 60 * 1000);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 0);
  turn = mend_chat_get_turn (g_ptr_array_index (sim.chats, 0));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  text = mend_retry_wait_describe (mend_turn_get_wait (turn));
  g_assert_cmpstr (text, ==, "Waiting for the network to come back");

  /* Back online: every chat served within the stagger window, on its
   * first attempt. */
  mend_test_fake_monitor_set (sim.monitor, TRUE);
  g_assert_cmpint (mend_gate_get_state (sim.gate), ==, MEND_GATE_CLOSED);
  mend_test_gate_sim_advance (&sim, 2100);
  g_assert_cmpuint (sim.served, ==, 5);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 5);

  mend_test_gate_sim_clear (&sim);
}

static void
test_members_that_left_keep_no_place_in_the_release (void)
{
  MendTestGateSim sim;
  MendChat *lone;
  gint64 back_ms;

  /* 700 chats asked once, each served at once... */
  mend_test_gate_sim_init (&sim, TRUE, 701);
  for (guint i = 0; i < 700; i++)
    g_assert_true (mend_chat_submit (g_ptr_array_index (sim.chats, i), "Fix", NULL, NULL));
  mend_test_gate_sim_advance (&sim, 100);
  g_assert_cmpuint (sim.served, ==, 700);

  /* ...then half of them went away and half sit idle, their turns done. */
  for (guint i = 0; i < 350; i++)
    {
      mend_chat_close (g_ptr_array_index (sim.chats, i));
      g_assert_finalize_object (g_ptr_array_index (sim.chats, i));
    }
  g_ptr_array_remove_range (sim.chats, 0, 350);

  /* The one chat left with a turn is alone: released as soon as the
   * network is back, as it would be without the others. */
  lone = g_ptr_array_index (sim.chats, sim.chats->len - 1);
  mend_test_fake_monitor_set (sim.monitor, FALSE);
  g_assert_true (mend_chat_submit (lone, "Fix", NULL, NULL));
  mend_test_gate_sim_advance (&sim, 10000);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 700);
  mend_test_fake_monitor_set (sim.monitor, TRUE);
  back_ms = sim.now_ms;
  mend_test_gate_sim_advance (&sim, 50);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 701);
  g_assert_cmpint (g_array_index (sim.attempt_ms, gint64, 700) - back_ms, <=, 50);
  g_assert_cmpuint (sim.served, ==, 701);

  mend_test_gate_sim_clear (&sim);
}

static void
test_a_flapping_upstream_serves_every_chat_in_every_up_window (void)
{
  const gint64 down_ms = 4000, up_ms = 8000, total_ms = 120000;
  guint least = G_MAXUINT, most = 0, never = 0, missed = 0;
  MendTestGateSim sim;

  /* Each chat sends its next turn within 2 s of the last one's end, so
   * that it waits in every up window. */
  mend_test_gate_sim_init (&sim, TRUE, 200);
  mend_test_gate_sim_flap (&sim, down_ms, up_ms, total_ms, 2000);

  for (guint i = 0; i < sim.chats->len; i++)
    {
      guint all = mend_test_gate_sim_served_between (&sim, i, 0, total_ms);

      least = MIN (least, all);
      most = MAX (most, all);
      if (all == 0)
        never++;
    }

  /* Every chat waits in every up window: each is served in each. */
  for (gint64 from = down_ms; from < total_ms; from += down_ms + up_ms)
    for (guint i = 0; i < sim.chats->len; i++)
      if (mend_test_gate_sim_served_between (&sim, i, from, from + up_ms) == 0)
        missed++;
  g_test_message ("successes per chat: least %u, most %u; never served %u; "
                  "a chat's up window without a success: %u of %u",
                  least, most, never, missed, sim.chats->len * 10);
  g_assert_cmpuint (never, ==, 0);
  g_assert_cmpuint (missed, ==, 0);

  mend_test_gate_sim_clear (&sim);
}

/* The account's usage limit: an upstream that answers every request
 * with a spent plan window (429, anthropic-ratelimit-unified-status
 * "rejected") until its reset, then answers. */
#define LIMIT_RESET_S (MEND_TEST_WALL_START / G_USEC_PER_SEC + 600)

typedef struct
{
  MendClock *clock;
  guint      attempts[3];   /* per chat */
} LimitedUpstream;

static void
on_limited_attempt (MendTurn        *turn,
                    guint            n,
                    GCancellable    *cancellable,
                    LimitedUpstream *up)
{
  guint index = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (turn), "chat-index"));
  g_autofree char *reset = g_strdup_printf ("%" G_GINT64_FORMAT, (gint64) LIMIT_RESET_S);
  SoupMessageHeaders *headers;
  g_autoptr(MendFailure) failure = NULL;

  up->attempts[index]++;
  if (mend_clock_get_real_time (up->clock) >= LIMIT_RESET_S * G_USEC_PER_SEC)
    {
      mend_turn_succeed (turn);
      return;
    }
  headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  soup_message_headers_append (headers, "anthropic-ratelimit-unified-status", "rejected");
  soup_message_headers_append (headers, "anthropic-ratelimit-unified-reset", reset);
  failure = mend_failure_new_from_http (429, headers, NULL);
  soup_message_headers_unref (headers);
  mend_turn_fail (turn, failure);
}

static void
on_limited_turn_started (MendChat        *chat,
                         MendTurn        *turn,
                         LimitedUpstream *up)
{
  g_object_set_data (G_OBJECT (turn), "chat-index", g_object_get_data (G_OBJECT (chat), "chat-index"));
  g_signal_connect (turn, "attempt", G_CALLBACK (on_limited_attempt), up);
}

static MendChat *
limited_chat (LimitedUpstream *up,
              MendGate        *gate,
              guint            index,
              gboolean         continue_at_reset)
{
  g_autofree char *id = g_strdup_printf ("chat-%u", index);
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  MendChat *chat;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  mend_error_policy_set_continue_at_reset (policy, continue_at_reset);
  chat = g_object_new (MEND_TYPE_CHAT, "id", id, "clock", up->clock, "policy", policy, "gate", gate, NULL);
  g_object_set_data (G_OBJECT (chat), "chat-index", GUINT_TO_POINTER (index));
  g_signal_connect (chat, "turn-started", G_CALLBACK (on_limited_turn_started), up);
  return chat;
}

/* Chats on one gate share the account's usage limit: once chat 0 met it,
 * chat 1 (continue-at-reset on) sends nothing and waits for the same
 * reset, spending no attempt; chat 2 (off, the default) asks the upstream
 * itself and gives up, as without the gate. At the reset both waiting
 * chats go, once each. */
static void
test_a_usage_limit_holds_every_chat_until_its_reset (void)
{
  LimitedUpstream up = { 0 };
  MendGate *gate;
  MendChat *chats[3];
  MendRetryWait *wait;

  up.clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  gate = mend_gate_new (up.clock);
  for (guint i = 0; i < G_N_ELEMENTS (chats); i++)
    chats[i] = limited_chat (&up, gate, i, i < 2);

  g_assert_true (mend_chat_submit (chats[0], "Fix the build", NULL, NULL));
  wait = mend_chat_get_wait (chats[0]);
  g_assert_nonnull (wait);
  g_assert_true (mend_retry_wait_get_at_reset (wait));
  g_assert_cmpuint (up.attempts[0], ==, 1);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (up.clock), 60 * 1000);
  g_assert_true (mend_chat_submit (chats[1], "Update the changelog", NULL, NULL));
  wait = mend_chat_get_wait (chats[1]);
  g_assert_nonnull (wait);
  g_assert_true (mend_retry_wait_get_at_reset (wait));
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_USAGE_LIMIT);
  g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, LIMIT_RESET_S * G_USEC_PER_SEC);
  g_assert_nonnull (strstr (mend_chat_get_status_text (chats[1]), "Usage limit reached — continues at"));
  g_assert_cmpuint (up.attempts[1], ==, 0);
  g_assert_cmpuint (mend_turn_get_attempt (mend_chat_get_turn (chats[1])), ==, 1);

  g_assert_true (mend_chat_submit (chats[2], "Post the notes", NULL, NULL));
  g_assert_null (mend_chat_get_turn (chats[2]));
  g_assert_cmpint (mend_chat_get_lifecycle (chats[2]), ==, MEND_LIFECYCLE_ERROR);
  g_assert_cmpuint (up.attempts[2], ==, 1);

  /* A second before the reset nothing goes; at it, one attempt each. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (up.clock), (600 - 60 - 1) * 1000);
  g_assert_cmpuint (up.attempts[0] + up.attempts[1], ==, 1);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (up.clock), 1000);
  g_assert_cmpuint (up.attempts[0], ==, 2);
  g_assert_cmpuint (up.attempts[1], ==, 1);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_null (mend_chat_get_turn (chats[i]));
      g_assert_cmpint (mend_chat_get_lifecycle (chats[i]), ==, MEND_LIFECYCLE_READY);
    }

  /* The reset passed: a new turn is sent at once. */
  g_assert_true (mend_chat_submit (chats[1], "And the release notes", NULL, NULL));
  g_assert_cmpuint (up.attempts[1], ==, 2);
  g_assert_null (mend_chat_get_turn (chats[1]));

  for (guint i = 0; i < G_N_ELEMENTS (chats); i++)
    g_assert_finalize_object (chats[i]);
  g_assert_finalize_object (gate);
  g_assert_finalize_object (up.clock);
}

static void
test_stop_while_held_ends_the_turn (void)
{
  MendTestGateSim sim;
  MendChat *chat;

  mend_test_gate_sim_init (&sim, TRUE, 1);
  mend_test_fake_monitor_set (sim.monitor, FALSE);
  chat = g_ptr_array_index (sim.chats, 0);
  g_assert_true (mend_chat_submit (chat, "Fix", NULL, NULL));
  mend_chat_stop (chat);
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_READY);
  mend_test_fake_monitor_set (sim.monitor, TRUE);
  mend_test_gate_sim_advance (&sim, 5000);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 0);

  mend_test_gate_sim_clear (&sim);
}

static void
test_a_held_turn_is_saved_and_restored_unspent (void)
{
  MendTestGateSim sim;
  MendChat *chat;
  MendChat *restored;
  g_autofree char *json = NULL;
  g_autoptr(GError) error = NULL;

  mend_test_gate_sim_init (&sim, TRUE, 1);
  mend_test_fake_monitor_set (sim.monitor, FALSE);
  chat = g_ptr_array_index (sim.chats, 0);
  g_assert_true (mend_chat_submit (chat, "Fix", NULL, NULL));
  g_assert_true (mend_retry_wait_get_held (mend_turn_get_wait (mend_chat_get_turn (chat))));
  json = mend_chat_save_state (chat);

  /* Restored into a chat of the same gate, still offline: held again, on
   * its first attempt; back online, that attempt runs. */
  restored = g_object_new (MEND_TYPE_CHAT, "clock", sim.clock, "gate", sim.gate, NULL);
  g_signal_connect (restored, "turn-started", G_CALLBACK (mend_test_gate_sim_on_turn_started), &sim);
  g_assert_true (mend_chat_restore_state (restored, json, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 0);
  g_assert_true (mend_retry_wait_get_held (mend_turn_get_wait (mend_chat_get_turn (restored))));
  g_assert_cmpuint (mend_turn_get_attempt (mend_chat_get_turn (restored)), ==, 1);

  mend_chat_close (chat);
  mend_test_fake_monitor_set (sim.monitor, TRUE);
  mend_test_gate_sim_advance (&sim, 5000);
  g_assert_cmpuint (sim.attempt_ms->len, ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (restored), ==, MEND_LIFECYCLE_READY);

  g_assert_finalize_object (restored);
  mend_test_gate_sim_clear (&sim);
}

/* The gate of an origin belongs to the caller's main context: a worker
 * thread with a context of its own that asks first gets a gate of its
 * own, and the main thread's chats get theirs, on their thread. */
static gpointer
worker_gets_gate (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = mend_gate_get_for_uri (data);
  g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_CLOSED);
  g_assert_true (mend_gate_get_for_uri (data) == gate);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);

  return gate;
}

static void
test_gate_for_uri_is_per_main_context (void)
{
  const char *uri = "https://gate-per-context.example:8443/v1/messages";
  GThread *worker = g_thread_new ("gate-worker", worker_gets_gate, (gpointer) uri);
  MendGate *theirs = g_thread_join (worker);
  MendGate *ours = mend_gate_get_for_uri (uri);

  g_assert_true (ours != theirs);
  g_assert_true (mend_gate_get_for_uri ("https://gate-per-context.example:8443/other") == ours);
  /* Ours lives on this thread: no critical. */
  g_assert_cmpint (mend_gate_get_state (ours), ==, MEND_GATE_CLOSED);
}

/* An origin is its scheme, host and port however the address writes
 * them: the default port written out or not, the scheme and the host in
 * capitals or not. */
static void
test_gate_for_uri_of_an_origin_however_written (void)
{
  MendGate *gate = mend_gate_get_for_uri ("https://gate-origin.example/v1/messages");

  g_assert_true (mend_gate_get_for_uri ("https://gate-origin.example:443/v1/messages") == gate);
  g_assert_true (mend_gate_get_for_uri ("HTTPS://Gate-Origin.EXAMPLE/v1/chat/completions") == gate);
  g_assert_true (mend_gate_get_for_uri ("https://gate-origin.example:8443/v1/messages") != gate);
  g_assert_true (mend_gate_get_for_uri ("http://gate-origin.example/v1/messages") != gate);
  g_assert_true (mend_gate_get_for_uri ("http://gate-origin.example:80/") ==
                 mend_gate_get_for_uri ("http://gate-origin.example/v1/messages"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Gate/one-chat-alone-behaves-as-without-a-gate", test_one_chat_alone_behaves_as_without_a_gate);
  g_test_add_func ("/Mend/Gate/shared-hint-holds-the-others-released-staggered", test_shared_hint_holds_the_others_released_staggered);
  g_test_add_func ("/Mend/Gate/breaker-opens-probes-one-at-a-time-then-releases", test_breaker_opens_probes_one_at_a_time_then_releases);
  g_test_add_func ("/Mend/Gate/a-probe-that-never-answers-times-out-and-the-next-member-probes", test_a_probe_that_never_answers_times_out_and_the_next_member_probes);
  g_test_add_func ("/Mend/Gate/a-probe-with-output-closes-the-gate-before-it-ends", test_a_probe_with_output_closes_the_gate_before_it_ends);
  g_test_add_func ("/Mend/Gate/offline-spends-no-attempt-and-resumes-staggered", test_offline_spends_no_attempt_and_resumes_staggered);
  g_test_add_func ("/Mend/Gate/members-that-left-keep-no-place-in-the-release", test_members_that_left_keep_no_place_in_the_release);
  g_test_add_func ("/Mend/Gate/a-flapping-upstream-serves-every-chat-in-every-up-window", test_a_flapping_upstream_serves_every_chat_in_every_up_window);
  g_test_add_func ("/Mend/Gate/a-usage-limit-holds-every-chat-until-its-reset",
                   test_a_usage_limit_holds_every_chat_until_its_reset);
  g_test_add_func ("/Mend/Gate/stop-while-held-ends-the-turn", test_stop_while_held_ends_the_turn);
  g_test_add_func ("/Mend/Gate/a-held-turn-is-saved-and-restored-unspent", test_a_held_turn_is_saved_and_restored_unspent);
  g_test_add_func ("/Mend/Gate/gate-for-uri-is-per-main-context", test_gate_for_uri_is_per_main_context);
  g_test_add_func ("/Mend/Gate/gate-for-uri-of-an-origin-however-written", test_gate_for_uri_of_an_origin_however_written);

  return g_test_run ();
}
