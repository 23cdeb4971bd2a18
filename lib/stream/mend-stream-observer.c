/* mend-stream-observer.c — MendStreamObserver: reads an agent's stream-json lines into the chat
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* memmem () */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-chat-private.h"
#include "mend-failure.h"
#include "mend-failure-private.h"
#include "mend-sender-private.h"
#include "mend-subagent-retry-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
#include "mend-stream-observer-private.h"
#include "mend-stream-text-private.h"
#include "mend-turn-private.h"

/**
 * MendStreamObserver:
 *
 * Feeds a [class@Mend.Chat] from the output of an agent that speaks Claude
 * Code's stream-json: one JSON object per line.
 *
 * The observer is how the chat learns what the agent did without the app
 * parsing the stream itself:
 *
 * - While an app turn runs, a `result` line completes it: with
 *   [method@Mend.Turn.succeed], or with [method@Mend.Turn.fail] and a
 *   [class@Mend.Failure] read from its `api_error_status`,
 *   `api_error_type` and error text when `is_error` is true. The `subtype`
 *   alone never decides a retry.
 * - A `system`/`init` line while no app turn is in flight is the agent
 *   starting a turn of its own ([method@Mend.Chat.begin_external_turn]);
 *   its `result` ends it.
 * - `system`/`task_started`, `task_notification` and `task_updated` lines
 *   of top-level subagents reach [class@Mend.SubagentRetry], which resumes
 *   the ones a transient upstream error failed. Tasks that are not agents
 *   (a shell command, `task_type` `local_bash`) are not subagents, however
 *   they end: their type is taken from their start, from the
 *   `background_tasks_changed` list or from the end itself. A subagent
 *   whose failure comes without its start having been seen is the
 *   subagent of its `tool_use_id`, with its `task_id` as its agent id.
 * - `system`/`api_retry` lines, the agent retrying on its own before it
 *   gives up, set the running turn's [property@Mend.Turn:agent-status] and
 *   emit [signal@Mend.StreamObserver::agent-retry].
 * - A `rate_limit_event` whose `status` is `rejected` says when the plan's
 *   window resets (`resetsAt`, Unix seconds): the usage limit the turn or
 *   a subagent then fails with resets at that time, to the second, rather
 *   than at the time of day its words name ("resets 9:23pm"). A later
 *   event that is not `rejected` forgets it.
 *
 * The lines are those of the Claude Code CLI as it really writes them
 * (recorded from version 2.1.328 in `tests/data`): a `result` whose keys
 * come in any order, with `is_error`, `terminal_reason`,
 * `api_error_status` and an `errors` array; an assistant message that the
 * CLI makes up to report an API error (`"model":"<synthetic>"`), which is
 * not output of the turn; a `result` of a turn the CLI runs on its own
 * (with an `origin`), which never ends the app's turn.
 *
 * Agents write a line per token while they answer, so the observer must
 * cost nothing there: a line is parsed only when it contains `"system"` or
 * `"result"` (with the quotes, which an escaped string never produces) or
 * is a `rate_limit_event` (one a request, not a token), and
 * every other line is rejected by a byte scan, without a parse or an
 * allocation — unless the app listens to the running turn's
 * [signal@Mend.Turn::text-delta] (or the chat's): then the lines that
 * carry the model's text are parsed for it. Lines longer than
 * [property@Mend.StreamObserver:max-line-bytes] are never parsed.
 *
 * Bad input never crashes and never changes the chat: a line that could
 * matter but is malformed, of the wrong types, misses a field, is too long
 * or is not UTF-8 is skipped. Unknown types, subtypes and fields are
 * ignored silently, as the stream grows new ones.
 *
 * Feed lines one by one with [method@Mend.StreamObserver.feed_line], or let
 * [method@Mend.StreamObserver.watch_async] read them from a stream, such
 * as the standard output of a [class@Gio.Subprocess].
 *
 * Example:
 *
 * ```c
 * g_autoptr(GError) error = NULL;
 * g_autoptr(GSubprocess) agent =
 *   g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
 *                     "claude", "-p", "--output-format", "stream-json", "--verbose", NULL);
 * g_autoptr(MendStreamObserver) observer = mend_stream_observer_new (chat);
 *
 * // Each line the agent writes reaches the chat: results end turns,
 * // failed subagents are resumed.
 * mend_stream_observer_watch_async (observer, g_subprocess_get_stdout_pipe (agent),
 *                                   NULL, on_watch_done, NULL);
 * ```
 */

#define DEBUG_PREFIX_MAX  80

struct _MendStreamObserver
{
  GObject   parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  /* What the observer feeds: the chat it was made for (a reference), or
   * the chat that the sender it reads for feeds (an agent's own observer),
   * else that sender's attempt in flight (neither a reference). */
  MendChat   *chat;
  MendSender *sender;         /* NULL once it is gone */
  gboolean    for_sender;
  MendTurn   *sender_turn;
  gboolean    reads_for_chat; /* told the chat it reads for it */
  guint     max_line_bytes;
  guint64   n_lines;
  guint64   n_parsed;
  guint64   n_ignored;
  gboolean  watching;

  MendStreamObserverAttemptFunc attempt_func;
  gpointer                      attempt_data;

  /* Tasks that are not subagents (shell commands), by task id: their
   * later lines are not a subagent's. Bounded. */
  GHashTable                   *other_tasks;

  MendTurn                     *streamed_turn; /* weak: had text deltas… */
  guint                         streamed_attempt; /* …in this attempt */

  gint64                        limit_resets_at; /* a rejected rate_limit_event's
                                                  * resetsAt, wall-clock µs; 0 none */
};

#define MAX_OTHER_TASKS 256

enum {
  PROP_0,
  PROP_CHAT,
  PROP_MAX_LINE_BYTES,
  N_PROPS
};

enum {
  AGENT_RETRY,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendStreamObserver, mend_stream_observer, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* How a member of a JSON object reads: absent (or null), of the expected
 * type, or of another type. */
typedef enum
{
  MEMBER_ABSENT,
  MEMBER_OK,
  MEMBER_BAD,
} Member;

static Member
get_string (JsonObject  *object,
            const char  *name,
            const char **out)
{
  JsonNode *node = json_object_get_member (object, name);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return MEMBER_ABSENT;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return MEMBER_BAD;

  *out = json_node_get_string (node);
  return MEMBER_OK;
}

static Member
get_boolean (JsonObject *object,
             const char *name,
             gboolean   *out)
{
  JsonNode *node = json_object_get_member (object, name);

  *out = FALSE;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return MEMBER_ABSENT;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return MEMBER_BAD;

  *out = json_node_get_boolean (node);
  return MEMBER_OK;
}

static Member
get_int (JsonObject *object,
         const char *name,
         gint64     *out)
{
  JsonNode *node = json_object_get_member (object, name);

  *out = 0;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return MEMBER_ABSENT;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return MEMBER_BAD;

  *out = json_node_get_int (node);
  return MEMBER_OK;
}

/* Counts a line that could have mattered but was unusable, and says why
 * in the debug log, with no more than the start of the line. */
static void
ignore_line (MendStreamObserver *self,
             const char         *reason,
             const char         *line,
             gsize               length)
{
  self->n_ignored++;

  if (g_log_writer_default_would_drop (G_LOG_LEVEL_DEBUG, G_LOG_DOMAIN))
    return;

  {
    /* Redacted before it is cut, so that a cut key is not half shown. */
    g_autofree char *redacted = mend_redact_secrets (line, MIN (length, 4096));
    g_autofree char *prefix = g_strndup (redacted, DEBUG_PREFIX_MAX);
    g_autofree char *escaped = g_strescape (prefix, NULL);

    /* A parser's message may quote the line: cap it too. */
    mend_debug ("Stream line ignored (%.*s), %" G_GSIZE_FORMAT " bytes: %s%s",
                DEBUG_PREFIX_MAX, reason, length, escaped,
                length > DEBUG_PREFIX_MAX ? "..." : "");
  }
}

#define SYNTHETIC_MODEL "\"<synthetic>\""
#define API_ERROR_MESSAGE "\"is_api_error_message\""

static inline const char *
skip_space (const char *p,
            const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* The plain string at @p (no escape in it): its text and length, and
 * where it ends; NULL when there is none. */
static inline const char *
plain_string (const char  *p,
              const char  *end,
              gsize       *length)
{
  const char *start;

  if (p >= end || *p != '"')
    return NULL;
  start = ++p;
  while (p < end && *p != '"' && *p != '\\')
    p++;
  if (p >= end || *p != '"')
    return NULL;
  *length = (gsize) (p - start);
  return start;
}

/* The line's "type" when it is the object's first member, as agents
 * write it, whatever the spacing; NULL when it is not (the line must be
 * parsed to know it). No parse, no allocation. */
static const char *
leading_type (const char *line,
              gsize       length,
              gsize      *type_length)
{
  const char *end = line + length;
  const char *p = skip_space (line, end);
  const char *name;
  gsize name_length = 0;

  if (p >= end || *p != '{')
    return NULL;
  p = skip_space (p + 1, end);
  name = plain_string (p, end, &name_length);
  if (name == NULL || name_length != 4 || memcmp (name, "type", 4) != 0)
    return NULL;
  p = skip_space (name + name_length + 1, end);
  if (p >= end || *p != ':')
    return NULL;
  return plain_string (skip_space (p + 1, end), end, type_length);
}

static inline gboolean
type_is (const char *type,
         gsize       length,
         const char *expected)
{
  return type != NULL && length == strlen (expected) && memcmp (type, expected, length) == 0;
}

/* Whether "is_api_error_message" is true somewhere in the line. */
static gboolean
is_api_error_message (const char *line,
                      gsize       length)
{
  const char *end = line + length;
  const char *p = line;

  while ((p = memmem (p, (gsize) (end - p), API_ERROR_MESSAGE, strlen (API_ERROR_MESSAGE))) != NULL)
    {
      const char *value;

      p += strlen (API_ERROR_MESSAGE);
      value = skip_space (p, end);
      if (value < end && *value == ':')
        {
          value = skip_space (value + 1, end);
          if ((gsize) (end - value) >= 4 && memcmp (value, "true", 4) == 0)
            return TRUE;
        }
    }
  return FALSE;
}

/* The chat fed, or NULL. */
static inline MendChat *
fed_chat (MendStreamObserver *self)
{
  if (self->chat != NULL)
    return self->chat;
  return self->sender != NULL ? (MendChat *) mend_sender_get_chat (self->sender) : NULL;
}

/* The app's turn: the chat's, or with no chat the sender's attempt. */
static inline MendTurn *
app_turn (MendStreamObserver *self)
{
  MendChat *chat = fed_chat (self);

  return chat != NULL ? mend_chat_get_turn (chat) : self->sender_turn;
}

static MendTurn *
running_turn (MendStreamObserver *self)
{
  MendTurn *turn = app_turn (self);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_RUNNING ? turn : NULL;
}

static void
output_seen (MendStreamObserver *self)
{
  MendTurn *turn = running_turn (self);

  if (turn != NULL)
    mend_turn_note_output (turn);
}

/* The agent runs a turn of its own: only a chat knows. */
static gboolean
own_turn (MendStreamObserver *self)
{
  MendChat *chat = fed_chat (self);

  return chat != NULL && mend_chat_get_external_turn (chat);
}

static MendSubagentRetry *
subagents (MendStreamObserver *self)
{
  MendChat *chat = fed_chat (self);

  return chat != NULL ? mend_chat_get_subagents (chat) : NULL;
}

/* Output of the app's running turn — a content delta, a tool call, an
 * assistant message — makes a later failure of that turn partial, so that
 * it is not replayed. Told apart by bytes, like everything on this path. */
static inline gboolean
running_without_output (MendStreamObserver *self)
{
  MendTurn *turn = app_turn (self);

  return turn != NULL && !mend_turn_get_output_seen (turn) &&
         mend_turn_get_state (turn) == MEND_TURN_RUNNING;
}

/* The type of a line whose "type" is not its first member: parsed. */
static char *
parsed_type (const char *line,
             gsize       length)
{
  g_autoptr(JsonNode) root = NULL;
  const char *type;

  if (!g_utf8_validate_len (line, length, NULL) ||
      (root = mend_json_parse (line, length, NULL)) == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
      (type = mend_json_get_string (json_node_get_object (root), "type")) == NULL)
    return NULL;
  return g_strdup (type);
}

static inline void
note_output (MendStreamObserver *self,
             const char         *line,
             gsize               length)
{
  g_autofree char *parsed = NULL;
  const char *type;
  gsize type_length = 0;

  /* Once per attempt: after the first output, a line costs no scan. */
  if (!running_without_output (self))
    return;

  type = leading_type (line, length, &type_length);
  if (type == NULL && (type = parsed = parsed_type (line, length)) != NULL)
    type_length = strlen (parsed);

  if (type_is (type, type_length, "stream_event"))
    {
      if (memmem (line, length, "\"content_block_", 15) != NULL)
        output_seen (self);
      return;
    }

  /* The CLI reports an API error it gave up on as an assistant message
   * of its own making: that is no output of the model. Other lines are
   * no output at all. */
  if (type_is (type, type_length, "assistant") &&
      memmem (line, length, SYNTHETIC_MODEL, strlen (SYNTHETIC_MODEL)) == NULL &&
      !is_api_error_message (line, length))
    output_seen (self);
}

/* The model's text, to the running turn's text-delta, when something
 * listens (else no parse). An agent that streams deltas also writes the
 * whole message after them: an attempt that had deltas does not get the
 * message's text again. */
static void
add_text (MendStreamObserver *self,
          const char         *line,
          gsize               length)
{
  static guint text_delta_id;
  MendTurn *turn = running_turn (self);
  g_autofree char *text = NULL;
  gboolean is_delta;

  if (turn == NULL)
    return;
  /* With a turn, its class is made and has the signal. */
  if (text_delta_id == 0)
    text_delta_id = g_signal_lookup ("text-delta", MEND_TYPE_TURN);
  if (!g_signal_has_handler_pending (turn, text_delta_id, 0, FALSE))
    return;

  text = mend_stream_text_from_line (line, length, &is_delta);
  if (text == NULL)
    return;
  if (is_delta)
    {
      g_set_weak_pointer (&self->streamed_turn, turn);
      self->streamed_attempt = mend_turn_get_attempt (turn);
    }
  else if (self->streamed_turn == turn && self->streamed_attempt == mend_turn_get_attempt (turn))
    return;
  mend_turn_add_text (turn, text);
}

/* The byte scan of the hot path: only lines naming "system" or "result",
 * and rate_limit_events, can matter. No parse, no allocation. */
static inline gboolean
might_matter (const char *line,
              gsize       length)
{
  gsize type_length = 0;
  const char *type = leading_type (line, length, &type_length);

  if (type_is (type, type_length, "stream_event"))
    return FALSE;
  if (type_is (type, type_length, "rate_limit_event"))
    return TRUE;

  return memmem (line, length, "\"system\"", 8) != NULL ||
         memmem (line, length, "\"result\"", 8) != NULL;
}

/* The error text of a failed result: "result", else "error", else the
 * first string of "errors", else the subtype. */
static const char *
result_error_text (JsonObject *object,
                   const char *subtype)
{
  const char *text = NULL;
  JsonNode *errors;

  if (get_string (object, "result", &text) == MEMBER_OK && text[0] != '\0')
    return text;
  if (get_string (object, "error", &text) == MEMBER_OK && text[0] != '\0')
    return text;

  errors = json_object_get_member (object, "errors");
  if (errors != NULL && JSON_NODE_HOLDS_ARRAY (errors))
    {
      JsonArray *array = json_node_get_array (errors);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *node = json_array_get_element (array, i);

          if (JSON_NODE_HOLDS_VALUE (node) &&
              json_node_get_value_type (node) == G_TYPE_STRING &&
              json_node_get_string (node)[0] != '\0')
            return json_node_get_string (node);
        }
    }

  return subtype;
}

/* The error body the API sent, as far as the result tells it: with the
 * API's error type, an Anthropic error body, so that the failure reads
 * the same facts as from the API itself; else the bare text. */
static GBytes *
result_error_body (const char *text,
                   const char *api_type)
{
  g_autoptr(JsonBuilder) builder = NULL;
  char *json;

  if (api_type == NULL || api_type[0] == '\0')
    return text ? g_bytes_new (text, strlen (text)) : NULL;

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  mend_json_add_string (builder, "type", "error");
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  mend_json_add_string (builder, "type", api_type);
  mend_json_add_string (builder, "message", text ? text : "");
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  json = mend_json_builder_finish (builder);

  return g_bytes_new_take (json, strlen (json));
}

/* Whether the "errors" member is an array with a string in it. */
static gboolean
has_errors (JsonObject *object)
{
  JsonNode *errors = json_object_get_member (object, "errors");
  JsonArray *array;

  if (errors == NULL || !JSON_NODE_HOLDS_ARRAY (errors))
    return FALSE;

  array = json_node_get_array (errors);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);

      if (JSON_NODE_HOLDS_VALUE (node) &&
          json_node_get_value_type (node) == G_TYPE_STRING &&
          json_node_get_string (node)[0] != '\0')
        return TRUE;
    }

  return FALSE;
}

/* The result of a turn the agent ran on its own, such as the one that
 * hands a task notification to the model, names its origin. */
gboolean
mend_stream_observer_is_own_turn_result (JsonObject *object)
{
  JsonNode *origin = json_object_get_member (object, "origin");
  const char *kind = NULL;

  if (origin == NULL || !JSON_NODE_HOLDS_OBJECT (origin))
    return FALSE;

  get_string (json_node_get_object (origin), "kind", &kind);
  return kind != NULL && !g_str_equal (kind, "user");
}

/* Ends the app's attempt: through the sender that owns the agent when
 * there is one, else on the turn itself. */
static void
end_attempt (MendStreamObserver *self,
             MendTurn           *turn,
             MendFailure        *failure)
{
  if (self->attempt_func != NULL)
    self->attempt_func (self, turn, failure, self->attempt_data);
  else if (failure != NULL)
    mend_turn_fail (turn, failure);
  else
    mend_turn_succeed (turn);
}

/* Whether a result says the model answered nothing: its "result" is
 * there and empty. */
static gboolean
result_is_empty (JsonObject *object)
{
  const char *text = NULL;

  return get_string (object, "result", &text) == MEMBER_OK && text[0] == '\0';
}

/* A rate_limit_event: a rejected one names the plan window's reset, any
 * other status ("allowed", "allowed_warning") says the window is open. */
static void
handle_rate_limit_event (MendStreamObserver  *self,
                         JsonObject          *object,
                         const char         **bad)
{
  JsonNode *info = json_object_get_member (object, "rate_limit_info");
  const char *status = NULL;
  gint64 resets_at = 0;

  if (info == NULL || !JSON_NODE_HOLDS_OBJECT (info))
    {
      *bad = "rate_limit_event without a rate_limit_info object";
      return;
    }
  object = json_node_get_object (info);
  if (get_string (object, "status", &status) != MEMBER_OK)
    {
      *bad = "rate_limit_info without a status string";
      return;
    }
  if (!g_str_equal (status, "rejected"))
    {
      self->limit_resets_at = 0;
      return;
    }
  /* Unix seconds, within what a wall clock in µs holds. */
  if (get_int (object, "resetsAt", &resets_at) == MEMBER_BAD ||
      resets_at < 0 || resets_at > G_MAXINT64 / G_USEC_PER_SEC / 4)
    {
      *bad = "resetsAt is not a time in seconds";
      return;
    }
  self->limit_resets_at = resets_at * G_USEC_PER_SEC;
}

/* A usage limit the CLI has announced a reset for resets then; a reset
 * that has passed on the chat's clock is another window's, and the
 * failure's own words tell. */
static void
take_limit_reset (MendStreamObserver *self,
                  MendFailure        *failure)
{
  MendChat *chat = fed_chat (self);
  MendClock *clock = chat != NULL ? mend_chat_get_clock (chat) : mend_clock_get_default ();

  if (self->limit_resets_at > mend_clock_get_real_time (clock))
    mend_failure_set_reset (failure, self->limit_resets_at);
}

static gboolean
handle_result (MendStreamObserver  *self,
               JsonObject          *object,
               const char         **bad)
{
  MendTurn *turn;
  const char *subtype = NULL;
  const char *terminal_reason = NULL;
  gboolean is_error = FALSE;
  gboolean failed;
  gint64 status = 0;
  Member status_member;

  if (get_string (object, "subtype", &subtype) == MEMBER_BAD)
    return (*bad = "subtype is not a string", FALSE);
  if (get_boolean (object, "is_error", &is_error) == MEMBER_BAD)
    return (*bad = "is_error is not a boolean", FALSE);
  if (get_string (object, "terminal_reason", &terminal_reason) == MEMBER_BAD)
    return (*bad = "terminal_reason is not a string", FALSE);
  status_member = get_int (object, "api_error_status", &status);
  if (status_member == MEMBER_BAD || (status_member == MEMBER_OK && (status < 100 || status > 599)))
    return (*bad = "api_error_status is not an HTTP status", FALSE);

  /* The subtype alone never decides: "success" comes with is_error, and
   * error_during_execution with is_error false and the errors listed. */
  failed = is_error ||
           has_errors (object) ||
           g_strcmp0 (terminal_reason, "api_error") == 0;

  turn = app_turn (self);
  if (turn != NULL && !mend_stream_observer_is_own_turn_result (object))
    {
      g_autoptr(MendFailure) failure = NULL;

      /* A turn waiting to retry has no attempt this result could end. */
      if (mend_turn_get_state (turn) != MEND_TURN_RUNNING)
        return FALSE;

      if (failed)
        {
          const char *text = result_error_text (object, subtype);
          const char *api_type = NULL;

          /* A fact that refines, not one the result needs: one of
           * another shape is left out. */
          if (get_string (object, "api_error_type", &api_type) != MEMBER_OK)
            api_type = NULL;

          if (status_member == MEMBER_OK)
            {
              g_autoptr(GBytes) body = result_error_body (text, api_type);

              failure = mend_failure_new_from_http ((guint) status, NULL, body);
            }
          else
            failure = mend_failure_new_from_text (text);
          take_limit_reset (self, failure);
        }
      /* A success with nothing in it: the Claude Code CLI ends so a turn
       * whose answers were empty, after asking again on its own
       * ("[Your previous response had no visible output…]"). */
      else if (!mend_turn_get_output_seen (turn) && result_is_empty (object))
        failure = mend_failure_new_empty_response ();

      end_attempt (self, turn, failure);
      return TRUE;
    }

  /* The agent's own turn ended, whether well or not: nothing to retry,
   * the app did not ask for it. */
  if (own_turn (self))
    {
      mend_chat_end_external_turn (fed_chat (self));
      return TRUE;
    }

  return FALSE;
}

static gboolean
handle_init (MendStreamObserver *self)
{
  /* With an app turn in flight, this is that turn starting. */
  MendChat *chat = fed_chat (self);

  if (chat == NULL || app_turn (self) != NULL || own_turn (self))
    return FALSE;

  mend_chat_begin_external_turn (chat);
  return own_turn (self);
}

static void
remember_other_task (MendStreamObserver *self,
                     const char         *task_id)
{
  if (task_id == NULL || task_id[0] == '\0')
    return;
  if (g_hash_table_size (self->other_tasks) >= MAX_OTHER_TASKS)
    g_hash_table_remove_all (self->other_tasks);
  g_hash_table_add (self->other_tasks, g_strdup (task_id));
}

static gboolean
is_other_task (MendStreamObserver *self,
               const char         *task_id)
{
  return task_id != NULL && g_hash_table_contains (self->other_tasks, task_id);
}

/* system/background_tasks_changed lists the tasks that run, with their
 * types: the shell commands among them are not subagents. */
static void
handle_background_tasks (MendStreamObserver *self,
                         JsonObject         *object)
{
  JsonNode *tasks = json_object_get_member (object, "tasks");
  JsonArray *array;

  if (tasks == NULL || !JSON_NODE_HOLDS_ARRAY (tasks))
    return;

  array = json_node_get_array (tasks);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      const char *task_id = NULL;
      const char *task_type = NULL;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      if (get_string (json_node_get_object (node), "task_id", &task_id) == MEMBER_OK &&
          get_string (json_node_get_object (node), "task_type", &task_type) == MEMBER_OK &&
          strstr (task_type, "agent") == NULL)
        remember_other_task (self, task_id);
    }
}

static gboolean
handle_task_started (MendStreamObserver  *self,
                     JsonObject          *object,
                     const char         **bad)
{
  const char *task_id = NULL;
  const char *tool_use_id = NULL;
  const char *description = NULL;
  const char *parent = NULL;
  const char *task_type = NULL;
  MendSubagentRetry *retry;
  Member parent_member;

  if (get_string (object, "task_id", &task_id) != MEMBER_OK || task_id[0] == '\0')
    return (*bad = "task_started without a task_id string", FALSE);
  if (get_string (object, "task_type", &task_type) == MEMBER_BAD)
    return (*bad = "task_type is not a string", FALSE);

  /* A background shell command (local_bash) is a task, not a subagent;
   * agents are local_agent, remote_agent and the like. */
  if (task_type != NULL && strstr (task_type, "agent") == NULL)
    {
      remember_other_task (self, task_id);
      return FALSE;
    }
  if (get_string (object, "tool_use_id", &tool_use_id) == MEMBER_BAD)
    return (*bad = "tool_use_id is not a string", FALSE);
  if (get_string (object, "description", &description) == MEMBER_BAD)
    return (*bad = "description is not a string", FALSE);
  parent_member = get_string (object, "parent_tool_use_id", &parent);
  if (parent_member == MEMBER_BAD)
    return (*bad = "parent_tool_use_id is not a string", FALSE);
  /* Claude Code 2.1.332 names a subagent's own subagent by the task that
   * spawned it (parent_task_id, spawn_depth 2): that one's parent
   * resumes it, not the chat. */
  if (parent_member == MEMBER_ABSENT)
    parent_member = get_string (object, "parent_task_id", &parent);
  if (parent_member == MEMBER_BAD)
    return (*bad = "parent_task_id is not a string", FALSE);
  if (parent_member == MEMBER_OK)
    {
      remember_other_task (self, task_id);
      return FALSE;
    }

  if (tool_use_id == NULL || tool_use_id[0] == '\0')
    tool_use_id = task_id;

  retry = subagents (self);
  return retry != NULL && mend_subagent_retry_note_started (retry, tool_use_id, task_id, description) != NULL;
}

/* A subagent ended: failed with @failure_text, or @state. It is found by
 * its agent id (@task_id) or by its id (@id: the call that spawned it, or
 * the task's when the line names no call), whichever the chat knows. One
 * whose start was not seen and that failed is made of those two; a line
 * that names no id (a task_updated patch) ends only a subagent known. */
static gboolean
end_subagent (MendStreamObserver *self,
              const char         *task_id,
              const char         *id,
              MendSubagentState   state,
              const char         *failure_text)
{
  g_autoptr(MendFailure) failure = NULL;
  MendSubagentRetry *retry;

  if (state == MEND_SUBAGENT_FAILED)
    {
      failure = mend_failure_new_from_text (failure_text);
      take_limit_reset (self, failure);
    }

  retry = subagents (self);
  return retry != NULL && mend_subagent_retry_task_ended (retry, id, task_id, NULL, state, failure);
}

static gboolean
handle_task_notification (MendStreamObserver  *self,
                          JsonObject          *object,
                          const char         **bad)
{
  const char *task_id = NULL;
  const char *tool_use_id = NULL;
  const char *status = NULL;
  const char *summary = NULL;
  const char *task_type = NULL;

  if (get_string (object, "task_id", &task_id) == MEMBER_BAD ||
      get_string (object, "tool_use_id", &tool_use_id) == MEMBER_BAD ||
      ((task_id == NULL || task_id[0] == '\0') && (tool_use_id == NULL || tool_use_id[0] == '\0')))
    return (*bad = "task_notification without a task_id or tool_use_id string", FALSE);
  if (task_id != NULL && task_id[0] == '\0')
    task_id = NULL;
  if (tool_use_id != NULL && tool_use_id[0] == '\0')
    tool_use_id = NULL;
  if (get_string (object, "status", &status) != MEMBER_OK)
    return (*bad = "task_notification without a status string", FALSE);
  if (get_string (object, "summary", &summary) == MEMBER_BAD)
    return (*bad = "summary is not a string", FALSE);
  if (get_string (object, "task_type", &task_type) == MEMBER_BAD)
    return (*bad = "task_type is not a string", FALSE);

  /* A shell command's end is not a subagent's. */
  if (task_type != NULL && strstr (task_type, "agent") == NULL)
    {
      remember_other_task (self, task_id);
      return FALSE;
    }
  if (is_other_task (self, task_id))
    return FALSE;

  if (g_str_equal (status, "failed"))
    return end_subagent (self, task_id, tool_use_id ? tool_use_id : task_id, MEND_SUBAGENT_FAILED, summary);
  if (g_str_equal (status, "completed"))
    return end_subagent (self, task_id, tool_use_id ? tool_use_id : task_id, MEND_SUBAGENT_COMPLETED, NULL);
  if (g_str_equal (status, "stopped") || g_str_equal (status, "killed"))
    return end_subagent (self, task_id, tool_use_id ? tool_use_id : task_id, MEND_SUBAGENT_CANCELLED, NULL);

  return FALSE;
}

static gboolean
handle_task_updated (MendStreamObserver  *self,
                     JsonObject          *object,
                     const char         **bad)
{
  const char *task_id = NULL;
  const char *status = NULL;
  const char *text = NULL;
  JsonNode *patch_node;
  JsonObject *patch;
  Member status_member;

  if (get_string (object, "task_id", &task_id) != MEMBER_OK || task_id[0] == '\0')
    return (*bad = "task_updated without a task_id string", FALSE);
  if (is_other_task (self, task_id))
    return FALSE;

  patch_node = json_object_get_member (object, "patch");
  if (patch_node == NULL || !JSON_NODE_HOLDS_OBJECT (patch_node))
    return (*bad = "task_updated without a patch object", FALSE);
  patch = json_node_get_object (patch_node);

  status_member = get_string (patch, "status", &status);
  if (status_member == MEMBER_BAD)
    return (*bad = "patch status is not a string", FALSE);
  if (status_member == MEMBER_ABSENT)
    return FALSE;

  if (g_str_equal (status, "completed"))
    return end_subagent (self, task_id, NULL, MEND_SUBAGENT_COMPLETED, NULL);
  if (g_str_equal (status, "stopped") ||
      g_str_equal (status, "killed") ||
      g_str_equal (status, "cancelled"))
    return end_subagent (self, task_id, NULL, MEND_SUBAGENT_CANCELLED, NULL);
  if (g_str_equal (status, "failed"))
    {
      if (get_string (patch, "error", &text) != MEMBER_OK)
        get_string (patch, "summary", &text);
      return end_subagent (self, task_id, NULL, MEND_SUBAGENT_FAILED, text);
    }

  return FALSE;
}

/* The most of the agent's error an agent-status quotes. */
#define AGENT_STATUS_MAX_ERROR_BYTES 200

static gboolean
handle_api_retry (MendStreamObserver  *self,
                  JsonObject          *object,
                  const char         **bad)
{
  gint64 attempt = 0;
  gint64 max_retries = 0;
  gint64 delay_ms = 0;
  gint64 status = 0;
  const char *error = NULL;
  MendTurn *turn;
  g_autofree char *text = NULL;
  g_autofree char *shown = NULL;

  if (get_int (object, "attempt", &attempt) != MEMBER_OK || attempt < 1 || attempt > G_MAXUINT)
    return (*bad = "api_retry without an attempt number", FALSE);
  if (get_int (object, "max_retries", &max_retries) == MEMBER_BAD || max_retries < 0 || max_retries > G_MAXUINT)
    return (*bad = "max_retries is not a count", FALSE);
  if (get_int (object, "retry_delay_ms", &delay_ms) == MEMBER_BAD || delay_ms < 0 || delay_ms > G_MAXUINT)
    return (*bad = "retry_delay_ms is not a delay", FALSE);
  /* null when no HTTP status came, as for a refused connection. */
  if (get_int (object, "error_status", &status) == MEMBER_BAD || status < 0 || status > 599)
    return (*bad = "error_status is not an HTTP status", FALSE);
  if (get_string (object, "error", &error) == MEMBER_BAD)
    return (*bad = "error is not a string", FALSE);

  /* The agent's error may quote its request: redacted, and, in the
   * status, cut short. */
  shown = mend_redact_secrets (error, -1);
  turn = running_turn (self);

  if (turn != NULL)
    {
      g_autofree char *quoted = shown ? mend_redact_head (shown, -1, AGENT_STATUS_MAX_ERROR_BYTES) : NULL;

      if (status > 0 && max_retries > 0)
        /* Translators: the agent retries on its own: HTTP status, retry, of. */
        text = g_strdup_printf (_("Claude Code is retrying (%u, %u of %u)"),
                                (guint) status, (guint) attempt, (guint) max_retries);
      else if (max_retries > 0)
        /* Translators: the agent retries on its own: error, retry, of. */
        text = g_strdup_printf (_("Claude Code is retrying (%s, %u of %u)"),
                                quoted ? quoted : _("error"), (guint) attempt, (guint) max_retries);
      else
        text = g_strdup (_("Claude Code is retrying"));
      mend_turn_set_agent_status (turn, text);
    }

  g_signal_emit (self, signals[AGENT_RETRY], 0, turn,
                 (guint) attempt, (guint) max_retries, (guint) status,
                 shown, (guint) delay_ms);

  return turn != NULL;
}

static gboolean
handle_line (MendStreamObserver *self,
             const char         *line,
             gsize               length)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *object;
  const char *type = NULL;
  const char *subtype = NULL;
  const char *bad = NULL;
  gboolean changed = FALSE;

  if (!g_utf8_validate_len (line, length, NULL))
    {
      ignore_line (self, "not UTF-8", line, length);
      return FALSE;
    }

  self->n_parsed++;
  root = mend_json_parse (line, length, &error);
  if (root == NULL)
    {
      ignore_line (self, error->message, line, length);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      ignore_line (self, "not an object", line, length);
      return FALSE;
    }

  object = json_node_get_object (root);
  if (get_string (object, "type", &type) != MEMBER_OK)
    {
      ignore_line (self, "no type string", line, length);
      return FALSE;
    }

  /* The chat's signal handlers may drop the app's last reference. */
  g_object_ref (self);

  if (g_str_equal (type, "result"))
    changed = handle_result (self, object, &bad);
  else if (g_str_equal (type, "rate_limit_event"))
    handle_rate_limit_event (self, object, &bad);
  else if (g_str_equal (type, "system"))
    {
      if (get_string (object, "subtype", &subtype) != MEMBER_OK)
        bad = "system line without a subtype string";
      else if (g_str_equal (subtype, "init"))
        changed = handle_init (self);
      else if (g_str_equal (subtype, "task_started"))
        changed = handle_task_started (self, object, &bad);
      else if (g_str_equal (subtype, "task_notification"))
        changed = handle_task_notification (self, object, &bad);
      else if (g_str_equal (subtype, "task_updated"))
        changed = handle_task_updated (self, object, &bad);
      else if (g_str_equal (subtype, "api_retry"))
        changed = handle_api_retry (self, object, &bad);
      else if (g_str_equal (subtype, "background_tasks_changed"))
        handle_background_tasks (self, object);
    }

  if (bad != NULL)
    ignore_line (self, bad, line, length);

  g_object_unref (self);

  return changed;
}

static void
mend_stream_observer_constructed (GObject *object)
{
  MendStreamObserver *self = (MendStreamObserver *) object;

  G_OBJECT_CLASS (mend_stream_observer_parent_class)->constructed (object);

  if (self->chat != NULL)
    {
      mend_chat_reader_attached (self->chat, TRUE);
      self->reads_for_chat = TRUE;
    }
}

/* The app may keep an agent's observer after the agent is gone: it feeds
 * nothing then. */
static void
on_sender_gone (gpointer  data,
                GObject  *where_the_object_was)
{
  MendStreamObserver *self = data;

  self->sender = NULL;
  g_clear_weak_pointer (&self->sender_turn);
}

static gboolean
reader_left (gpointer chat)
{
  mend_chat_reader_attached (chat, FALSE);
  return G_SOURCE_REMOVE;
}

static void
mend_stream_observer_dispose (GObject *object)
{
  MendStreamObserver *self = (MendStreamObserver *) object;

  /* The chat hears it on its own thread, even when the observer's last
   * reference went on another. */
  if (self->reads_for_chat)
    {
      self->reads_for_chat = FALSE;
      mend_owner_invoke (&self->owner, reader_left, g_object_ref (self->chat), g_object_unref);
    }
  g_clear_object (&self->chat);
  if (self->sender != NULL)
    g_object_weak_unref (G_OBJECT (self->sender), on_sender_gone, self);
  self->sender = NULL;
  g_clear_weak_pointer (&self->sender_turn);
  g_clear_weak_pointer (&self->streamed_turn);
  g_clear_pointer (&self->other_tasks, g_hash_table_unref);

  G_OBJECT_CLASS (mend_stream_observer_parent_class)->dispose (object);
}

static void
mend_stream_observer_finalize (GObject *object)
{
  MendStreamObserver *self = (MendStreamObserver *) object;

  mend_owner_clear (&self->owner);

  G_OBJECT_CLASS (mend_stream_observer_parent_class)->finalize (object);
}

static void
mend_stream_observer_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  MendStreamObserver *self = MEND_STREAM_OBSERVER (object);

  switch (prop_id)
    {
    case PROP_CHAT:
      g_value_set_object (value, self->chat);
      break;
    case PROP_MAX_LINE_BYTES:
      g_value_set_uint (value, self->max_line_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_stream_observer_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  MendStreamObserver *self = MEND_STREAM_OBSERVER (object);

  switch (prop_id)
    {
    case PROP_CHAT:
      self->chat = g_value_dup_object (value);
      break;
    case PROP_MAX_LINE_BYTES:
      mend_stream_observer_set_max_line_bytes (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_stream_observer_class_init (MendStreamObserverClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_stream_observer_constructed;
  object_class->dispose = mend_stream_observer_dispose;
  object_class->finalize = mend_stream_observer_finalize;
  object_class->get_property = mend_stream_observer_get_property;
  object_class->set_property = mend_stream_observer_set_property;

  /**
   * MendStreamObserver:chat:
   *
   * The chat the stream feeds.
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendStreamObserver:max-line-bytes:
   *
   * The longest line, without its line end, that is looked at. Longer
   * lines are never parsed, and [method@Mend.StreamObserver.watch_async]
   * skips them without holding them in memory.
   */
  properties[PROP_MAX_LINE_BYTES] =
    g_param_spec_uint ("max-line-bytes", NULL, NULL,
                       1, G_MAXINT, MEND_STREAM_OBSERVER_DEFAULT_MAX_LINE_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendStreamObserver::agent-retry:
   * @self: the observer
   * @turn: (nullable): the app's turn whose attempt the agent retries, or
   *   %NULL when it retries in a turn of its own
   * @attempt: the agent's retry, from 1
   * @max_retries: how many retries the agent makes before it gives up
   * @status: the HTTP status it retries on, or 0 when there was none
   * @error: (nullable): the agent's name for the error, such as
   *   "overloaded" or "rate_limit", with credentials redacted
   * @delay_ms: how long the agent waits before this retry
   *
   * The agent retries a request on its own (a `system`/`api_retry` line),
   * before libmend sees any failure. The turn's
   * [property@Mend.Turn:agent-status] says the same in words, quoting at
   * most 200 bytes of @error.
   */
  signals[AGENT_RETRY] =
    g_signal_new ("agent-retry",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 6,
                  MEND_TYPE_TURN, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT,
                  G_TYPE_STRING, G_TYPE_UINT);
}

static void
mend_stream_observer_init (MendStreamObserver *self)
{
  mend_owner_init (&self->owner);
  self->max_line_bytes = MEND_STREAM_OBSERVER_DEFAULT_MAX_LINE_BYTES;
  self->other_tasks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/**
 * mend_stream_observer_new:
 * @chat: the chat to feed
 *
 * Creates an observer that feeds @chat from the agent's stream-json
 * output.
 *
 * Returns: (transfer full): a new observer
 */
MendStreamObserver *
mend_stream_observer_new (MendChat *chat)
{
  g_return_val_if_fail (MEND_IS_CHAT (chat), NULL);

  return g_object_new (MEND_TYPE_STREAM_OBSERVER, "chat", chat, NULL);
}

/**
 * mend_stream_observer_get_chat:
 * @self: an observer
 *
 * Gets the chat the observer was made for with
 * [ctor@Mend.StreamObserver.new]. The observer of a [class@Mend.AgentProcess]
 * has none: it tells the chat whose sender the process is.
 *
 * Returns: (transfer none) (nullable): the chat, or %NULL
 */
MendChat *
mend_stream_observer_get_chat (MendStreamObserver *self)
{
  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->chat;
}

/**
 * mend_stream_observer_get_max_line_bytes:
 * @self: an observer
 *
 * Gets the longest line that is looked at.
 *
 * Returns: the limit in bytes
 */
guint
mend_stream_observer_get_max_line_bytes (MendStreamObserver *self)
{
  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_line_bytes;
}

/**
 * mend_stream_observer_set_max_line_bytes:
 * @self: an observer
 * @max_line_bytes: the limit in bytes, from 1 to %G_MAXINT
 *
 * Sets the longest line that is looked at; longer lines are ignored
 * without a parse.
 */
void
mend_stream_observer_set_max_line_bytes (MendStreamObserver *self,
                                         guint               max_line_bytes)
{
  g_return_if_fail (MEND_IS_STREAM_OBSERVER (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_line_bytes >= 1 && max_line_bytes <= G_MAXINT);

  if (self->max_line_bytes != max_line_bytes)
    {
      self->max_line_bytes = max_line_bytes;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_LINE_BYTES]);
    }
}

guint64
mend_stream_observer_get_n_lines (MendStreamObserver *self)
{
  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->n_lines;
}

guint64
mend_stream_observer_get_n_parsed (MendStreamObserver *self)
{
  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->n_parsed;
}

guint64
mend_stream_observer_get_n_ignored (MendStreamObserver *self)
{
  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->n_ignored;
}

MendStreamObserver *
mend_stream_observer_new_for_sender (MendSender *sender)
{
  MendStreamObserver *self = g_object_new (MEND_TYPE_STREAM_OBSERVER, NULL);

  self->sender = sender;
  self->for_sender = TRUE;
  g_object_weak_ref (G_OBJECT (sender), on_sender_gone, self);
  return self;
}

void
mend_stream_observer_set_sender_turn (MendStreamObserver *self,
                                      MendTurn           *turn)
{
  g_assert (self->sender != NULL);

  g_set_weak_pointer (&self->sender_turn, turn);
}

/* The app's attempt in flight can never get its result, as when the agent
 * crashed: it fails as a dropped connection (retried unless output was
 * seen), and the agent's own turn is over. */
void
mend_stream_observer_end_of_output (MendStreamObserver *self)
{
  MendTurn *turn;

  if (self->chat == NULL && self->sender == NULL)
    return;

  turn = app_turn (self);
  g_object_ref (self);

  if (turn != NULL && mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    {
      g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                                                     _("The agent's output ended before the turn's result"));
      g_autoptr(MendFailure) failure = mend_failure_new_from_error (error);

      end_attempt (self, turn, failure);
    }

  mend_stream_observer_end_own_turn (self);

  g_object_unref (self);
}

void
mend_stream_observer_end_own_turn (MendStreamObserver *self)
{
  if (own_turn (self))
    mend_chat_end_external_turn (fed_chat (self));
}

void
mend_stream_observer_set_attempt_func (MendStreamObserver            *self,
                                       MendStreamObserverAttemptFunc  func,
                                       gpointer                       user_data)
{
  g_return_if_fail (MEND_IS_STREAM_OBSERVER (self));
  mend_return_if_not_owner (&self->owner, self);

  self->attempt_func = func;
  self->attempt_data = user_data;
}

/* A line over the limit, skipped as it streamed by. */
void
mend_stream_observer_skip_line (MendStreamObserver *self,
                                const guint8       *start,
                                gsize               length)
{
  self->n_lines++;
  ignore_line (self, "longer than max-line-bytes", (const char *) start, length);
}

/* One watch at a time: FALSE if @watching is TRUE and one runs. */
gboolean
mend_stream_observer_set_watching (MendStreamObserver *self,
                                   gboolean            watching)
{
  if (watching && self->watching)
    return FALSE;

  self->watching = watching;
  return TRUE;
}

/**
 * mend_stream_observer_feed_line:
 * @self: an observer
 * @line: one line of stream-json
 * @length: the length of @line in bytes, or -1 if it is nul-terminated
 *
 * Feeds one line of the agent's output to the chat. A trailing `"\n"` or
 * `"\r\n"` is allowed. Lines that cannot matter, token deltas above all,
 * are rejected by a byte scan, without a parse (unless the text is
 * listened to: see [signal@Mend.Turn::text-delta]).
 *
 * Returns: %TRUE if the line changed the chat: a turn ended, the agent's
 *   own turn began or ended, or a subagent started, ended or failed
 */
gboolean
mend_stream_observer_feed_line (MendStreamObserver *self,
                                const char         *line,
                                gssize              length)
{
  g_autofree char *plain = NULL;
  gsize len;

  g_return_val_if_fail (MEND_IS_STREAM_OBSERVER (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (line != NULL || length == 0, FALSE);
  g_return_val_if_fail (self->chat != NULL || self->for_sender, FALSE);

  if (line == NULL)
    line = "";
  len = length < 0 ? strlen (line) : (gsize) length;

  if (len > 0 && line[len - 1] == '\n')
    len--;
  if (len > 0 && line[len - 1] == '\r')
    len--;

  self->n_lines++;

  if (len > self->max_line_bytes)
    {
      ignore_line (self, "longer than max-line-bytes", line, len);
      return FALSE;
    }

  /* Written with escapes no writer needs, it is read as if written
   * plainly: the scans below look for names and values by their bytes. */
  if ((plain = mend_json_plain_escapes (line, len)) != NULL)
    {
      line = plain;
      len = strlen (plain);
    }

  note_output (self, line, len);
  add_text (self, line, len);

  if (!might_matter (line, len))
    return FALSE;

  return handle_line (self, line, len);
}
