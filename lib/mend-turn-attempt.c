/* mend-turn-attempt.c — one attempt of a turn: through the gate, to the sender, back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-failure.h"
#include "mend-turn-attempt-private.h"
#include "mend-turn.h"

/* See mend-turn-attempt-private.h. */

void
mend_gate_link_join (MendGateLink *self,
                     MendGate     *gate,
                     const char   *key,
                     GCallback     on_released,
                     gpointer      data)
{
  g_assert (self->gate == NULL);
  g_assert (MEND_IS_GATE (gate));

  self->gate = g_object_ref (gate);
  self->key = g_strdup (key);
  self->released_id = g_signal_connect (gate, "released", on_released, data);
}

void
mend_gate_link_leave (MendGateLink *self)
{
  if (self->gate != NULL)
    g_clear_signal_handler (&self->released_id, self->gate);
}

void
mend_gate_link_clear (MendGateLink *self)
{
  g_assert (self->released_id == 0);

  g_clear_object (&self->gate);
  g_clear_pointer (&self->key, g_free);
}

gint64
mend_gate_link_admit (MendGateLink *self,
                      gboolean      retry)
{
  gboolean probe = FALSE;
  gint64 hold;

  g_assert (!self->admitted);

  if (self->gate == NULL)
    return MEND_GATE_GO;

  hold = mend_gate_admit (self->gate, self->key, retry, &probe);
  if (hold == MEND_GATE_GO)
    {
      self->admitted = TRUE;
      self->probing = probe;
    }

  return hold;
}

void
mend_gate_link_report (MendGateLink    *self,
                       MendFailure     *failure,
                       MendFailureKind  kind)
{
  if (self->gate == NULL || !self->admitted)
    return;

  self->admitted = FALSE;
  mend_gate_report (self->gate, self->key, failure, kind, self->probing);
  self->probing = FALSE;
}

void
mend_gate_link_hand_over (MendGateLink       *self,
                          MendAttemptContext *context)
{
  g_assert (!self->probing || self->admitted);

  context->gate = self->gate;
  context->gate_key = self->key;
  context->admitted = self->gate != NULL && self->admitted;
  context->probe = context->admitted && self->probing;
  self->admitted = FALSE;
  self->probing = FALSE;
}

MendRetryWait *
mend_gate_link_new_hold (MendGateLink *self,
                         MendClock    *clock,
                         gint64        hold_ms,
                         guint         attempt,
                         guint         of,
                         MendFailure  *failure)
{
  g_assert (self->gate != NULL);

  return g_object_new (MEND_TYPE_RETRY_WAIT,
                       "clock", clock,
                       /* Until released: the gate's signal ends it; an hour
                        * bounds a gate that never says. */
                       "delay-ms", (guint64) (hold_ms > 0 ? hold_ms : 3600 * 1000),
                       "attempt", attempt,
                       "of", of,
                       "reason", failure ? mend_failure_get_reason (failure) : MEND_REASON_UNKNOWN,
                       "failure", failure,
                       "held", TRUE,
                       "gate-state", mend_gate_get_state (self->gate),
                       NULL);
}

MendRetryWait *
mend_turn_attempt_new_wait (MendVerdict *verdict,
                            MendClock   *clock,
                            guint        attempt,
                            guint        of)
{
  MendFailure *failure = mend_verdict_get_failure (verdict);

  g_assert (mend_verdict_get_delay_ms (verdict) >= 0);

  return g_object_new (MEND_TYPE_RETRY_WAIT,
                       "clock", clock,
                       "delay-ms", (guint64) mend_verdict_get_delay_ms (verdict),
                       "attempt", attempt,
                       "of", of,
                       "reason", failure ? mend_failure_get_reason (failure) : MEND_REASON_UNKNOWN,
                       "failure", failure,
                       "server-hint", mend_verdict_get_server_hint (verdict),
                       NULL);
}

typedef struct
{
  MendTurn        *turn;
  guint            attempt;
  MendAttemptSent  sent;
} SendData;

static void
on_sent (GObject      *object,
         GAsyncResult *result,
         gpointer      user_data)
{
  SendData *data = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(MendFailure) failure = mend_sender_send_finish (MEND_SENDER (object), result, &error);

  /* An attempt that could not be made, or was cancelled, failed: a
   * cancellation reads as a Stop, never as a success. */
  if (error != NULL)
    failure = mend_failure_new_from_error (error);

  data->sent (data->turn, data->attempt, failure);

  g_object_unref (data->turn);
  g_free (data);
}

void
mend_turn_attempt_send (MendSender      *sender,
                        MendTurn        *turn,
                        guint            attempt,
                        GCancellable    *cancellable,
                        MendAttemptSent  sent)
{
  SendData *data = g_new0 (SendData, 1);

  g_assert (MEND_IS_SENDER (sender));
  g_assert (MEND_IS_TURN (turn));
  g_assert (sent != NULL);

  data->turn = g_object_ref (turn);
  data->attempt = attempt;
  data->sent = sent;
  mend_sender_send_async (sender, turn, attempt, G_PRIORITY_DEFAULT, cancellable, on_sent, data);
}

typedef struct
{
  GWeakRef       turn;
  GMainContext  *context;
  void         (*stop) (MendTurn *turn);
} Watch;

typedef struct
{
  MendTurn  *turn;
  void     (*stop) (MendTurn *turn);
} Stop;

static gboolean
stop_in_context (gpointer data)
{
  Stop *stop = data;

  stop->stop (stop->turn);
  return G_SOURCE_REMOVE;
}

static void
stop_free (gpointer data)
{
  Stop *stop = data;

  g_object_unref (stop->turn);
  g_free (stop);
}

static void
on_cancelled (GCancellable *cancellable,
              Watch        *watch)
{
  MendTurn *turn = g_weak_ref_get (&watch->turn);
  Stop *stop;

  if (turn == NULL)
    return;

  stop = g_new0 (Stop, 1);
  stop->turn = turn;
  stop->stop = watch->stop;
  g_main_context_invoke_full (watch->context, G_PRIORITY_DEFAULT,
                              stop_in_context, stop, stop_free);
}

static void
watch_free (gpointer data)
{
  Watch *watch = data;

  g_weak_ref_clear (&watch->turn);
  g_main_context_unref (watch->context);
  g_free (watch);
}

gulong
mend_turn_attempt_watch (GCancellable  *cancellable,
                         MendTurn      *turn,
                         GMainContext  *context,
                         void         (*stop) (MendTurn *turn))
{
  Watch *watch = g_new0 (Watch, 1);

  g_assert (G_IS_CANCELLABLE (cancellable));
  g_assert (context != NULL);

  g_weak_ref_init (&watch->turn, turn);
  watch->context = g_main_context_ref (context);
  watch->stop = stop;

  return g_cancellable_connect (cancellable, G_CALLBACK (on_cancelled), watch, watch_free);
}

/* GCancellable waits, in g_cancellable_disconnect(), for a running
 * emission to end: from inside one (our handler, or another handler of
 * the same cancellable) it would wait for ever. A cancelled cancellable
 * has run its handlers, or is running them; ours holds only a weak
 * reference, so it may stay, and goes with the cancellable. */
void
mend_turn_attempt_unwatch (GCancellable *cancellable,
                           gulong       *handler_id)
{
  if (*handler_id != 0 && !g_cancellable_is_cancelled (cancellable))
    g_cancellable_disconnect (cancellable, *handler_id);
  *handler_id = 0;
}
