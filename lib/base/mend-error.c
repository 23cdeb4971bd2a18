/* mend-error.c — the error domains of libmend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-error.h"

/* The error domains of the whole library, in one place. */

G_DEFINE_QUARK (mend-queue-error-quark, mend_queue_error)
G_DEFINE_QUARK (mend-retry-error-quark, mend_retry_error)
G_DEFINE_QUARK (mend-state-error-quark, mend_state_error)
G_DEFINE_QUARK (mend-policy-error-quark, mend_policy_error)

/**
 * mend_queue_error_quark:
 *
 * Gets the error domain of [class@Mend.Queue].
 *
 * Returns: the %MEND_QUEUE_ERROR quark
 */

/**
 * mend_retry_error_quark:
 *
 * Gets the error domain of retries asked for by hand and of a closed chat.
 *
 * Returns: the %MEND_RETRY_ERROR quark
 */

/**
 * mend_state_error_quark:
 *
 * Gets the error domain of saved state that cannot be restored.
 *
 * Returns: the %MEND_STATE_ERROR quark
 */

/**
 * mend_policy_error_quark:
 *
 * Gets the error domain of [class@Mend.ErrorPolicy] configuration errors.
 *
 * Returns: the %MEND_POLICY_ERROR quark
 */
