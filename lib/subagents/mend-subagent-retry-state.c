/* mend-subagent-retry-state.c — the subagent retry's part of the chat's saved state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The subagents of a chat in its saved state: written as a JSON array,
 * read back checked entry by entry before anything changes, and their
 * queued resume prompts found again once the queue is back.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-failure-private.h"
#include "mend-json-private.h"
#include "mend-queue-item.h"
#include "mend-retry-wait-private.h"
#include "mend-subagent-private.h"
#include "mend-subagent-scheduler-private.h"
#include "mend-subagent-retry-state-private.h"
#include "mend-verdict-private.h"

void
mend_subagent_retry_state_save (MendSubagentScheduler *self,
                                JsonBuilder           *builder)
{
  GPtrArray *entries = self->list.entries;

  json_builder_begin_array (builder);
  for (guint i = 0; i < entries->len; i++)
    {
      MendSubagentEntry *entry = g_ptr_array_index (entries, i);
      MendSubagent *sub = entry->subagent;
      MendFailure *failure = mend_subagent_get_failure (sub);
      MendRetryWait *wait = mend_subagent_get_retry (sub);
      g_autoptr(GEnumClass) states = g_type_class_ref (MEND_TYPE_SUBAGENT_STATE);

      json_builder_begin_object (builder);
      mend_json_add_string (builder, "subagentId", mend_subagent_get_id (sub));
      mend_json_add_string (builder, "agentId", mend_subagent_get_agent_id (sub));
      mend_json_add_string (builder, "name", mend_subagent_get_name (sub));
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, g_enum_get_value (states, mend_subagent_get_state (sub))->value_nick);
      json_builder_set_member_name (builder, "attempts");
      json_builder_add_int_value (builder, mend_subagent_get_attempts (sub));
      json_builder_set_member_name (builder, "retryable");
      json_builder_add_boolean_value (builder, mend_subagent_get_retryable (sub));
      json_builder_set_member_name (builder, "manual");
      json_builder_add_boolean_value (builder, entry->manual);
      json_builder_set_member_name (builder, "held");
      json_builder_add_boolean_value (builder, entry->held);
      mend_json_add_string (builder, "promptId", entry->prompt_id);
      json_builder_set_member_name (builder, "promptQueued");
      json_builder_add_boolean_value (builder, mend_subagent_scheduler_prompt_queued (self, entry));
      json_builder_set_member_name (builder, "failure");
      if (failure != NULL)
        mend_failure_build_state (failure, builder);
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "retry");
      if (wait != NULL)
        mend_retry_wait_build_json (wait, builder);
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
}

typedef struct
{
  const char        *id;
  const char        *agent_id;
  const char        *name;
  MendSubagentState  state;
  guint              attempts;
  gboolean           retryable;
  gboolean           manual;
  gboolean           held;
  const char        *prompt_id;
  gboolean           prompt_queued;
  MendFailure       *failure;
  gboolean           has_retry;
  guint              retry_attempt;
  gint64             next_at_ms;
} SavedEntry;

static gboolean
bad_entry (GError     **error,
           guint        index,
           const char  *what)
{
  g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
               _("Saved subagent %u: %s"), index, what);
  return FALSE;
}

/* A member that is absent, null or an object: anything else is not read
 * as absent. */
static gboolean
object_or_null (JsonObject *object,
                const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node == NULL || JSON_NODE_HOLDS_NULL (node) || JSON_NODE_HOLDS_OBJECT (node);
}

static gboolean
read_saved_entry (JsonNode    *node,
                  guint        index,
                  SavedEntry  *saved,
                  GError     **error)
{
  JsonObject *object;
  JsonObject *failure;
  JsonObject *retry;
  gboolean ok = TRUE;

  memset (saved, 0, sizeof *saved);

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad_entry (error, index, _("not an object"));
  object = json_node_get_object (node);

  saved->id = mend_json_read_string (object, "subagentId", FALSE, &ok);
  if (!ok)
    return bad_entry (error, index, _("no subagentId"));
  saved->agent_id = mend_json_read_string (object, "agentId", TRUE, &ok);
  saved->name = mend_json_read_string (object, "name", TRUE, &ok);
  saved->prompt_id = mend_json_read_string (object, "promptId", TRUE, &ok);
  if (!ok)
    return bad_entry (error, index, _("a name or id that is not text"));
  if (strlen (saved->id) > MEND_SUBAGENT_MAX_ID_BYTES ||
      (saved->agent_id != NULL && strlen (saved->agent_id) > MEND_SUBAGENT_MAX_ID_BYTES) ||
      (saved->prompt_id != NULL && strlen (saved->prompt_id) > MEND_SUBAGENT_MAX_ID_BYTES))
    return bad_entry (error, index, _("an id that is too long"));
  saved->state = mend_json_read_nick (object, "state", MEND_TYPE_SUBAGENT_STATE, &ok);
  if (!ok)
    return bad_entry (error, index, _("an unknown state"));
  saved->attempts = (guint) mend_json_read_int (object, "attempts", 0, 1001, &ok);
  if (!ok)
    return bad_entry (error, index, _("attempts out of range"));
  saved->retryable = mend_json_read_bool (object, "retryable", &ok);
  saved->manual = mend_json_read_bool (object, "manual", &ok);
  saved->held = mend_json_read_bool (object, "held", &ok);
  saved->prompt_queued = mend_json_read_bool (object, "promptQueued", &ok);
  if (!ok)
    return bad_entry (error, index, _("a flag that is not true or false"));

  if (!object_or_null (object, "failure") || !object_or_null (object, "retry"))
    return bad_entry (error, index, _("a failure or retry that is not an object"));

  failure = mend_json_get_object (object, "failure");
  if (failure != NULL)
    {
      saved->failure = mend_failure_new_from_state (failure, &ok);
      if (!ok)
        return bad_entry (error, index, _("a failure that cannot be read"));
    }

  retry = mend_json_get_object (object, "retry");
  if (retry != NULL)
    {
      saved->has_retry = TRUE;
      saved->retry_attempt = (guint) mend_json_read_int (retry, "attempt", 1, 1001, &ok);
      saved->next_at_ms = mend_json_read_int (retry, "nextAt", 0, G_MAXINT64 / 4000, &ok);
      if (!ok)
        return bad_entry (error, index, _("a retry out of range"));
      if (saved->failure == NULL || saved->agent_id == NULL)
        return bad_entry (error, index, _("a retry without a failure or an agent id"));
    }

  /* One thing at a time is under way: a wait, a prompt held, or one
   * queued. More would send two prompts for one attempt. */
  if ((saved->has_retry ? 1 : 0) + (saved->held ? 1 : 0) + (saved->prompt_queued ? 1 : 0) > 1)
    return bad_entry (error, index, _("more than one retry under way"));

  /* Only a failed subagent that can be resumed has anything under way. */
  if (saved->state != MEND_SUBAGENT_FAILED || saved->agent_id == NULL || saved->failure == NULL ||
      mend_failure_get_kind (saved->failure) != MEND_FAILURE_TRANSIENT)
    {
      if (saved->has_retry || saved->held || saved->prompt_queued)
        return bad_entry (error, index, _("a retry under way for a subagent that cannot be resumed"));
      if (saved->state != MEND_SUBAGENT_FAILED || saved->agent_id == NULL)
        saved->retryable = FALSE;
    }

  return TRUE;
}

static void
saved_entries_free (SavedEntry *saved,
                    guint       n)
{
  for (guint i = 0; i < n; i++)
    g_clear_object (&saved[i].failure);
  g_free (saved);
}

/* Every entry of @array read and checked, or %NULL. */
static SavedEntry *
read_saved_entries (JsonArray  *array,
                    GError    **error)
{
  guint n = json_array_get_length (array);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) seen_agents = g_hash_table_new (g_str_hash, g_str_equal);
  SavedEntry *saved;

  if (n > 100000)
    {
      g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
                   _("The saved state has %u subagents, more than can be right"), n);
      return NULL;
    }

  saved = g_new0 (SavedEntry, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      gboolean ok = read_saved_entry (json_array_get_element (array, i), i, &saved[i], error);

      if (ok && !g_hash_table_add (seen, (gpointer) saved[i].id))
        ok = bad_entry (error, i, _("an id given twice"));
      else if (ok && saved[i].agent_id != NULL && !g_hash_table_add (seen_agents, (gpointer) saved[i].agent_id))
        ok = bad_entry (error, i, _("an agent id given twice"));
      if (!ok)
        {
          saved_entries_free (saved, n);
          return NULL;
        }
    }
  return saved;
}

gboolean
mend_subagent_retry_state_check (JsonArray  *array,
                                 GError    **error)
{
  SavedEntry *saved = read_saved_entries (array, error);

  if (saved == NULL)
    return FALSE;
  saved_entries_free (saved, json_array_get_length (array));
  return TRUE;
}

gboolean
mend_subagent_retry_state_restore (MendSubagentScheduler  *self,
                                   JsonArray              *array,
                                   GError                **error)
{
  guint n = json_array_get_length (array);
  SavedEntry *saved = NULL;

  if (self->list.entries->len > 0)
    {
      g_set_error_literal (error, MEND_STATE_ERROR, MEND_STATE_ERROR_NOT_EMPTY,
                           _("The chat already has subagents"));
      return FALSE;
    }
  saved = read_saved_entries (array, error);
  if (saved == NULL)
    return FALSE;

  g_object_ref (self->object);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(MendSubagentEntry) entry = mend_subagent_list_add (&self->list, self, saved[i].id,
                                                                   saved[i].agent_id, saved[i].name);
      MendSubagent *sub = entry->subagent;

      /* One change of the new entry, told when it is complete. */
      g_object_freeze_notify (G_OBJECT (sub));
      mend_subagent_set_state (sub, saved[i].state);
      mend_subagent_set_attempts (sub, saved[i].attempts);
      mend_subagent_set_retryable (sub, saved[i].retryable && mend_subagent_scheduler_is_open (self));
      mend_subagent_set_failure (sub, saved[i].failure);
      entry->manual = saved[i].manual;
      entry->held = saved[i].held;
      entry->prompt_id = g_strdup (saved[i].prompt_id);
      /* New prompt ids come after every restored one. */
      if (saved[i].prompt_id != NULL && g_str_has_prefix (saved[i].prompt_id, "sr-"))
        {
          guint64 number;

          if (g_ascii_string_to_unsigned (saved[i].prompt_id + 3, 10, 0, G_MAXUINT64 / 2, &number, NULL))
            self->next_prompt = MAX (self->next_prompt, number);
        }

      if (saved[i].has_retry && mend_subagent_scheduler_is_open (self))
        {
          gint64 now_ms = mend_clock_get_real_time (self->clock) / 1000;
          /* Never longer than the policy could have asked for. */
          gint64 longest = mend_subagent_scheduler_longest_delay_ms (self);
          g_autoptr(MendVerdict) verdict = mend_verdict_new (saved[i].failure, MEND_FAILURE_TRANSIENT,
                                                             saved[i].retry_attempt,
                                                             CLAMP (saved[i].next_at_ms - now_ms, 0, longest),
                                                             FALSE);
          MendRetryWait *wait = mend_retry_wait_new_for_verdict (verdict, self->clock, saved[i].retry_attempt,
                                                                 mend_error_policy_get_max_retries (self->policy),
                                                                 FALSE);

          /* The attempt runs at its time; none is burnt by the restart. */
          mend_subagent_set_attempts (sub, saved[i].retry_attempt - 1);
          mend_subagent_scheduler_connect_wait (entry, wait);
          mend_subagent_set_retry (sub, wait);
          g_object_unref (wait);
        }
      else if (!mend_subagent_scheduler_in_flight (entry))
        mend_subagent_scheduler_settle (self, entry);

      g_object_thaw_notify (G_OBJECT (sub));
    }

  /* A prompt held for the agent's own turn goes out when the chat says
   * its own turn is back; a queued one is found again by
   * mend_subagent_retry_state_find_prompts() once the queue is back. The caps
   * hold for a restored list too. */
  mend_subagent_scheduler_enforce_cap (self);
  g_object_unref (self->object);

  saved_entries_free (saved, n);
  return TRUE;
}

char *
mend_subagent_retry_state_prompt_id (const char *provenance)
{
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object;

  if (provenance == NULL)
    return NULL;
  root = mend_json_parse (provenance, -1, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;

  object = json_node_get_object (root);
  if (g_strcmp0 (mend_json_get_string (object, "kind"), "subagent_retry") != 0)
    return NULL;
  return g_strdup (mend_json_get_string (object, "promptId"));
}

void
mend_subagent_retry_state_find_prompts (MendSubagentScheduler *self)
{
  GListModel *queue = G_LIST_MODEL (self->queue);
  GPtrArray *entries = self->list.entries;

  for (guint i = 0; i < g_list_model_get_n_items (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (queue, i);
      g_autofree char *prompt_id = mend_subagent_retry_state_prompt_id (mend_queue_item_get_provenance (item));

      for (guint j = 0; prompt_id != NULL && j < entries->len; j++)
        {
          MendSubagentEntry *entry = g_ptr_array_index (entries, j);

          if (g_strcmp0 (entry->prompt_id, prompt_id) == 0 &&
              mend_subagent_get_state (entry->subagent) == MEND_SUBAGENT_FAILED &&
              entry->prompt_item == NULL && entry->prompt_turn == NULL && !entry->held)
            {
              entry->prompt_item = g_object_ref (item);
              break;
            }
        }
    }
}

void
mend_subagent_retry_state_find_turn (MendSubagentScheduler *self,
                                     MendTurn              *turn)
{
  g_autofree char *prompt_id = mend_subagent_retry_state_prompt_id (mend_turn_get_provenance (turn));
  GPtrArray *entries = self->list.entries;

  for (guint i = 0; prompt_id != NULL && i < entries->len; i++)
    {
      MendSubagentEntry *entry = g_ptr_array_index (entries, i);

      if (g_strcmp0 (entry->prompt_id, prompt_id) == 0 &&
          mend_subagent_get_state (entry->subagent) == MEND_SUBAGENT_FAILED &&
          !mend_subagent_scheduler_in_flight (entry))
        {
          g_clear_object (&entry->prompt_item);
          entry->prompt_turn = g_object_ref (turn);
          return;
        }
    }
}
