/* mend-subagent-retry.c — MendSubagentRetry: resumes subagents that died on a transient error
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-enum-types.h"
#include "mend-error-policy.h"
#include "mend-failure-private.h"
#include "mend-i18n-private.h"
#include "mend-queue-item-private.h"
#include "mend-redact-private.h"
#include "mend-retry-wait.h"
#include "mend-subagent-private.h"
#include "mend-subagent-scheduler-private.h"
#include "mend-subagent-retry-state-private.h"
#include "mend-verdict-private.h"

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
 * Every step emits one [signal@Mend.SubagentRetry::record].
 *
 * The retry is a [iface@Gio.ListModel] of [class@Mend.Subagent]: bind a
 * list view to it, and each row to its subagent's properties.
 * [signal@Gio.ListModel::items-changed] is emitted once when a subagent
 * joins the list and once when it leaves; a subagent's own changes are its
 * property notifications, one per property that changed in a step.
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
 * mend_subagent_retry_note_started (subagents, "toolu_01", "a7c41f", "Survey the tree");
 * mend_subagent_retry_note_failed (subagents, "toolu_01", failure);
 * // A resume prompt goes to the chat after the resume policy's first delay;
 * // an app follows each subagent that joins the list through its properties.
 * g_signal_connect (subagents, "items-changed", G_CALLBACK (on_items_changed), NULL);
 * ```
 */

struct _MendSubagentRetry
{
  GObject               parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  MendSubagentScheduler sched;
};

enum {
  PROP_0,
  PROP_MAX_FAILED,
  N_PROPS
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendSubagentRetry, mend_subagent_retry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GParamSpec *properties[N_PROPS];
static guint signals[MEND_SUBAGENT_N_SIGNALS];

static GType
list_model_get_item_type (GListModel *model)
{
  return MEND_TYPE_SUBAGENT;
}

static guint
list_model_get_n_items (GListModel *model)
{
  return mend_subagent_list_get_n_items (&MEND_SUBAGENT_RETRY (model)->sched.list);
}

static gpointer
list_model_get_item (GListModel *model,
                     guint       position)
{
  MendSubagentEntry *entry = mend_subagent_list_get (&MEND_SUBAGENT_RETRY (model)->sched.list, position);

  return entry ? g_object_ref (entry->subagent) : NULL;
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = list_model_get_item_type;
  iface->get_n_items = list_model_get_n_items;
  iface->get_item = list_model_get_item;
}

/* A step changes a subagent at once for its handlers: the notifications,
 * and the one word to its list, go out when the step is done. */
static void
begin_change (MendSubagentEntry *entry)
{
  g_object_freeze_notify (G_OBJECT (entry->subagent));
}

static void
end_change (MendSubagentEntry *entry)
{
  g_object_thaw_notify (G_OBJECT (entry->subagent));
}

static void
resume (MendSubagentRetry *self,
        MendSubagentEntry *entry)
{
  g_autoptr(MendSubagentEntry) held = mend_subagent_entry_ref (entry);

  g_object_ref (self);
  begin_change (entry);
  mend_subagent_scheduler_skip (&self->sched, entry, "resumed");
  entry->exhausted = FALSE;
  mend_subagent_set_state (entry->subagent, MEND_SUBAGENT_RUNNING);
  mend_subagent_set_retryable (entry->subagent, FALSE);
  end_change (entry);
  g_signal_emit (self, signals[MEND_SUBAGENT_SIGNAL_RESUMED], 0, entry->subagent);
  g_object_unref (self);
}

/* Ids past the cap are refused: records and entries stay bounded. */
static gboolean
ids_fit (const char *id,
         const char *agent_id)
{
  if (strlen (id) <= MEND_SUBAGENT_MAX_ID_BYTES &&
      (agent_id == NULL || strlen (agent_id) <= MEND_SUBAGENT_MAX_ID_BYTES))
    return TRUE;

  mend_debug ("Subagent event ignored: an id is longer than %d bytes", MEND_SUBAGENT_MAX_ID_BYTES);
  return FALSE;
}

/* What the chat tells its subagent retry */

void
mend_subagent_retry_prompt_started (MendSubagentRetry *self,
                                    MendQueueItem     *item,
                                    MendTurn          *turn)
{
  GPtrArray *entries = self->sched.list.entries;

  for (guint i = 0; i < entries->len; i++)
    {
      MendSubagentEntry *entry = g_ptr_array_index (entries, i);

      if (entry->prompt_item == item)
        {
          g_clear_object (&entry->prompt_item);
          g_set_object (&entry->prompt_turn, turn);
          return;
        }
    }
}

void
mend_subagent_retry_restored_turn_started (MendSubagentRetry *self,
                                           MendTurn          *turn)
{
  mend_subagent_retry_state_find_turn (&self->sched, turn);
}

void
mend_subagent_retry_turn_finished (MendSubagentRetry *self,
                                   MendTurn          *turn)
{
  GPtrArray *entries = self->sched.list.entries;
  g_autoptr(MendSubagentEntry) entry = NULL;

  for (guint i = 0; i < entries->len && entry == NULL; i++)
    {
      MendSubagentEntry *candidate = g_ptr_array_index (entries, i);

      if (candidate->prompt_turn == turn)
        entry = mend_subagent_entry_ref (candidate);
    }

  if (entry == NULL)
    return;

  g_clear_object (&entry->prompt_turn);
  if (mend_subagent_get_state (entry->subagent) != MEND_SUBAGENT_FAILED)
    return;

  g_object_ref (self);
  begin_change (entry);
  /* A Stop ends the schedule: the turn was stopped, and the chat's Stop,
   * which follows, finds nothing under way. Planning the next attempt
   * first would flash a countdown that never was. */
  if (mend_turn_get_state (turn) == MEND_TURN_STOPPED)
    {
      entry->stopped = TRUE;
      mend_subagent_scheduler_settle (&self->sched, entry);
      mend_subagent_scheduler_emit_step (&self->sched, entry, "skipped",
                                         mend_subagent_get_attempts (entry->subagent), NULL, "stopped");
      g_signal_emit (self, signals[MEND_SUBAGENT_SIGNAL_SKIPPED], 0, entry->subagent, "stopped");
    }
  /* The agent did not resume it: the next attempt, unless a person asked
   * for this one, Stop ended the schedule, or it failed again meanwhile on
   * what is never retried. */
  else if (mend_subagent_scheduler_is_open (&self->sched))
    {
      if (!entry->manual && !entry->stopped && !entry->never_retried)
        mend_subagent_scheduler_schedule (&self->sched, entry, NULL, MEND_VERDICT_RETRY);
      else
        mend_subagent_scheduler_settle (&self->sched, entry);
    }
  end_change (entry);
  mend_subagent_scheduler_enforce_cap (&self->sched);
  g_object_unref (self);
}

void
mend_subagent_retry_chat_stopped (MendSubagentRetry *self)
{
  g_autoptr(GPtrArray) entries = mend_subagent_list_snapshot (&self->sched.list);

  g_object_ref (self);
  for (guint i = 0; i < entries->len; i++)
    {
      MendSubagentEntry *entry = g_ptr_array_index (entries, i);

      /* A prompt that is not queued and has not started may be on its way
       * out of the queue (Stop from a view of its pop): it is taken back. */
      if (entry->gone || (!mend_subagent_scheduler_in_flight (entry) && entry->prompt_item == NULL))
        continue;

      /* Stop ends the automatic attempts; a person's Retry still works. */
      begin_change (entry);
      entry->stopped = TRUE;
      mend_subagent_scheduler_skip (&self->sched, entry, "stopped");
      mend_subagent_scheduler_settle (&self->sched, entry);
      end_change (entry);
    }
  mend_subagent_scheduler_enforce_cap (&self->sched);
  g_object_unref (self);
}

void
mend_subagent_retry_chat_closed (MendSubagentRetry *self)
{
  g_autoptr(GPtrArray) entries = mend_subagent_list_snapshot (&self->sched.list);

  self->sched.closed = TRUE;
  g_object_ref (self);
  for (guint i = 0; i < entries->len; i++)
    {
      MendSubagentEntry *entry = g_ptr_array_index (entries, i);

      if (entry->gone)
        continue;
      begin_change (entry);
      mend_subagent_scheduler_skip (&self->sched, entry, "closed");
      mend_subagent_set_retryable (entry->subagent, FALSE);
      end_change (entry);
    }
  g_object_unref (self);
}

void
mend_subagent_retry_release_held (MendSubagentRetry *self)
{
  g_autoptr(GPtrArray) entries = NULL;
  MendSubagentScheduler *sched = &self->sched;

  if (!mend_subagent_scheduler_is_open (sched) || sched->external_turn)
    return;

  entries = mend_subagent_list_snapshot (&sched->list);
  g_object_ref (self);
  for (guint i = 0; i < entries->len; i++)
    {
      MendSubagentEntry *entry = g_ptr_array_index (entries, i);

      if (!entry->gone && entry->held && mend_subagent_scheduler_is_open (sched))
        {
          begin_change (entry);
          entry->held = FALSE;
          mend_subagent_scheduler_send_prompt (sched, entry);
          end_change (entry);
        }
    }
  g_object_unref (self);
}

gboolean
mend_subagent_retry_was_taken_back (MendSubagentRetry *self,
                                    const char        *provenance)
{
  g_autofree char *prompt_id = mend_subagent_retry_state_prompt_id (provenance);

  return prompt_id != NULL && mend_subagent_scheduler_was_taken_back (&self->sched, prompt_id);
}

void
mend_subagent_retry_save (MendSubagentRetry *self,
                          JsonBuilder       *builder)
{
  mend_subagent_retry_state_save (&self->sched, builder);
}

gboolean
mend_subagent_retry_restore (MendSubagentRetry  *self,
                             JsonArray          *array,
                             GError            **error)
{
  return mend_subagent_retry_state_restore (&self->sched, array, error);
}

gboolean
mend_subagent_retry_check (JsonArray  *array,
                           GError    **error)
{
  return mend_subagent_retry_state_check (array, error);
}

void
mend_subagent_retry_find_restored_prompts (MendSubagentRetry *self)
{
  mend_subagent_retry_state_find_prompts (&self->sched);
}

static void
mend_subagent_retry_dispose (GObject *object)
{
  MendSubagentRetry *self = (MendSubagentRetry *) object;

  /* The chat disposes its retry as it goes: nothing is sent any more. */
  self->sched.submit = NULL;
  self->sched.submit_data = NULL;

  /* Cancelling a wait emits on it: walk a held copy. */
  if (self->sched.list.entries->len > 0)
    {
      g_autoptr(GPtrArray) entries = mend_subagent_list_snapshot (&self->sched.list);

      for (guint i = 0; i < entries->len; i++)
        mend_subagent_scheduler_clear_wait (g_ptr_array_index (entries, i));
    }

  G_OBJECT_CLASS (mend_subagent_retry_parent_class)->dispose (object);
}

static void
mend_subagent_retry_finalize (GObject *object)
{
  MendSubagentRetry *self = (MendSubagentRetry *) object;

  mend_subagent_scheduler_clear (&self->sched);

  mend_owner_clear (&self->owner);
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
    case PROP_MAX_FAILED:
      g_value_set_uint (value, self->sched.max_failed);
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
  signals[MEND_SUBAGENT_SIGNAL_WAITING] =
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
  signals[MEND_SUBAGENT_SIGNAL_FIRED] =
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
  signals[MEND_SUBAGENT_SIGNAL_RESUMED] =
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
  signals[MEND_SUBAGENT_SIGNAL_SKIPPED] =
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
  signals[MEND_SUBAGENT_SIGNAL_EXHAUSTED] =
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
   *
   * Each record goes out on the chat's [signal@Mend.Chat::record] first,
   * then here. A step that a handler of either causes is recorded once
   * the record being told is done on both, so that the two streams hold
   * the steps in the same order.
   */
  signals[MEND_SUBAGENT_SIGNAL_RECORD] =
    g_signal_new ("record", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
mend_subagent_retry_init (MendSubagentRetry *self)
{
  mend_owner_init (&self->owner);
  mend_subagent_scheduler_init (&self->sched, G_OBJECT (self), signals);
}

MendSubagentRetry *
mend_subagent_retry_new (MendQueue              *queue,
                         MendClock              *clock,
                         MendErrorPolicy        *resume_policy,
                         const char             *chat_id,
                         MendSubagentSubmitFunc  submit,
                         gpointer                user_data)
{
  MendSubagentRetry *self = g_object_new (MEND_TYPE_SUBAGENT_RETRY, NULL);

  g_assert (submit != NULL);

  self->sched.submit = submit;
  self->sched.submit_data = user_data;
  self->sched.queue = g_object_ref (queue);
  self->sched.clock = g_object_ref (clock);
  self->sched.policy = g_object_ref (resume_policy);
  self->sched.chat_id = g_strdup (chat_id);

  return self;
}

void
mend_subagent_retry_set_external_turn (MendSubagentRetry *self,
                                       gboolean           external_turn)
{
  self->sched.external_turn = external_turn;
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
  MendSubagentEntry *entry;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (id != NULL, NULL);

  entry = mend_subagent_list_find (&self->sched.list, id);
  return entry ? entry->subagent : NULL;
}

/**
 * mend_subagent_retry_note_started:
 * @self: a subagent retry
 * @id: the subagent's id
 * @agent_id: (nullable): the id the agent resumes it by
 * @name: (nullable): its description
 *
 * Notes that a top-level subagent started. A start for an agent id that is
 * known is a resume (see [method@Mend.SubagentRetry.note_resumed]). A new subagent replaces
 * a failed one of the same name: that one's retry is skipped and it is
 * forgotten. Ids longer than %MEND_SUBAGENT_MAX_ID_BYTES are ignored.
 *
 * Returns: (transfer none) (nullable): the subagent, or %NULL when an id
 *   was too long
 */
MendSubagent *
mend_subagent_retry_note_started (MendSubagentRetry *self,
                                  const char        *id,
                                  const char        *agent_id,
                                  const char        *name)
{
  g_autoptr(MendSubagentEntry) held = NULL;
  MendSubagentList *list;
  MendSubagentEntry *entry;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (id != NULL, NULL);

  if (!ids_fit (id, agent_id))
    return NULL;

  list = &self->sched.list;
  entry = mend_subagent_list_find_by_agent_id (list, agent_id);
  if (entry == NULL)
    entry = mend_subagent_list_find_by_id (list, id);
  if (entry != NULL)
    {
      held = mend_subagent_entry_ref (entry);
      /* Transfer none: the list may have let go of it meanwhile. */
      resume (self, entry);
      return entry->gone ? NULL : entry->subagent;
    }

  g_object_ref (self);

  if (name != NULL)
    {
      g_autoptr(GPtrArray) entries = mend_subagent_list_snapshot (list);

      for (guint i = 0; i < entries->len; i++)
        {
          MendSubagentEntry *old = g_ptr_array_index (entries, i);

          if (!old->gone &&
              mend_subagent_get_state (old->subagent) == MEND_SUBAGENT_FAILED &&
              g_strcmp0 (mend_subagent_get_name (old->subagent), name) == 0)
            {
              /* Told while it is still in the list, then taken out. */
              begin_change (old);
              mend_subagent_scheduler_skip (&self->sched, old, "replaced");
              mend_subagent_set_retryable (old->subagent, FALSE);
              end_change (old);
              mend_subagent_list_remove (list, old);
            }
        }

      /* A handler may have started this very subagent meanwhile. */
      entry = mend_subagent_list_find_by_id (list, id);
      if (entry != NULL)
        {
          g_object_unref (self);
          return entry->subagent;
        }
    }

  entry = held = mend_subagent_list_add (list, &self->sched, id, agent_id, name);
  mend_subagent_scheduler_enforce_cap (&self->sched);

  g_object_unref (self);
  /* Transfer none: a handler may have made the list let go of it. */
  return entry->gone ? NULL : entry->subagent;
}

/* Whether a transient failure of @entry now would plan its next attempt. */
static gboolean
could_retry (MendSubagentScheduler *sched,
             MendSubagentEntry     *entry)
{
  return mend_subagent_scheduler_is_open (sched) &&
         mend_subagent_get_agent_id (entry->subagent) != NULL &&
         !entry->manual && !mend_subagent_scheduler_in_flight (entry);
}

/**
 * mend_subagent_retry_note_failed:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @failure: what it failed on
 *
 * Notes that a subagent ended failed. The chat's resume policy classifies
 * @failure; a transient failure of a subagent with an agent id is retried
 * while the chat is open. A failure for an unknown id makes a subagent of
 * it (its agent id the same id), so that a forgotten agent still gets its
 * retries.
 */
void
mend_subagent_retry_note_failed (MendSubagentRetry *self,
                                 const char        *id,
                                 MendFailure       *failure)
{
  g_autoptr(MendSubagentEntry) entry = NULL;
  g_autoptr(MendVerdict) verdict = NULL;
  g_autoptr(MendFailure) judged = NULL;
  MendVerdictStep step = MEND_VERDICT_GIVE_UP;
  MendSubagentScheduler *sched;
  MendSubagentEntry *found;
  MendFailureKind kind = MEND_FAILURE_PERMANENT;
  gboolean open;
  gint64 now_us;

  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (id != NULL);
  g_return_if_fail (MEND_IS_FAILURE (failure));

  if (!ids_fit (id, NULL))
    return;

  g_object_ref (self);
  sched = &self->sched;
  /* A limit's reset in words ("resets 9:23pm") is read at the chat's time. */
  now_us = mend_clock_get_real_time (sched->clock);
  mend_failure_resolve_reset (failure, now_us);

  found = mend_subagent_list_find (&sched->list, id);
  entry = found != NULL ? mend_subagent_entry_ref (found)
                        : mend_subagent_list_add (&sched->list, sched, id, id, NULL);

  /* Only a chat's subagents are retried. One that could be is judged and
   * its next attempt decided in one pass, as a turn's failure is. */
  if (sched->submit != NULL && could_retry (sched, entry))
    {
      verdict = mend_subagent_scheduler_decide (sched, entry, failure, now_us, &step);
      kind = mend_verdict_get_kind (verdict);
      judged = g_object_ref (mend_verdict_get_failure (verdict));
    }
  else if (sched->submit != NULL)
    kind = mend_verdict_classify (sched->policy, failure, FALSE, &judged);

  /* The handlers of the new entry may have replaced, ended or forgotten
   * it: then the rest is not ours to do. */
  if (!entry->gone)
    {
      open = mend_subagent_scheduler_is_open (sched);
      begin_change (entry);
      mend_subagent_set_state (entry->subagent, MEND_SUBAGENT_FAILED);
      /* As the policy read it, as a turn keeps its last failure: the
       * records, the wait and the entry name one reason. */
      mend_subagent_set_failure (entry->subagent, judged ? judged : failure);
      /* Told while its prompt runs: that turn's end plans nothing. */
      entry->never_retried = kind != MEND_FAILURE_TRANSIENT && step != MEND_VERDICT_AT_RESET;
      mend_subagent_set_retryable (entry->subagent,
                                   open && mend_subagent_get_agent_id (entry->subagent) != NULL);

      /* A duplicate notice while a retry is under way changes nothing
       * more. A usage limit waits for its reset when the resume policy
       * says so. */
      if ((kind == MEND_FAILURE_TRANSIENT || (verdict != NULL && step == MEND_VERDICT_AT_RESET)) &&
          could_retry (sched, entry))
        mend_subagent_scheduler_schedule (sched, entry, verdict, step);
      else if (!mend_subagent_scheduler_in_flight (entry))
        mend_subagent_scheduler_settle (sched, entry);
      end_change (entry);
    }

  mend_subagent_scheduler_enforce_cap (sched);
  g_object_unref (self);
}

/**
 * mend_subagent_retry_note_resumed:
 * @self: a subagent retry
 * @agent_id: the agent id of the subagent that runs again
 *
 * Notes that a subagent runs again, as after a SendMessage resume. Its
 * retry is skipped, a queued resume prompt taken back, and it is no longer
 * retryable.
 */
void
mend_subagent_retry_note_resumed (MendSubagentRetry *self,
                                  const char        *agent_id)
{
  MendSubagentEntry *entry;

  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (agent_id != NULL);

  entry = mend_subagent_list_find_by_agent_id (&self->sched.list, agent_id);
  if (entry != NULL)
    resume (self, entry);
}

/**
 * mend_subagent_retry_note_ended:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @state: how it ended: %MEND_SUBAGENT_COMPLETED or %MEND_SUBAGENT_CANCELLED
 *
 * Notes that a subagent ended other than by failing: its retry is skipped
 * and it is no longer retryable.
 */
void
mend_subagent_retry_note_ended (MendSubagentRetry *self,
                                const char        *id,
                                MendSubagentState  state)
{
  g_autoptr(MendSubagentEntry) held = NULL;
  MendSubagentEntry *entry;

  g_return_if_fail (MEND_IS_SUBAGENT_RETRY (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (id != NULL);
  g_return_if_fail (state != MEND_SUBAGENT_RUNNING);

  entry = mend_subagent_list_find (&self->sched.list, id);
  if (entry == NULL)
    return;

  held = mend_subagent_entry_ref (entry);
  g_object_ref (self);
  begin_change (entry);
  mend_subagent_scheduler_skip (&self->sched, entry, "ended");
  mend_subagent_set_state (entry->subagent, state);
  mend_subagent_set_retryable (entry->subagent, FALSE);
  mend_subagent_scheduler_settle (&self->sched, entry);
  end_change (entry);
  mend_subagent_scheduler_enforce_cap (&self->sched);
  g_object_unref (self);
}

/* What a subagent looks like before a change, to tell whether it changed. */
typedef struct
{
  MendSubagent      *subagent;
  MendSubagentState  state;
  MendRetryWait     *retry;
  gboolean           retryable;
} Snapshot;

/* The subagent a task names: by its agent id, else by its id, each in its
 * own role first (an agent id may be another subagent's id), then in
 * either (one made of a single id). */
static MendSubagentEntry *
find_task (MendSubagentList *list,
           const char       *id,
           const char       *agent_id)
{
  MendSubagentEntry *entry = mend_subagent_list_find_by_agent_id (list, agent_id);

  if (entry == NULL)
    entry = mend_subagent_list_find_by_id (list, id);
  if (entry == NULL && agent_id != NULL)
    entry = mend_subagent_list_find (list, agent_id);
  if (entry == NULL && id != NULL)
    entry = mend_subagent_list_find (list, id);
  return entry;
}

static void
snapshot_take (Snapshot          *snapshot,
               MendSubagentEntry *entry)
{
  MendSubagent *subagent = entry ? entry->subagent : NULL;

  snapshot->subagent = subagent ? g_object_ref (subagent) : NULL;
  snapshot->state = subagent ? mend_subagent_get_state (subagent) : MEND_SUBAGENT_RUNNING;
  snapshot->retry = subagent ? mend_subagent_get_retry (subagent) : NULL;
  snapshot->retryable = subagent ? mend_subagent_get_retryable (subagent) : FALSE;
}

/* Compares with @entry as it is now, and drops the snapshot. */
static gboolean
snapshot_changed (Snapshot          *snapshot,
                  MendSubagentEntry *entry)
{
  Snapshot now;
  gboolean changed;

  snapshot_take (&now, entry);
  changed = now.subagent != snapshot->subagent ||
            now.state != snapshot->state ||
            now.retry != snapshot->retry ||
            now.retryable != snapshot->retryable;
  g_clear_object (&now.subagent);
  g_clear_object (&snapshot->subagent);

  return changed;
}

gboolean
mend_subagent_retry_task_ended (MendSubagentRetry *self,
                                const char        *id,
                                const char        *agent_id,
                                const char        *name,
                                MendSubagentState  state,
                                MendFailure       *failure)
{
  MendSubagentList *list;
  MendSubagentEntry *entry;
  g_autofree char *key = NULL;
  Snapshot before;
  gboolean changed;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (id != NULL || agent_id != NULL, FALSE);
  g_return_val_if_fail (state != MEND_SUBAGENT_RUNNING, FALSE);
  g_return_val_if_fail ((state == MEND_SUBAGENT_FAILED) == MEND_IS_FAILURE (failure), FALSE);

  list = &self->sched.list;
  entry = find_task (list, id, agent_id);
  if (entry == NULL && (state != MEND_SUBAGENT_FAILED || id == NULL))
    return FALSE;
  /* One to make is refused whole when an id is too long, as its start
   * would be: never made of the other id alone, a call's id as its agent
   * id. */
  if (entry == NULL && !ids_fit (id, agent_id))
    return FALSE;

  g_object_ref (self);
  snapshot_take (&before, entry);
  if (entry == NULL)
    {
      mend_subagent_retry_note_started (self, id, agent_id, name);
      entry = find_task (list, id, agent_id);
    }
  key = g_strdup (entry ? mend_subagent_get_id (entry->subagent) : id);

  if (state == MEND_SUBAGENT_FAILED)
    mend_subagent_retry_note_failed (self, key, failure);
  else
    mend_subagent_retry_note_ended (self, key, state);

  changed = snapshot_changed (&before, find_task (list, id, agent_id));
  g_object_unref (self);
  return changed;
}

/**
 * mend_subagent_retry_resume_now:
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
mend_subagent_retry_resume_now (MendSubagentRetry  *self,
                                const char         *id,
                                GError            **error)
{
  g_autoptr(MendSubagentEntry) held = NULL;
  MendSubagentEntry *entry;

  g_return_val_if_fail (MEND_IS_SUBAGENT_RETRY (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (id != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = mend_subagent_list_find (&self->sched.list, id);
  if (entry == NULL)
    {
      g_set_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_UNKNOWN_SUBAGENT,
                   _("No subagent has the id “%s”"), id);
      return FALSE;
    }
  if (!mend_subagent_scheduler_is_open (&self->sched))
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_CLOSED,
                           _("The chat is closed"));
      return FALSE;
    }
  /* A prompt being sent (a handler of its fired clicked) is under way too. */
  if (entry->held || entry->sending || mend_subagent_scheduler_prompt_queued (&self->sched, entry) ||
      entry->prompt_turn != NULL)
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

  held = mend_subagent_entry_ref (entry);
  g_object_ref (self);
  begin_change (entry);
  mend_subagent_scheduler_clear_wait (entry);
  entry->manual = TRUE;
  mend_subagent_scheduler_send_prompt (&self->sched, entry);
  end_change (entry);
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
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->sched.max_failed;
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
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_failed >= 1);

  if (self->sched.max_failed != max_failed)
    {
      g_object_ref (self);
      self->sched.max_failed = max_failed;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_FAILED]);
      mend_subagent_scheduler_enforce_cap (&self->sched);
      g_object_unref (self);
    }
}

