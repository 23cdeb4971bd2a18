/* mend-enums.c — the names of the public enumerations' values, as JSON spells them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-enums.h"
#include "mend-enum-types.h"
#include "mend-json-private.h"

/* Each returns the value's nick (the name JSON, records and saved state
 * use), or NULL for a value out of range; a binding has the same as the
 * enum's value_nick, these are for C and for logs. */

#define MEND_DEFINE_TO_NICK(func, Type, TYPE_ENUM)                        \
  const char *                                                            \
  func (Type value)                                                       \
  {                                                                       \
    return mend_json_nick (TYPE_ENUM, value);                             \
  }

/**
 * mend_failure_kind_to_nick:
 * @kind: a failure kind
 *
 * Gets the name of a failure kind as JSON spells it, such as `"transient"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_failure_kind_to_nick, MendFailureKind, MEND_TYPE_FAILURE_KIND)

/**
 * mend_reason_to_nick:
 * @reason: a reason
 *
 * Gets the name of a reason as JSON and records spell it, such as
 * `"capacity"` or `"rate-limit"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_reason_to_nick, MendReason, MEND_TYPE_REASON)

/**
 * mend_jitter_to_nick:
 * @jitter: a jitter
 *
 * Gets the name of a jitter as a policy's JSON spells it, such as `"full"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_jitter_to_nick, MendJitter, MEND_TYPE_JITTER)

/**
 * mend_http_dialect_to_nick:
 * @dialect: an HTTP format
 *
 * Gets the name of an HTTP format, such as `"chat-completions"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_http_dialect_to_nick, MendHttpDialect, MEND_TYPE_HTTP_DIALECT)

/**
 * mend_retry_wait_state_to_nick:
 * @state: a wait's state
 *
 * Gets the name of a wait's state, such as `"pending"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_retry_wait_state_to_nick, MendRetryWaitState, MEND_TYPE_RETRY_WAIT_STATE)

/**
 * mend_turn_state_to_nick:
 * @state: a turn's state
 *
 * Gets the name of a turn's state, such as `"waiting"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_turn_state_to_nick, MendTurnState, MEND_TYPE_TURN_STATE)

/**
 * mend_lifecycle_to_nick:
 * @lifecycle: a chat's lifecycle
 *
 * Gets the name of a chat's lifecycle, such as `"busy"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_lifecycle_to_nick, MendLifecycle, MEND_TYPE_LIFECYCLE)

/**
 * mend_subagent_state_to_nick:
 * @state: a subagent's state
 *
 * Gets the name of a subagent's state, such as `"failed"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_subagent_state_to_nick, MendSubagentState, MEND_TYPE_SUBAGENT_STATE)

/**
 * mend_gate_state_to_nick:
 * @state: a gate's state
 *
 * Gets the name of a gate's state, such as `"half-open"`.
 *
 * Returns: (nullable): the nick, or %NULL for a value out of range
 */
MEND_DEFINE_TO_NICK (mend_gate_state_to_nick, MendGateState, MEND_TYPE_GATE_STATE)
