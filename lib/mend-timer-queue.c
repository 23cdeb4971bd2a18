/* mend-timer-queue.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-timer-queue-private.h"

typedef struct
{
  gint64        deadline_us;
  guint64       serial;
  guint         id;
  MendTimerCall call;
} Timer;

struct _MendTimerQueue
{
  GSequence  *timers;   /* Timer*, ordered by (deadline, serial) */
  GHashTable *by_id;    /* id → GSequenceIter* */
  guint64     serial;
};

static int
timer_compare (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  const Timer *ta = a;
  const Timer *tb = b;

  if (ta->deadline_us != tb->deadline_us)
    return ta->deadline_us < tb->deadline_us ? -1 : 1;
  if (ta->serial != tb->serial)
    return ta->serial < tb->serial ? -1 : 1;
  return 0;
}

MendTimerQueue *
mend_timer_queue_new (void)
{
  MendTimerQueue *queue = g_new0 (MendTimerQueue, 1);

  queue->timers = g_sequence_new (NULL);
  queue->by_id = g_hash_table_new (NULL, NULL);

  return queue;
}

void
mend_timer_queue_free (MendTimerQueue *queue)
{
  MendTimerCall call;
  gint64 deadline;

  if (queue == NULL)
    return;

  while (mend_timer_queue_pop_due (queue, G_MAXINT64, &deadline, &call))
    mend_timer_call_finish (&call, FALSE);

  g_sequence_free (queue->timers);
  g_hash_table_unref (queue->by_id);
  g_free (queue);
}

void
mend_timer_queue_add (MendTimerQueue *queue,
                      guint           timer_id,
                      gint64          deadline_us,
                      MendClockFunc   func,
                      gpointer        user_data,
                      GDestroyNotify  notify)
{
  Timer *timer = g_new (Timer, 1);
  GSequenceIter *iter;

  g_assert (timer_id != 0);
  g_assert (!g_hash_table_contains (queue->by_id, GUINT_TO_POINTER (timer_id)));

  timer->deadline_us = deadline_us;
  timer->serial = queue->serial++;
  timer->id = timer_id;
  timer->call.func = func;
  timer->call.user_data = user_data;
  timer->call.notify = notify;

  iter = g_sequence_insert_sorted (queue->timers, timer, timer_compare, NULL);
  g_hash_table_insert (queue->by_id, GUINT_TO_POINTER (timer_id), iter);
}

static void
take_timer (MendTimerQueue *queue,
            GSequenceIter  *iter,
            MendTimerCall  *call)
{
  Timer *timer = g_sequence_get (iter);

  *call = timer->call;
  g_hash_table_remove (queue->by_id, GUINT_TO_POINTER (timer->id));
  g_sequence_remove (iter);
  g_free (timer);
}

gboolean
mend_timer_queue_steal (MendTimerQueue *queue,
                        guint           timer_id,
                        MendTimerCall  *call)
{
  GSequenceIter *iter = g_hash_table_lookup (queue->by_id, GUINT_TO_POINTER (timer_id));

  if (iter == NULL)
    return FALSE;

  take_timer (queue, iter, call);
  return TRUE;
}

gint64
mend_timer_queue_get_earliest (MendTimerQueue *queue)
{
  GSequenceIter *iter = g_sequence_get_begin_iter (queue->timers);

  if (g_sequence_iter_is_end (iter))
    return G_MAXINT64;

  return ((Timer *) g_sequence_get (iter))->deadline_us;
}

gboolean
mend_timer_queue_pop_due (MendTimerQueue *queue,
                          gint64          now_us,
                          gint64         *deadline_us,
                          MendTimerCall  *call)
{
  GSequenceIter *iter = g_sequence_get_begin_iter (queue->timers);
  Timer *timer;

  if (g_sequence_iter_is_end (iter))
    return FALSE;

  timer = g_sequence_get (iter);
  if (timer->deadline_us > now_us)
    return FALSE;

  *deadline_us = timer->deadline_us;
  take_timer (queue, iter, call);
  return TRUE;
}

guint
mend_timer_queue_get_length (MendTimerQueue *queue)
{
  return g_hash_table_size (queue->by_id);
}

gboolean
mend_timer_queue_contains (MendTimerQueue *queue,
                           guint           timer_id)
{
  return g_hash_table_contains (queue->by_id, GUINT_TO_POINTER (timer_id));
}

void
mend_timer_call_finish (MendTimerCall *call,
                        gboolean       run)
{
  if (run && call->func != NULL)
    call->func (call->user_data);
  if (call->notify != NULL)
    call->notify (call->user_data);
}
