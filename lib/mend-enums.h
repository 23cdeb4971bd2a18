/* mend-enums.h — the public enumerations
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib.h>

#include "mend-error.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MendFailureKind:
 * @MEND_FAILURE_TRANSIENT: the upstream failed for a moment; the attempt may be
 *   retried after a wait
 * @MEND_FAILURE_PERMANENT: retrying cannot succeed (bad key, refused permission,
 *   bad request, output already seen, unknown error)
 * @MEND_FAILURE_LIMIT: a usage, quota, billing or spend limit; never retried
 *   automatically and shown differently from other errors
 * @MEND_FAILURE_STOPPED: the user stopped the work (Stop, cancellation)
 *
 * The kind of a failure: whether and how it may be retried.
 */
typedef enum
{
  MEND_FAILURE_TRANSIENT,
  MEND_FAILURE_PERMANENT,
  MEND_FAILURE_LIMIT,
  MEND_FAILURE_STOPPED,
} MendFailureKind;

/**
 * MendReason:
 * @MEND_REASON_CAPACITY: the upstream is at capacity (HTTP 503 or 529,
 *   `overloaded_error`, "no non-exhausted accounts")
 * @MEND_REASON_RATE_LIMIT: requests are throttled (HTTP 429)
 * @MEND_REASON_TRANSPORT: the connection failed (reset, EOF, refused,
 *   unreachable, temporary DNS failure, TLS EOF)
 * @MEND_REASON_TIMEOUT: the request timed out (HTTP 408 or 504)
 * @MEND_REASON_EMPTY: the model sent an empty response
 * @MEND_REASON_SERVER: the upstream had an internal error (HTTP 500 or 502,
 *   `api_error`)
 * @MEND_REASON_AUTH: the credentials were refused (HTTP 401, invalid key)
 * @MEND_REASON_PERMISSION: permission was refused (HTTP 403)
 * @MEND_REASON_BAD_REQUEST: the request itself is wrong (HTTP 400, 404, 413,
 *   422, a prompt that is too long, a validation error)
 * @MEND_REASON_USAGE_LIMIT: a plan's or quota's window is used up (a 5-hour,
 *   weekly, daily or monthly allowance): it resets, see
 *   [property@Mend.Failure:resets-at]
 * @MEND_REASON_BILLING: the account must pay: its credit balance is too
 *   low, its prepaid credits or spend cap are used up, a payment is due
 *   (`insufficient_quota`, HTTP 402); nothing resets it by itself
 * @MEND_REASON_CANCELLED: the user cancelled the work
 * @MEND_REASON_UNKNOWN: nothing recognizable; treated as permanent
 *
 * What went wrong, as far as the facts of a failure tell. JSON uses the
 * value's nick (`"capacity"`, `"rate-limit"`, …).
 */
typedef enum
{
  MEND_REASON_CAPACITY,
  MEND_REASON_RATE_LIMIT,
  MEND_REASON_TRANSPORT,
  MEND_REASON_TIMEOUT,
  MEND_REASON_EMPTY,
  MEND_REASON_SERVER,
  MEND_REASON_AUTH,
  MEND_REASON_PERMISSION,
  MEND_REASON_BAD_REQUEST,
  MEND_REASON_USAGE_LIMIT,
  MEND_REASON_BILLING,
  MEND_REASON_CANCELLED,
  MEND_REASON_UNKNOWN,
} MendReason;

/**
 * MendJitter:
 * @MEND_JITTER_NONE: no jitter: the exponential delay, capped
 * @MEND_JITTER_ADDITIVE: a random 0 to `jitter-ms` added before the cap
 * @MEND_JITTER_FULL: a random delay between 0 and the capped exponential delay
 * @MEND_JITTER_EQUAL: half the capped exponential delay plus a random part of
 *   the other half
 * @MEND_JITTER_DECORRELATED: a random delay between the base delay and three
 *   times the previous delay, capped
 *
 * How a [class@Mend.ErrorPolicy] spreads its delays, after the formulas of
 * "Exponential Backoff and Jitter".
 */
typedef enum
{
  MEND_JITTER_NONE,
  MEND_JITTER_ADDITIVE,
  MEND_JITTER_FULL,
  MEND_JITTER_EQUAL,
  MEND_JITTER_DECORRELATED,
} MendJitter;

/**
 * MendHttpDialect:
 * @MEND_HTTP_DIALECT_AUTO: the format of the endpoint's path: Chat
 *   Completions for a path that ends in `/chat/completions`, Responses for
 *   one that ends in `/responses`, Gemini for one that ends in
 *   `:streamGenerateContent` or `:generateContent`, else Messages
 * @MEND_HTTP_DIALECT_MESSAGES: the Anthropic Messages API (`/v1/messages`)
 * @MEND_HTTP_DIALECT_CHAT_COMPLETIONS: the OpenAI Chat Completions format
 *   (`/v1/chat/completions`), which OpenAI, Ollama, llama.cpp's server,
 *   vLLM, LM Studio, OpenRouter, Groq, Mistral and DeepSeek speak
 * @MEND_HTTP_DIALECT_RESPONSES: the OpenAI Responses API (`/v1/responses`)
 * @MEND_HTTP_DIALECT_GEMINI: the Gemini API
 *   (`/v1beta/models/MODEL:streamGenerateContent?alt=sse`)
 *
 * The wire format a [class@Mend.HttpSender] speaks.
 */
typedef enum
{
  MEND_HTTP_DIALECT_AUTO,
  MEND_HTTP_DIALECT_MESSAGES,
  MEND_HTTP_DIALECT_CHAT_COMPLETIONS,
  MEND_HTTP_DIALECT_RESPONSES,
  MEND_HTTP_DIALECT_GEMINI,
} MendHttpDialect;

/**
 * MendRetryWaitState:
 * @MEND_RETRY_WAIT_PENDING: the wait is counting down
 * @MEND_RETRY_WAIT_FIRED: the wait ended and its retry runs
 * @MEND_RETRY_WAIT_CANCELLED: the wait was cancelled; its retry never runs
 *
 * The state of a [class@Mend.RetryWait].
 */
typedef enum
{
  MEND_RETRY_WAIT_PENDING,
  MEND_RETRY_WAIT_FIRED,
  MEND_RETRY_WAIT_CANCELLED,
} MendRetryWaitState;

/**
 * MendTurnState:
 * @MEND_TURN_IDLE: made, not started
 * @MEND_TURN_RUNNING: an attempt runs
 * @MEND_TURN_WAITING: waiting before the next attempt
 * @MEND_TURN_SUCCEEDED: an attempt succeeded (final)
 * @MEND_TURN_FAILED: the turn gave up: retries used up, or a failure that is
 *   not retried (final)
 * @MEND_TURN_STOPPED: the user stopped the turn (final)
 *
 * The state of a [class@Mend.Turn].
 */
typedef enum
{
  MEND_TURN_IDLE,
  MEND_TURN_RUNNING,
  MEND_TURN_WAITING,
  MEND_TURN_SUCCEEDED,
  MEND_TURN_FAILED,
  MEND_TURN_STOPPED,
} MendTurnState;

/**
 * MendLifecycle:
 * @MEND_LIFECYCLE_READY: nothing runs; a submission runs at once
 * @MEND_LIFECYCLE_BUSY: a turn runs or waits to retry; submissions queue
 * @MEND_LIFECYCLE_ERROR: the last turn gave up; the queue does not move by
 *   itself
 * @MEND_LIFECYCLE_CLOSED: the chat is closed
 *
 * The lifecycle of a [class@Mend.Chat].
 */
typedef enum
{
  MEND_LIFECYCLE_READY,
  MEND_LIFECYCLE_BUSY,
  MEND_LIFECYCLE_ERROR,
  MEND_LIFECYCLE_CLOSED,
} MendLifecycle;

/**
 * MendSubagentState:
 * @MEND_SUBAGENT_RUNNING: the subagent runs
 * @MEND_SUBAGENT_COMPLETED: it finished its task
 * @MEND_SUBAGENT_FAILED: it stopped on an error
 * @MEND_SUBAGENT_CANCELLED: it was stopped
 *
 * The state of a [class@Mend.Subagent].
 */
typedef enum
{
  MEND_SUBAGENT_RUNNING,
  MEND_SUBAGENT_COMPLETED,
  MEND_SUBAGENT_FAILED,
  MEND_SUBAGENT_CANCELLED,
} MendSubagentState;

/**
 * MendGateState:
 * @MEND_GATE_CLOSED: requests go through
 * @MEND_GATE_OPEN: the upstream failed for every member: members wait,
 *   spending no attempt, until the next check
 * @MEND_GATE_HALF_OPEN: one member's attempt checks whether the upstream
 *   is back; the others wait for its answer
 * @MEND_GATE_OFFLINE: the network is unavailable: no attempt starts
 *
 * The state of a [class@Mend.Gate], after a circuit breaker's.
 */
typedef enum
{
  MEND_GATE_CLOSED,
  MEND_GATE_OPEN,
  MEND_GATE_HALF_OPEN,
  MEND_GATE_OFFLINE,
} MendGateState;

MEND_AVAILABLE_IN_0_2
const char *mend_failure_kind_to_nick     (MendFailureKind     kind);
MEND_AVAILABLE_IN_0_2
const char *mend_reason_to_nick           (MendReason          reason);
MEND_AVAILABLE_IN_0_2
const char *mend_jitter_to_nick           (MendJitter          jitter);
MEND_AVAILABLE_IN_0_2
const char *mend_http_dialect_to_nick     (MendHttpDialect     dialect);
MEND_AVAILABLE_IN_0_2
const char *mend_retry_wait_state_to_nick (MendRetryWaitState  state);
MEND_AVAILABLE_IN_0_2
const char *mend_turn_state_to_nick       (MendTurnState       state);
MEND_AVAILABLE_IN_0_2
const char *mend_lifecycle_to_nick        (MendLifecycle       lifecycle);
MEND_AVAILABLE_IN_0_2
const char *mend_subagent_state_to_nick   (MendSubagentState   state);
MEND_AVAILABLE_IN_0_2
const char *mend_gate_state_to_nick       (MendGateState       state);

G_END_DECLS
