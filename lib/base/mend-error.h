/* mend-error.h — the error domains of libmend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib.h>

#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MendQueueError:
 * @MEND_QUEUE_ERROR_FULL: the queue holds [property@Mend.Queue:max-items]
 *   items already
 * @MEND_QUEUE_ERROR_BLANK: the text is empty or only white space
 * @MEND_QUEUE_ERROR_TOO_LARGE: the text is longer than
 *   [property@Mend.Queue:max-item-bytes]
 * @MEND_QUEUE_ERROR_NOT_FOUND: no item has that id
 * @MEND_QUEUE_ERROR_INVALID_TEXT: the text is not valid UTF-8
 *
 * Errors in the %MEND_QUEUE_ERROR domain. The queue is unchanged after any
 * of them.
 */
typedef enum
{
  MEND_QUEUE_ERROR_FULL,
  MEND_QUEUE_ERROR_BLANK,
  MEND_QUEUE_ERROR_TOO_LARGE,
  MEND_QUEUE_ERROR_NOT_FOUND,
  MEND_QUEUE_ERROR_INVALID_TEXT,
} MendQueueError;

/**
 * MEND_QUEUE_ERROR:
 *
 * The error domain of [class@Mend.Queue].
 */
#define MEND_QUEUE_ERROR (mend_queue_error_quark ())

MEND_AVAILABLE_IN_0_2
GQuark mend_queue_error_quark (void);

/**
 * MendRetryError:
 * @MEND_RETRY_ERROR_BUSY: an attempt already runs
 * @MEND_RETRY_ERROR_NOT_RETRYABLE: the work cannot be retried now
 * @MEND_RETRY_ERROR_UNKNOWN_SUBAGENT: no subagent has that id
 * @MEND_RETRY_ERROR_CLOSED: the chat is closed
 * @MEND_RETRY_ERROR_SESSION_LOST: the agent could not load the session
 *   the turn belongs to: its history is gone
 * @MEND_RETRY_ERROR_NO_SENDER: a turn started with nothing to run its
 *   attempts: no [iface@Mend.Sender] and no handler of
 *   [signal@Mend.Turn::attempt]
 *
 * Errors in the %MEND_RETRY_ERROR domain.
 */
typedef enum
{
  MEND_RETRY_ERROR_BUSY,
  MEND_RETRY_ERROR_NOT_RETRYABLE,
  MEND_RETRY_ERROR_UNKNOWN_SUBAGENT,
  MEND_RETRY_ERROR_CLOSED,
  MEND_RETRY_ERROR_NO_SENDER,
  MEND_RETRY_ERROR_SESSION_LOST,
} MendRetryError;

/**
 * MEND_RETRY_ERROR:
 *
 * The error domain of retries asked for by hand and of a closed
 * [class@Mend.Chat].
 */
#define MEND_RETRY_ERROR (mend_retry_error_quark ())

MEND_AVAILABLE_IN_0_2
GQuark mend_retry_error_quark (void);

/**
 * MendStateError:
 * @MEND_STATE_ERROR_INVALID: the saved state is malformed, truncated or
 *   out of bounds; the message says where
 * @MEND_STATE_ERROR_VERSION: the state was saved by a newer libmend
 * @MEND_STATE_ERROR_NOT_EMPTY: the chat already has a turn, queued
 *   messages or subagents; state is restored into a new chat
 *
 * Errors in the %MEND_STATE_ERROR domain. The chat is unchanged after any
 * of them.
 */
typedef enum
{
  MEND_STATE_ERROR_INVALID,
  MEND_STATE_ERROR_VERSION,
  MEND_STATE_ERROR_NOT_EMPTY,
} MendStateError;

/**
 * MEND_STATE_ERROR:
 *
 * The error domain of [method@Mend.Chat.restore_state].
 */
#define MEND_STATE_ERROR (mend_state_error_quark ())

MEND_AVAILABLE_IN_0_2
GQuark mend_state_error_quark (void);

/**
 * MendPolicyError:
 * @MEND_POLICY_ERROR_INVALID: the configuration is malformed, has an unknown
 *   key or a value out of range; the message names the key
 *
 * Errors in the %MEND_POLICY_ERROR domain.
 */
typedef enum
{
  MEND_POLICY_ERROR_INVALID,
} MendPolicyError;

/**
 * MEND_POLICY_ERROR:
 *
 * The error domain of [class@Mend.ErrorPolicy] configuration errors.
 */
#define MEND_POLICY_ERROR (mend_policy_error_quark ())

MEND_AVAILABLE_IN_0_2
GQuark mend_policy_error_quark (void);

G_END_DECLS
