/* mend-chat-status.c — MendChat:status-text, one sentence for the chat's state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "mend-chat-status-private.h"
#include "mend-retry-wait-private.h"

/* A turn that runs or waits: what failed, and when the next attempt
 * goes. */
static char *
compose_turn (const MendChatStatusInput *input)
{
  MendTurn *turn = input->turn;
  MendRetryWait *wait = mend_turn_get_wait (turn);
  MendFailure *failure = mend_turn_get_last_failure (turn);
  g_autofree char *what = NULL;

  if (wait != NULL && mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_PENDING)
    {
      g_autofree char *when = NULL;

      /* A quick retry changes nothing: it does not flash. */
      if (!input->wait_shown)
        return NULL;
      /* A gate's hold, the network gone, a limit's reset: the wait says
       * it ("Usage limit reached — continues at 21:23"). */
      if (mend_retry_wait_get_held (wait) || mend_retry_wait_get_at_reset (wait) || failure == NULL)
        return mend_retry_wait_describe (wait);
      what = mend_failure_describe (failure);
      when = mend_retry_wait_describe_duration (mend_retry_wait_get_remaining_ms (wait));
      /* Translators: the first %s says what failed (“The service is
       * overloaded”), the second is a duration such as “4 s”; then the
       * number of the retry and how many there are in all */
      return g_strdup_printf (_("%s — retrying in %s (retry %u of %u)"), what, when,
                              mend_retry_wait_get_attempt (wait), mend_retry_wait_get_max_retries (wait));
    }

  if (mend_turn_get_state (turn) != MEND_TURN_RUNNING || mend_turn_get_attempt (turn) <= 1)
    return g_strdup ("");
  /* A retry under way: shown as its wait was. */
  if (!input->wait_shown)
    return NULL;
  if (failure == NULL)
    return g_strdup ("");
  what = mend_failure_describe (failure);
  /* Translators: %s says what failed (“The service is overloaded”); then
   * the number of the retry and how many there are in all */
  return g_strdup_printf (_("%s — retrying now (retry %u of %u)"), what,
                          mend_turn_get_attempt (turn) - 1, mend_turn_get_max_attempts (turn) - 1);
}

char *
mend_chat_status_compose (const MendChatStatusInput *input)
{
  g_autofree char *what = NULL;

  if (input->closed)
    return g_strdup ("");
  if (input->turn != NULL)
    return compose_turn (input);
  if (!input->gave_up || input->failure == NULL)
    return g_strdup ("");

  what = mend_failure_describe (input->failure);
  /* A usage limit whose reset is known says when it lifts. */
  if (mend_failure_get_kind (input->failure) == MEND_FAILURE_LIMIT &&
      mend_failure_get_reason (input->failure) == MEND_REASON_USAGE_LIMIT &&
      mend_failure_get_resets_at (input->failure) > input->now_us)
    {
      g_autofree char *when = mend_retry_wait_describe_time (mend_failure_get_resets_at (input->failure),
                                                             input->now_us);

      /* Translators: the first %s says what failed (“The usage limit was
       * reached”), the second is a time such as “21:23” or “Tue 09:00” */
      return g_strdup_printf (_("%s — resets at %s"), what, when);
    }
  if (input->retries > 0 && mend_failure_get_kind (input->failure) == MEND_FAILURE_TRANSIENT)
    /* Translators: %s says what failed (“The service is overloaded”);
     * then the number of retries made */
    return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%s — gave up after %u retry",
                                         "%s — gave up after %u retries", input->retries),
                            what, input->retries);
  return g_steal_pointer (&what);
}
