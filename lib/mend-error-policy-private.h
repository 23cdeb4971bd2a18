/* mend-error-policy-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-error-policy.h"
#include "mend-failure-private.h"

G_BEGIN_DECLS

/* The turn default of retry-after-max-ms: the horizon MendFailure:kind is
 * made with. */
#define MEND_ERROR_POLICY_DEFAULT_RETRY_AFTER_MAX_MS MEND_FAILURE_DEFAULT_RETRY_AFTER_MAX_MS

G_END_DECLS
