/* mend-error-policy-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-error-policy.h"

G_BEGIN_DECLS

/* The turn default of retry-after-max-ms: the horizon MendFailure's own
 * verdict is made with. */
#define MEND_ERROR_POLICY_DEFAULT_RETRY_AFTER_MAX_MS 60000

/* The default verdict table, shared by MendFailure (classified by the default
 * policy when made) and the default classify vfunc. @should_retry is -1 when
 * the server did not say; @retry_after_ms is the server's hint or -1, and a
 * rate limit that resets beyond @retry_after_max_ms is a limit, not a wait. */
MendFailureKind mend_error_policy_default_kind (MendReason reason,
                                                int        should_retry,
                                                gboolean   partial,
                                                gboolean   retry_partial,
                                                gint64     retry_after_ms,
                                                guint      retry_after_max_ms);

G_END_DECLS
