/* test-turn.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000

typedef struct
{
  MendClock *clock;
  MendErrorPolicy *policy;
  MendTurn *turn;
  GString *log;
  GPtrArray *attempt_cancellables;
  guint finished;
  MendTurnState finished_state;
} Fixture;

static void
on_attempt (MendTurn     *turn,
            guint         n,
            GCancellable *cancellable,
            Fixture      *f)
{
  g_string_append_printf (f->log, "attempt %u; ", n);
  g_ptr_array_add (f->attempt_cancellables, g_object_ref (cancellable));
  /* The same prompt on every attempt. */
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Summarize the logs");
  g_assert_cmpstr (mend_turn_get_provenance (turn), ==, "{\"kind\":\"user\"}");
}

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Fixture       *f)
{
  g_assert_true (mend_turn_get_wait (turn) == wait);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_string_append_printf (f->log, "waiting %u/%u %" G_GUINT64_FORMAT "ms; ",
                          mend_retry_wait_get_attempt (wait),
                          mend_retry_wait_get_max_retries (wait),
                          mend_retry_wait_get_delay_ms (wait));
}

static void
on_resumed (MendTurn *turn,
            guint     n,
            Fixture  *f)
{
  g_string_append_printf (f->log, "resumed %u; ", n);
}

static void
on_exhausted (MendTurn    *turn,
              MendFailure *failure,
              Fixture     *f)
{
  g_string_append_printf (f->log, "exhausted %s; ", mend_reason_to_nick (mend_failure_get_reason (failure)));
}

static void
on_finished (MendTurn      *turn,
             MendTurnState  state,
             Fixture       *f)
{
  f->finished++;
  f->finished_state = state;
  g_string_append_printf (f->log, "finished %d; ", state);
}

static MendTurn *
new_turn (Fixture         *f,
          MendErrorPolicy *policy)
{
  MendTurn *turn = g_object_new (MEND_TYPE_TURN,
                                 "prompt", "Summarize the logs",
                                 "provenance", "{\"kind\":\"user\"}",
                                 "policy", policy,
                                 "clock", f->clock,
                                 NULL);

  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), f);
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), f);
  g_signal_connect (turn, "resumed", G_CALLBACK (on_resumed), f);
  g_signal_connect (turn, "exhausted", G_CALLBACK (on_exhausted), f);
  g_signal_connect (turn, "finished", G_CALLBACK (on_finished), f);
  return turn;
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->policy = mend_error_policy_new ();
  mend_error_policy_set_jitter (f->policy, MEND_JITTER_NONE);
  f->turn = new_turn (f, f->policy);
  f->log = g_string_new (NULL);
  f->attempt_cancellables = g_ptr_array_new_with_free_func (g_object_unref);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_ptr_array_unref (f->attempt_cancellables);
  g_assert_finalize_object (f->turn);
  g_assert_finalize_object (f->policy);
  g_assert_finalize_object (f->clock);
  g_string_free (f->log, TRUE);
}

static void
advance (Fixture *f,
         guint64  ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), ms);
}

static void
fail_http (MendTurn *turn,
           guint     status)
{
  MendFailure *failure = mend_failure_new_from_http (status, NULL, NULL);

  mend_turn_fail (turn, failure);
  g_object_unref (failure);
}

static void
test_retry_then_succeed (Fixture       *f,
                         gconstpointer  data)
{
  mend_turn_start (f->turn, NULL);
  g_assert_cmpuint (mend_turn_get_attempt (f->turn), ==, 1);
  g_assert_cmpuint (mend_turn_get_max_attempts (f->turn), ==, 5);

  fail_http (f->turn, 500);
  advance (f, 249);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_WAITING);
  advance (f, 1);
  fail_http (f->turn, 503);
  advance (f, 500);
  mend_turn_succeed (f->turn);

  g_assert_cmpstr (f->log->str, ==,
                   "attempt 1; waiting 1/4 250ms; resumed 2; attempt 2; "
                   "waiting 2/4 500ms; resumed 3; attempt 3; finished 3; ");
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_null (mend_turn_get_wait (f->turn));
  g_assert_cmpuint (f->finished, ==, 1);
}

static void
test_default_waits_are_250_500_1000_2000 (Fixture       *f,
                                          gconstpointer  data)
{
  const guint64 expected[] = { 250, 500, 1000, 2000 };

  mend_turn_start (f->turn, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      MendRetryWait *wait;
      gint64 now = mend_clock_get_real_time (f->clock);

      fail_http (f->turn, 529);
      wait = mend_turn_get_wait (f->turn);
      g_assert_nonnull (wait);
      g_assert_cmpuint (mend_retry_wait_get_attempt (wait), ==, i + 1);
      g_assert_cmpuint (mend_retry_wait_get_max_retries (wait), ==, 4);
      g_assert_cmpuint (mend_retry_wait_get_delay_ms (wait), ==, expected[i]);
      g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, now + (gint64) expected[i] * 1000);
      advance (f, expected[i]);
    }

  fail_http (f->turn, 529);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_FAILED);
  g_assert_true (g_str_has_suffix (f->log->str, "attempt 5; exhausted capacity; finished 4; "));
  g_assert_cmpuint (mend_turn_get_attempt (f->turn), ==, 5);
}

static void
test_permanent_gives_up_after_one_attempt (Fixture       *f,
                                           gconstpointer  data)
{
  const guint statuses[] = { 401, 403, 400, 404, 413, 422 };

  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    {
      MendTurn *turn = new_turn (f, f->policy);

      g_string_truncate (f->log, 0);
      mend_turn_start (turn, NULL);
      fail_http (turn, statuses[i]);
      g_assert_cmpstr (f->log->str, ==, "attempt 1; finished 4; ");
      g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_PERMANENT);
      g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
      g_assert_finalize_object (turn);
    }
}

static void
test_timeouts_are_retried (Fixture       *f,
                           gconstpointer  data)
{
  mend_turn_start (f->turn, NULL);
  fail_http (f->turn, 408);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_WAITING);
  advance (f, 250);
  fail_http (f->turn, 504);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_retry_wait_get_reason (mend_turn_get_wait (f->turn)), ==, MEND_REASON_TIMEOUT);
}

static void
test_limit_is_never_retried (Fixture       *f,
                             gconstpointer  data)
{
  MendFailure *failure = mend_failure_new_from_text ("You've hit your usage limit");

  mend_turn_start (f->turn, NULL);
  mend_turn_fail (f->turn, failure);
  g_assert_cmpstr (f->log->str, ==, "attempt 1; finished 4; ");
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
  /* The turn keeps it as last-failure; finalized with the turn. */
  g_object_unref (failure);
}

static void
test_failure_after_output_is_not_retried (Fixture       *f,
                                          gconstpointer  data)
{
  MendFailure *failure = mend_failure_new_from_http (529, NULL, NULL);
  MendFailure *last;
  MendVerdict *verdict;

  mend_turn_start (f->turn, NULL);
  mend_turn_note_output (f->turn);
  g_assert_true (mend_turn_get_output_seen (f->turn));
  mend_turn_fail (f->turn, failure);

  g_assert_cmpstr (f->log->str, ==, "attempt 1; finished 4; ");
  /* Judged, and kept, as a partial copy; the app's failure is as made. */
  g_assert_false (mend_failure_get_partial (failure));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  last = mend_turn_get_last_failure (f->turn);
  g_assert_true (last != failure);
  g_assert_true (mend_failure_get_partial (last));
  g_assert_cmpint (mend_failure_get_kind (last), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (mend_failure_get_status (last), ==, 529);
  g_assert_cmpint (mend_failure_get_reason (last), ==, mend_failure_get_reason (failure));
  g_assert_cmpstr (mend_failure_get_message (last), ==, mend_failure_get_message (failure));
  verdict = mend_turn_get_last_verdict (f->turn);
  g_assert_true (mend_verdict_get_failure (verdict) == last);
  g_assert_cmpint (mend_verdict_get_kind (verdict), ==, MEND_FAILURE_PERMANENT);
  g_assert_true (mend_verdict_get_partial (verdict));
  g_assert_cmpint (mend_verdict_get_delay_ms (verdict), ==, -1);
  g_assert_cmpuint (mend_verdict_get_attempt (verdict), ==, 1);
  g_assert_finalize_object (failure);
}

/* Every property of a failure, and the server's x-should-retry, as text. */
static char *
snapshot_failure (MendFailure *failure)
{
  GString *out = g_string_new (NULL);
  guint n_props = 0;
  g_autofree GParamSpec **props = g_object_class_list_properties (G_OBJECT_GET_CLASS (failure), &n_props);
  gboolean should_retry = FALSE;
  gboolean said = mend_failure_get_should_retry (failure, &should_retry);

  for (guint i = 0; i < n_props; i++)
    {
      g_auto(GValue) value = G_VALUE_INIT;

      g_value_init (&value, props[i]->value_type);
      g_object_get_property (G_OBJECT (failure), props[i]->name, &value);
      if (props[i]->value_type == G_TYPE_ERROR)
        {
          const GError *error = g_value_get_boxed (&value);

          g_string_append_printf (out, "%s=%s/%d/%s; ", props[i]->name,
                                  error ? g_quark_to_string (error->domain) : "",
                                  error ? error->code : 0, error ? error->message : "");
        }
      else
        {
          g_autofree char *text = g_strdup_value_contents (&value);

          g_string_append_printf (out, "%s=%s; ", props[i]->name, text);
        }
    }
  g_string_append_printf (out, "should-retry=%d/%d", said, should_retry);

  return g_string_free (out, FALSE);
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              guint      *notified)
{
  (*notified)++;
}

typedef enum
{
  SITUATION_FIRST_ATTEMPT,
  SITUATION_AFTER_OUTPUT,
  SITUATION_RETRIES_USED_UP,
  SITUATION_LIMIT,
  SITUATION_HINT_BEYOND_HORIZON,
} Situation;

static MendFailure *
failure_for (Situation situation)
{
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  GError error = { G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, (char *) "Connection closed" };

  switch (situation)
    {
    case SITUATION_FIRST_ATTEMPT:
      return mend_failure_new_from_error (&error);
    case SITUATION_AFTER_OUTPUT:
      soup_message_headers_append (headers, "retry-after", "2");
      soup_message_headers_append (headers, "x-should-retry", "true");
      return mend_failure_new_from_http (529, headers, NULL);
    case SITUATION_RETRIES_USED_UP:
      return mend_failure_new_from_text ("API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");
    case SITUATION_LIMIT:
      return mend_failure_new_from_text ("You've hit your usage limit");
    case SITUATION_HINT_BEYOND_HORIZON:
    default:
      soup_message_headers_append (headers, "retry-after", "600");
      return mend_failure_new_from_http (503, headers, NULL);
    }
}

static void
test_failure_given_to_fail_is_not_changed (Fixture       *f,
                                           gconstpointer  data)
{
  static const struct {
    Situation        situation;
    guint            max_retries;
    MendFailureKind  kind;
    gint64           delay_ms;
    const char      *log;
  } cases[] = {
    { SITUATION_FIRST_ATTEMPT, 4, MEND_FAILURE_TRANSIENT, 250, "attempt 1; waiting 1/4 250ms; " },
    { SITUATION_AFTER_OUTPUT, 4, MEND_FAILURE_PERMANENT, -1, "attempt 1; finished 4; " },
    { SITUATION_RETRIES_USED_UP, 0, MEND_FAILURE_TRANSIENT, -1, "attempt 1; exhausted capacity; finished 4; " },
    { SITUATION_LIMIT, 4, MEND_FAILURE_LIMIT, -1, "attempt 1; finished 4; " },
    { SITUATION_HINT_BEYOND_HORIZON, 4, MEND_FAILURE_TRANSIENT, -1, "attempt 1; finished 4; " },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      MendErrorPolicy *policy = mend_error_policy_new ();
      MendFailure *failure = failure_for (cases[i].situation);
      g_autofree char *before = snapshot_failure (failure);
      g_autofree char *after = NULL;
      MendFailureKind made_kind = mend_failure_get_kind (failure);
      MendVerdict *verdict;
      MendTurn *turn;
      guint notified = 0;

      g_test_message ("case %" G_GSIZE_FORMAT ": %s", i, before);
      mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
      mend_error_policy_set_max_retries (policy, cases[i].max_retries);
      turn = new_turn (f, policy);
      g_string_truncate (f->log, 0);
      g_signal_connect (failure, "notify", G_CALLBACK (count_notify), &notified);

      mend_turn_start (turn, NULL);
      if (cases[i].situation == SITUATION_AFTER_OUTPUT)
        mend_turn_note_output (turn);
      mend_turn_fail (turn, failure);

      after = snapshot_failure (failure);
      g_assert_cmpstr (after, ==, before);
      g_assert_cmpuint (notified, ==, 0);
      g_assert_cmpint (mend_failure_get_kind (failure), ==, made_kind);

      g_assert_cmpstr (f->log->str, ==, cases[i].log);
      verdict = mend_turn_get_last_verdict (turn);
      g_assert_nonnull (verdict);
      g_assert_cmpint (mend_verdict_get_kind (verdict), ==, cases[i].kind);
      g_assert_cmpint (mend_verdict_get_delay_ms (verdict), ==, cases[i].delay_ms);
      g_assert_cmpint (mend_verdict_get_partial (verdict), ==, cases[i].situation == SITUATION_AFTER_OUTPUT);
      g_assert_cmpint (mend_verdict_get_server_hint (verdict), ==,
                       cases[i].situation == SITUATION_HINT_BEYOND_HORIZON);
      g_assert_cmpuint (mend_verdict_get_attempt (verdict), ==, 1);
      if (cases[i].situation == SITUATION_AFTER_OUTPUT)
        g_assert_true (mend_turn_get_last_failure (turn) != failure);
      else
        g_assert_true (mend_turn_get_last_failure (turn) == failure);

      mend_turn_stop (turn);
      g_assert_finalize_object (turn);
      g_assert_finalize_object (policy);
      g_assert_cmpuint (notified, ==, 0);
      g_assert_finalize_object (failure);
    }
}

/* One failure, handed to two turns whose policies differ, gets two
 * verdicts and reads the same in both. */
static void
test_one_failure_two_turns_two_verdicts (Fixture       *f,
                                         gconstpointer  data)
{
  MendErrorPolicy *partial_policy = mend_error_policy_new ();
  MendFailure *failure = mend_failure_new_from_http (503, NULL, NULL);
  MendTurn *first;
  MendTurn *second;

  mend_error_policy_set_jitter (partial_policy, MEND_JITTER_NONE);
  mend_error_policy_set_retry_partial (partial_policy, TRUE);
  first = new_turn (f, f->policy);
  second = new_turn (f, partial_policy);

  mend_turn_start (first, NULL);
  mend_turn_start (second, NULL);
  mend_turn_note_output (first);
  mend_turn_note_output (second);
  mend_turn_fail (first, failure);
  mend_turn_fail (second, failure);

  g_assert_cmpint (mend_turn_get_state (first), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_verdict_get_kind (mend_turn_get_last_verdict (first)), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_verdict_get_kind (mend_turn_get_last_verdict (second)), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_verdict_get_delay_ms (mend_turn_get_last_verdict (second)), ==, 250);
  g_assert_true (mend_verdict_get_partial (mend_turn_get_last_verdict (second)));
  g_assert_false (mend_failure_get_partial (failure));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);

  mend_turn_stop (second);
  g_assert_finalize_object (first);
  g_assert_finalize_object (second);
  g_assert_finalize_object (partial_policy);
  g_assert_finalize_object (failure);
}

static void
test_failure_after_output_retried_with_retry_partial (Fixture       *f,
                                                      gconstpointer  data)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendTurn *turn;

  mend_error_policy_set_retry_partial (policy, TRUE);
  turn = new_turn (f, policy);
  mend_turn_start (turn, NULL);
  mend_turn_note_output (turn);
  fail_http (turn, 529);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  advance (f, 1000);
  /* Output is noted per attempt. */
  g_assert_false (mend_turn_get_output_seen (turn));
  mend_turn_stop (turn);

  g_assert_finalize_object (turn);
  g_assert_finalize_object (policy);
}

static MendFailure *
failure_with_header (guint       status,
                     const char *name,
                     const char *value)
{
  SoupMessageHeaders *headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  MendFailure *failure;

  soup_message_headers_append (headers, name, value);
  failure = mend_failure_new_from_http (status, headers, NULL);
  soup_message_headers_unref (headers);
  return failure;
}

static void
test_retry_after_is_waited_exactly (Fixture       *f,
                                    gconstpointer  data)
{
  MendFailure *failure = failure_with_header (429, "Retry-After", "7");
  MendRetryWait *wait;

  mend_turn_start (f->turn, NULL);
  mend_turn_fail (f->turn, failure);
  wait = mend_turn_get_wait (f->turn);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (wait), ==, 7000);
  g_assert_true (mend_retry_wait_get_server_hint (wait));
  g_assert_true (mend_retry_wait_get_failure (wait) == failure);
  advance (f, 6999);
  g_assert_cmpuint (mend_turn_get_attempt (f->turn), ==, 1);
  advance (f, 1);
  g_assert_cmpuint (mend_turn_get_attempt (f->turn), ==, 2);

  /* The turn keeps it as last-failure; finalized with the turn. */
  g_object_unref (failure);
}

static void
test_retry_after_above_max_gives_up_at_once (Fixture       *f,
                                             gconstpointer  data)
{
  MendFailure *failure = failure_with_header (503, "Retry-After", "2820");

  mend_turn_start (f->turn, NULL);
  mend_turn_fail (f->turn, failure);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_FAILED);
  g_assert_cmpstr (f->log->str, ==, "attempt 1; finished 4; ");
  g_assert_cmpint (mend_failure_get_retry_after_ms (mend_turn_get_last_failure (f->turn)), ==, 2820000);

  /* The turn keeps it as last-failure; finalized with the turn. */
  g_object_unref (failure);
}

static void
test_stop_during_wait (Fixture       *f,
                       gconstpointer  data)
{
  MendRetryWait *wait;

  mend_turn_start (f->turn, NULL);
  fail_http (f->turn, 503);
  wait = g_object_ref (mend_turn_get_wait (f->turn));
  mend_turn_stop (f->turn);

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_CANCELLED);
  advance (f, 60000);
  g_assert_cmpstr (f->log->str, ==, "attempt 1; waiting 1/4 250ms; finished 5; ");

  /* Late answers and a second stop change nothing. */
  mend_turn_succeed (f->turn);
  fail_http (f->turn, 503);
  mend_turn_stop (f->turn);
  g_assert_cmpuint (f->finished, ==, 1);
  g_assert_finalize_object (wait);
}

static void
test_wait_cancelled_from_outside_stops_the_turn (Fixture       *f,
                                                 gconstpointer  data)
{
  mend_turn_start (f->turn, NULL);
  fail_http (f->turn, 529);
  g_assert_true (mend_retry_wait_cancel (mend_turn_get_wait (f->turn)));

  /* Not left waiting for a retry that never comes. */
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  g_assert_null (mend_turn_get_wait (f->turn));
  g_assert_cmpuint (f->finished, ==, 1);
  advance (f, 60000);
  g_assert_cmpstr (f->log->str, ==, "attempt 1; waiting 1/4 250ms; finished 5; ");
}

static void
on_run_done (GObject      *object,
             GAsyncResult *result,
             gpointer      data)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (mend_retry_wait_run_finish (MEND_RETRY_WAIT (object), result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  *(gboolean *) data = TRUE;
}

static void
test_wait_run_cancellable_stops_the_turn (Fixture       *f,
                                          gconstpointer  data)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  gboolean done = FALSE;

  mend_turn_start (f->turn, NULL);
  fail_http (f->turn, 503);
  mend_retry_wait_run_async (mend_turn_get_wait (f->turn), cancellable, on_run_done, &done);
  g_cancellable_cancel (cancellable);
  while (!done)
    g_main_context_iteration (NULL, TRUE);

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  g_assert_false (mend_turn_retry_now (f->turn));
  g_assert_cmpuint (f->finished, ==, 1);
}

static void
on_notify_in_dispose (GObject    *object,
                      GParamSpec *pspec,
                      gpointer    data)
{
  /* Nothing may reach a handler from a turn being disposed. */
  g_assert_not_reached ();
}

static void
test_dispose_while_waiting_emits_nothing (Fixture       *f,
                                          gconstpointer  data)
{
  MendTurn *turn = new_turn (f, f->policy);
  MendRetryWait *wait;

  mend_turn_start (turn, NULL);
  fail_http (turn, 503);
  wait = g_object_ref (mend_turn_get_wait (turn));
  g_signal_connect (turn, "notify", G_CALLBACK (on_notify_in_dispose), NULL);
  g_assert_finalize_object (turn);

  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_CANCELLED);
  g_assert_finalize_object (wait);
}

static void
test_stop_during_attempt_cancels_it (Fixture       *f,
                                     gconstpointer  data)
{
  mend_turn_start (f->turn, NULL);
  mend_turn_stop (f->turn);

  g_assert_true (g_cancellable_is_cancelled (f->attempt_cancellables->pdata[0]));
  g_assert_cmpint (f->finished_state, ==, MEND_TURN_STOPPED);
  fail_http (f->turn, 503);
  mend_turn_succeed (f->turn);
  advance (f, 60000);
  g_assert_cmpstr (f->log->str, ==, "attempt 1; finished 5; ");
}

static void
test_cancelling_the_start_cancellable_stops (Fixture       *f,
                                             gconstpointer  data)
{
  GCancellable *cancellable = g_cancellable_new ();

  mend_turn_start (f->turn, cancellable);
  fail_http (f->turn, 503);
  g_cancellable_cancel (cancellable);

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  advance (f, 60000);
  g_assert_cmpstr (f->log->str, ==, "attempt 1; waiting 1/4 250ms; finished 5; ");
  g_assert_finalize_object (cancellable);
}

static void
test_already_cancelled_start_makes_no_attempt (Fixture       *f,
                                               gconstpointer  data)
{
  GCancellable *cancellable = g_cancellable_new ();

  g_cancellable_cancel (cancellable);
  mend_turn_start (f->turn, cancellable);
  g_assert_cmpstr (f->log->str, ==, "finished 5; ");
  g_assert_finalize_object (cancellable);
}

static void
stop_when_running (MendTurn   *turn,
                   GParamSpec *pspec,
                   Fixture    *f)
{
  if (mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    mend_turn_stop (turn);
}

/* A handler of the start's own notification that stops the turn: no
 * attempt runs for a turn that ended before its first. */
static void
test_stop_from_the_start_notification_makes_no_attempt (Fixture       *f,
                                                         gconstpointer  data)
{
  g_signal_connect (f->turn, "notify::state", G_CALLBACK (stop_when_running), f);
  mend_turn_start (f->turn, NULL);

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  advance (f, 60000);
  g_assert_cmpstr (f->log->str, ==, "finished 5; ");
  g_assert_cmpuint (f->attempt_cancellables->len, ==, 0);
}

static void
test_stopped_failure_ends_stopped (Fixture       *f,
                                   gconstpointer  data)
{
  MendFailure *failure = mend_failure_new_stopped ();

  mend_turn_start (f->turn, NULL);
  mend_turn_fail (f->turn, failure);
  g_assert_cmpint (f->finished_state, ==, MEND_TURN_STOPPED);
  /* The turn keeps it as last-failure; finalized with the turn. */
  g_object_unref (failure);
}

static void
test_retry_now_skips_the_wait (Fixture       *f,
                               gconstpointer  data)
{
  g_assert_false (mend_turn_retry_now (f->turn));
  mend_turn_start (f->turn, NULL);
  fail_http (f->turn, 503);
  g_assert_true (mend_turn_retry_now (f->turn));
  g_assert_cmpuint (mend_turn_get_attempt (f->turn), ==, 2);
  g_assert_false (mend_turn_retry_now (f->turn));
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
}

static void
test_stagger_offset_is_added (Fixture       *f,
                              gconstpointer  data)
{
  MendTurn *turn = g_object_new (MEND_TYPE_TURN,
                                 "prompt", "x",
                                 "policy", f->policy,
                                 "clock", f->clock,
                                 "delay-offset-ms", 123,
                                 NULL);

  mend_test_run_by_hand (turn);
  mend_turn_start (turn, NULL);
  fail_http (turn, 503);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (mend_turn_get_wait (turn)), ==, 250 + 123);
  mend_turn_stop (turn);
  g_assert_finalize_object (turn);
}

/* A sender that answers from a script, in an idle like a real one. */

/* Each step of the script is a failure, NULL (success), or an error at the
 * same index of errors (the attempt could not be made). */
typedef struct { GObject parent; GPtrArray *script; GPtrArray *errors; guint sent; GPtrArray *turns; } ScriptSender;
typedef struct { GObjectClass parent_class; } ScriptSenderClass;
static GType script_sender_get_type (void);
static void script_sender_iface_init (MendSenderInterface *iface);
G_DEFINE_TYPE_WITH_CODE (ScriptSender, script_sender, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (MEND_TYPE_SENDER, script_sender_iface_init))

static void
script_sender_send_async (MendSender          *sender,
                          MendTurn            *turn,
                          guint                attempt,
                          int                  io_priority,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  ScriptSender *self = (ScriptSender *) sender;
  GTask *task = g_task_new (sender, cancellable, callback, user_data);
  const GError *error = self->sent < self->errors->len ? g_ptr_array_index (self->errors, self->sent) : NULL;
  MendFailure *failure = g_ptr_array_index (self->script, self->sent++);

  g_assert_cmpint (io_priority, ==, G_PRIORITY_DEFAULT);
  g_assert_cmpuint (attempt, ==, self->sent);
  g_ptr_array_add (self->turns, g_strdup (mend_turn_get_prompt (turn)));
  if (error != NULL)
    g_task_return_error (task, g_error_copy (error));
  else
    g_task_return_pointer (task, failure ? g_object_ref (failure) : NULL, g_object_unref);
  g_object_unref (task);
}

static MendFailure *
script_sender_send_finish (MendSender    *sender,
                           GAsyncResult  *result,
                           GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
script_sender_iface_init (MendSenderInterface *iface)
{
  iface->send_async = script_sender_send_async;
  iface->send_finish = script_sender_send_finish;
}

static void
script_sender_finalize (GObject *object)
{
  ScriptSender *self = (ScriptSender *) object;

  g_ptr_array_unref (self->script);
  g_ptr_array_unref (self->errors);
  g_ptr_array_unref (self->turns);
  G_OBJECT_CLASS (script_sender_parent_class)->finalize (object);
}

static void
script_sender_class_init (ScriptSenderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = script_sender_finalize;
}

static void
free_failure (gpointer failure)
{
  g_clear_object (&failure);
}

static void
script_sender_init (ScriptSender *self)
{
  self->script = g_ptr_array_new_with_free_func (free_failure);
  self->errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  self->turns = g_ptr_array_new_with_free_func (g_free);
}

static void
test_sender_runs_the_attempts (Fixture       *f,
                               gconstpointer  data)
{
  ScriptSender *sender = g_object_new (script_sender_get_type (), NULL);

  /* NULL ends the script with success. */
  g_ptr_array_add (sender->script, mend_failure_new_from_http (529, NULL, NULL));
  g_ptr_array_add (sender->script, mend_failure_new_from_text ("Connection error: ECONNRESET"));
  g_ptr_array_add (sender->script, NULL);

  mend_turn_set_sender (f->turn, MEND_SENDER (sender));
  mend_turn_start (f->turn, NULL);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  advance (f, 250);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  advance (f, 500);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (sender->sent, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (sender->turns, 2), ==, "Summarize the logs");
  /* The attempt signal is for apps without a sender. */
  g_assert_null (strstr (f->log->str, "attempt"));
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (f->turn)), ==, MEND_REASON_TRANSPORT);

  mend_turn_set_sender (f->turn, NULL);
  g_assert_finalize_object (sender);
}

static void
run_pending (void)
{
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static void
test_sender_cancelled_attempt_is_a_stop (Fixture       *f,
                                         gconstpointer  data)
{
  ScriptSender *sender = g_object_new (script_sender_get_type (), NULL);

  /* A sender that reports its attempt as cancelled: never a success. */
  g_ptr_array_add (sender->script, NULL);
  g_ptr_array_add (sender->errors, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "Operation was cancelled"));

  mend_turn_set_sender (f->turn, MEND_SENDER (sender));
  mend_turn_start (f->turn, NULL);
  run_pending ();
  advance (f, 60000);
  run_pending ();

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  g_assert_cmpuint (sender->sent, ==, 1);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (f->turn)), ==, MEND_FAILURE_STOPPED);

  mend_turn_set_sender (f->turn, NULL);
  g_assert_finalize_object (sender);
}

static void
test_sender_error_is_a_failure (Fixture       *f,
                                gconstpointer  data)
{
  ScriptSender *sender = g_object_new (script_sender_get_type (), NULL);

  /* An attempt that could not be made fails as its error says. */
  g_ptr_array_add (sender->script, NULL);
  g_ptr_array_add (sender->errors, g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "Connection closed"));
  g_ptr_array_add (sender->script, NULL);

  mend_turn_set_sender (f->turn, MEND_SENDER (sender));
  mend_turn_start (f->turn, NULL);
  run_pending ();
  advance (f, 250);
  run_pending ();

  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (sender->sent, ==, 2);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (f->turn)), ==, MEND_REASON_TRANSPORT);

  mend_turn_set_sender (f->turn, NULL);
  g_assert_finalize_object (sender);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/Mend/Turn/retry-then-succeed", test_retry_then_succeed);
  ADD ("/Mend/Turn/sender-cancelled-attempt-is-a-stop-not-a-success", test_sender_cancelled_attempt_is_a_stop);
  ADD ("/Mend/Turn/sender-error-is-a-failure", test_sender_error_is_a_failure);
  ADD ("/Mend/Turn/default-waits-are-250-500-1000-2000-then-exhausted", test_default_waits_are_250_500_1000_2000);
  ADD ("/Mend/Turn/permanent-gives-up-after-one-attempt", test_permanent_gives_up_after_one_attempt);
  ADD ("/Mend/Turn/408-and-504-are-retried", test_timeouts_are_retried);
  ADD ("/Mend/Turn/usage-limit-is-never-retried", test_limit_is_never_retried);
  ADD ("/Mend/Turn/failure-after-output-is-not-retried", test_failure_after_output_is_not_retried);
  ADD ("/Mend/Turn/failure-given-to-fail-is-not-changed", test_failure_given_to_fail_is_not_changed);
  ADD ("/Mend/Turn/one-failure-two-turns-two-verdicts", test_one_failure_two_turns_two_verdicts);
  ADD ("/Mend/Turn/failure-after-output-retried-with-retry-partial", test_failure_after_output_retried_with_retry_partial);
  ADD ("/Mend/Turn/retry-after-7-waits-7000-ms", test_retry_after_is_waited_exactly);
  ADD ("/Mend/Turn/retry-after-above-max-gives-up-keeping-the-hint", test_retry_after_above_max_gives_up_at_once);
  ADD ("/Mend/Turn/stop-during-wait-ends-at-once", test_stop_during_wait);
  ADD ("/Mend/Turn/stop-during-attempt-cancels-it", test_stop_during_attempt_cancels_it);
  ADD ("/Mend/Turn/wait-cancelled-from-outside-stops-the-turn", test_wait_cancelled_from_outside_stops_the_turn);
  ADD ("/Mend/Turn/wait-run-cancellable-stops-the-turn", test_wait_run_cancellable_stops_the_turn);
  ADD ("/Mend/Turn/dispose-while-waiting-emits-nothing", test_dispose_while_waiting_emits_nothing);
  ADD ("/Mend/Turn/cancelling-the-start-cancellable-stops", test_cancelling_the_start_cancellable_stops);
  ADD ("/Mend/Turn/already-cancelled-start-makes-no-attempt", test_already_cancelled_start_makes_no_attempt);
  ADD ("/Mend/Turn/stop-from-the-start-notification-makes-no-attempt",
       test_stop_from_the_start_notification_makes_no_attempt);
  ADD ("/Mend/Turn/stopped-failure-ends-stopped", test_stopped_failure_ends_stopped);
  ADD ("/Mend/Turn/retry-now-skips-the-wait", test_retry_now_skips_the_wait);
  ADD ("/Mend/Turn/stagger-offset-is-added-to-waits", test_stagger_offset_is_added);
  ADD ("/Mend/Turn/sender-runs-the-attempts", test_sender_runs_the_attempts);

#undef ADD

  return g_test_run ();
}
