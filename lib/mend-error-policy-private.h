/* mend-error-policy-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-error-policy.h"

G_BEGIN_DECLS

/* The default verdict table, shared by MendFailure (classified by the default
 * policy when made) and the default classify vfunc. @should_retry is -1 when
 * the server did not say. */
MendFailureKind mend_error_policy_default_kind (MendReason reason,
                                                int        should_retry,
                                                gboolean   partial,
                                                gboolean   retry_partial);

G_END_DECLS
