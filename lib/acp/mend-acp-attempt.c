/* mend-acp-attempt.c — what the prompt of an ACP attempt brought: output, or the agent's error text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The session updates of the prompt in flight, read for the turn: the
 * model's output (which marks the turn's output as seen and feeds its
 * text stream), the agent's notices and error text (which are neither),
 * and what the updates say of the prompt's state (codex-acp's thread
 * failed; the agent retries on its own, shown as the turn's agent
 * status).
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-acp-agent-private.h"
#include "mend-acp-attempt-private.h"
#include "mend-acp-failure-private.h"
#include "mend-acp-profile-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
#include "mend-turn-private.h"

struct _MendAcpAttempt
{
  gboolean  output;        /* the model's output was seen */
  GString  *held;          /* message chunks that may be the agent's error */
  char     *held_id;       /* their messageId */
  gboolean  system_error;  /* the agent said its thread failed */
};

MendAcpAttempt *
mend_acp_attempt_new (void)
{
  MendAcpAttempt *self = g_new0 (MendAcpAttempt, 1);

  self->held = g_string_new (NULL);
  return self;
}

void
mend_acp_attempt_free (MendAcpAttempt *self)
{
  if (self == NULL)
    return;
  g_string_free (self->held, TRUE);
  g_free (self->held_id);
  g_free (self);
}

static void
drop_held (MendAcpAttempt *self)
{
  g_string_truncate (self->held, 0);
  g_clear_pointer (&self->held_id, g_free);
}

void
mend_acp_attempt_reset (MendAcpAttempt *self)
{
  self->output = FALSE;
  self->system_error = FALSE;
  drop_held (self);
}

gboolean
mend_acp_attempt_get_output (MendAcpAttempt *self)
{
  return self->output;
}

static gboolean
is_text (JsonObject *update)
{
  const char *kind = mend_json_get_string (update, "sessionUpdate");

  return g_strcmp0 (kind, "agent_message_chunk") == 0 || g_strcmp0 (kind, "agent_thought_chunk") == 0;
}

static void
add_text (MendTurn   *turn,
          JsonObject *update)
{
  JsonObject *content = mend_json_get_object (update, "content");
  const char *text = content != NULL ? mend_json_get_string (content, "text") : NULL;

  if (text != NULL && g_strcmp0 (mend_json_get_string (content, "type"), "text") == 0)
    mend_turn_add_text (turn, text);
}

/* A message chunk that is the agent's own notice (its profile says), not
 * the model's output. */
static gboolean
is_notice (MendAcpProfile *profile,
           JsonObject     *update)
{
  JsonObject *content = mend_json_get_object (update, "content");
  const char *text = content ? mend_json_get_string (content, "text") : NULL;

  return profile != NULL && text != NULL &&
         g_strcmp0 (mend_json_get_string (update, "sessionUpdate"), "agent_message_chunk") == 0 &&
         mend_acp_profile_is_notice (profile, text);
}

/* Chunks that are the agent's error, not the model's output: those after
 * the agent said its thread failed (codex-acp's threadStatus
 * "systemError"), those that begin as its errors do (its profile says),
 * and those that go on the same message. They are held: an error answer
 * or a failure drops them; the prompt's plain end makes them its failure
 * (codex-acp ends a failed prompt so) where nothing else came or the
 * thread failed, and drops them after an answer (claude-agent-acp's error
 * of a background turn of its own, after the answer); output after them
 * lets them go as output after all. */
static gboolean
is_error_chunk (MendAcpAttempt *self,
                MendAcpProfile *profile,
                JsonObject     *update)
{
  JsonObject *content = mend_json_get_object (update, "content");
  const char *text = content ? mend_json_get_string (content, "text") : NULL;
  const char *id = mend_json_get_string (update, "messageId");

  if (text == NULL || g_strcmp0 (mend_json_get_string (update, "sessionUpdate"), "agent_message_chunk") != 0)
    return FALSE;
  if (self->system_error)
    return TRUE;
  if (self->held->len > 0)
    return id != NULL && g_strcmp0 (id, self->held_id) == 0;
  return profile != NULL && mend_acp_profile_is_error (profile, text);
}

/* Holds the chunk, or returns FALSE when it is no error after all: words
 * that go on past the bound of an error's text are the model's (held,
 * they would be lost), unless the agent said its thread failed, when the
 * rest is not read. */
static gboolean
hold (MendAcpAttempt *self,
      JsonObject     *update)
{
  JsonObject *content = mend_json_get_object (update, "content");
  const char *text = mend_json_get_string (content, "text");
  gsize n = strlen (text);

  if (self->held->len + n > MEND_ACP_AGENT_MAX_HELD_BYTES)
    {
      const char *end = text + (MEND_ACP_AGENT_MAX_HELD_BYTES - MIN (self->held->len, MEND_ACP_AGENT_MAX_HELD_BYTES));

      if (!self->system_error)
        return FALSE;
      /* Cut where a character ends. */
      while (end > text && (*end & 0xc0) == 0x80)
        end--;
      n = end - text;
    }
  if (self->held->len == 0)
    {
      g_free (self->held_id);
      self->held_id = g_strdup (mend_json_get_string (update, "messageId"));
    }
  g_string_append_len (self->held, text, n);
  return TRUE;
}

/* Held chunks were output after all: more output came. */
static void
release_held (MendAcpAttempt *self,
              MendAcpProfile *profile,
              MendTurn       *turn)
{
  g_autofree char *text = NULL;

  if (self->held->len == 0)
    return;
  text = g_strdup (self->held->str);
  drop_held (self);
  self->output = TRUE;
  if (profile == NULL || !mend_acp_profile_get_restreams_partial (profile))
    mend_turn_note_output (turn);
  mend_turn_add_text (turn, text);
}

static void
note_output (MendAcpAttempt *self,
             MendAcpProfile *profile,
             MendTurn       *turn,
             JsonObject     *update)
{
  const char *kind = mend_json_get_string (update, "sessionUpdate");

  release_held (self, profile, turn);
  self->output = TRUE;
  /* An agent that answers each attempt from the start: its text alone
   * does not make a failure partial. */
  if (!is_text (update) || profile == NULL || !mend_acp_profile_get_restreams_partial (profile))
    mend_turn_note_output (turn);
  /* The answer's text (not the agent's thoughts), to the turn's stream
   * that every sender feeds. */
  if (g_strcmp0 (kind, "agent_message_chunk") == 0)
    add_text (turn, update);
}

/* What an update says of the prompt's state: codex-acp's thread status
 * "systemError", and the agent's own retries (a typed failure's warning,
 * codex-acp's "Reconnecting… n/m" error that will be retried), which the
 * turn shows as its agent status. */
static void
note_state (MendAcpAttempt *self,
            MendTurn       *turn,
            JsonObject     *update)
{
  JsonObject *meta = mend_json_get_object (update, "_meta");
  JsonObject *codex = meta ? mend_json_get_object (meta, "codex") : NULL;
  JsonObject *status = codex ? mend_json_get_object (codex, "threadStatus") : NULL;
  JsonObject *error = codex ? mend_json_get_object (codex, "error") : NULL;
  JsonObject *session_failure = mend_acp_session_failure_get (update);
  const char *retrying = NULL;

  if (status != NULL && g_strcmp0 (mend_json_get_string (status, "type"), "systemError") == 0)
    self->system_error = TRUE;

  if (session_failure != NULL && mend_acp_session_failure_is_warning (session_failure))
    retrying = mend_json_get_string (session_failure, "title");
  else if (error != NULL && json_object_has_member (error, "willRetry") &&
           JSON_NODE_HOLDS_VALUE (json_object_get_member (error, "willRetry")) &&
           json_object_get_boolean_member (error, "willRetry"))
    retrying = mend_json_get_string (error, "message");
  if (retrying != NULL)
    {
      g_autofree char *shown = mend_redact_head (retrying, -1, MEND_ACP_AGENT_MAX_STATUS_BYTES);
      g_autofree char *text = NULL;

      /* Translators: the agent retries on its own; %s is what it said. */
      text = g_strdup_printf (_("The agent is retrying (%s)"), shown);
      mend_turn_set_agent_status (turn, text);
    }
}

void
mend_acp_attempt_feed (MendAcpAttempt *self,
                       MendAcpProfile *profile,
                       MendTurn       *turn,
                       JsonObject     *update)
{
  note_state (self, turn, update);
  if (!mend_acp_update_is_output (update) || is_notice (profile, update) || mend_acp_update_is_subagents (update))
    return;
  if (!is_error_chunk (self, profile, update) || !hold (self, update))
    note_output (self, profile, turn, update);
}

MendFailure *
mend_acp_attempt_end (MendAcpAttempt *self,
                      const char     *stop_reason)
{
  MendFailure *failure = NULL;

  /* Unless the model answered and the agent's thread did not fail. */
  if (self->held->len > 0 && (self->system_error || !self->output) &&
      (g_strcmp0 (stop_reason, "end_turn") == 0 || g_strcmp0 (stop_reason, "max_tokens") == 0))
    failure = mend_failure_new_from_text (self->held->str);
  else if (self->held->len > 0 && stop_reason != NULL)
    mend_debug ("The agent's error text after its answer is not the answer's: %s", self->held->str);
  drop_held (self);
  return failure;
}
