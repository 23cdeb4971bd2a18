/* mend-chat.c — MendChat: one conversation, its queue, its turns and its subagents
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-clock.h"
#include "mend-chat-private.h"
#include "mend-chat-status-private.h"
#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-failure.h"
#include "mend-i18n-private.h"
#include "mend-json-private.h"
#include "mend-queue-private.h"
#include "mend-queue-item-private.h"
#include "mend-redact-private.h"
#include "mend-retry-wait.h"
#include "mend-gate.h"
#include "mend-sender-private.h"
#include "mend-subagent-retry-private.h"
#include "mend-turn-private.h"

/**
 * MendChat:
 *
 * One conversation: its lifecycle, the user's queued follow-ups and the
 * turn that runs.
 *
 * [method@Mend.Chat.submit] runs a message at once when the chat is ready
 * (or in error) and nothing runs, and queues it otherwise. The rules that
 * keep the user's follow-ups safe:
 *
 * 1. A failed turn never promotes the queue. Only a turn that succeeded
 *    makes the chat ready and runs the queue's head.
 * 2. While a turn retries it stays busy, so nothing can promote in between.
 * 3. When a turn gives up (retries used up, or a failure that is not
 *    retried) the chat goes to %MEND_LIFECYCLE_ERROR. If the queue holds
 *    items and is not full, [property@Mend.Chat:continue-prompt] is
 *    inserted at its head — an ordinary, editable item that runs only when
 *    something promotes the head. Nothing is ever popped; a full queue gets
 *    no insert and loses nothing; an empty queue gets nothing.
 * 4. Stop makes the chat ready: no retry, no Continue, the queue untouched
 *    and not promoted. The queue moves again on [method@Mend.Chat.send_next]
 *    or after the next turn that succeeds.
 * 5. Retries never repeat the user's line: a turn is one user message
 *    however many attempts it takes.
 *
 * Every retry step is reported as one [signal@Mend.Chat::record], a line
 * of JSON for logs: `{"kind":"turn_retry","turnId":…,"reason":"capacity",
 * "outcome":"scheduled","attempt":1,"of":4,"nextAt":…}`.
 *
 * Each chat's waits are offset by a stable amount in
 * [0, [property@Mend.ErrorPolicy:stagger-ms]) derived from its id, so that
 * chats failing on the same gateway blip do not all retry at once.
 *
 * Example:
 *
 * ```c
 * MendChat *chat = mend_chat_new_with_sender (MEND_SENDER (sender), NULL);
 * g_autoptr(GError) error = NULL;
 *
 * g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), NULL);
 * if (!mend_chat_submit (chat, "Fix the failing build", NULL, &error))
 *   g_warning ("%s", error->message);
 * // While that turn runs or retries, this one waits in the queue.
 * mend_chat_submit (chat, "Then update the changelog", NULL, NULL);
 *
 * // The user's Stop, and later the Send of an empty composer:
 * mend_chat_stop (chat);
 * mend_chat_send_next (chat);
 * ```
 */

struct _MendChat
{
  GObject          parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  char            *id;
  MendClock       *clock;
  MendErrorPolicy *policy;
  MendErrorPolicy *resume_policy;
  MendSender      *sender;
  MendGate        *gate;
  MendQueue       *queue;
  MendSubagentRetry *subagents;
  MendTurn        *turn;
  gboolean         turn_exhausted;
  MendLifecycle    lifecycle;
  gboolean         external_turn;
  guint            n_readers;     /* stream observers the app made for the chat */
  char            *continue_prompt;
  gboolean         advancing;     /* the queue moves in a loop, never by recursion */
  guint            holding;       /* while > 0, nothing starts: submissions queue */
  guint            stops;         /* Stops so far: one during a pop starts nothing */
  gboolean         advance_again;
  guint            starting;      /* inside mend_turn_start () of a new turn */
  gboolean         send_again;    /* a send_next () asked for meanwhile */
  gboolean         draining;      /* running those, in a loop */

  /* What Retry runs again: the last turn that gave up or was stopped. */
  char            *retry_id;
  char            *retry_prompt;
  char            *retry_provenance;
  char            *continue_id;   /* the Continue item its give-up queued */
  gboolean         can_retry;

  /* The state an app binds to, kept across turns. */
  MendRetryWait   *wait;
  MendFailure     *last_failure;
  char            *status_text;
  guint            quiet_wait_ms;
  gboolean         wait_shown;    /* the turn's last wait is one to show */
  gulong           tick_id;       /* its countdown, while watched */
  guint            ending_turn;   /* 1: the end's notifications go out, 2: turn-finished */
  gboolean         gave_up;       /* the last turn gave up */
  guint            gave_up_retries;
};

enum {
  PROP_0,
  PROP_ID,
  PROP_CLOCK,
  PROP_POLICY,
  PROP_RESUME_POLICY,
  PROP_SENDER,
  PROP_GATE,
  PROP_QUEUE,
  PROP_SUBAGENTS,
  PROP_TURN,
  PROP_LIFECYCLE,
  PROP_EXTERNAL_TURN,
  PROP_CONTINUE_PROMPT,
  PROP_WAIT,
  PROP_LAST_FAILURE,
  PROP_CAN_RETRY,
  PROP_STATUS_TEXT,
  PROP_QUIET_WAIT_MS,
  N_PROPS
};

enum {
  TURN_STARTED,
  TURN_FINISHED,
  STOPPED,
  RECORD,
  TEXT_DELTA,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendChat, mend_chat, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

#define DEFAULT_QUIET_WAIT_MS 1000

static gboolean can_run_now (MendChat *self);

static void
update_can_retry (MendChat *self)
{
  gboolean can_retry = self->retry_prompt != NULL && can_run_now (self) && !self->send_again &&
                       self->ending_turn == 0;

  if (self->can_retry != can_retry)
    {
      self->can_retry = can_retry;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_RETRY]);
    }
}

static void
forget_retry (MendChat *self)
{
  g_clear_pointer (&self->retry_id, g_free);
  g_clear_pointer (&self->retry_prompt, g_free);
  g_clear_pointer (&self->retry_provenance, g_free);
  g_clear_pointer (&self->continue_id, g_free);
}

static void
update_status (MendChat *self)
{
  MendChatStatusInput input = {
    .closed = self->lifecycle == MEND_LIFECYCLE_CLOSED,
    .turn = self->turn,
    .wait_shown = self->wait_shown,
    .gave_up = self->gave_up,
    .failure = self->last_failure,
    .retries = self->gave_up_retries,
    .now_us = self->clock != NULL ? mend_clock_get_real_time (self->clock) : 0,
  };
  g_autofree char *text = mend_chat_status_compose (&input);

  if (text != NULL && g_strcmp0 (text, self->status_text) != 0)
    {
      g_free (self->status_text);
      self->status_text = g_steal_pointer (&text);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATUS_TEXT]);
    }
}

/* Whether anything watches the status: a binding, a handler. */
static gboolean
status_watched (MendChat *self)
{
  static guint notify_id;

  if (notify_id == 0)
    notify_id = g_signal_lookup ("notify", G_TYPE_OBJECT);
  return g_signal_has_handler_pending (self, notify_id, g_quark_from_static_string ("status-text"), FALSE);
}

static void
stop_ticking (MendChat *self)
{
  if (self->tick_id != 0 && self->wait != NULL)
    g_signal_handler_disconnect (self->wait, self->tick_id);
  self->tick_id = 0;
}

static void
on_wait_ticked (MendRetryWait *wait,
                GParamSpec    *pspec,
                MendChat      *self)
{
  /* Nothing watches any more: the wait wakes at its deadline only. */
  if (!status_watched (self))
    {
      stop_ticking (self);
      return;
    }
  update_status (self);
}

/* A wait shown ticks the status each second while something watches the
 * status: from when the wait starts, or from the first read of the
 * status after (a binding reads it as it is made). */
static void
ensure_ticking (MendChat *self)
{
  if (self->tick_id == 0 && self->wait != NULL && self->wait_shown &&
      mend_retry_wait_get_state (self->wait) == MEND_RETRY_WAIT_PENDING && status_watched (self))
    self->tick_id = g_signal_connect_object (self->wait, "notify::remaining-seconds",
                                             G_CALLBACK (on_wait_ticked), self, 0);
}

/* The turn's wait is the chat's. Whether it is shown is decided as it
 * starts: a gate's hold, or a wait of quiet-wait-ms or more. A quick
 * one, or one nobody watches, costs no wakeup (the status is made anew
 * when read). */
static void
set_wait (MendChat      *self,
          MendRetryWait *wait)
{
  if (self->wait == wait)
    return;

  stop_ticking (self);
  g_set_object (&self->wait, wait);
  if (wait != NULL)
    self->wait_shown = mend_retry_wait_get_held (wait) ||
                       mend_retry_wait_get_delay_ms (wait) >= self->quiet_wait_ms;
  ensure_ticking (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WAIT]);
}

static void
set_last_failure (MendChat    *self,
                  MendFailure *failure)
{
  if (g_set_object (&self->last_failure, failure))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_FAILURE]);
}

/* The turn changed: its wait, its failure, its state. */
static void
on_turn_notify (MendTurn   *turn,
                GParamSpec *pspec,
                MendChat   *self)
{
  MendFailure *failure = mend_turn_get_last_failure (turn);

  if (turn != self->turn)
    return;

  g_object_freeze_notify (G_OBJECT (self));
  set_wait (self, mend_turn_get_wait (turn));
  /* A Stop is no failure to show. */
  if (failure != NULL && mend_failure_get_kind (failure) != MEND_FAILURE_STOPPED)
    set_last_failure (self, failure);
  update_status (self);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
on_turn_text_delta (MendTurn   *turn,
                    const char *text,
                    MendChat   *self)
{
  g_signal_emit (self, signals[TEXT_DELTA], 0, turn, text);
}

static void
set_lifecycle (MendChat      *self,
               MendLifecycle  lifecycle)
{
  if (self->lifecycle != lifecycle)
    {
      self->lifecycle = lifecycle;
      /* The subagents hear of it first: their resumes end. */
      if (lifecycle == MEND_LIFECYCLE_CLOSED)
        mend_subagent_retry_chat_closed (self->subagents);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LIFECYCLE]);
      update_can_retry (self);
      update_status (self);
    }
}

/* One structured log line per retry step of a turn. @wait gives nextAt. */
static void
emit_record (MendChat      *self,
             MendTurn      *turn,
             const char    *outcome,
             MendReason     reason,
             guint          attempt,
             MendRetryWait *wait)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autofree char *json = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, "turn_retry");
  json_builder_set_member_name (builder, "turnId");
  json_builder_add_string_value (builder, mend_turn_get_id (turn));
  mend_json_add_nick (builder, "reason", MEND_TYPE_REASON, reason);
  json_builder_set_member_name (builder, "outcome");
  json_builder_add_string_value (builder, outcome);
  json_builder_set_member_name (builder, "attempt");
  json_builder_add_int_value (builder, attempt);
  json_builder_set_member_name (builder, "of");
  json_builder_add_int_value (builder, mend_turn_get_max_attempts (turn) - 1);
  if (wait != NULL)
    {
      json_builder_set_member_name (builder, "nextAt");
      json_builder_add_int_value (builder, mend_retry_wait_get_next_at (wait) / 1000);
    }
  json_builder_end_object (builder);

  json = mend_json_builder_finish (builder);
  g_signal_emit (self, signals[RECORD], 0, json);
}

/* The retries a turn made so far. */
static guint
retries_made (MendTurn *turn)
{
  guint attempt = mend_turn_get_attempt (turn);

  return attempt > 0 ? attempt - 1 : 0;
}

static MendReason
last_reason (MendTurn *turn)
{
  MendFailure *failure = mend_turn_get_last_failure (turn);

  return failure ? mend_failure_get_reason (failure) : MEND_REASON_CANCELLED;
}

static void
on_turn_waiting (MendTurn      *turn,
                 MendRetryWait *wait,
                 MendChat      *self)
{
  emit_record (self, turn, mend_retry_wait_get_held (wait) ? "held" : "scheduled",
               mend_retry_wait_get_reason (wait), mend_retry_wait_get_attempt (wait), wait);
}

static void
on_turn_resumed (MendTurn *turn,
                 guint     attempt,
                 MendChat *self)
{
  /* Attempt n + 1 is retry n. */
  emit_record (self, turn, "fired", last_reason (turn), attempt - 1, NULL);
}

static void
on_turn_exhausted (MendTurn    *turn,
                   MendFailure *failure,
                   MendChat    *self)
{
  self->turn_exhausted = TRUE;
  emit_record (self, turn, "exhausted", mend_failure_get_reason (failure),
               retries_made (turn), NULL);
}

static void
insert_continue (MendChat *self)
{
  g_autoptr(GError) error = NULL;
  MendQueueItem *item;

  if (mend_queue_get_length (self->queue) == 0 || mend_queue_is_full (self->queue))
    return;

  item = mend_queue_insert_front (self->queue, self->continue_prompt, MEND_CHAT_CONTINUE_PROVENANCE, &error);
  if (item == NULL && error != NULL)
    mend_debug ("Chat %s: no Continue item: %s", self->id, error->message);
  /* Retry takes it out again: the same intent. */
  g_free (self->continue_id);
  self->continue_id = item != NULL ? g_strdup (mend_queue_item_get_id (item)) : NULL;
}

/* Runs the queue's head when the chat is ready and nothing runs. A turn
 * whose attempt succeeds at once finishes inside send_next() and asks to
 * move the queue again: that runs in this loop, not one frame deeper, so
 * a thousand queued items never nest a thousand calls. */
static void
advance_queue (MendChat *self)
{
  if (self->advancing)
    {
      self->advance_again = TRUE;
      return;
    }

  g_object_ref (self);
  self->advancing = TRUE;
  do
    {
      self->advance_again = FALSE;
      if (self->lifecycle == MEND_LIFECYCLE_READY && self->turn == NULL)
        mend_chat_send_next (self);
    }
  while (self->advance_again);
  self->advancing = FALSE;
  g_object_unref (self);
}

static void
on_turn_finished (MendTurn      *turn,
                  MendTurnState  state,
                  MendChat      *self)
{
  if (turn != self->turn)
    return;

  g_object_ref (self);

  if (state == MEND_TURN_FAILED && !self->turn_exhausted)
    emit_record (self, turn, "gave_up", last_reason (turn), retries_made (turn), NULL);
  else if (state == MEND_TURN_STOPPED)
    emit_record (self, turn, "stopped", last_reason (turn), retries_made (turn), NULL);

  /* A record handler disposed the chat, which let go of the turn. */
  if (self->turn != turn)
    {
      g_object_unref (self);
      return;
    }

  g_signal_handlers_disconnect_by_data (turn, self);
  self->turn = NULL;
  /* Until the queue moved on, a submission from a handler of what follows
   * queues behind the head. */
  if (state == MEND_TURN_SUCCEEDED)
    self->holding++;

  /* Retry applies once turn-finished was told, not in the handlers of
   * the notifications before it. */
  self->ending_turn = 1;
  g_object_freeze_notify (G_OBJECT (self));
  /* What Retry runs again, and what the chat shows of the end. */
  forget_retry (self);
  self->gave_up = state == MEND_TURN_FAILED;
  self->gave_up_retries = retries_made (turn);
  self->wait_shown = FALSE;
  set_wait (self, NULL);
  if (state == MEND_TURN_SUCCEEDED)
    set_last_failure (self, NULL);
  else
    {
      self->retry_id = g_strdup (mend_turn_get_id (turn));
      self->retry_prompt = g_strdup (mend_turn_get_prompt (turn));
      self->retry_provenance = g_strdup (mend_turn_get_provenance (turn));
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TURN]);
  if (self->lifecycle != MEND_LIFECYCLE_CLOSED)
    {
      if (state == MEND_TURN_FAILED)
        {
          set_lifecycle (self, MEND_LIFECYCLE_ERROR);
          insert_continue (self);
        }
      else
        set_lifecycle (self, MEND_LIFECYCLE_READY);
    }
  update_can_retry (self);
  update_status (self);
  g_object_thaw_notify (G_OBJECT (self));

  /* The subagents first: a resume prompt's turn may plan the next. */
  mend_subagent_retry_turn_finished (self->subagents, turn);
  /* A handler of turn-finished may Retry; can-retry says so after it. */
  self->ending_turn = 2;
  g_signal_emit (self, signals[TURN_FINISHED], 0, turn);
  self->ending_turn = 0;
  update_can_retry (self);

  /* Only success moves the queue. */
  if (state == MEND_TURN_SUCCEEDED)
    {
      self->holding--;
      advance_queue (self);
    }

  g_object_unref (turn);
  g_object_unref (self);
}

/* Makes the chat's turn and announces it; the caller starts it, and owns
 * the reference returned. @item is the queue item it comes from, if any:
 * a resume prompt's, the subagents follow it by that item. */
static MendTurn *
adopt_turn (MendChat      *self,
            const char    *id,
            const char    *text,
            const char    *provenance,
            const char    *retry_of,
            MendQueueItem *item)
{
  MendTurn *turn;

  g_assert (self->turn == NULL);

  turn = g_object_new (MEND_TYPE_TURN,
                       "id", id,
                       "prompt", text,
                       "provenance", provenance,
                       "retry-of", retry_of,
                       "policy", self->policy,
                       "clock", self->clock,
                       "sender", self->sender,
                       "delay-offset-ms", mend_error_policy_get_stagger_for (self->policy, self->id),
                       NULL);
  mend_turn_set_gate (turn, self->gate, self->id);
  mend_turn_set_read (turn, self->n_readers > 0);

  /* The chat holds the turn until it finishes. */
  self->turn = turn;
  self->turn_exhausted = FALSE;
  g_signal_connect (turn, "waiting", G_CALLBACK (on_turn_waiting), self);
  g_signal_connect (turn, "resumed", G_CALLBACK (on_turn_resumed), self);
  g_signal_connect (turn, "exhausted", G_CALLBACK (on_turn_exhausted), self);
  g_signal_connect (turn, "finished", G_CALLBACK (on_turn_finished), self);
  g_signal_connect (turn, "notify::wait", G_CALLBACK (on_turn_notify), self);
  g_signal_connect (turn, "notify::last-failure", G_CALLBACK (on_turn_notify), self);
  g_signal_connect (turn, "notify::state", G_CALLBACK (on_turn_notify), self);
  /* Only when the app listens: a sender may skip the parse that finds
   * the text (the stream-json agent's) when nothing does. */
  if (g_signal_has_handler_pending (self, signals[TEXT_DELTA], 0, FALSE))
    g_signal_connect (turn, "text-delta", G_CALLBACK (on_turn_text_delta), self);

  /* Announced before the notifications go out, so that no handler of
   * theirs can end the turn before it was announced; the caller's
   * reference keeps it alive whatever the handlers do. */
  g_object_ref (turn);
  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TURN]);
  /* A new turn is no longer the one to retry. */
  forget_retry (self);
  self->gave_up = FALSE;
  self->wait_shown = FALSE;
  set_lifecycle (self, MEND_LIFECYCLE_BUSY);
  update_can_retry (self);
  update_status (self);
  if (item != NULL)
    mend_subagent_retry_prompt_started (self->subagents, item, turn);
  else if (id != NULL)
    /* Only a restored turn comes with its id: a resume prompt's, saved
     * while it ran, is its subagent's again. */
    mend_subagent_retry_restored_turn_started (self->subagents, turn);
  g_signal_emit (self, signals[TURN_STARTED], 0, turn);
  g_object_thaw_notify (G_OBJECT (self));
  g_object_unref (self);

  return turn;
}

static gboolean send_head (MendChat *self);

static void
start_turn (MendChat      *self,
            const char    *text,
            const char    *provenance,
            const char    *retry_of,
            MendQueueItem *item)
{
  g_autoptr(MendTurn) turn = NULL;

  /* Handlers of what follows may drop the chat. */
  g_object_ref (self);

  /* A turn-started handler may have stopped it already, or dropped the
   * chat, which stops it: that turn ended as it started too. */
  self->starting++;
  turn = adopt_turn (self, NULL, text, provenance, retry_of, item);
  if (mend_turn_get_state (turn) == MEND_TURN_IDLE)
    mend_turn_start (turn, NULL);
  self->starting--;

  /* A turn that ended inside its start (nothing ran it, a sender that
   * answered at once) whose end's handler sent the next: that one runs
   * here, in a loop, not a frame deeper, so that a thousand queued
   * messages never nest a thousand calls. */
  if (self->starting == 0 && !self->draining && self->send_again)
    {
      self->draining = TRUE;
      while (self->send_again)
        {
          self->send_again = FALSE;
          send_head (self);
        }
      self->draining = FALSE;
    }
  g_object_unref (self);
}

void
mend_chat_restore_turn (MendChat    *self,
                        const char  *id,
                        const char  *prompt,
                        const char  *provenance,
                        guint        attempt,
                        gint64       delay_ms,
                        MendFailure *failure)
{
  g_autoptr(MendTurn) turn = NULL;

  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (self->turn == NULL);

  /* A handler of what was restored before closed the chat. */
  if (self->lifecycle == MEND_LIFECYCLE_CLOSED)
    return;

  turn = adopt_turn (self, id, prompt, provenance, NULL, NULL);
  if (mend_turn_get_state (turn) == MEND_TURN_IDLE)
    mend_turn_start_restored (turn, attempt, delay_ms, failure);
}

gboolean
mend_chat_get_retry (MendChat    *self,
                     const char **turn_id,
                     const char **prompt,
                     const char **provenance,
                     const char **continue_id)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);

  *turn_id = self->retry_id;
  *prompt = self->retry_prompt;
  *provenance = self->retry_provenance;
  *continue_id = self->continue_id;
  return self->retry_prompt != NULL && self->turn == NULL;
}

void
mend_chat_restore_retry (MendChat    *self,
                         const char  *turn_id,
                         const char  *prompt,
                         const char  *provenance,
                         const char  *continue_id,
                         MendFailure *failure)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (prompt != NULL);

  /* A turn runs already (a handler of the restore started one), or the
   * chat closed meanwhile: nothing to retry then. */
  if (self->turn != NULL || self->lifecycle == MEND_LIFECYCLE_CLOSED)
    return;

  g_object_ref (self);
  g_object_freeze_notify (G_OBJECT (self));
  forget_retry (self);
  self->retry_id = g_strdup (turn_id);
  self->retry_prompt = g_strdup (prompt);
  self->retry_provenance = g_strdup (provenance);
  self->continue_id = g_strdup (continue_id);
  self->gave_up = failure != NULL && self->lifecycle == MEND_LIFECYCLE_ERROR;
  self->gave_up_retries = 0;
  if (failure != NULL)
    set_last_failure (self, failure);
  update_can_retry (self);
  update_status (self);
  g_object_thaw_notify (G_OBJECT (self));
  g_object_unref (self);
}

const MendOwner *
mend_chat_get_owner (MendChat *self)
{
  return &self->owner;
}

void
mend_chat_reader_attached (MendChat *self,
                           gboolean  attached)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (attached || self->n_readers > 0);

  if (attached)
    self->n_readers++;
  else
    self->n_readers--;
  if (self->turn != NULL)
    mend_turn_set_read (self->turn, self->n_readers > 0);
}

void
mend_chat_hold_starts (MendChat *self,
                       gboolean  hold)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (hold || self->holding > 0);

  if (hold)
    self->holding++;
  else
    self->holding--;
  update_can_retry (self);
}

void
mend_chat_restore_lifecycle (MendChat      *self,
                             MendLifecycle  lifecycle)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (lifecycle == MEND_LIFECYCLE_READY || lifecycle == MEND_LIFECYCLE_ERROR);

  /* A closed chat stays closed, even when a handler of the restore closed it. */
  if (self->turn == NULL && self->lifecycle != MEND_LIFECYCLE_CLOSED)
    set_lifecycle (self, lifecycle);
}

static gboolean
stop_turn (gpointer turn)
{
  mend_turn_stop (turn);
  return G_SOURCE_REMOVE;
}

static gboolean
notify_sender_chat (gpointer sender)
{
  mend_sender_notify_chat (sender);
  return G_SOURCE_REMOVE;
}

static void
mend_chat_dispose (GObject *object)
{
  MendChat *self = (MendChat *) object;

  if (self->turn != NULL)
    {
      MendTurn *turn = self->turn;

      g_signal_handlers_disconnect_by_data (turn, self);
      self->turn = NULL;
      /* On the turn's own thread, even when the chat's last reference went
       * on another. */
      mend_owner_invoke (&self->owner, stop_turn, turn, g_object_unref);
    }

  stop_ticking (self);
  g_clear_object (&self->wait);

  /* A disposed chat is closed, quietly: its methods refuse, and nothing
   * starts. The subagents stay until finalize, inert. */
  self->lifecycle = MEND_LIFECYCLE_CLOSED;
  /* The sender has no chat from now on, and hears it on its own thread. */
  if (self->sender != NULL && mend_sender_detach_chat (self->sender, object))
    mend_owner_invoke (&self->owner, notify_sender_chat, g_object_ref (self->sender), g_object_unref);
  if (self->subagents != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->subagents, self);
      g_object_run_dispose (G_OBJECT (self->subagents));
    }

  G_OBJECT_CLASS (mend_chat_parent_class)->dispose (object);
}

static void
mend_chat_finalize (GObject *object)
{
  MendChat *self = (MendChat *) object;

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->continue_prompt, g_free);
  forget_retry (self);
  g_clear_pointer (&self->status_text, g_free);
  g_clear_object (&self->last_failure);
  g_clear_object (&self->clock);
  g_clear_object (&self->policy);
  g_clear_object (&self->resume_policy);
  g_clear_object (&self->sender);
  g_clear_object (&self->gate);
  g_clear_object (&self->subagents);
  g_clear_object (&self->queue);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_chat_parent_class)->finalize (object);
}

static gboolean check_open  (MendChat  *self,
                             GError   **error);

/* A subagent's resume prompt: runs now when nothing runs, else queues in
 * the room kept for resume prompts, never in the user's. */
static gboolean
submit_resume_prompt (const char      *text,
                      const char      *provenance,
                      MendQueueItem  **item,
                      gpointer         user_data,
                      GError         **error)
{
  MendChat *self = MEND_CHAT (user_data);
  gboolean now;

  if (!check_open (self, error))
    return FALSE;

  now = can_run_now (self) && !self->send_again;
  if (!mend_queue_add_prompt (self->queue, text, provenance, !now, item, error))
    return FALSE;
  if (now)
    start_turn (self, mend_queue_item_get_text (*item), provenance, NULL, *item);
  return TRUE;
}

void
mend_chat_emit_record (MendChat   *self,
                       const char *json)
{
  g_return_if_fail (MEND_IS_CHAT (self));

  g_signal_emit (self, signals[RECORD], 0, json);
}

/* The subagents' records are the chat's too. */
static void
on_subagent_record (MendSubagentRetry *subagents,
                    const char        *json,
                    MendChat          *self)
{
  mend_chat_emit_record (self, json);
}

static void
mend_chat_constructed (GObject *object)
{
  MendChat *self = (MendChat *) object;

  G_OBJECT_CLASS (mend_chat_parent_class)->constructed (object);

  if (self->id == NULL)
    self->id = g_uuid_string_random ();
  if (self->clock == NULL)
    self->clock = g_object_ref (mend_clock_get_default ());
  if (self->policy == NULL)
    self->policy = mend_error_policy_new ();
  if (self->resume_policy == NULL)
    self->resume_policy = mend_error_policy_new_for_resume ();

  self->queue = mend_queue_new (self->clock);
  self->subagents = mend_subagent_retry_new (self->queue, self->clock, self->resume_policy, self->id,
                                             submit_resume_prompt, self);
  /* The first handler: the chat tells each record before its subagents. */
  g_signal_connect (self->subagents, "record", G_CALLBACK (on_subagent_record), self);

  /* What the sender's agent reports comes down into the chat. */
  if (self->sender != NULL)
    mend_sender_attach_chat (self->sender, object);
}

static void
mend_chat_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  MendChat *self = MEND_CHAT (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;
    case PROP_CLOCK:
      g_value_set_object (value, self->clock);
      break;
    case PROP_POLICY:
      g_value_set_object (value, self->policy);
      break;
    case PROP_RESUME_POLICY:
      g_value_set_object (value, self->resume_policy);
      break;
    case PROP_SENDER:
      g_value_set_object (value, self->sender);
      break;
    case PROP_GATE:
      g_value_set_object (value, self->gate);
      break;
    case PROP_QUEUE:
      g_value_set_object (value, self->queue);
      break;
    case PROP_SUBAGENTS:
      g_value_set_object (value, self->subagents);
      break;
    case PROP_TURN:
      g_value_set_object (value, self->turn);
      break;
    case PROP_LIFECYCLE:
      g_value_set_enum (value, self->lifecycle);
      break;
    case PROP_EXTERNAL_TURN:
      g_value_set_boolean (value, self->external_turn);
      break;
    case PROP_CONTINUE_PROMPT:
      g_value_set_string (value, self->continue_prompt);
      break;
    case PROP_WAIT:
      g_value_set_object (value, self->wait);
      break;
    case PROP_LAST_FAILURE:
      g_value_set_object (value, self->last_failure);
      break;
    case PROP_CAN_RETRY:
      g_value_set_boolean (value, self->can_retry);
      break;
    case PROP_STATUS_TEXT:
      g_value_set_string (value, mend_chat_get_status_text (self));
      break;
    case PROP_QUIET_WAIT_MS:
      g_value_set_uint (value, self->quiet_wait_ms);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_chat_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  MendChat *self = MEND_CHAT (object);

  switch (prop_id)
    {
    case PROP_ID:
      self->id = g_value_dup_string (value);
      break;
    case PROP_CLOCK:
      self->clock = g_value_dup_object (value);
      break;
    case PROP_POLICY:
      self->policy = g_value_dup_object (value);
      break;
    case PROP_RESUME_POLICY:
      self->resume_policy = g_value_dup_object (value);
      break;
    case PROP_SENDER:
      self->sender = g_value_dup_object (value);
      break;
    case PROP_GATE:
      self->gate = g_value_dup_object (value);
      break;
    case PROP_CONTINUE_PROMPT:
      mend_chat_set_continue_prompt (self, g_value_get_string (value));
      break;
    case PROP_QUIET_WAIT_MS:
      mend_chat_set_quiet_wait_ms (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_chat_class_init (MendChatClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_chat_constructed;
  object_class->dispose = mend_chat_dispose;
  object_class->finalize = mend_chat_finalize;
  object_class->get_property = mend_chat_get_property;
  object_class->set_property = mend_chat_set_property;

  mend_i18n_init ();

  /**
   * MendChat:id:
   *
   * A stable id, made when not given; the per-chat stagger derives from it.
   */
  properties[PROP_ID] =
    g_param_spec_string ("id", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:clock:
   *
   * The clock of every turn, wait and queue item of the chat; the default
   * clock when not given.
   */
  properties[PROP_CLOCK] =
    g_param_spec_object ("clock", NULL, NULL,
                         MEND_TYPE_CLOCK,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:policy:
   *
   * The policy of the chat's turns; the turn defaults when not given.
   */
  properties[PROP_POLICY] =
    g_param_spec_object ("policy", NULL, NULL,
                         MEND_TYPE_ERROR_POLICY,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:resume-policy:
   *
   * The policy for resuming failed subagents; the resume defaults when not
   * given.
   */
  properties[PROP_RESUME_POLICY] =
    g_param_spec_object ("resume-policy", NULL, NULL,
                         MEND_TYPE_ERROR_POLICY,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:sender:
   *
   * What runs the attempts of the chat's turns, or %NULL: then connect to
   * [signal@Mend.Turn::attempt] in [signal@Mend.Chat::turn-started].
   */
  properties[PROP_SENDER] =
    g_param_spec_object ("sender", NULL, NULL,
                         MEND_TYPE_SENDER,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:gate:
   *
   * The [class@Mend.Gate] of the chat's upstream, shared with the other
   * chats that use it, or %NULL (the default): then the chat retries on
   * its own schedule alone. Its turns ask the gate before each attempt; a
   * held attempt waits on a [property@Mend.RetryWait:held] wait and is not
   * spent. Use the chat's clock for the gate.
   */
  properties[PROP_GATE] =
    g_param_spec_object ("gate", NULL, NULL,
                         MEND_TYPE_GATE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:queue:
   *
   * The user's queued follow-ups.
   */
  properties[PROP_QUEUE] =
    g_param_spec_object ("queue", NULL, NULL,
                         MEND_TYPE_QUEUE,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:subagents:
   *
   * The chat's subagents, and the retry that resumes those a transient
   * upstream error failed.
   */
  properties[PROP_SUBAGENTS] =
    g_param_spec_object ("subagents", NULL, NULL,
                         MEND_TYPE_SUBAGENT_RETRY,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:turn:
   *
   * The turn that runs or waits to retry, or %NULL.
   */
  properties[PROP_TURN] =
    g_param_spec_object ("turn", NULL, NULL,
                         MEND_TYPE_TURN,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:lifecycle:
   *
   * Ready, busy, in error or closed.
   */
  properties[PROP_LIFECYCLE] =
    g_param_spec_enum ("lifecycle", NULL, NULL,
                       MEND_TYPE_LIFECYCLE, MEND_LIFECYCLE_READY,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:external-turn:
   *
   * Whether the agent runs a turn of its own (not one the app started):
   * submissions queue until it ends.
   */
  properties[PROP_EXTERNAL_TURN] =
    g_param_spec_boolean ("external-turn", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:continue-prompt:
   *
   * What is inserted at the queue's head when a turn gives up and the
   * queue holds items.
   */
  properties[PROP_CONTINUE_PROMPT] =
    g_param_spec_string ("continue-prompt", NULL, NULL,
                         MEND_CHAT_DEFAULT_CONTINUE_PROMPT,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:wait:
   *
   * The wait before the next attempt of the chat's turn — a retry's, a
   * [class@Mend.Gate]'s hold, the network's return — or %NULL. Unlike
   * the turn's, the chat's property outlives turns: bind to it once.
   */
  properties[PROP_WAIT] =
    g_param_spec_object ("wait", NULL, NULL,
                         MEND_TYPE_RETRY_WAIT,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:last-failure:
   *
   * The last failure of the chat's turns, or %NULL: set by each failed
   * attempt, kept after its turn ended, cleared by the next turn that
   * succeeds. A Stop is not one. Show it with
   * [method@Mend.Failure.describe]; its [property@Mend.Failure:message]
   * is the server's own text, for a details view.
   */
  properties[PROP_LAST_FAILURE] =
    g_param_spec_object ("last-failure", NULL, NULL,
                         MEND_TYPE_FAILURE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:can-retry:
   *
   * Whether [method@Mend.Chat.retry] applies now: the last turn gave up
   * or was stopped, and nothing runs. Bind a Retry button's sensitivity
   * (or visibility) to it.
   */
  properties[PROP_CAN_RETRY] =
    g_param_spec_boolean ("can-retry", NULL, NULL,
                          FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:status-text:
   *
   * One sentence for the chat's state, translated, for a banner: empty
   * while idle or while a turn runs its first attempt; "The service is
   * overloaded — retrying in 4 s (retry 2 of 4)" while a retry waits,
   * ticking each second; "Waiting for the network to come back" or the
   * gate's hold; after a give-up what went wrong ("The API key was
   * refused"). A wait shorter than [property@Mend.Chat:quiet-wait-ms]
   * leaves it as it was, so that quick retries do not flash.
   *
   * It ticks while something watches it: a handler of its notify
   * connected when a wait starts, or one that has read it since (a
   * binding reads it as it is made). Nobody watching, a wait wakes the
   * loop at its deadline only; reading the property gives the sentence
   * as it is now.
   */
  properties[PROP_STATUS_TEXT] =
    g_param_spec_string ("status-text", NULL, NULL,
                         "",
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendChat:quiet-wait-ms:
   *
   * Waits shorter than this do not change
   * [property@Mend.Chat:status-text]; 1000 by default, 0 to show every
   * wait.
   */
  properties[PROP_QUIET_WAIT_MS] =
    g_param_spec_uint ("quiet-wait-ms", NULL, NULL,
                       0, G_MAXUINT, DEFAULT_QUIET_WAIT_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendChat::text-delta:
   * @self: the chat
   * @turn: the turn whose answer it is
   * @text: the text that arrived
   *
   * Text of the model's answer arrived, whatever the sender: an HTTP
   * stream's deltas, an agent CLI's messages, an ACP agent's
   * `agent_message_chunk`s, a sender of the app's that calls
   * [method@Mend.Turn.add_text]. An app renders every sender the same
   * way with it. A retried attempt starts its answer again: clear what
   * the turn showed on [signal@Mend.Turn::resumed]. Connect before a
   * turn starts: a turn that started with no handler of it is not
   * followed.
   */
  signals[TEXT_DELTA] =
    g_signal_new ("text-delta",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, MEND_TYPE_TURN, G_TYPE_STRING);

  /**
   * MendChat::turn-started:
   * @self: the chat
   * @turn: the turn that starts
   *
   * A turn starts; its first attempt follows when handlers return. Connect
   * to the turn's [signal@Mend.Turn::attempt] here, unless the chat has a
   * [property@Mend.Chat:sender] (or a [class@Mend.StreamObserver] reads
   * its agent's output). With none of them the turn gives up at once, its
   * queue kept, its failure's error %MEND_RETRY_ERROR_NO_SENDER.
   */
  signals[TURN_STARTED] =
    g_signal_new ("turn-started",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_TURN);

  /**
   * MendChat::turn-finished:
   * @self: the chat
   * @turn: the turn that ended
   *
   * A turn ended; the lifecycle already says how. Emitted before the queue's
   * head runs after a success.
   */
  signals[TURN_FINISHED] =
    g_signal_new ("turn-finished",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, MEND_TYPE_TURN);

  /**
   * MendChat::stopped:
   * @self: the chat
   *
   * The user pressed Stop: the running turn ended and every retry under way
   * was dropped.
   */
  signals[STOPPED] =
    g_signal_new ("stopped",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 0);

  /**
   * MendChat::record:
   * @self: the chat
   * @json: one JSON object
   *
   * One structured log record per retry step: `{"kind":"turn_retry",
   * "turnId","reason","outcome","attempt","of","nextAt"?}` where outcome is
   * `scheduled`, `held` (a [class@Mend.Gate] holds the next attempt),
   * `fired`, `exhausted`, `gave_up` or `stopped`, attempt the
   * retry's number (the retries made so far for the final outcomes), and
   * nextAt (for `scheduled`) wall-clock milliseconds.
   *
   * The records of the chat's subagents
   * ([signal@Mend.SubagentRetry::record], `"kind":"subagent_retry"`) come
   * here too, so that an app logs one stream per chat, and those of its
   * agent: `{"kind":"agent_restart","turnId","attempt","starts",
   * "sessionId"?}` when an agent process that ended (it exited, died or
   * was ended after a Stop) is started again for an attempt.
   *
   * All records name things one way: keys in lowerCamelCase, `kind`,
   * `outcome` and `skipped` values in snake_case, `reason` the
   * [enum@Mend.Reason] nick, times in wall-clock milliseconds since the
   * Unix epoch.
   */
  signals[RECORD] =
    g_signal_new ("record",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
mend_chat_init (MendChat *self)
{
  mend_owner_init (&self->owner);
  self->lifecycle = MEND_LIFECYCLE_READY;
  self->continue_prompt = g_strdup (MEND_CHAT_DEFAULT_CONTINUE_PROMPT);
  self->status_text = g_strdup ("");
  self->quiet_wait_ms = DEFAULT_QUIET_WAIT_MS;
}

/**
 * mend_chat_new:
 * @policy: (nullable): the policy of the chat's turns, or %NULL for the
 *   turn defaults
 *
 * Creates a chat on the default clock. Use [ctor@GObject.Object.new] with
 * the construct properties for a clock, sender, resume policy or id.
 *
 * Returns: (transfer full): a new ready chat
 */
MendChat *
mend_chat_new (MendErrorPolicy *policy)
{
  g_return_val_if_fail (policy == NULL || MEND_IS_ERROR_POLICY (policy), NULL);

  return g_object_new (MEND_TYPE_CHAT, "policy", policy, NULL);
}

/**
 * mend_chat_new_with_sender:
 * @sender: what runs the chat's turns: a [class@Mend.HttpSender], an
 *   agent process or a sender of the app's
 * @policy: (nullable): the policy of the chat's turns, or %NULL for the
 *   turn defaults
 *
 * Creates a chat whose turns @sender runs, on the default clock: the
 * usual way to make one (`new Mend.Chat.with_sender (sender, null)` in
 * Vala, `Mend.Chat.new_with_sender (sender, None)` in Python).
 *
 * Returns: (transfer full): a new ready chat
 */
MendChat *
mend_chat_new_with_sender (MendSender      *sender,
                           MendErrorPolicy *policy)
{
  g_return_val_if_fail (MEND_IS_SENDER (sender), NULL);
  g_return_val_if_fail (policy == NULL || MEND_IS_ERROR_POLICY (policy), NULL);

  return g_object_new (MEND_TYPE_CHAT, "sender", sender, "policy", policy, NULL);
}

/**
 * mend_chat_get_id:
 * @self: a chat
 *
 * Gets the chat's id.
 *
 * Returns: the id
 */
const char *
mend_chat_get_id (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->id;
}

/**
 * mend_chat_get_lifecycle:
 * @self: a chat
 *
 * Gets the chat's lifecycle.
 *
 * Returns: the lifecycle
 */
MendLifecycle
mend_chat_get_lifecycle (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), MEND_LIFECYCLE_CLOSED);
  mend_return_val_if_not_owner (&self->owner, self, MEND_LIFECYCLE_CLOSED);

  return self->lifecycle;
}

/**
 * mend_chat_get_queue:
 * @self: a chat
 *
 * Gets the user's queued follow-ups.
 *
 * Returns: (transfer none): the queue
 */
MendQueue *
mend_chat_get_queue (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->queue;
}

/**
 * mend_chat_get_subagents:
 * @self: a chat
 *
 * Gets the chat's subagents and their retry.
 *
 * Returns: (transfer none): the subagent retry
 */
MendSubagentRetry *
mend_chat_get_subagents (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->subagents;
}

/**
 * mend_chat_get_turn:
 * @self: a chat
 *
 * Gets the turn that runs or waits to retry.
 *
 * Returns: (transfer none) (nullable): the turn, or %NULL
 */
MendTurn *
mend_chat_get_turn (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->turn;
}

/**
 * mend_chat_get_policy:
 * @self: a chat
 *
 * Gets the policy of the chat's turns.
 *
 * Returns: (transfer none): the policy
 */
MendErrorPolicy *
mend_chat_get_policy (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->policy;
}

/**
 * mend_chat_get_resume_policy:
 * @self: a chat
 *
 * Gets the policy for resuming failed subagents.
 *
 * Returns: (transfer none): the policy
 */
MendErrorPolicy *
mend_chat_get_resume_policy (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->resume_policy;
}

/**
 * mend_chat_get_clock:
 * @self: a chat
 *
 * Gets the chat's clock.
 *
 * Returns: (transfer none): the clock
 */
MendClock *
mend_chat_get_clock (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->clock;
}

/**
 * mend_chat_get_gate:
 * @self: a chat
 *
 * Gets [property@Mend.Chat:gate].
 *
 * Returns: (transfer none) (nullable): the gate, or %NULL
 */
MendGate *
mend_chat_get_gate (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->gate;
}

/**
 * mend_chat_get_sender:
 * @self: a chat
 *
 * Gets what runs the attempts of the chat's turns.
 *
 * Returns: (transfer none) (nullable): the sender, or %NULL
 */
MendSender *
mend_chat_get_sender (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->sender;
}

/**
 * mend_chat_get_external_turn:
 * @self: a chat
 *
 * Gets whether the agent runs a turn of its own.
 *
 * Returns: %TRUE between [method@Mend.Chat.begin_external_turn] and
 *   [method@Mend.Chat.end_external_turn]
 */
gboolean
mend_chat_get_external_turn (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return self->external_turn;
}

/**
 * mend_chat_get_continue_prompt:
 * @self: a chat
 *
 * Gets what is inserted at the queue's head when a turn gives up.
 *
 * Returns: the prompt
 */
const char *
mend_chat_get_continue_prompt (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->continue_prompt;
}

/**
 * mend_chat_set_continue_prompt:
 * @self: a chat
 * @continue_prompt: (nullable): the prompt, or %NULL for the default
 *
 * Sets what is inserted at the queue's head when a turn gives up.
 */
void
mend_chat_set_continue_prompt (MendChat   *self,
                               const char *continue_prompt)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);

  if (continue_prompt == NULL)
    continue_prompt = MEND_CHAT_DEFAULT_CONTINUE_PROMPT;

  if (g_strcmp0 (self->continue_prompt, continue_prompt) != 0)
    {
      g_free (self->continue_prompt);
      self->continue_prompt = g_strdup (continue_prompt);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONTINUE_PROMPT]);
    }
}

static gboolean
can_run_now (MendChat *self)
{
  return (self->lifecycle == MEND_LIFECYCLE_READY || self->lifecycle == MEND_LIFECYCLE_ERROR) &&
         self->turn == NULL &&
         !self->external_turn &&
         self->holding == 0;
}

static gboolean
check_open (MendChat  *self,
            GError   **error)
{
  if (self->lifecycle != MEND_LIFECYCLE_CLOSED)
    return TRUE;

  g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_CLOSED,
                       _("The chat is closed"));
  return FALSE;
}

/**
 * mend_chat_submit:
 * @self: a chat
 * @text: the user's message
 * @provenance: (nullable): where it came from, as JSON text
 * @error: return location for a %MEND_QUEUE_ERROR or %MEND_RETRY_ERROR_CLOSED
 *
 * Sends a message: it runs now as a new turn when the chat is ready or in
 * error and nothing runs, and is queued otherwise. The text follows the
 * queue's rules (line ends normalized; blank, too large or a full queue is
 * an error) either way, and nothing changes on error.
 *
 * Returns: %TRUE if the message runs or was queued
 */
gboolean
mend_chat_submit (MendChat    *self,
                  const char  *text,
                  const char  *provenance,
                  GError     **error)
{
  g_autofree char *normalized = NULL;

  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_open (self, error))
    return FALSE;

  if (provenance != NULL && mend_subagent_retry_was_taken_back (self->subagents, provenance))
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_NOT_RETRYABLE,
                           _("This resume prompt was taken back"));
      return FALSE;
    }

  /* Behind the head a send_next () said starts (it runs once the start
   * under way returns), as it would had the head started at once. */
  if (!can_run_now (self) || self->send_again)
    {
      GError *local_error = NULL;

      /* NULL without an error: queued, and already taken out again by a
       * handler of the queue's change. */
      mend_queue_push (self->queue, text, provenance, &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
      return TRUE;
    }

  normalized = mend_queue_check_message (self->queue, text, provenance, error);
  if (normalized == NULL)
    return FALSE;

  start_turn (self, normalized, provenance, NULL, NULL);
  return TRUE;
}

/**
 * mend_chat_send_next:
 * @self: a chat
 *
 * Runs the queue's head as a new turn when nothing runs: the "send" of an
 * empty composer, also after a Stop or in error.
 *
 * Called from a handler of a turn that ended while it started (as one
 * that nothing runs does), the next turn starts once that start returns,
 * not inside the handler: a chain of such turns never nests.
 *
 * Returns: %TRUE if a turn started, or will start so
 */
gboolean
mend_chat_send_next (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  if (!can_run_now (self))
    return FALSE;

  /* Asked from inside the start of a turn that already ended: it runs
   * when that start returns (see start_turn ()). */
  if (self->starting > 0 || self->draining)
    {
      if (mend_queue_get_length (self->queue) == 0)
        return FALSE;
      self->send_again = TRUE;
      return TRUE;
    }

  return send_head (self);
}

static gboolean
send_head (MendChat *self)
{
  g_autoptr(MendQueueItem) item = NULL;
  guint stops;

  if (!can_run_now (self))
    return FALSE;

  /* A resume prompt taken back never starts. A pop tells the queue's
   * views, whose handlers may call back in: while it does, a submission
   * queues rather than starts. */
  g_object_ref (self);
  self->holding++;
  stops = self->stops;
  do
    {
      g_clear_object (&item);
      item = mend_queue_pop (self->queue);
    }
  while (item != NULL && mend_queue_item_get_withdrawn (item) && self->stops == stops);
  self->holding--;

  if (item != NULL && mend_queue_item_get_withdrawn (item))
    g_clear_object (&item);
  if (item != NULL && (!can_run_now (self) || self->stops != stops))
    {
      /* A handler closed the chat, began the agent's turn or pressed
       * Stop: the head stays the head. */
      mend_queue_put_back (self->queue, item);
      g_clear_object (&item);
    }

  if (item != NULL)
    start_turn (self, mend_queue_item_get_text (item), mend_queue_item_get_provenance (item), NULL, item);
  g_object_unref (self);

  return item != NULL;
}

/**
 * mend_chat_stop:
 * @self: a chat
 *
 * The user's Stop: ends the running turn at once, with no retry and no
 * Continue; the chat becomes ready and the queue stays as it is. Subagent
 * resumes under way are dropped too ([signal@Mend.Chat::stopped]).
 */
void
mend_chat_stop (MendChat *self)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->lifecycle == MEND_LIFECYCLE_CLOSED)
    return;

  g_object_ref (self);
  self->stops++;
  /* A send_next () not run yet is the turn about to run: it runs not. */
  self->send_again = FALSE;
  if (self->turn != NULL)
    mend_turn_stop (self->turn);
  /* The subagents first: their resumes under way end. */
  mend_subagent_retry_chat_stopped (self->subagents);
  g_signal_emit (self, signals[STOPPED], 0);
  g_object_unref (self);
}

/**
 * mend_chat_close:
 * @self: a chat
 *
 * Closes the chat: the running turn stops, and nothing runs or queues
 * after.
 */
void
mend_chat_close (MendChat *self)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->lifecycle == MEND_LIFECYCLE_CLOSED)
    return;

  g_object_ref (self);
  set_lifecycle (self, MEND_LIFECYCLE_CLOSED);
  if (self->turn != NULL)
    mend_turn_stop (self->turn);
  g_object_unref (self);
}

/**
 * mend_chat_begin_external_turn:
 * @self: a chat
 *
 * Notes that the agent runs a turn of its own, as when it wakes up to hand
 * a notification to the model. Submissions queue until it ends.
 */
void
mend_chat_begin_external_turn (MendChat *self)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);

  if (!self->external_turn)
    {
      self->external_turn = TRUE;
      mend_subagent_retry_set_external_turn (self->subagents, TRUE);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXTERNAL_TURN]);
      update_can_retry (self);
    }
}

/**
 * mend_chat_end_external_turn:
 * @self: a chat
 *
 * Notes that the agent's own turn ended. Like a turn of the app's that
 * succeeded, it lets the queue move: when the chat is ready, the queue's
 * head runs (in error, the queue waits for [method@Mend.Chat.send_next]).
 */
void
mend_chat_end_external_turn (MendChat *self)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);

  if (!self->external_turn)
    return;

  g_object_ref (self);
  self->external_turn = FALSE;
  mend_subagent_retry_set_external_turn (self->subagents, FALSE);
  /* The resume prompts that waited for it go out first. */
  mend_subagent_retry_release_held (self->subagents);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXTERNAL_TURN]);
  update_can_retry (self);
  advance_queue (self);
  g_object_unref (self);
}

/**
 * mend_chat_retry:
 * @self: a chat
 * @error: return location for a %MEND_RETRY_ERROR
 *
 * The user's Retry after a turn gave up or was stopped: runs that turn
 * again, as one new turn with the same prompt and provenance, whose
 * [property@Mend.Turn:retry-of] names it. The user's message is not
 * repeated, in the transcript or in any request: over HTTP the
 * conversation already holds it and it is sent once; an agent that kept
 * the failed prompt in its history is asked to continue
 * ([property@Mend.Chat:continue-prompt]); one that dropped it gets the
 * prompt again. A Continue item that the give-up put at the queue's head
 * is taken out: Retry is the same intent. The rest of the queue waits for
 * that turn to succeed, as after any turn.
 *
 * [property@Mend.Chat:can-retry] says when it applies: not while a turn
 * runs (%MEND_RETRY_ERROR_BUSY), nor when the last turn succeeded or
 * none ran (%MEND_RETRY_ERROR_NOT_RETRYABLE).
 *
 * Returns: %TRUE if the turn runs again
 */
gboolean
mend_chat_retry (MendChat  *self,
                 GError   **error)
{
  g_autofree char *id = NULL;
  g_autofree char *prompt = NULL;
  g_autofree char *provenance = NULL;
  g_autofree char *continue_id = NULL;
  gboolean ok;

  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_open (self, error))
    return FALSE;
  if (self->turn != NULL || self->external_turn || self->send_again || self->ending_turn == 1)
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY,
                           _("A turn is running: there is nothing to retry yet"));
      return FALSE;
    }
  if (self->retry_prompt == NULL || !can_run_now (self))
    {
      g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_NOT_RETRYABLE,
                           _("There is no turn that gave up or was stopped to retry"));
      return FALSE;
    }

  /* Taken before anything is told: handlers may start or end turns. */
  id = g_steal_pointer (&self->retry_id);
  prompt = g_steal_pointer (&self->retry_prompt);
  provenance = g_steal_pointer (&self->retry_provenance);
  continue_id = g_steal_pointer (&self->continue_id);

  g_object_ref (self);
  if (continue_id != NULL && mend_queue_find (self->queue, continue_id) != NULL)
    mend_queue_remove (self->queue, continue_id, NULL);
  /* A handler of the queue's change may have closed the chat or started
   * a turn meanwhile: then this Retry is spent, and says so. */
  ok = can_run_now (self) && !self->send_again;
  if (ok)
    start_turn (self, prompt, provenance, id, NULL);
  else
    {
      if (check_open (self, error))
        g_set_error_literal (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY,
                             _("Another turn started before the retry could"));
      update_can_retry (self);
    }
  g_object_unref (self);
  return ok;
}

/**
 * mend_chat_get_can_retry:
 * @self: a chat
 *
 * Gets [property@Mend.Chat:can-retry].
 *
 * Returns: whether [method@Mend.Chat.retry] applies now
 */
gboolean
mend_chat_get_can_retry (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return self->can_retry;
}

/**
 * mend_chat_get_wait:
 * @self: a chat
 *
 * Gets [property@Mend.Chat:wait].
 *
 * Returns: (transfer none) (nullable): the wait, or %NULL
 */
MendRetryWait *
mend_chat_get_wait (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->wait;
}

/**
 * mend_chat_get_last_failure:
 * @self: a chat
 *
 * Gets [property@Mend.Chat:last-failure].
 *
 * Returns: (transfer none) (nullable): the failure, or %NULL
 */
MendFailure *
mend_chat_get_last_failure (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->last_failure;
}

/**
 * mend_chat_get_status_text:
 * @self: a chat
 *
 * Gets [property@Mend.Chat:status-text], as it is now: a countdown that
 * nothing watched is brought up to date.
 *
 * Returns: the sentence, empty when there is nothing to say
 */
const char *
mend_chat_get_status_text (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  update_status (self);
  ensure_ticking (self);
  return self->status_text;
}

/**
 * mend_chat_get_quiet_wait_ms:
 * @self: a chat
 *
 * Gets [property@Mend.Chat:quiet-wait-ms].
 *
 * Returns: the shortest wait the status shows, in milliseconds
 */
guint
mend_chat_get_quiet_wait_ms (MendChat *self)
{
  g_return_val_if_fail (MEND_IS_CHAT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->quiet_wait_ms;
}

/**
 * mend_chat_set_quiet_wait_ms:
 * @self: a chat
 * @quiet_wait_ms: the shortest wait the status shows, in milliseconds
 *
 * Sets [property@Mend.Chat:quiet-wait-ms]; it applies from the next wait.
 */
void
mend_chat_set_quiet_wait_ms (MendChat *self,
                             guint     quiet_wait_ms)
{
  g_return_if_fail (MEND_IS_CHAT (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->quiet_wait_ms != quiet_wait_ms)
    {
      self->quiet_wait_ms = quiet_wait_ms;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_QUIET_WAIT_MS]);
    }
}
