/* mend-error-policy-private.h — MendErrorPolicy's preset for resuming subagents
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

/* The bounds of a delay (a day: anything above is a mistake) and of the
 * retries, for the properties and the JSON loader alike. */
#define MEND_ERROR_POLICY_MAX_MS       86400000u
#define MEND_ERROR_POLICY_MAX_RETRIES  1000u

/* The subagent-resume defaults, applied over the policy's values (the
 * "resume" preset of the JSON loader, mend-error-policy-json.c). */
void mend_error_policy_apply_resume_preset (MendErrorPolicy *self);

G_END_DECLS
