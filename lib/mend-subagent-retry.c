/* mend-subagent-retry.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-chat-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-error-policy.h"
#include "mend-failure-private.h"
#include "mend-i18n-private.h"
#include "mend-json-private.h"
#include "mend-queue.h"
#include "mend-queue-item.h"
#include "mend-retry-wait-private.h"
#include "mend-subagent-private.h"
#include "mend-subagent-retry-private.h"
#include "mend-turn.h"

/**
 * MendSubagentRetry:
 *
 * Resumes the subagents of a chat that a transient upstream error failed.
 *
 * The parent's turn did not fail, so the turn retry never sees these
 * failures. When a top-level subagent ends failed with an agent id and a
 * transient failure, the retry waits the chat's
 * [property@Mend.Chat:resume-policy] delay (plus the chat's stagger), then
 * sends the parent chat — the same session — one prompt asking the agent to
 * resume that subagent with SendMessage to its agent id, to start a new one
 * only if the resume fails, and to do nothing if it already runs again. Its
 * provenance is `{"kind":"subagent_retry","subagentId","agentId","attempt",
 * "promptId"}`.
 *
 * The prompt queues behind the app's running turn and is never steered into
 * it; while the agent runs a turn of its own
 * ([property@Mend.Chat:external-turn]) it waits for that turn to end. A
 * wait is skipped on Stop, on close, when the subagent runs again or ends,
 * and when a new top-level subagent of the same name replaces it; a prompt
 * already queued is taken back and refused if it would start later, while
 * one already started is the agent's to answer. When the prompt's turn ends
 * with the subagent still failed, or the resume fails again, the next
 * attempt waits; after the last the subagent is exhausted, for good. Usage
 * limits and permanent failures are never retried.
 *
 * Every step emits one [signal@Mend.SubagentRetry::record], and the
 * subagent's entry ([method@Mend.Subagent.to_json]) is re-sent through
 * [signal@Mend.SubagentRetry::entry-changed] whenever it changes.
 *
 * A chat keeps at most [property@Mend.SubagentRetry:max-failed] failed
 * subagents that no retry waits for; past that the oldest is forgotten.
 *
 * Example:
 *
 * ```c
 * MendSubagentRetry *subagents = mend_chat_get_subagents (chat);
 * g_autoptr(MendFailure) failure =
 *   mend_failure_new_from_text ("API Error: 503 no non-exhausted claude accounts available");
 *
 * // What an agent's stream said, when no MendStreamObserver reads it:
 * mend_subagent_retry_started (subagents, "toolu_01", "a7c41f", "Survey the tree");
 * mend_subagent_retry_failed (subagents, "toolu_01", failure);
 * // A resume prompt goes to the chat after the resume policy's first delay.
 * g_signal_connect (subagents, "entry-changed", G_CALLBACK (on_entry_changed), NULL);
 * ```
 */

/* An entry is counted: a loop that emits signals holds its entries, so a
 * handler that forgets one (or starts one that replaces it) cannot free
 * what the loop still reads; a forgotten entry is marked gone. */
typedef struct
{
  guint         ref_count;
  gboolean      gone;           /* no longer in the list */
  MendSubagentRetry *owner;
  MendSubagent *subagent;
  guint64       settled;        /* order in which it became settled */
  gulong        fired_id;
  gboolean      held;           /* fired during the agent's own turn */
  char         *prompt_id;      /* the resume prompt out, if any */
  gboolean      prompt_queued;
  MendTurn     *prompt_turn;    /* the turn that runs it, if started */
  gboolean      manual;         /* a person's Retry: never re-armed */
  gboolean      stopped;        /* Stop ended the automatic attempts */
} Entry;

struct _MendSubagentRetry
{
  GObject     parent_instance;

  MendChat   *chat;             /* weak */
  GPtrArray  *entries;          /* Entry*, in list order */
  GHashTable *by_id;            /* subagent id → Entry* (borrowed) */
  GHashTable *by_agent_id;      /* agent id → Entry* (borrowed) */
  GHashTable *skipped_prompts;  /* prompt id set */
  guint       max_failed;
  guint64     next_prompt;
  guint64     next_settled;
};

enum {
  PROP_0,
  PROP_CHAT,
  PROP_MAX_FAILED,
  N_PROPS
};

enum {
  WAITING,
  FIRED,
  RESUMED,
  SKIPPED,
  EXHAUSTED,
  RECORD,
  ENTRY_CHANGED,
  N_SIGNALS
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendSubagentRetry, mend_subagent_retry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static Entry *
entry_ref (Entry *entry)
{
  entry->ref_count++;
  return entry;
}

static void
entry_unref (Entry *entry)
{
  MendRetryWait *wait;

  g_assert (entry->ref_count > 0);
  if (--entry->ref_count > 0)
    return;

  wait = mend_subagent_get_retry (entry->subagent);
  if (wait != NULL)
    g_signal_handlers_disconnect_by_data (wait, entry);
  g_clear_object (&entry->prompt_turn);
  g_clear_pointer (&entry->prompt_id, g_free);
  g_clear_object (&entry->subagent);
  g_free (entry);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Entry, entry_unref)

/* The list lets go of an entry. */
static void
entry_release (Entry *entry)
{
  entry->gone = TRUE;
  entry_unref (entry);
}

/* The entries as they are now, each held: what a loop that emits walks,
 * skipping those a handler made gone. */
static GPtrArray *
snapshot (MendSubagentRetry *self)
{
  GPtrArray *copy = g_ptr_array_new_full (self->entries->len, (GDestroyNotify) entry_unref);

  for (guint i = 0; i < self->entries->len; i++)
    g_ptr_array_add (copy, entry_ref (g_ptr_array_index (self->entries, i)));

  return copy;
}

static void
index_entry (GHashTable *index,
             const char *key,
             Entry      *entry)
{
  /* The first entry with a key is the one found, as a scan in list order
   * would find it. */
  if (key != NULL && !g_hash_table_contains (index, key))
    g_hash_table_insert (index, g_strdup (key), entry);
}

static void
unindex_entry (MendSubagentRetry *self,
               GHashTable        *index,
               const char        *key,
               Entry             *entry)
{
  if (key == NULL || g_hash_table_lookup (index, key) != entry)
    return;

  g_hash_table_remove (index, key);
  /* Rarely another entry shares the key: it is found from now on. */
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *other = g_ptr_array_index (self->entries, i);

      if (other != entry &&
          g_strcmp0 (index == self->by_id ? mend_subagent_get_id (other->subagent)
                                          : mend_subagent_get_agent_id (other->subagent), key) == 0)
        {
          g_hash_table_insert (index, g_strdup (key), other);
          break;
        }
    }
}

/* Takes an entry out of the list, the indexes and the list model. */
static void
remove_entry (MendSubagentRetry *self,
              Entry             *entry)
{
  guint position;

  if (entry->gone || !g_ptr_array_find (self->entries, entry, &position))
    return;

  entry_ref (entry);
  g_ptr_array_remove_index (self->entries, position);
  unindex_entry (self, self->by_id, mend_subagent_get_id (entry->subagent), entry);
  unindex_entry (self, self->by_agent_id, mend_subagent_get_agent_id (entry->subagent), entry);
  g_list_model_items_changed (G_LIST_MODEL (self), position, 1, 0);
  entry_unref (entry);
}

static GType
list_model_get_item_type (GListModel *model)
{
  return MEND_TYPE_SUBAGENT;
}

static guint
list_model_get_n_items (GListModel *model)
{
  return MEND_SUBAGENT_RETRY (model)->entries->len;
}

static gpointer
list_model_get_item (GListModel *model,
                     guint       position)
{
  MendSubagentRetry *self = MEND_SUBAGENT_RETRY (model);
  Entry *entry;

  if (position >= self->entries->len)
    return NULL;

  entry = g_ptr_array_index (self->entries, position);
  return g_object_ref (entry->subagent);
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = list_model_get_item_type;
  iface->get_n_items = list_model_get_n_items;
  iface->get_item = list_model_get_item;
}

static gboolean
chat_is_open (MendSubagentRetry *self)
{
  return self->chat != NULL && mend_chat_get_lifecycle (self->chat) != MEND_LIFECYCLE_CLOSED;
}

static MendErrorPolicy *
resume_policy (MendSubagentRetry *self)
{
  return mend_chat_get_resume_policy (self->chat);
}

/* The subagent's entry changed: re-send it, and tell list views. */
static void
entry_changed (MendSubagentRetry *self,
               Entry             *entry)
{
  g_autofree char *json = mend_subagent_to_json (entry->subagent);
  g_autoptr(Entry) held = entry_ref (entry);
  guint position;

  if (g_ptr_array_find (self->entries, entry, &position))
    g_list_model_items_changed (G_LIST_MODEL (self), position, 1, 1);
  if (!entry->gone)
    g_signal_emit (self, signals[ENTRY_CHANGED], 0, entry->subagent, json);
}

static void
emit_record (MendSubagentRetry *self,
             Entry             *entry,
             const char        *outcome,
             guint              attempt,
             MendRetryWait     *wait,
             const char        *skipped)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autofree char *json = NULL;
  MendSubagent *sub = entry->subagent;
  MendFailure *failure = mend_subagent_get_failure (sub);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, "subagent_retry");
  json_builder_set_member_name (builder, "subagentId");
  json_builder_add_string_value (builder, mend_subagent_get_id (sub));
  json_builder_set_member_name (builder, "agentId");
  if (mend_subagent_get_agent_id (sub) != NULL)
    json_builder_add_string_value (builder, mend_subagent_get_agent_id (sub));
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "reason");
  json_builder_add_string_value (builder,
                                 mend_reason_to_nick (failure ? mend_failure_get_reason (failure)
                                                              : MEND_REASON_UNKNOWN));
  json_builder_set_member_name (builder, "outcome");
  json_builder_add_string_value (builder, outcome);
  json_builder_set_member_name (builder, "attempt");
  json_builder_add_int_value (builder, attempt);
  json_builder_set_member_name (builder, "of");
  json_builder_add_int_value (builder, self->chat ? mend_error_policy_get_max_retries (resume_policy (self)) : 0);
  if (wait != NULL)
    {
      json_builder_set_member_name (builder, "nextAt");
      json_builder_add_int_value (builder, mend_retry_wait_get_next_at (wait) / 1000);
    }
  if (entry->prompt_id != NULL && g_strcmp0 (outcome, "scheduled") != 0)
    {
      json_builder_set_member_name (builder, "promptId");
      json_builder_add_string_value (builder, entry->prompt_id);
    }
  if (skipped != NULL)
    {
      json_builder_set_member_name (builder, "skipped");
      json_builder_add_string_value (builder, skipped);
    }
  json_builder_end_object (builder);

  json = mend_json_builder_finish (builder);
  g_signal_emit (self, signals[RECORD], 0, json);
}

static Entry *
find_by_id (MendSubagentRetry *self,
            const char        *id)
{
  return id != NULL ? g_hash_table_lookup (self->by_id, id) : NULL;
}

static Entry *
find_by_agent_id (MendSubagentRetry *self,
                  const char        *agent_id)
{
  return agent_id != NULL ? g_hash_table_lookup (self->by_agent_id, agent_id) : NULL;
}

static Entry *
find (MendSubagentRetry *self,
      const char        *id)
{
  Entry *entry = find_by_id (self, id);

  return entry ? entry : find_by_agent_id (self, id);
}

/* Something of this subagent's retry is under way: a wait, a prompt held
 * for the agent's own turn, or a prompt out. */
static gboolean names_prompt (const char *provenance,
                              const char *prompt_id);

/* Whether the resume prompt is still in the queue: the user may have
 * removed it, and then nothing of it is under way. */
static gboolean
prompt_still_queued (Entry *entry)
{
  MendChat *chat = entry->owner->chat;
  GListModel *queue;

  if (!entry->prompt_queued)
    return FALSE;

  if (chat != NULL && entry->prompt_id != NULL)
    {
      queue = G_LIST_MODEL (mend_chat_get_queue (chat));
      for (guint i = 0; i < g_list_model_get_n_items (queue); i++)
        {
          g_autoptr(MendQueueItem) item = g_list_model_get_item (queue, i);

          if (names_prompt (mend_queue_item_get_provenance (item), entry->prompt_id))
            return TRUE;
        }
    }

  entry->prompt_queued = FALSE;
  return FALSE;
}

static gboolean
in_flight (Entry *entry)
{
  return mend_subagent_get_retry (entry->subagent) != NULL ||
         entry->held ||
         prompt_still_queued (entry) ||
         entry->prompt_turn != NULL;
}

static void
clear_wait (Entry *entry)
{
  MendRetryWait *wait = mend_subagent_get_retry (entry->subagent);

  if (wait == NULL)
    return;

  /* Disconnected first: only a wait cancelled from outside reaches
   * on_wait_cancelled(). */
  g_signal_handlers_disconnect_by_data (wait, entry);
  entry->fired_id = 0;
  mend_retry_wait_cancel (wait);
  mend_subagent_set_retry (entry->subagent, NULL);
}

static const char *
prompt_id_of (const char *provenance)
{
  const char *found;

  /* A cheap test first: most turns are not resume prompts. */
  if (provenance == NULL || strstr (provenance, "\"subagent_retry\"") == NULL)
    return NULL;

  found = strstr (provenance, "\"promptId\":\"");
  return found ? found + strlen ("\"promptId\":\"") : NULL;
}

/* Whether @provenance is that of the resume prompt @prompt_id, exactly:
 * "sr-1" is not "sr-12". */
static gboolean
names_prompt (const char *provenance,
              const char *prompt_id)
{
  const char *id = prompt_id_of (provenance);
  gsize len = prompt_id ? strlen (prompt_id) : 0;

  return id != NULL && len > 0 && strncmp (id, prompt_id, len) == 0 && id[len] == '"';
}

/* Takes back a resume prompt that is still queued; one already started is
 * the agent's to answer. */
static void
take_back_prompt (MendSubagentRetry *self,
                  Entry             *entry)
{
  if (entry->prompt_id == NULL)
    return;

  g_hash_table_add (self->skipped_prompts, g_strdup (entry->prompt_id));

  if (entry->prompt_queued && self->chat != NULL)
    {
      MendQueue *queue = mend_chat_get_queue (self->chat);

      for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (queue)); i++)
        {
          g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);
          const char *provenance = mend_queue_item_get_provenance (item);

          if (names_prompt (provenance, entry->prompt_id))
            {
              mend_queue_remove (queue, mend_queue_item_get_id (item), NULL);
              break;
            }
        }
    }

  entry->prompt_queued = FALSE;
}

static void skip (MendSubagentRetry *self,
                  Entry             *entry,
                  const char        *why);

static gboolean
is_ended (Entry *entry)
{
  MendSubagentState state = mend_subagent_get_state (entry->subagent);

  return state == MEND_SUBAGENT_COMPLETED || state == MEND_SUBAGENT_CANCELLED;
}

/* Forgets the oldest settled failed subagents past max-failed, the oldest
 * ended ones past MEND_SUBAGENT_RETRY_MAX_ENDED, and the oldest of all
 * past MEND_SUBAGENT_RETRY_MAX_ENTRIES, so that a long session's list and
 * its look-ups stay bounded. */
static void
enforce_cap (MendSubagentRetry *self)
{
  /* Its handlers may drop the last reference to the chat, and with it to
   * this object. */
  g_autoptr(MendSubagentRetry) alive = g_object_ref (self);

  for (;;)
    {
      g_autoptr(Entry) victim = NULL;
      Entry *oldest_failed = NULL;
      Entry *oldest_ended = NULL;
      guint failed = 0;
      guint ended = 0;

      for (guint i = 0; i < self->entries->len; i++)
        {
          Entry *entry = g_ptr_array_index (self->entries, i);

          if (in_flight (entry))
            continue;
          if (mend_subagent_get_state (entry->subagent) == MEND_SUBAGENT_FAILED)
            {
              failed++;
              if (oldest_failed == NULL || entry->settled < oldest_failed->settled)
                oldest_failed = entry;
            }
          else if (is_ended (entry))
            {
              ended++;
              if (oldest_ended == NULL || entry->settled < oldest_ended->settled)
                oldest_ended = entry;
            }
        }

      if (failed > self->max_failed && oldest_failed != NULL)
        victim = entry_ref (oldest_failed);
      else if (ended > MEND_SUBAGENT_RETRY_MAX_ENDED && oldest_ended != NULL)
        victim = entry_ref (oldest_ended);
      else if (self->entries->len > MEND_SUBAGENT_RETRY_MAX_ENTRIES)
        victim = entry_ref (g_ptr_array_index (self->entries, 0));
      else
        return;

      if (mend_subagent_get_retryable (victim->subagent))
        {
          mend_subagent_set_retryable (victim->subagent, FALSE);
          entry_changed (self, victim);
        }
      /* A handler may have forgotten it already. */
      if (!victim->gone)
        {
          skip (self, victim, "forgotten");
          remove_entry (self, victim);
        }
    }
}

static void
settle (MendSubagentRetry *self,
        Entry             *entry)
{
  entry->settled = ++self->next_settled;
}

/* Ends whatever retry is under way, for @why: "stopped", "closed",
 * "resumed", "ended", "replaced", "cancelled" (its wait was cancelled from
 * outside) or "forgotten" (past the caps). */
static void
skip (MendSubagentRetry *self,
      Entry             *entry,
      const char        *why)
{
  /* Something would still go out later: a started prompt is the agent's. */
  gboolean had = mend_subagent_get_retry (entry->subagent) != NULL ||
                 entry->held || entry->prompt_queued;
  guint attempt = mend_subagent_get_attempts (entry->subagent);
  MendRetryWait *wait = mend_subagent_get_retry (entry->subagent);

  if (wait != NULL)
    attempt = mend_retry_wait_get_attempt (wait);

  clear_wait (entry);
  entry->held = FALSE;
  take_back_prompt (self, entry);
  /* A started prompt is the agent's to answer; its end plans nothing. */
  g_clear_object (&entry->prompt_turn);

  if (!had)
    return;

  emit_record (self, entry, "skipped", attempt, NULL, why);
  g_signal_emit (self, signals[SKIPPED], 0, entry->subagent, why);
}

static void on_wait_fired (MendRetryWait *wait,
                           Entry         *entry);
static void on_wait_cancelled (MendRetryWait *wait,
                               Entry         *entry);

static void
connect_wait (Entry         *entry,
              MendRetryWait *wait)
{
  entry->fired_id = g_signal_connect (wait, "fired", G_CALLBACK (on_wait_fired), entry);
  g_signal_connect (wait, "cancelled", G_CALLBACK (on_wait_cancelled), entry);
}

static void
exhaust (MendSubagentRetry *self,
         Entry             *entry)
{
  mend_subagent_set_retry (entry->subagent, NULL);
  mend_subagent_set_retryable (entry->subagent, chat_is_open (self));
  settle (self, entry);
  emit_record (self, entry, "exhausted", mend_subagent_get_attempts (entry->subagent), NULL, NULL);
  g_signal_emit (self, signals[EXHAUSTED], 0, entry->subagent);
}

static void
schedule (MendSubagentRetry *self,
          Entry             *entry)
{
  MendErrorPolicy *policy = resume_policy (self);
  MendFailure *failure = mend_subagent_get_failure (entry->subagent);
  guint attempt = mend_subagent_get_attempts (entry->subagent) + 1;
  guint of = mend_error_policy_get_max_retries (policy);
  gboolean server_hint = FALSE;
  MendRetryWait *wait;
  gint64 delay;

  entry->stopped = FALSE;

  if (attempt > of)
    {
      exhaust (self, entry);
      return;
    }

  delay = mend_error_policy_delay_for (policy, attempt, failure, &server_hint);
  if (delay < 0)
    {
      exhaust (self, entry);
      return;
    }

  delay += mend_error_policy_get_stagger_for (policy, mend_chat_get_id (self->chat));
  wait = g_object_new (MEND_TYPE_RETRY_WAIT,
                       "clock", mend_chat_get_clock (self->chat),
                       "delay-ms", (guint64) delay,
                       "attempt", attempt,
                       "of", of,
                       "reason", mend_failure_get_reason (failure),
                       "failure", failure,
                       "server-hint", server_hint,
                       NULL);
  connect_wait (entry, wait);
  mend_subagent_set_retry (entry->subagent, wait);

  /* A handler of that notification may have stopped it already: no
   * countdown for a wait that is over. */
  if (!entry->gone && mend_subagent_get_retry (entry->subagent) == wait &&
      mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_PENDING)
    {
      emit_record (self, entry, "scheduled", attempt, wait, NULL);
      g_signal_emit (self, signals[WAITING], 0, entry->subagent, wait);
    }
  g_object_unref (wait);
}

static char *
sanitize (const char *text,
          guint       max_chars,
          gboolean    id_chars_only)
{
  GString *out = g_string_new (NULL);
  g_autofree char *valid = NULL;
  gboolean space = FALSE;
  guint chars = 0;

  if (text == NULL)
    return g_string_free (out, FALSE);

  valid = g_utf8_make_valid (text, -1);
  for (const char *p = valid; *p != '\0' && chars < max_chars; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (id_chars_only)
        {
          if (c < 128 && (g_ascii_isalnum (c) || strchr ("-_.:", (int) c) != NULL))
            {
              g_string_append_c (out, (char) c);
              chars++;
            }
          continue;
        }

      /* Quotes could end the quoting the prompt puts the name in; control
       * characters could forge lines. */
      if (g_unichar_iscntrl (c) || g_unichar_isspace (c) ||
          g_unichar_type (c) == G_UNICODE_FORMAT ||
          c == '"' || c == '\'' || c == '`' || c == '\\' ||
          c == 0x201C || c == 0x201D || c == 0x201E || c == 0x2018 ||
          c == 0x2019 || c == 0x201A || c == 0x00AB || c == 0x00BB ||
          c == 0x2039 || c == 0x203A)
        {
          space = out->len > 0;
          continue;
        }

      if (space)
        {
          g_string_append_c (out, ' ');
          chars++;
          space = FALSE;
        }
      g_string_append_unichar (out, c);
      chars++;
    }

  if (!id_chars_only && g_utf8_strlen (valid, -1) > max_chars)
    g_string_append (out, "…");

  return g_string_free (out, FALSE);
}

/**
 * mend_subagent_retry_build_prompt:
 * @name: (nullable): the subagent's name, untrusted
 * @agent_id: the agent id to resume it by, untrusted
 *
 * Builds the resume prompt, from a translatable template. The name comes
 * from the agent's output, so it is stripped of control characters and
 * quotes and cut to %MEND_SUBAGENT_NAME_MAX_CHARS characters; the agent id
 * keeps only letters, digits and `-_.:`.
 *
 * Returns: (transfer full): the prompt
 */
char *
mend_subagent_retry_build_prompt (const char *name,
                                  const char *agent_id)
{
  g_autofree char *safe_name = sanitize (name, MEND_SUBAGENT_NAME_MAX_CHARS, FALSE);
  g_autofree char *safe_id = sanitize (agent_id, 128, TRUE);

  g_return_val_if_fail (agent_id != NULL, NULL);

  mend_i18n_init ();

  if (*safe_name == '\0')
    {
      g_free (safe_name);
      safe_name = g_strdup (_("unnamed"));
    }

  /* Translators: sent to the AI agent, not shown to people. The first %s
   * is a subagent's name, the second and third its agent id. Keep
   * “SendMessage” as it is: it is the name of the agent's tool. */
  return g_strdup_printf (_("The subagent “%s” (agent id %s) stopped on a temporary upstream error. "
                            "If it is not running again, resume it with SendMessage to %s. "
                            "Start a new subagent for the same task only if that resume fails. "
                            "If it already runs again, do nothing."),
                          safe_name, safe_id, safe_id);
}

static char *
prompt_provenance (Entry      *entry,
                   guint       attempt)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, "subagent_retry");
  json_builder_set_member_name (builder, "subagentId");
  json_builder_add_string_value (builder, mend_subagent_get_id (entry->subagent));
  json_builder_set_member_name (builder, "agentId");
  json_builder_add_string_value (builder, mend_subagent_get_agent_id (entry->subagent));
  json_builder_set_member_name (builder, "attempt");
  json_builder_add_int_value (builder, attempt);
  json_builder_set_member_name (builder, "promptId");
  json_builder_add_string_value (builder, entry->prompt_id);
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}

static void
send_prompt (MendSubagentRetry *self,
             Entry             *entry)
{
  g_autofree char *text = NULL;
  g_autofree char *provenance = NULL;
  g_autofree char *prompt_id = NULL;
  g_autoptr(GError) error = NULL;
  guint attempt = mend_subagent_get_attempts (entry->subagent) + 1;

  mend_subagent_set_attempts (entry->subagent, attempt);
  g_free (entry->prompt_id);
  entry->prompt_id = g_strdup_printf ("sr-%" G_GUINT64_FORMAT, ++self->next_prompt);
  text = mend_subagent_retry_build_prompt (mend_subagent_get_name (entry->subagent),
                                           mend_subagent_get_agent_id (entry->subagent));
  provenance = prompt_provenance (entry, attempt);

  /* Fired is told first: the prompt's turn may run and end inside the
   * submission, and its steps must come after this one. */
  prompt_id = g_strdup (entry->prompt_id);
  emit_record (self, entry, "fired", attempt, NULL, NULL);
  g_signal_emit (self, signals[FIRED], 0, entry->subagent, prompt_id);
  if (entry->gone || g_strcmp0 (entry->prompt_id, prompt_id) != 0 || !chat_is_open (self))
    return;

  /* Queued behind a running turn, never steered into it. The turn-started
   * handler notes the turn when it starts at once. */
  entry->prompt_queued = TRUE;
  if (!mend_chat_submit_resume (self->chat, text, provenance, &error))
    {
      entry->prompt_queued = FALSE;
      g_debug ("Subagent %s: resume prompt not sent: %s",
               mend_subagent_get_id (entry->subagent), error->message);
      settle (self, entry);
      emit_record (self, entry, "skipped", attempt, NULL, "not_sent");
      g_signal_emit (self, signals[SKIPPED], 0, entry->subagent, "not_sent");
    }
}

static void
on_wait_fired (MendRetryWait *wait,
               Entry         *entry)
{
  g_autoptr(MendSubagentRetry) self = g_object_ref (entry->owner);
  g_autoptr(Entry) held = entry_ref (entry);

  g_signal_handlers_disconnect_by_data (wait, entry);
  entry->fired_id = 0;
  mend_subagent_set_retry (entry->subagent, NULL);

  if (entry->gone || !chat_is_open (self))
    return;

  if (mend_chat_get_external_turn (self->chat))
    entry->held = TRUE;   /* sent when the agent's own turn ends */
  else
    send_prompt (self, entry);
  if (!entry->gone)
    entry_changed (self, entry);
}

/* The wait was cancelled from outside (mend_retry_wait_cancel(), or
 * run_async()'s cancellable): the retry will not run, and the subagent
 * must not be left as if it would. Like a Stop, it ends the automatic
 * attempts; a person's Retry still works. */
static void
on_wait_cancelled (MendRetryWait *wait,
                   Entry         *entry)
{
  g_autoptr(MendSubagentRetry) self = g_object_ref (entry->owner);
  g_autoptr(Entry) held = entry_ref (entry);
  guint attempt = mend_retry_wait_get_attempt (wait);

  g_signal_handlers_disconnect_by_data (wait, entry);
  entry->fired_id = 0;
  mend_subagent_set_retry (entry->subagent, NULL);
  if (entry->gone)
    return;

  entry->stopped = TRUE;
  settle (self, entry);
  emit_record (self, entry, "skipped", attempt, NULL, "cancelled");
  g_signal_emit (self, signals[SKIPPED], 0, entry->subagent, "cancelled");
  if (!entry->gone)
    {
      entry_changed (self, entry);
      enforce_cap (self);
    }
}

/* Ids past the cap are refused: records and entries stay bounded. */
static gboolean
ids_fit (const char *id,
         const char *agent_id)
{
  if (strlen (id) <= MEND_SUBAGENT_MAX_ID_BYTES &&
      (agent_id == NULL || strlen (agent_id) <= MEND_SUBAGENT_MAX_ID_BYTES))
    return TRUE;

  g_debug ("Subagent event ignored: an id is longer than %d bytes", MEND_SUBAGENT_MAX_ID_BYTES);
  return FALSE;
}

/* Adds an entry and returns it held: list views hear of it first, and
 * their handlers may make it gone. */
static Entry *
add_entry (MendSubagentRetry *self,
           const char        *id,
           const char        *agent_id,
           const char        *name)
{
  Entry *entry = g_new0 (Entry, 1);
  g_autofree char *kept = NULL;

  if (name != NULL && strlen (name) > MEND_SUBAGENT_MAX_NAME_BYTES)
    {
      const char *end = name + MEND_SUBAGENT_MAX_NAME_BYTES;

      g_utf8_validate (name, MEND_SUBAGENT_MAX_NAME_BYTES, &end);
      kept = g_strndup (name, end - name);
      name = kept;
    }

  entry->ref_count = 1;
  entry->owner = self;
  entry->subagent = mend_subagent_new (id, agent_id, name);
  g_ptr_array_add (self->entries, entry_ref (entry));
  index_entry (self->by_id, id, entry);
  index_entry (self->by_agent_id, agent_id, entry);
  g_list_model_items_changed (G_LIST_MODEL (self), self->entries->len - 1, 0, 1);

  return entry;
}

static void
resume (MendSubagentRetry *self,
        Entry             *entry)
{
  g_autoptr(Entry) held = entry_ref (entry);

  g_object_ref (self);
  skip (self, entry, "resumed");
  mend_subagent_set_state (entry->subagent, MEND_SUBAGENT_RUNNING);
  mend_subagent_set_retryable (entry->subagent, FALSE);
  entry_changed (self, entry);
  g_signal_emit (self, signals[RESUMED], 0, entry->subagent);
  g_object_unref (self);
}

/* Chat events */

static Entry *
entry_for_prompt (MendSubagentRetry *self,
                  const char        *provenance)
{
  if (prompt_id_of (provenance) == NULL)
    return NULL;

  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (self->entries, i);

      if (names_prompt (provenance, entry->prompt_id))
        return entry;
    }

  return NULL;
}

static void
on_turn_started (MendChat          *chat,
                 MendTurn          *turn,
                 MendSubagentRetry *self)
{
  Entry *entry = entry_for_prompt (self, mend_turn_get_provenance (turn));

  if (entry == NULL)
    return;

  entry->prompt_queued = FALSE;
  g_set_object (&entry->prompt_turn, turn);
}

static void
on_turn_finished (MendChat          *chat,
                  MendTurn          *turn,
                  MendSubagentRetry *self)
{
  Entry *entry = NULL;

  for (guint i = 0; i < self->entries->len && entry == NULL; i++)
    {
      Entry *candidate = g_ptr_array_index (self->entries, i);

      if (candidate->prompt_turn == turn)
        entry = candidate;
    }

  if (entry == NULL)
    return;

  g_clear_object (&entry->prompt_turn);

  /* A Stop ends the schedule: the turn was stopped, and the chat's
   * stopped signal, which follows, finds nothing under way. Planning the
   * next attempt first would flash a countdown that never was. */
  if (mend_turn_get_state (turn) == MEND_TURN_STOPPED &&
      mend_subagent_get_state (entry->subagent) == MEND_SUBAGENT_FAILED)
    {
      g_autoptr(Entry) held = entry_ref (entry);

      g_object_ref (self);
      entry->stopped = TRUE;
      settle (self, entry);
      emit_record (self, entry, "skipped", mend_subagent_get_attempts (entry->subagent), NULL, "stopped");
      g_signal_emit (self, signals[SKIPPED], 0, entry->subagent, "stopped");
      if (!entry->gone)
        {
          entry_changed (self, entry);
          enforce_cap (self);
        }
      g_object_unref (self);
      return;
    }

  /* The agent did not resume it: the next attempt, unless a person asked
   * for this one or Stop ended the schedule. */
  if (mend_subagent_get_state (entry->subagent) == MEND_SUBAGENT_FAILED &&
      chat_is_open (self))
    {
      g_autoptr(Entry) held = entry_ref (entry);

      g_object_ref (self);
      if (!entry->manual && !entry->stopped)
        schedule (self, entry);
      else
        settle (self, entry);
      if (!entry->gone)
        entry_changed (self, entry);
      enforce_cap (self);
      g_object_unref (self);
    }
}

static void
on_chat_stopped (MendChat          *chat,
                 MendSubagentRetry *self)
{
  g_autoptr(GPtrArray) entries = snapshot (self);

  g_object_ref (self);
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (entries, i);

      if (entry->gone || !in_flight (entry))
        continue;

      /* Stop ends the automatic attempts; a person's Retry still works. */
      entry->stopped = TRUE;
      skip (self, entry, "stopped");
      settle (self, entry);
      entry_changed (self, entry);
    }
  enforce_cap (self);
  g_object_unref (self);
}

void
mend_subagent_retry_release_held (MendSubagentRetry *self)
{
  g_autoptr(GPtrArray) entries = NULL;

  if (self->chat == NULL || mend_chat_get_external_turn (self->chat) || !chat_is_open (self))
    return;

  entries = snapshot (self);
  g_object_ref (self);
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (entries, i);

      if (!entry->gone && entry->held && chat_is_open (self))
        {
          entry->held = FALSE;
          send_prompt (self, entry);
          if (!entry->gone)
            entry_changed (self, entry);
        }
    }
  g_object_unref (self);
}

static void
on_external_turn (MendChat          *chat,
                  GParamSpec        *pspec,
                  MendSubagentRetry *self)
{
  mend_subagent_retry_release_held (self);
}

static void
on_lifecycle (MendChat          *chat,
              GParamSpec        *pspec,
              MendSubagentRetry *self)
{
  g_autoptr(GPtrArray) entries = NULL;

  if (mend_chat_get_lifecycle (chat) != MEND_LIFECYCLE_CLOSED)
    return;

  entries = snapshot (self);
  g_object_ref (self);
  for (guint i = 0; i < entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (entries, i);

      if (entry->gone)
        continue;
      skip (self, entry, "closed");
      mend_subagent_set_retryable (entry->subagent, FALSE);
      if (!entry->gone)
        entry_changed (self, entry);
    }
  g_object_unref (self);
}

static void
mend_subagent_retry_dispose (GObject *object)
{
  MendSubagentRetry *self = (MendSubagentRetry *) object;

  if (self->chat != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->chat, self);
      g_object_remove_weak_pointer (G_OBJECT (self->chat), (gpointer *) &self->chat);
      self->chat = NULL;
    }

  /* Cancelling a wait emits on it: walk a held copy. */
  if (self->entries->len > 0)
    {
      g_autoptr(GPtrArray) entries = snapshot (self);

      for (guint i = 0; i < entries->len; i++)
        clear_wait (g_ptr_array_index (entries, i));
    }

  G_OBJECT_CLASS (mend_subagent_retry_parent_class)->dispose (object);
}

static void
mend_subagent_retry_finalize (GObject *object)
{
  MendSubagentRetry *self = (MendSubagentRetry *) object;

  g_clear_pointer (&self->by_id, g_hash_table_unref);
  g_clear_pointer (&self->by_agent_id, g_hash_table_unref);
  g_clear_pointer (&self->entries, g_ptr_array_unref);
  g_clear_pointer (&self->skipped_prompts, g_hash_table_unref);

  G_OBJECT_CLASS (mend_subagent_retry_parent_class)->finalize (object);
}

static void
mend_subagent_retry_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  MendSubagentRetry *self = MEND_SUBAGENT_RETRY (object);

  switch (prop_id)
    {
    case PROP_CHAT:
      g_value_set_object (value, self->chat);
      break;
    case PROP_MAX_FAILED:
      g_value_set_uint (value, self->max_failed);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_subagent_retry_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  MendSubagentRetry *self = MEND_SUBAGENT_RETRY (object);

  switch (prop_id)
    {
    case PROP_MAX_FAILED:
      mend_subagent_retry_set_max_failed (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_subagent_retry_class_init (MendSubagentRetryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = mend_subagent_retry_dispose;
  object_class->finalize = mend_subagent_retry_finalize;
  object_class->get_property = mend_subagent_retry_get_property;
  object_class->set_property = mend_subagent_retry_set_property;

  mend_i18n_init ();

  /**
   * MendSubagentRetry:chat:
   *
   * The chat whose subagents these are, or %NULL once it is gone.
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagentRetry:max-failed:
   *
   * The most failed subagents that no retry waits for kept; past that the
   * oldest is forgotten.
   */
  properties[PROP_MAX_FAILED] =
    g_param_spec_uint ("max-failed", NULL, NULL,
                       1, 100000, MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendSubagentRetry::waiting:
   * @self: the subagent retry
   * @subagent: the subagent
   * @wait: the wait before its resume prompt
   *
   * A resume is scheduled.
   */
  signals[WAITING] =
    g_signal_new ("waiting", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, MEND_TYPE_SUBAGENT, MEND_TYPE_RETRY_WAIT);

  /**
   * MendSubagentRetry::fired:
   * @self: the subagent retry
   * @subagent: the subagent
   * @prompt_id: the id of the resume prompt, also in its provenance
   *
   * The resume prompt was sent to the chat (started or queued).
   */
  signals[FIRED] =
    g_signal_new ("fired", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, MEND_TYPE_SUBAGENT, G_TYPE_STRING);

  /**
   * MendSubagentRetry::resumed:
   * @self: the subagent retry
   * @subagent: the subagent
   *
   * The subagent runs again.
   */
  signals[RESUMED] =
    g_signal_new ("resumed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_SUBAGENT);

  /**
   * MendSubagentRetry::skipped:
   * @self: the subagent retry
   * @subagent: the subagent
   * @why: `stopped`, `closed`, `resumed`, `ended`, `replaced` or `not_sent`
   *
   * A retry under way was dropped.
   */
  signals[SKIPPED] =
    g_signal_new ("skipped", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, MEND_TYPE_SUBAGENT, G_TYPE_STRING);

  /**
   * MendSubagentRetry::exhausted:
   * @self: the subagent retry
   * @subagent: the subagent
   *
   * The automatic attempts are used up; the subagent stays failed (a
   * person's Retry still works).
   */
  signals[EXHAUSTED] =
    g_signal_new ("exhausted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_SUBAGENT);

  /**
   * MendSubagentRetry::record:
   * @self: the subagent retry
   * @json: one JSON object
   *
   * One structured log record per step: `{"kind":"subagent_retry",
   * "subagentId","agentId","reason","outcome","attempt","of","nextAt"?,
   * "promptId"?,"skipped"?}` with outcome `scheduled`, `fired`, `skipped` or
   * `exhausted`.
   */
  signals[RECORD] =
    g_signal_new ("record", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);

  /**
   * MendSubagentRetry::entry-changed:
   * @self: the subagent retry
   * @subagent: the subagent
   * @json: its entry, as [method@Mend.Subagent.to_json] writes it
   *
   * The subagent's entry changed.
   */
  signals[ENTRY_CHANGED] =
    g_signal_new ("entry-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, MEND_TYPE_SUBAGENT, G_TYPE_STRING);
}

static void
mend_subagent_retry_init (MendSubagentRetry *self)
{
  self->entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_release);
  self->by_id = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->by_agent_id = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->skipped_prompts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->max_failed = MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED;
}

MendSubagentRetry *
mend_subagent_retry_new (MendChat *chat)
{
  MendSubagentRetry *self = g_object_new (MEND_TYPE_SUBAGENT_RETRY, NULL);

  self->chat = chat;
  g_object_add_weak_pointer (G_OBJECT (chat), (gpointer *) &self->chat);
  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), self);
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), self);
  g_signal_connect (chat, "stopped", G_CALLBACK (on_chat_stopped), self);
  g_signal_connect (chat, "notify::external-turn", G_CALLBACK (on_external_turn), self);
  g_signal_connect (chat, "notify::lifecycle", G_CALLBACK (on_lifecycle), self);

  return self;
}

gboolean
mend_subagent_retry_may_start (MendSubagentRetry *self,
                               const char        *provenance)
{
  const char *id = prompt_id_of (provenance);
  const char *end;
  g_autofree char *prompt_id = NULL;

  if (id == NULL || (end = strchr (id, '"')) == NULL)
    return TRUE;

  prompt_id = g_strndup (id, end - id);
  return !g_hash_table_contains (self->skipped_prompts, prompt_id);
}

/**
 * mend_subagent_retry_get_chat:
 * @self: a subagent retry
 *
 * Gets the chat whose subagents these are.
 *
 * Returns: (transfer none) (nullable): the chat, or %NULL once it is gone
 */
MendChat *
mend_subagent_retry_get_chat (MendSubagentRetry *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), NULL);

  return self->chat;
}

/**
 * mend_subagent_retry_lookup:
 * @self: a subagent retry
 * @id: a subagent id, or an agent id
 *
 * Finds a subagent by its id, or else by its agent id.
 *
 * Returns: (transfer none) (nullable): the subagent, or %NULL
 */
MendSubagent *
mend_subagent_retry_lookup (MendSubagentRetry *self,
                            const char        *id)
{
  Entry *entry;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);

  entry = find (self, id);
  return entry ? entry->subagent : NULL;
}

/**
 * mend_subagent_retry_started:
 * @self: a subagent retry
 * @id: the subagent's id
 * @agent_id: (nullable): the id the agent resumes it by
 * @name: (nullable): its description
 *
 * A top-level subagent started. A start for an agent id that is known is a
 * resume (see [method@Mend.SubagentRetry.resumed]). A new subagent replaces
 * a failed one of the same name: that one's retry is skipped and it is
 * forgotten. Ids longer than %MEND_SUBAGENT_MAX_ID_BYTES are ignored.
 *
 * Returns: (transfer none) (nullable): the subagent, or %NULL when an id
 *   was too long
 */
MendSubagent *
mend_subagent_retry_started (MendSubagentRetry *self,
                             const char        *id,
                             const char        *agent_id,
                             const char        *name)
{
  g_autoptr(Entry) held = NULL;
  Entry *entry;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);

  if (!ids_fit (id, agent_id))
    return NULL;

  entry = find_by_agent_id (self, agent_id);
  if (entry == NULL)
    entry = find_by_id (self, id);
  if (entry != NULL)
    {
      held = entry_ref (entry);
      /* Transfer none: the list may have let go of it meanwhile. */
      resume (self, entry);
      return entry->gone ? NULL : entry->subagent;
    }

  g_object_ref (self);

  if (name != NULL)
    {
      g_autoptr(GPtrArray) entries = snapshot (self);

      for (guint i = 0; i < entries->len; i++)
        {
          Entry *old = g_ptr_array_index (entries, i);

          if (!old->gone &&
              mend_subagent_get_state (old->subagent) == MEND_SUBAGENT_FAILED &&
              g_strcmp0 (mend_subagent_get_name (old->subagent), name) == 0)
            {
              skip (self, old, "replaced");
              mend_subagent_set_retryable (old->subagent, FALSE);
              if (!old->gone)
                entry_changed (self, old);
              remove_entry (self, old);
            }
        }

      /* A handler may have started this very subagent meanwhile. */
      entry = find_by_id (self, id);
      if (entry != NULL)
        {
          g_object_unref (self);
          return entry->subagent;
        }
    }

  entry = held = add_entry (self, id, agent_id, name);
  entry_changed (self, entry);
  enforce_cap (self);

  g_object_unref (self);
  /* Transfer none: a handler may have made the list let go of it. */
  return entry->gone ? NULL : entry->subagent;
}

/**
 * mend_subagent_retry_failed:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @failure: what it failed on
 *
 * A subagent ended failed. The chat's resume policy classifies @failure; a
 * transient failure of a subagent with an agent id is retried while the
 * chat is open. A failure for an unknown id makes a subagent of it (its
 * agent id the same id), so that a forgotten agent still gets its retries.
 */
void
mend_subagent_retry_failed (MendSubagentRetry *self,
                            const char        *id,
                            MendFailure       *failure)
{
  g_autoptr(Entry) held = NULL;
  Entry *entry;
  MendFailureKind kind = MEND_FAILURE_PERMANENT;

  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  g_return_if_fail (id != NULL);
  g_return_if_fail (MEND_IS_FAILURE (failure));

  if (!ids_fit (id, NULL))
    return;

  g_object_ref (self);

  entry = find (self, id);
  held = entry != NULL ? entry_ref (entry) : add_entry (self, id, id, NULL);
  entry = held;

  if (self->chat != NULL)
    {
      kind = mend_error_policy_classify (resume_policy (self), failure);
    }

  /* Each step below tells handlers, which may replace, end or resume this
   * subagent: then the rest is not ours to do. */
  if (entry->gone)
    goto out;
  mend_subagent_set_state (entry->subagent, MEND_SUBAGENT_FAILED);
  mend_subagent_set_failure (entry->subagent, failure);
  if (entry->gone || mend_subagent_get_state (entry->subagent) != MEND_SUBAGENT_FAILED)
    goto out;
  mend_subagent_set_retryable (entry->subagent,
                               chat_is_open (self) && mend_subagent_get_agent_id (entry->subagent) != NULL);
  if (entry->gone || mend_subagent_get_state (entry->subagent) != MEND_SUBAGENT_FAILED)
    goto out;

  /* A duplicate notice while a retry is under way changes nothing more. */
  if (kind == MEND_FAILURE_TRANSIENT &&
      chat_is_open (self) &&
      mend_subagent_get_agent_id (entry->subagent) != NULL &&
      !entry->manual && !in_flight (entry))
    schedule (self, entry);
  else if (!in_flight (entry))
    settle (self, entry);

  if (!entry->gone)
    entry_changed (self, entry);
out:
  enforce_cap (self);
  g_object_unref (self);
}

/**
 * mend_subagent_retry_resumed:
 * @self: a subagent retry
 * @agent_id: the agent id of the subagent that runs again
 *
 * A subagent runs again, as after a SendMessage resume. Its retry is
 * skipped, a queued resume prompt taken back, and it is no longer
 * retryable.
 */
void
mend_subagent_retry_resumed (MendSubagentRetry *self,
                             const char        *agent_id)
{
  Entry *entry;

  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  g_return_if_fail (agent_id != NULL);

  entry = find_by_agent_id (self, agent_id);
  if (entry != NULL)
    resume (self, entry);
}

/**
 * mend_subagent_retry_ended:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @state: how it ended: %MEND_SUBAGENT_COMPLETED or %MEND_SUBAGENT_CANCELLED
 *
 * A subagent ended other than by failing: its retry is skipped and it is
 * no longer retryable.
 */
void
mend_subagent_retry_ended (MendSubagentRetry *self,
                           const char        *id,
                           MendSubagentState  state)
{
  g_autoptr(Entry) held = NULL;
  Entry *entry;

  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  g_return_if_fail (id != NULL);
  g_return_if_fail (state != MEND_SUBAGENT_RUNNING);

  entry = find (self, id);
  if (entry == NULL)
    return;

  held = entry_ref (entry);
  g_object_ref (self);
  skip (self, entry, "ended");
  mend_subagent_set_state (entry->subagent, state);
  mend_subagent_set_retryable (entry->subagent, FALSE);
  settle (self, entry);
  if (!entry->gone)
    {
      entry_changed (self, entry);
      enforce_cap (self);
    }
  g_object_unref (self);
}

/**
 * mend_subagent_retry_retry:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @error: return location for a %MEND_RETRY_ERROR
 *
 * A person's Retry: sends the resume prompt now, as one attempt. It never
 * re-arms the automatic schedule: if this attempt does not bring the
 * subagent back, it stays failed. A pending automatic wait is replaced by
 * this attempt.
 *
 * Returns: %TRUE if the prompt was sent; %FALSE with
 *   %MEND_RETRY_ERROR_UNKNOWN_SUBAGENT, %MEND_RETRY_ERROR_CLOSED,
 *   %MEND_RETRY_ERROR_BUSY (an attempt runs) or
 *   %MEND_RETRY_ERROR_NOT_RETRYABLE
 */
gboolean
mend_subagent_retry_retry (MendSubagentRetry  *self,
                           const char         *id,
                           GError            **error)
{
  g_autoptr(Entry) held = NULL;
  Entry *entry;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), FALSE);
  g_return_val_if_fail (id != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = find (self, id);
  if (entry == NULL)
    {
      g_set_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_UNKNOWN_SUBAGENT,
                   _("No subagent has the id “%s”"), id);
      return FALSE;
    }
  if (!chat_is_open (self))
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_CLOSED,
                           _("The chat is closed"));
      return FALSE;
    }
  if (entry->held || prompt_still_queued (entry) || entry->prompt_turn != NULL)
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY,
                           _("A resume of this subagent is already under way"));
      return FALSE;
    }
  if (!mend_subagent_get_retryable (entry->subagent))
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_NOT_RETRYABLE,
                           _("This subagent cannot be resumed now"));
      return FALSE;
    }

  held = entry_ref (entry);
  g_object_ref (self);
  clear_wait (entry);
  entry->manual = TRUE;
  send_prompt (self, entry);
  if (!entry->gone)
    entry_changed (self, entry);
  g_object_unref (self);

  return TRUE;
}

/**
 * mend_subagent_retry_get_max_failed:
 * @self: a subagent retry
 *
 * Gets [property@Mend.SubagentRetry:max-failed].
 *
 * Returns: the cap
 */
guint
mend_subagent_retry_get_max_failed (MendSubagentRetry *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), 0);

  return self->max_failed;
}

/**
 * mend_subagent_retry_set_max_failed:
 * @self: a subagent retry
 * @max_failed: the most failed subagents kept, at least 1
 *
 * Sets [property@Mend.SubagentRetry:max-failed]; lowering it forgets the
 * oldest at once.
 */
void
mend_subagent_retry_set_max_failed (MendSubagentRetry *self,
                                    guint              max_failed)
{
  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  g_return_if_fail (max_failed >= 1);

  if (self->max_failed != max_failed)
    {
      g_object_ref (self);
      self->max_failed = max_failed;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_FAILED]);
      enforce_cap (self);
      g_object_unref (self);
    }
}

/* Saved state */

void
mend_subagent_retry_save (MendSubagentRetry *self,
                          JsonBuilder       *builder)
{
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->entries->len; i++)
    {
      Entry *entry = g_ptr_array_index (self->entries, i);
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
      json_builder_add_boolean_value (builder, entry->prompt_queued);
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

gboolean
mend_subagent_retry_restore (MendSubagentRetry  *self,
                             JsonArray          *array,
                             GError            **error)
{
  guint n = json_array_get_length (array);
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) seen_agents = g_hash_table_new (g_str_hash, g_str_equal);
  SavedEntry *saved = NULL;
  gboolean ok = FALSE;

  if (self->entries->len > 0)
    {
      g_set_error_literal (error, MEND_STATE_ERROR, MEND_STATE_ERROR_NOT_EMPTY,
                           _("The chat already has subagents"));
      return FALSE;
    }
  if (n > 100000)
    {
      g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
                   _("The saved state has %u subagents, more than can be right"), n);
      return FALSE;
    }

  saved = g_new0 (SavedEntry, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      if (!read_saved_entry (json_array_get_element (array, i), i, &saved[i], error))
        goto out;
      if (!g_hash_table_add (seen, (gpointer) saved[i].id))
        {
          bad_entry (error, i, _("an id given twice"));
          goto out;
        }
      if (saved[i].agent_id != NULL && !g_hash_table_add (seen_agents, (gpointer) saved[i].agent_id))
        {
          bad_entry (error, i, _("an agent id given twice"));
          goto out;
        }
    }

  g_object_ref (self);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(Entry) entry = add_entry (self, saved[i].id, saved[i].agent_id, saved[i].name);
      MendSubagent *sub = entry->subagent;

      mend_subagent_set_state (sub, saved[i].state);
      mend_subagent_set_attempts (sub, saved[i].attempts);
      mend_subagent_set_retryable (sub, saved[i].retryable && chat_is_open (self));
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
      entry->prompt_queued = saved[i].prompt_queued && saved[i].prompt_id != NULL;

      if (saved[i].has_retry && chat_is_open (self))
        {
          MendErrorPolicy *policy = resume_policy (self);
          gint64 now_ms = mend_clock_get_real_time (mend_chat_get_clock (self->chat)) / 1000;
          /* Never longer than the policy could have asked for. */
          gint64 longest = MAX ((gint64) mend_error_policy_get_max_delay_ms (policy),
                                (gint64) mend_error_policy_get_retry_after_max_ms (policy))
                           + mend_error_policy_get_stagger_for (policy, mend_chat_get_id (self->chat));
          MendRetryWait *wait = g_object_new (MEND_TYPE_RETRY_WAIT,
                                              "clock", mend_chat_get_clock (self->chat),
                                              "delay-ms", (guint64) CLAMP (saved[i].next_at_ms - now_ms, 0, longest),
                                              "attempt", saved[i].retry_attempt,
                                              "of", mend_error_policy_get_max_retries (policy),
                                              "reason", mend_failure_get_reason (saved[i].failure),
                                              "failure", saved[i].failure,
                                              NULL);

          /* The attempt runs at its time; none is burnt by the restart. */
          mend_subagent_set_attempts (sub, saved[i].retry_attempt - 1);
          mend_subagent_set_retry (sub, wait);
          connect_wait (entry, wait);
          g_object_unref (wait);
        }
      else if (!in_flight (entry))
        settle (self, entry);

      entry_changed (self, entry);
    }

  /* A prompt held for the agent's own turn goes out when the chat calls
   * mend_subagent_retry_release_held(), once its own turn is back. The
   * caps hold for a restored list too. */
  enforce_cap (self);
  g_object_unref (self);
  ok = TRUE;

out:
  saved_entries_free (saved, n);
  return ok;
}
