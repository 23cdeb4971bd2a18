/* mend-failure-describe.c — MendFailure as a sentence a person reads
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "mend-failure-private.h"
#include "mend-i18n-private.h"

/* One sentence per reason, written for the person in front of the app:
 * what happened, in their language, with nothing of the server's own
 * text (which stays on MendFailure:message). No final stop, so that a
 * status line can go on after it. */
static const char *
describe_reason (MendReason reason)
{
  switch (reason)
    {
    case MEND_REASON_CAPACITY:
      return _("The service is overloaded");
    case MEND_REASON_RATE_LIMIT:
      return _("The service is limiting the rate of requests");
    case MEND_REASON_TRANSPORT:
      return _("The connection to the service failed");
    case MEND_REASON_TIMEOUT:
      return _("The service took too long to answer");
    case MEND_REASON_EMPTY:
      return _("The model sent an empty answer");
    case MEND_REASON_SERVER:
      return _("The service had an internal error");
    case MEND_REASON_AUTH:
      return _("The API key was refused");
    case MEND_REASON_PERMISSION:
      return _("The service refused permission for this request");
    case MEND_REASON_BAD_REQUEST:
      return _("The service could not accept the request");
    case MEND_REASON_USAGE_LIMIT:
      return _("The usage limit was reached");
    case MEND_REASON_BILLING:
      return _("The account’s credit or spending limit is used up");
    case MEND_REASON_CANCELLED:
      return _("The work was cancelled");
    case MEND_REASON_UNKNOWN:
    default:
      return _("The service failed for an unknown reason");
    }
}

/**
 * mend_failure_describe:
 * @self: a failure
 *
 * Says what went wrong in one sentence for a person, in the user's
 * language: "The service is overloaded", "The API key was refused", "The
 * usage limit was reached". It depends on the reason and, where that
 * matters, the kind: a failure after part of the answer arrived says so,
 * the user's Stop says "Stopped". It never quotes the server: its own
 * text is [property@Mend.Failure:message], for a "details" view.
 *
 * The sentence has no final full stop, so that a status can go on after
 * it.
 *
 * Returns: (transfer full): the sentence
 */
char *
mend_failure_describe (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  mend_i18n_init ();

  if (mend_failure_get_kind (self) == MEND_FAILURE_STOPPED)
    return g_strdup (_("Stopped"));
  /* Any limit reads as the usage limit (a rate limit that resets beyond
   * the horizon too), except a balance to pay: no wait lifts that one. */
  if (mend_failure_get_kind (self) == MEND_FAILURE_LIMIT)
    return g_strdup (describe_reason (mend_failure_get_reason (self) == MEND_REASON_BILLING
                                      ? MEND_REASON_BILLING
                                      : MEND_REASON_USAGE_LIMIT));
  if (mend_failure_get_partial (self))
    return g_strdup (_("The answer broke off midway"));

  return g_strdup (describe_reason (mend_failure_get_reason (self)));
}
