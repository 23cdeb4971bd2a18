/* test-util.h — what several C tests share: running the loop until a chat
 * reaches a state, and a saved state with a resume prompt queued
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libmend.h>

/* The gateway's words for a subagent's 503, from Claude Code's output. */
#define MEND_TEST_GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available"

/* The app's MendTurn::attempt handler when the test itself ends each
 * attempt (mend_turn_succeed (), mend_turn_fail ()), as an app that sends
 * the prompt its own way does. A turn with no sender and no handler fails
 * at once: nothing would ever end its attempts. */
static inline void
mend_test_on_attempt_by_hand (MendTurn     *turn,
                              guint         attempt,
                              GCancellable *cancellable,
                              gpointer      data)
{
}

static inline void
mend_test_run_by_hand (MendTurn *turn)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (mend_test_on_attempt_by_hand), NULL);
}

static inline void
mend_test_on_turn_started_by_hand (MendChat *chat,
                                   MendTurn *turn,
                                   gpointer  data)
{
  mend_test_run_by_hand (turn);
}

/* Every turn of @chat, a chat with no sender, is run by the test. */
static inline void
mend_test_run_turns_by_hand (MendChat *chat)
{
  g_signal_connect (chat, "turn-started", G_CALLBACK (mend_test_on_turn_started_by_hand), NULL);
}

static inline gboolean
mend_test_watchdog (gpointer data)
{
  g_error ("%s did not reach its state in time", (const char *) data);
  return G_SOURCE_REMOVE;
}

/* Runs the loop until *@served reaches @requests and the chat's turn is in
 * @state (SUCCEEDED or FAILED: no turn left); real time only for loopback
 * I/O, bounded by a 20 s watchdog. */
static inline void
mend_test_run_chat_until (MendChat      *chat,
                          const guint   *served,
                          MendTurnState  state,
                          guint          requests)
{
  guint id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());

  for (;;)
    {
      MendTurn *turn = mend_chat_get_turn (chat);

      if (*served >= requests &&
          (turn == NULL ? (state == MEND_TURN_SUCCEEDED || state == MEND_TURN_FAILED)
                        : mend_turn_get_state (turn) == state))
        break;
      g_main_context_iteration (NULL, TRUE);
    }

  g_source_remove (id);
}

/* The saved state of @chat (taken, closed and finalized) busy with the
 * user's turn, a subagent's resume prompt queued behind it. */
static inline char *
mend_test_state_with_queued_resume_prompt (MendChat  *chat,
                                           MendClock *clock)
{
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  char *json;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);

  json = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  return json;
}
