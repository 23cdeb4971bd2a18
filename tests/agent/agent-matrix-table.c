/* agent-matrix-table.c — what each cell of test-agent-matrix must show
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "agent-matrix.h"

#define CONTINUE MEND_CHAT_DEFAULT_CONTINUE_PROMPT
#define FOLLOW_UP "Then update the changelog"
#define FOLLOW_UP_ANSWER "Changelog updated."
#define CONTINUE_ANSWER "Carried on."
#define FIRST_ANSWER "Build fixed."

/* How long a Stop may take in real time to end the turn. */
#define STOP_PROMPTLY_MS 1000
/* The additive jitter of the turn defaults, on top of a server hint. */
#define JITTER_MS 250

const char * const scenario_names[N_SCENARIOS] = {
  [SCENARIO_503_TWICE] = "503-twice-then-success",
  [SCENARIO_503_ALWAYS] = "503-always-gives-up-with-continue-and-the-follow-up",
  [SCENARIO_429_HINT] = "429-per-minute-waits-the-hint",
  [SCENARIO_USAGE_LIMIT] = "usage-limit-is-one-attempt",
  [SCENARIO_401] = "401-is-one-attempt",
  [SCENARIO_400] = "400-is-one-attempt",
  [SCENARIO_EMPTY] = "empty-answer-is-retried",
  [SCENARIO_CUT_BEFORE_OUTPUT] = "stream-cut-before-output-is-retried",
  [SCENARIO_CUT_AFTER_TEXT] = "stream-cut-after-text",
  [SCENARIO_STOP_IN_WAIT] = "stop-during-the-wait",
  [SCENARIO_STOP_IN_AGENT_BACKOFF] = "stop-during-the-agent-backoff",
};

const char * const record_outcomes[N_RECORD_OUTCOMES] = {
  [RECORD_SCHEDULED] = "scheduled",
  [RECORD_FIRED] = "fired",
  [RECORD_EXHAUSTED] = "exhausted",
  [RECORD_GAVE_UP] = "gave_up",
  [RECORD_STOPPED] = "stopped",
};

#define SUCCEEDS(n, why, req, ...) \
  { .state = MEND_TURN_SUCCEEDED, .attempts = (n), .reason = (why), .kind = MEND_FAILURE_TRANSIENT, \
    .requests = (req), __VA_ARGS__ }
#define GIVES_UP(n, why, how, req, ...) \
  { .state = MEND_TURN_FAILED, .attempts = (n), .reason = (why), .kind = (how), .requests = (req), __VA_ARGS__ }
#define STOPS(why, how, req, ...) \
  { .state = MEND_TURN_STOPPED, .attempts = 1, .reason = (why), .kind = (how), .requests = (req), __VA_ARGS__ }
#define NOT_SHOWN(why) { .na = (why) }

#define R(x) MEND_REASON_##x
#define TRANSIENT MEND_FAILURE_TRANSIENT
#define PERMANENT MEND_FAILURE_PERMANENT
#define LIMIT MEND_FAILURE_LIMIT

/* Notes that several cells share. */
/* The model saw the user's words once in the request that answered. */
#define PROMPT_ONCE .prompt_mentions = 1
#define CONTINUED_ONCE \
  .continue_mentions = 1, \
  .note = "the agent keeps each failed attempt's prompt in its history: each retry asks it to continue, and " \
          "the Continue's request has the prompt once"
/* The CLI keeps them too, and is sent the prompt on each retry. */
#define KEPT_FIVE_TIMES \
  .continue_mentions = 5, \
  .note = "the CLI keeps each failed attempt's prompt in its history: the Continue's request has it five times"
#define NO_HINT(who) \
  .hint_ms = -1, .note = who " drops the Retry-After: the wait is libmend's schedule"
/* "Internal error: API Error: terminated" (undici's words for a response
 * body cut off, the bundled CLI's non-streaming retry cut too) is a
 * dropped connection. */
#define CLAUDE_CUT_BEFORE \
  SUCCEEDS (2, R (TRANSPORT), 3)
#define CLAUDE_CUT_AFTER \
  GIVES_UP (1, R (TRANSPORT), PERMANENT, 2, .partial = TRUE, \
            .note = "partial: the adapter forwards the text before the cut, so it is not retried")

/* Every cell. The senders' own retries are off but in the last column;
 * where an agent recovers from a fault on its own (a second request
 * within one attempt), the fault lasts for the whole attempt
 * (requests_per_empty, requests_per_cut in test-agent-matrix.c), so that
 * what libmend makes of it shows. */
const Expected matrix_expected[N_SENDERS][N_SCENARIOS] = {
  /* MendHttpSender straight at the Messages API: the reference. */
  [SENDER_HTTP] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, .continue_mentions = 1,
                                      .note = "the transcript keeps the failed prompt pending: the Continue "
                                              "carries it once"),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, .hint_ms = 2000),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (BILLING), LIMIT, 1),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 1),
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 2),
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (2, R (TRANSPORT), 2),
    [SCENARIO_CUT_AFTER_TEXT] = GIVES_UP (1, R (TRANSPORT), PERMANENT, 1, .partial = TRUE,
                                          .note = "partial: retry-partial is off, the text is not repeated"),
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = NOT_SHOWN ("MendHttpSender is no agent: the only backoff is libmend's"),
  },

  /* The Claude Code CLI 2.1.332 in stream-json, CLAUDE_CODE_MAX_RETRIES=0
   * (2 in the last column). */
  [SENDER_CLAUDE_CLI] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, KEPT_FIVE_TIMES),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, NO_HINT ("the CLI")),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (BILLING), LIMIT, 1),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 6,
                               .note = "the CLI sends a request that got a 400 five more times, in other shapes, "
                                       "with CLAUDE_CODE_MAX_RETRIES=0: one attempt, six requests"),
    /* Each attempt asks twice: the CLI answers an empty answer with a
     * request of its own ("[Your previous response had no visible
     * output. Please continue …]"). */
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 3),
    /* Each attempt asks twice: the CLI asks again without streaming once
     * a stream breaks. */
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (2, R (TRANSPORT), 3),
    [SCENARIO_CUT_AFTER_TEXT] = SUCCEEDS (2, R (TRANSPORT), 3,
                                          .note = "the CLI writes an assistant message only once it is whole: the "
                                                  "partial text never reaches the app, the failure is not partial, "
                                                  "and it is retried"),
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1, .agent_status = TRUE,
                                              .note = "its api_retry lines show as the turn's agent status"),
  },

  /* claude-code-acp 0.16.2 (Agent SDK 0.2.44), CLAUDE_CODE_MAX_RETRIES=0
   * (2 in the last column). */
  [SENDER_CLAUDE_CODE_ACP] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, CONTINUED_ONCE),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, NO_HINT ("the adapter")),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (BILLING), LIMIT, 1),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 1),
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 2),
    [SCENARIO_CUT_BEFORE_OUTPUT] = CLAUDE_CUT_BEFORE,
    [SCENARIO_CUT_AFTER_TEXT] = CLAUDE_CUT_AFTER,
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1,
                                              .note = "nothing of its own retries is sent over ACP"),
  },

  /* claude-agent-acp 0.23.1 (Agent SDK 0.2.83, Claude Code 2.1.83),
   * CLAUDE_CODE_MAX_RETRIES=0 (2 in the last column). After a failed
   * prompt it ends the next one at once with end_turn and nothing
   * (REAL-AGENTS.md): libmend reads that as an empty response and starts it
   * again, one attempt more. */
  [SENDER_CLAUDE_AGENT_ACP] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (EMPTY), 3,
                                     .note = "the attempt after the first 503 ends at once (a false end_turn): "
                                             "the last failure is that empty response"),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, .continue_mentions = 1, .continue_requests = 2,
                                      .note = "each retry asks the adapter to continue (the Continue's request has "
                                              "the prompt once); the Continue turn is the prompt after a failed one: "
                                              "its false end_turn costs it an attempt, and the model request that "
                                              "prompt made comes late, a second one"),
    [SCENARIO_429_HINT] = SUCCEEDS (3, R (EMPTY), 3, NO_HINT ("the adapter")),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (BILLING), LIMIT, 1),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 1),
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 2),
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (3, R (EMPTY), 4,
                                             .note = "the cut is a dropped connection, retried; the retry is the "
                                                     "prompt after a failed one, whose false end_turn costs an attempt"),
    [SCENARIO_CUT_AFTER_TEXT] = CLAUDE_CUT_AFTER,
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1, .after_attempts = 2,
                                     .note = "the follow-up after the Stop is the prompt after a failed one: its "
                                             "false end_turn costs it an attempt"),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1, .after_attempts = 2,
                                              .note = "after a cancelled prompt too, the next one ends at once "
                                                      "(end_turn, zero usage): the follow-up takes two attempts"),
  },

  /* Gemini CLI 0.61.0 (`gemini --acp`), "maxAttempts": 1 (2 in the last
   * column). */
  [SENDER_GEMINI] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, .continue_mentions = 1,
                                      .continue_resends = TRUE,
                                      .note = "the agent drops a failed prompt from its history (its profile): "
                                              "the Continue turn sends it the prompt itself, once"),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, .hint_ms = 2000,
                                    .note = "\"Suggested retry after 2s.\" is the wait"),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (USAGE_LIMIT), LIMIT, 1),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 1),
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 2),
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (2, R (SERVER), 2,
                                             .note = "Gemini CLI reports the cut as JSON-RPC code 500: a server error"),
    [SCENARIO_CUT_AFTER_TEXT] = SUCCEEDS (2, R (SERVER), 2,
                                          .note = "code 500 \"terminated\" after text; the agent answers each "
                                                  "attempt from the start (its profile), so text alone does not "
                                                  "make the failure partial: retried, the app sees the text again"),
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1,
                                              .note = "nothing is sent over ACP while it waits; session/cancel "
                                                      "ends its wait"),
  },

  /* @agentclientprotocol/claude-agent-acp 0.101.0 (Claude Code 2.1.318),
   * CLAUDE_CODE_MAX_RETRIES=0 (2 in the last column), asked for typed
   * failures: each failed prompt ends with a sessionFailure, and stays in
   * the adapter's history, so each retry asks it to continue. */
  [SENDER_AC_CLAUDE_AGENT_ACP] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3, PROMPT_ONCE),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, CONTINUED_ONCE),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, NO_HINT ("the adapter")),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (BILLING), LIMIT, 1,
                                       .note = "a credit balance used up: a typed failure of the limit category"),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 6,
                               .note = "the bundled CLI sends a request that got a 400 five more times, in other "
                                       "shapes; the adapter then calls it a service failure to retry, and its "
                                       "words (API Error: 400) make it permanent: one attempt, six requests"),
    /* It asks once more by itself after an empty answer. */
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 3, PROMPT_ONCE),
    /* It asks again without streaming once a stream breaks. */
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (2, R (TRANSPORT), 3, PROMPT_ONCE),
    [SCENARIO_CUT_AFTER_TEXT] = GIVES_UP (1, R (TRANSPORT), PERMANENT, 2, .partial = TRUE,
                                          .note = "partial: the adapter forwards the text read before the cut, so "
                                                  "it is not retried (text and cut read at once, it forwards none, "
                                                  "and the retry continues)"),
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1, .agent_status = TRUE,
                                              .note = "its own retries come as typed warnings, shown as the "
                                                      "turn's agent status"),
  },

  /* @agentclientprotocol/codex-acp 2.6.0 (codex app-server 0.166),
   * request_max_retries and stream_max_retries 0 (1 in the last column),
   * asked for typed failures. */
  [SENDER_AC_CODEX_ACP] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3, PROMPT_ONCE),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, CONTINUED_ONCE),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, NO_HINT ("Codex")),
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (1, R (BILLING), LIMIT, 1,
                                       .note = "insufficient_quota: a typed failure of the limit category"),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 1),
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 2, PROMPT_ONCE),
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (2, R (TRANSPORT), 2, PROMPT_ONCE),
    [SCENARIO_CUT_AFTER_TEXT] = SUCCEEDS (2, R (TRANSPORT), 2, PROMPT_ONCE,
                                          .note = "the agent answers each attempt from the start (its profile), "
                                                  "so text alone does not make the failure partial: retried"),
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1,
                                              .note = "its warning (\"Reconnecting... 1/1\") comes with its own "
                                                      "retry, not before its wait: none came in the 30 ms before "
                                                      "the Stop"),
  },

  /* codex-acp 0.16.0 (Codex 0.137), request_max_retries and
   * stream_max_retries 0 (1 in the last column). */
  [SENDER_CODEX] = {
    [SCENARIO_503_TWICE] = SUCCEEDS (3, R (CAPACITY), 3),
    [SCENARIO_503_ALWAYS] = GIVES_UP (5, R (CAPACITY), TRANSIENT, 5, CONTINUED_ONCE),
    [SCENARIO_429_HINT] = SUCCEEDS (2, R (RATE_LIMIT), 2, NO_HINT ("Codex")),
    /* Cannot be shown: codex-acp says "exceeded retry limit, last status:
     * 429 Too Many Requests" for a rate limit and for insufficient_quota
     * alike, the body dropped (REAL-AGENTS.md). libmend errs toward
     * retrying. */
    [SCENARIO_USAGE_LIMIT] = GIVES_UP (5, R (RATE_LIMIT), TRANSIENT, 5,
                                       .note = "cannot be told from a rate limit (the same text): libmend errs "
                                               "toward retrying, five attempts, then gives up"),
    [SCENARIO_401] = GIVES_UP (1, R (AUTH), PERMANENT, 1),
    [SCENARIO_400] = GIVES_UP (1, R (BAD_REQUEST), PERMANENT, 1),
    [SCENARIO_EMPTY] = SUCCEEDS (2, R (EMPTY), 2),
    [SCENARIO_CUT_BEFORE_OUTPUT] = SUCCEEDS (2, R (TRANSPORT), 2),
    [SCENARIO_CUT_AFTER_TEXT] = SUCCEEDS (2, R (TRANSPORT), 2,
                                          .note = "the agent answers each attempt from the start (its profile), "
                                                  "so text alone does not make the failure partial: retried"),
    [SCENARIO_STOP_IN_WAIT] = STOPS (R (CAPACITY), TRANSIENT, 1),
    [SCENARIO_STOP_IN_AGENT_BACKOFF] = STOPS (NO_FAILURE, NO_FAILURE, 1,
                                              .note = "nothing of its own retries is sent over ACP"),
  },
};

/* Checking a cell */

static const char *
reason_nick (int reason)
{
  return reason == NO_FAILURE ? "none" : mend_reason_to_nick (reason);
}

static const char *
kind_nick (int kind)
{
  return kind == NO_FAILURE ? "none" : mend_failure_kind_to_nick (kind);
}

static const char *
state_nick (MendTurnState state)
{
  static const char * const nicks[] = { "idle", "running", "waiting", "succeeded", "failed", "stopped" };

  return state < G_N_ELEMENTS (nicks) ? nicks[state] : "?";
}

char *
seen_describe (const Seen *seen)
{
  g_autofree char *queue = seen->queue ? g_strjoinv (" | ", seen->queue) : g_strdup ("");
  GString *s = g_string_new (NULL);

  if (!seen->finished)
    g_string_append (s, "NOT FINISHED, ");
  g_string_append_printf (s, "%s, %u attempt(s), last failure %s/%s (status %u%s), ",
                          state_nick (seen->state), seen->attempts, reason_nick (seen->reason),
                          kind_nick (seen->kind), seen->status, seen->partial ? ", partial" : "");
  g_string_append_printf (s, "%u request(s) for the prompt (%u at the end, %u side), ",
                          seen->requests, seen->requests_after, seen->side_requests);
  g_string_append_printf (s, "%u wait(s) (first %d ms%s), %u exhausted, ", seen->n_waits,
                          seen->first_delay_ms, seen->hint_ms > 0 ? ", a server hint" : "", seen->n_exhausted);
  g_string_append_printf (s, "lifecycle %d, queue [%s], text \"%s\"; ", seen->lifecycle, queue,
                          seen->first_text ? seen->first_text : "");
  g_string_append_printf (s, "after: %s at attempt %u, \"%s\", %u request(s) for the follow-up",
                          seen->after_ok ? "ok" : "NOT OK", seen->after_attempts,
                          seen->after_text ? seen->after_text : "", seen->follow_up_requests);
  if (seen->agent_status)
    g_string_append (s, "; agent status shown");
  if (seen->running_in_backoff)
    g_string_append_printf (s, "; stopped in the agent's backoff, the Stop took %" G_GINT64_FORMAT " ms",
                            seen->stop_ms);
  if (seen->prompt_mentions >= 0)
    g_string_append_printf (s, "; the request that answered has the prompt %d time(s)", seen->prompt_mentions);
  if (seen->continue_mentions >= 0)
    g_string_append_printf (s, "; the Continue's request has the prompt %d time(s)", seen->continue_mentions);
  if (seen->message != NULL)
    g_string_append_printf (s, "; the failure's message: %.300s", seen->message);

  return g_string_free (s, FALSE);
}

void
seen_clear (Seen *seen)
{
  g_clear_pointer (&seen->queue, g_strfreev);
  g_clear_pointer (&seen->message, g_free);
  g_clear_pointer (&seen->first_text, g_free);
  g_clear_pointer (&seen->after_text, g_free);
}

#define MISMATCH(...) g_string_append_printf (mismatch, __VA_ARGS__)

static void
check_queue (const Seen  *seen,
             const char **texts,
             GString     *mismatch)
{
  guint n = seen->queue ? g_strv_length (seen->queue) : 0;
  g_autofree char *queue = seen->queue ? g_strjoinv (" | ", seen->queue) : g_strdup ("");
  g_autofree char *want = g_strjoinv (" | ", (char **) texts);

  if (n != g_strv_length ((char **) texts) || g_strcmp0 (queue, want) != 0)
    MISMATCH ("the queue is [%s], not [%s]; ", queue, want);
}

void
matrix_check (const Expected *expected,
              Scenario        scenario,
              const Seen     *seen,
              GString        *mismatch)
{
  if (!seen->finished)
    MISMATCH ("the scenario did not come to its end in time; ");
  if (seen->state != expected->state)
    MISMATCH ("the turn %s, not %s; ", state_nick (seen->state), state_nick (expected->state));
  if (seen->attempts != expected->attempts)
    MISMATCH ("%u attempts, not %u; ", seen->attempts, expected->attempts);
  if (seen->reason != expected->reason || seen->kind != expected->kind)
    MISMATCH ("the last failure is %s/%s, not %s/%s; ", reason_nick (seen->reason), kind_nick (seen->kind),
              reason_nick (expected->reason), kind_nick (expected->kind));
  if (seen->reason != NO_FAILURE && seen->partial != expected->partial)
    MISMATCH ("the failure is %spartial; ", seen->partial ? "" : "not ");
  /* No request for the first prompt after its turn, but the Continue's
   * where it sends the prompt itself. */
  if (seen->requests != expected->requests ||
      seen->requests_after != expected->requests +
                              (scenario == SCENARIO_503_ALWAYS ? MAX (expected->continue_requests, 1) : 0))
    MISMATCH ("%u model requests for the prompt (%u at the end), not %u; ", seen->requests,
              seen->requests_after, expected->requests);

  if (expected->hint_ms > 0 && (seen->hint_ms < expected->hint_ms || seen->hint_ms > expected->hint_ms + JITTER_MS))
    MISMATCH ("the first wait is %d ms%s, not the hint of %d ms; ", seen->first_delay_ms,
              seen->hint_ms > 0 ? " from a hint" : " of the schedule", expected->hint_ms);
  if (expected->hint_ms < 0 && seen->hint_ms > 0)
    MISMATCH ("the first wait is a server hint of %d ms, where none was expected; ", seen->hint_ms);

  /* The chat's records of the first turn: one per wait scheduled and one
   * per wait that fired, and the end (exhausted, gave_up, stopped). */
  {
    guint waits = expected->state == MEND_TURN_STOPPED ? (scenario == SCENARIO_STOP_IN_WAIT) : expected->attempts - 1;
    guint fired = expected->state == MEND_TURN_STOPPED ? 0 : waits;
    guint want[N_RECORD_OUTCOMES] = {
      [RECORD_SCHEDULED] = waits,
      [RECORD_FIRED] = fired,
      [RECORD_EXHAUSTED] = expected->state == MEND_TURN_FAILED && expected->attempts > 1,
      [RECORD_GAVE_UP] = expected->state == MEND_TURN_FAILED && expected->attempts == 1,
      [RECORD_STOPPED] = expected->state == MEND_TURN_STOPPED,
    };

    for (guint i = 0; i < N_RECORD_OUTCOMES; i++)
      if (seen->records[i] != want[i])
        MISMATCH ("%u \"%s\" records, not %u; ", seen->records[i], record_outcomes[i], want[i]);
  }

  switch (expected->state)
    {
    case MEND_TURN_SUCCEEDED:
      if (expected->prompt_mentions > 0 && seen->prompt_mentions != expected->prompt_mentions)
        MISMATCH ("the request that answered has the prompt %d times, not %d; ",
                  seen->prompt_mentions, expected->prompt_mentions);
      if (seen->n_waits != expected->attempts - 1)
        MISMATCH ("%u waits, not %u; ", seen->n_waits, expected->attempts - 1);
      if (!seen->after_ok || seen->after_attempts != 1)
        MISMATCH ("the follow-up did not succeed at its first attempt; ");
      if (seen->after_text != NULL && g_strcmp0 (seen->after_text, FOLLOW_UP_ANSWER) != 0)
        MISMATCH ("the follow-up's text is \"%s\"; ", seen->after_text);
      break;

    case MEND_TURN_FAILED:
      if (seen->lifecycle != MEND_LIFECYCLE_ERROR)
        MISMATCH ("the chat is not in ERROR; ");
      check_queue (seen, (const char *[]) { CONTINUE, FOLLOW_UP, NULL }, mismatch);
      if (seen->n_exhausted != (expected->attempts > 1))
        MISMATCH ("exhausted %u times; ", seen->n_exhausted);
      if (scenario == SCENARIO_503_ALWAYS)
        {
          if (!seen->after_ok)
            MISMATCH ("Continue and the follow-up did not both succeed; ");
          if (seen->after_text != NULL &&
              g_strcmp0 (seen->after_text, expected->continue_resends ? FIRST_ANSWER FOLLOW_UP_ANSWER
                                                                      : CONTINUE_ANSWER FOLLOW_UP_ANSWER) != 0)
            MISMATCH ("the text after the give-up is \"%s\"; ", seen->after_text);
          if (expected->continue_mentions > 0 && seen->continue_mentions != expected->continue_mentions)
            MISMATCH ("the Continue's model request has the failed prompt %d times, not %d; ",
                      seen->continue_mentions, expected->continue_mentions);
        }
      break;

    case MEND_TURN_STOPPED:
      if (seen->lifecycle != MEND_LIFECYCLE_READY)
        MISMATCH ("the chat is not READY after the Stop; ");
      check_queue (seen, (const char *[]) { FOLLOW_UP, NULL }, mismatch);
      if (!seen->after_ok || seen->after_attempts != MAX (expected->after_attempts, 1))
        MISMATCH ("the follow-up, sent after the Stop, %s at attempt %u; ",
                  seen->after_ok ? "succeeded" : "did not succeed", seen->after_attempts);
      if (seen->after_text != NULL && g_strcmp0 (seen->after_text, FOLLOW_UP_ANSWER) != 0)
        MISMATCH ("the follow-up's text is \"%s\"; ", seen->after_text);
      if (scenario == SCENARIO_STOP_IN_WAIT && !seen->wait_cancelled)
        MISMATCH ("the wait was not cancelled; ");
      if (scenario == SCENARIO_STOP_IN_AGENT_BACKOFF)
        {
          if (!seen->running_in_backoff)
            MISMATCH ("the turn was not running while the agent waited; ");
          if (seen->stop_ms > STOP_PROMPTLY_MS)
            MISMATCH ("the Stop took %" G_GINT64_FORMAT " ms; ", seen->stop_ms);
          if (seen->agent_status != expected->agent_status)
            MISMATCH ("the agent's own retry %s as the turn's agent status; ",
                      seen->agent_status ? "showed" : "did not show");
        }
      break;

    default:
      g_assert_not_reached ();
    }
}
