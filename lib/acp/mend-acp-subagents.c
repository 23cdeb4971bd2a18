/* mend-acp-subagents.c — subagents read from ACP session updates, for MendSubagentRetry
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Subagents in Agent Client Protocol updates, for the chat's
 * MendSubagentRetry. The shapes read are listed in docs/overview.md.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-acp-agent-private.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-subagent-retry-private.h"

/* The most Task calls remembered; past that the table starts again. */
#define MAX_TASK_CALLS 256

/* A Task call seen in the updates. */
typedef struct
{
  char     *description;
  gboolean  background;         /* launched to run on after its call */
  gboolean  failed;
  gboolean  delegated;          /* the Gemini CLI's, not a Task call */
} TaskCall;

/* The most of a subagent's words kept to say why it failed. */
#define MAX_SUBAGENT_TEXT_BYTES 4096

struct _MendAcpSubagents
{
  GHashTable *tasks;            /* toolCallId → TaskCall */
  GHashTable *sessions;         /* a subagent's session id → the last words it wrote */
};

static void
task_call_free (TaskCall *call)
{
  g_free (call->description);
  g_free (call);
}

MendAcpSubagents *
mend_acp_subagents_new (void)
{
  MendAcpSubagents *subagents = g_new0 (MendAcpSubagents, 1);

  subagents->tasks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) task_call_free);
  subagents->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return subagents;
}

void
mend_acp_subagents_free (MendAcpSubagents *subagents)
{
  if (subagents == NULL)
    return;

  g_hash_table_unref (subagents->tasks);
  g_hash_table_unref (subagents->sessions);
  g_free (subagents);
}

gboolean
mend_acp_update_is_output (JsonObject *update)
{
  const char *kind = mend_json_get_string (update, "sessionUpdate");

  /* Claude Code's adapter starts a message with an empty chunk. */
  if (g_strcmp0 (kind, "agent_message_chunk") == 0 ||
      g_strcmp0 (kind, "agent_thought_chunk") == 0)
    {
      JsonObject *content = mend_json_get_object (update, "content");
      const char *text = content ? mend_json_get_string (content, "text") : NULL;

      return content != NULL && (text == NULL || text[0] != '\0');
    }

  return g_strcmp0 (kind, "tool_call") == 0 ||
         g_strcmp0 (kind, "tool_call_update") == 0 ||
         g_strcmp0 (kind, "plan") == 0;
}

gboolean
mend_acp_update_is_subagents (JsonObject *update)
{
  JsonObject *meta = mend_json_get_object (update, "_meta");
  JsonObject *claude = meta ? mend_json_get_object (meta, "claudeCode") : NULL;

  /* claude-agent-acp marks what a subagent writes with the Task call it
   * runs under: not the answer of the prompt. */
  return claude != NULL && mend_json_get_string (claude, "parentToolUseId") != NULL &&
         g_strcmp0 (mend_json_get_string (update, "sessionUpdate"), "agent_message_chunk") == 0;
}

/* The text of a tool call's content blocks, for a failure. */
static char *
content_text (JsonObject *update)
{
  JsonNode *content = json_object_get_member (update, "content");
  GString *s = g_string_new (NULL);

  if (content != NULL && JSON_NODE_HOLDS_ARRAY (content))
    {
      JsonArray *array = json_node_get_array (content);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *node = json_array_get_element (array, i);
          JsonObject *item = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
          JsonObject *inner = item ? mend_json_get_object (item, "content") : NULL;
          const char *text = inner ? mend_json_get_string (inner, "text") : NULL;

          if (text != NULL)
            {
              if (s->len > 0)
                g_string_append_c (s, '\n');
              g_string_append (s, text);
            }
        }
    }

  if (s->len == 0)
    {
      const char *raw = mend_json_get_string (update, "rawOutput");

      g_string_append (s, raw ? raw : _("The subagent failed"));
    }

  return g_string_free (s, FALSE);
}

/* The text of a subagent that ended on an upstream error, as Claude Code
 * reports it in a foreground Task's response: every text block is its
 * synthetic "API Error: …" message. NULL for any other response. */
static char *
api_error_text (JsonObject *response)
{
  JsonNode *content = json_object_get_member (response, "content");
  JsonArray *array;
  GString *s;

  if (g_strcmp0 (mend_json_get_string (response, "status"), "completed") != 0 ||
      content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return NULL;

  array = json_node_get_array (content);
  s = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      JsonObject *block = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const char *text = block ? mend_json_get_string (block, "text") : NULL;

      if (text == NULL || !g_str_has_prefix (text, "API Error: "))
        return (g_string_free (s, TRUE), NULL);
      if (s->len > 0)
        g_string_append_c (s, '\n');
      g_string_append (s, text);
    }

  if (s->len == 0)
    return (g_string_free (s, TRUE), NULL);
  return g_string_free (s, FALSE);
}

/* Claude Code through claude-code-acp: tool calls whose
 * _meta.claudeCode.toolName is Task (a subagent) or SendMessage (a resume). */
static void
feed_claude_code (MendAcpSubagents    *self,
                  MendSubagentRetry   *retry,
                  JsonObject          *update)
{
  JsonObject *meta = mend_json_get_object (update, "_meta");
  JsonObject *claude = meta ? mend_json_get_object (meta, "claudeCode") : NULL;
  JsonObject *response = claude ? mend_json_get_object (claude, "toolResponse") : NULL;
  JsonObject *input = mend_json_get_object (update, "rawInput");
  const char *tool = claude ? mend_json_get_string (claude, "toolName") : NULL;
  const char *id = mend_json_get_string (update, "toolCallId");
  const char *status = mend_json_get_string (update, "status");
  const char *kind = mend_json_get_string (update, "sessionUpdate");
  const char *description;
  const char *agent_id;
  TaskCall *call;

  if (id == NULL)
    return;

  if (g_strcmp0 (tool, "SendMessage") == 0)
    {
      const char *to = input ? mend_json_get_string (input, "to") : NULL;

      if (to != NULL)
        mend_subagent_retry_note_resumed (retry, to);
      return;
    }

  call = g_hash_table_lookup (self->tasks, id);
  if (call == NULL && (g_strcmp0 (tool, "Task") == 0 || g_strcmp0 (tool, "Agent") == 0))
    {
      if (g_hash_table_size (self->tasks) >= MAX_TASK_CALLS)
        g_hash_table_remove_all (self->tasks);
      call = g_new0 (TaskCall, 1);
      g_hash_table_insert (self->tasks, g_strdup (id), call);
    }
  if (call == NULL || call->delegated)
    return;

  /* The first tool_call may come with an empty rawInput and the tool's
   * name as its title; a later one has the description. */
  description = input ? mend_json_get_string (input, "description") : NULL;
  if (description == NULL && call->description == NULL && g_strcmp0 (kind, "tool_call") == 0)
    description = mend_json_get_string (update, "title");
  if (description != NULL)
    {
      g_free (call->description);
      call->description = g_strdup (description);
    }
  if (input != NULL && json_object_has_member (input, "run_in_background") &&
      JSON_NODE_HOLDS_VALUE (json_object_get_member (input, "run_in_background")) &&
      json_object_get_boolean_member (input, "run_in_background"))
    call->background = TRUE;
  if (response != NULL &&
      (json_object_has_member (response, "isAsync") ||
       g_strcmp0 (mend_json_get_string (response, "status"), "async_launched") == 0))
    call->background = TRUE;

  agent_id = response ? mend_json_get_string (response, "agentId") : NULL;
  if (agent_id != NULL)
    mend_subagent_retry_note_started (retry, id, agent_id, call->description);

  if (agent_id != NULL && !call->background)
    {
      g_autofree char *text = api_error_text (response);

      if (text != NULL)
        {
          g_autoptr(MendFailure) failure = mend_failure_new_from_text (text);

          call->failed = TRUE;
          mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_FAILED, failure);
        }
    }

  if (g_strcmp0 (status, "failed") == 0)
    {
      g_autofree char *text = content_text (update);
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (text);

      call->failed = TRUE;
      mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_FAILED, failure);
    }
  else if (g_strcmp0 (status, "completed") == 0 && !call->background && !call->failed)
    {
      /* A background launch completes at once; only a subagent that ran
       * in the foreground is done when its call is. */
      mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_COMPLETED, NULL);
    }
}

/* The Gemini CLI's subagents (0.61.0, REAL-AGENTS.md): an invoke_agent
 * call shows as a tool_call titled "Delegating to agent 'NAME'", then a
 * tool_call_update with its status. It names no id to resume by, and
 * reports a subagent that failed as completed (with empty content, the
 * failure going to the model only): the chat sees it start and end, and a
 * failure only if the agent ever says "failed". */
#define GEMINI_DELEGATING "Delegating to agent "

static void
feed_gemini (MendAcpSubagents    *self,
             MendSubagentRetry   *retry,
             JsonObject          *update)
{
  const char *id = mend_json_get_string (update, "toolCallId");
  const char *title = mend_json_get_string (update, "title");
  const char *status = mend_json_get_string (update, "status");
  TaskCall *call;

  if (id == NULL)
    return;

  call = g_hash_table_lookup (self->tasks, id);
  if (call != NULL && !call->delegated)
    return;
  if (call == NULL)
    {
      g_autofree char *name = NULL;

      if (title == NULL || !g_str_has_prefix (title, GEMINI_DELEGATING) ||
          g_strcmp0 (mend_json_get_string (update, "sessionUpdate"), "tool_call") != 0)
        return;
      if (g_hash_table_size (self->tasks) >= MAX_TASK_CALLS)
        g_hash_table_remove_all (self->tasks);
      name = g_strdup (title + strlen (GEMINI_DELEGATING));
      g_strstrip (name);
      /* 'codebase_investigator', quotes and all, as the agent writes it. */
      if (strlen (name) >= 2 && name[0] == '\'' && name[strlen (name) - 1] == '\'')
        {
          name[strlen (name) - 1] = '\0';
          memmove (name, name + 1, strlen (name));
        }
      call = g_new0 (TaskCall, 1);
      call->delegated = TRUE;
      call->description = g_strdup (name);
      g_hash_table_insert (self->tasks, g_strdup (id), call);
      mend_subagent_retry_note_started (retry, id, NULL, call->description);
    }

  /* Once ended, the call is forgotten, so that the table holds only the
   * delegations still running: one that runs on while the table fills
   * with ended ones is not forgotten with them, and would never end. */
  if (g_strcmp0 (status, "failed") == 0 && !call->failed)
    {
      g_autofree char *text = content_text (update);
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (text && *text ? text : _("The subagent failed"));

      call->failed = TRUE;
      mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_FAILED, failure);
      g_hash_table_remove (self->tasks, id);
    }
  else if (g_strcmp0 (status, "completed") == 0 && !call->failed)
    {
      mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_COMPLETED, NULL);
      g_hash_table_remove (self->tasks, id);
    }
}

/* A resumed subagent runs in a session of a new generation,
 * "ID:generation:2": the same subagent, ID. */
#define GENERATION_MARK ":generation:"

static char *
subagent_of_session (const char *session_id)
{
  const char *mark = strstr (session_id, GENERATION_MARK);

  return mark != NULL ? g_strndup (session_id, mark - session_id) : g_strdup (session_id);
}

/* A subagent's own session, whose updates are its own. */
static void
note_session (MendAcpSubagents *self,
              const char       *id)
{
  /* No subagent has a longer id (MendSubagentRetry ignores it): nor is
   * its session kept, whatever its size. */
  if (strlen (id) > MEND_SUBAGENT_MAX_ID_BYTES || g_hash_table_contains (self->sessions, id))
    return;
  if (g_hash_table_size (self->sessions) >= MAX_TASK_CALLS)
    g_hash_table_remove_all (self->sessions);
  g_hash_table_insert (self->sessions, g_strdup (id), g_strdup (""));
}

gboolean
mend_acp_subagents_feed_session (MendAcpSubagents *self,
                                 const char       *session_id,
                                 JsonObject       *update)
{
  JsonObject *content;
  const char *text;

  if (session_id == NULL || !g_hash_table_contains (self->sessions, session_id))
    return FALSE;

  content = mend_json_get_object (update, "content");
  text = content ? mend_json_get_string (content, "text") : NULL;
  if (text != NULL && *text != '\0' &&
      g_strcmp0 (mend_json_get_string (update, "sessionUpdate"), "agent_message_chunk") == 0)
    g_hash_table_insert (self->sessions, g_strdup (session_id), g_strndup (text, MAX_SUBAGENT_TEXT_BYTES));
  return TRUE;
}

/* The subagents of claude-agent-acp 0.101.0, to a client that advertises
 * them (REAL-AGENTS.md): subagent_update {sessionId, title, state: {state:
 * "running" | "idle", stopReason, error: {message}}}; with the
 * typed-failure extension, subagent_spawned {subagentSessionId, name} and
 * subagent_state_update {subagentSessionId, state: "failed" | …}, with no
 * words of why: the last chunk of the subagent's own session (its error,
 * "API Error: 503 …") says it. The session id is the agent id a resume
 * names. */
static void
feed_subagent_sessions (MendAcpSubagents  *self,
                        MendSubagentRetry *retry,
                        JsonObject        *update)
{
  const char *kind = mend_json_get_string (update, "sessionUpdate");
  JsonObject *state_object = mend_json_get_object (update, "state");
  g_autofree char *subagent = NULL;
  const char *id;
  const char *state;
  const char *stop_reason = NULL;
  const char *error = NULL;

  if (g_strcmp0 (kind, "subagent_update") == 0)
    {
      JsonObject *error_object = state_object ? mend_json_get_object (state_object, "error") : NULL;

      id = mend_json_get_string (update, "sessionId");
      state = state_object ? mend_json_get_string (state_object, "state") : NULL;
      stop_reason = state_object ? mend_json_get_string (state_object, "stopReason") : NULL;
      error = error_object ? mend_json_get_string (error_object, "message") : NULL;
      if (id != NULL && g_strcmp0 (state, "running") == 0)
        {
          note_session (self, id);
          subagent = subagent_of_session (id);
          mend_subagent_retry_note_started (retry, subagent, subagent, mend_json_get_string (update, "title"));
        }
    }
  else if (g_strcmp0 (kind, "subagent_spawned") == 0)
    {
      id = mend_json_get_string (update, "subagentSessionId");
      if (id != NULL)
        {
          note_session (self, id);
          subagent = subagent_of_session (id);
          mend_subagent_retry_note_started (retry, subagent, subagent, mend_json_get_string (update, "name"));
        }
      return;
    }
  else if (g_strcmp0 (kind, "subagent_state_update") == 0)
    {
      id = mend_json_get_string (update, "subagentSessionId");
      state = mend_json_get_string (update, "state");
    }
  else
    return;

  if (id == NULL || state == NULL)
    return;
  /* A running subagent_update named it above already. */
  if (subagent == NULL)
    subagent = subagent_of_session (id);

  if (g_strcmp0 (state, "failed") == 0 || g_strcmp0 (stop_reason, "error") == 0)
    {
      const char *last = g_hash_table_lookup (self->sessions, id);
      const char *words = error ? error : last != NULL && *last != '\0' ? last : _("The subagent failed");
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (words);

      mend_subagent_retry_task_ended (retry, subagent, subagent, NULL, MEND_SUBAGENT_FAILED, failure);
    }
  else if (g_strcmp0 (state, "cancelled") == 0 || g_strcmp0 (stop_reason, "cancelled") == 0)
    mend_subagent_retry_task_ended (retry, subagent, subagent, NULL, MEND_SUBAGENT_CANCELLED, NULL);
  else if (g_strcmp0 (state, "completed") == 0 || g_strcmp0 (state, "idle") == 0)
    mend_subagent_retry_task_ended (retry, subagent, subagent, NULL, MEND_SUBAGENT_COMPLETED, NULL);
}

/* A hub's extension: _meta.acpmux.subagents, entries {subagentId,
 * agentId, name, state, error}. */
static void
feed_acpmux (MendSubagentRetry   *retry,
             JsonObject          *holder)
{
  JsonObject *meta = mend_json_get_object (holder, "_meta");
  JsonObject *mux = meta ? mend_json_get_object (meta, "acpmux") : NULL;
  JsonNode *list = mux ? json_object_get_member (mux, "subagents") : NULL;
  JsonArray *array;

  if (list == NULL || !JSON_NODE_HOLDS_ARRAY (list))
    return;

  array = json_node_get_array (list);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *node = json_array_get_element (array, i);
      JsonObject *entry = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const char *id = entry ? mend_json_get_string (entry, "subagentId") : NULL;
      const char *agent_id = entry ? mend_json_get_string (entry, "agentId") : NULL;
      const char *state = entry ? mend_json_get_string (entry, "state") : NULL;

      if (id == NULL || state == NULL)
        continue;

      if (g_str_equal (state, "running"))
        mend_subagent_retry_note_started (retry, id, agent_id, mend_json_get_string (entry, "name"));
      else if (g_str_equal (state, "failed"))
        {
          const char *error = mend_json_get_string (entry, "error");
          g_autoptr(MendFailure) failure = mend_failure_new_from_text (error ? error : _("The subagent failed"));

          /* Made, as if it had started, when the hub shows it failed
           * first. */
          mend_subagent_retry_task_ended (retry, id, agent_id, mend_json_get_string (entry, "name"),
                                MEND_SUBAGENT_FAILED, failure);
        }
      else if (g_str_equal (state, "completed"))
        mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_COMPLETED, NULL);
      else if (g_str_equal (state, "cancelled"))
        mend_subagent_retry_task_ended (retry, id, NULL, NULL, MEND_SUBAGENT_CANCELLED, NULL);
    }
}

void
mend_acp_subagents_feed (MendAcpSubagents    *self,
                         MendSubagentRetry   *retry,
                         JsonObject          *params,
                         JsonObject          *update)
{
  const char *kind = mend_json_get_string (update, "sessionUpdate");

  if (g_strcmp0 (kind, "tool_call") == 0 || g_strcmp0 (kind, "tool_call_update") == 0)
    {
      feed_claude_code (self, retry, update);
      feed_gemini (self, retry, update);
    }

  feed_subagent_sessions (self, retry, update);
  feed_acpmux (retry, params);
  feed_acpmux (retry, update);
}
