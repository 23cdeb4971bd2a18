/* mend-failure-kind.c — the kind a failure's facts have by default
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-failure-private.h"

/* See mend-failure-private.h. A table of no class's: a failure's own kind
 * is read from it when the failure is made, with the default policy's
 * settings; a policy's classify reads it with its own. */
MendFailureKind
mend_failure_default_kind (MendReason reason,
                           int        should_retry,
                           gboolean   partial,
                           gboolean   retry_partial,
                           gint64     retry_after_ms,
                           guint      retry_after_max_ms)
{
  if (reason == MEND_REASON_CANCELLED)
    return MEND_FAILURE_STOPPED;
  if (reason == MEND_REASON_USAGE_LIMIT || reason == MEND_REASON_BILLING)
    return MEND_FAILURE_LIMIT;
  /* A rate limit that resets beyond the horizon ("try again in 28m48s" on a
   * per-day limit) is a limit to show, not a wait to draw. */
  if (reason == MEND_REASON_RATE_LIMIT && retry_after_ms > (gint64) retry_after_max_ms)
    return MEND_FAILURE_LIMIT;
  /* A refused key or permission is not retried, whatever a header says. */
  if (reason == MEND_REASON_AUTH || reason == MEND_REASON_PERMISSION)
    return MEND_FAILURE_PERMANENT;
  if (partial && !retry_partial)
    return MEND_FAILURE_PERMANENT;
  if (should_retry != -1)
    return should_retry ? MEND_FAILURE_TRANSIENT : MEND_FAILURE_PERMANENT;

  switch (reason)
    {
    case MEND_REASON_CAPACITY:
    case MEND_REASON_RATE_LIMIT:
    case MEND_REASON_TRANSPORT:
    case MEND_REASON_TIMEOUT:
    case MEND_REASON_EMPTY:
    case MEND_REASON_SERVER:
      return MEND_FAILURE_TRANSIENT;
    case MEND_REASON_AUTH:
    case MEND_REASON_PERMISSION:
    case MEND_REASON_BAD_REQUEST:
    case MEND_REASON_UNKNOWN:
    case MEND_REASON_USAGE_LIMIT:
    case MEND_REASON_BILLING:
    case MEND_REASON_CANCELLED:
    default:
      return MEND_FAILURE_PERMANENT;
    }
}
