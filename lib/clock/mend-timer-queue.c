/* mend-timer-queue.c — a heap of timers, for the manual clock
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-timer-queue-private.h"

/* A binary min-heap of timers ordered by (deadline, serial), with an id →
 * timer map for removal. Each timer knows its index in the heap, so a
 * removal is O(log n) and a sift costs no lookup. */

typedef struct
{
  gint64        deadline_us;
  guint64       serial;
  guint         id;
  guint         index;
  MendTimerCall call;
} Timer;

struct _MendTimerQueue
{
  GPtrArray  *heap;     /* Timer* */
  GHashTable *by_id;    /* id → Timer* */
  guint64     serial;
};

static inline gboolean
earlier (const Timer *a,
         const Timer *b)
{
  if (a->deadline_us != b->deadline_us)
    return a->deadline_us < b->deadline_us;
  return a->serial < b->serial;
}

static inline Timer *
at (MendTimerQueue *queue,
    guint           i)
{
  return g_ptr_array_index (queue->heap, i);
}

static inline void
place (MendTimerQueue *queue,
       guint           i,
       Timer          *timer)
{
  queue->heap->pdata[i] = timer;
  timer->index = i;
}

static void
sift_up (MendTimerQueue *queue,
         guint           i)
{
  Timer *timer = at (queue, i);

  while (i > 0)
    {
      guint parent = (i - 1) / 2;

      if (!earlier (timer, at (queue, parent)))
        break;
      place (queue, i, at (queue, parent));
      i = parent;
    }
  place (queue, i, timer);
}

static void
sift_down (MendTimerQueue *queue,
           guint           i)
{
  guint n = queue->heap->len;
  Timer *timer = at (queue, i);

  for (;;)
    {
      guint child = 2 * i + 1;

      if (child >= n)
        break;
      if (child + 1 < n && earlier (at (queue, child + 1), at (queue, child)))
        child++;
      if (!earlier (at (queue, child), timer))
        break;
      place (queue, i, at (queue, child));
      i = child;
    }
  place (queue, i, timer);
}

MendTimerQueue *
mend_timer_queue_new (void)
{
  MendTimerQueue *queue = g_new0 (MendTimerQueue, 1);

  queue->heap = g_ptr_array_new ();
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

  g_ptr_array_unref (queue->heap);
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

  g_assert (timer_id != 0);
  g_assert (!g_hash_table_contains (queue->by_id, GUINT_TO_POINTER (timer_id)));

  timer->deadline_us = deadline_us;
  timer->serial = queue->serial++;
  timer->id = timer_id;
  timer->call.func = func;
  timer->call.user_data = user_data;
  timer->call.notify = notify;

  g_ptr_array_add (queue->heap, timer);
  sift_up (queue, queue->heap->len - 1);
  g_hash_table_insert (queue->by_id, GUINT_TO_POINTER (timer_id), timer);
}

/* Takes the timer at heap index @i out, keeping the heap ordered. */
static void
take_at (MendTimerQueue *queue,
         guint           i,
         MendTimerCall  *call)
{
  Timer *timer = at (queue, i);
  Timer *last = g_ptr_array_steal_index_fast (queue->heap, queue->heap->len - 1);

  if (last != timer)
    {
      place (queue, i, last);
      if (i > 0 && earlier (last, at (queue, (i - 1) / 2)))
        sift_up (queue, i);
      else
        sift_down (queue, i);
    }

  *call = timer->call;
  g_hash_table_remove (queue->by_id, GUINT_TO_POINTER (timer->id));
  g_free (timer);
}

gboolean
mend_timer_queue_steal (MendTimerQueue *queue,
                        guint           timer_id,
                        MendTimerCall  *call)
{
  Timer *timer = g_hash_table_lookup (queue->by_id, GUINT_TO_POINTER (timer_id));

  if (timer == NULL)
    return FALSE;

  take_at (queue, timer->index, call);
  return TRUE;
}

gint64
mend_timer_queue_get_earliest (MendTimerQueue *queue)
{
  if (queue->heap->len == 0)
    return G_MAXINT64;

  return at (queue, 0)->deadline_us;
}

gboolean
mend_timer_queue_pop_due (MendTimerQueue *queue,
                          gint64          now_us,
                          gint64         *deadline_us,
                          MendTimerCall  *call)
{
  if (queue->heap->len == 0 || at (queue, 0)->deadline_us > now_us)
    return FALSE;

  *deadline_us = at (queue, 0)->deadline_us;
  take_at (queue, 0, call);
  return TRUE;
}

guint
mend_timer_queue_get_length (MendTimerQueue *queue)
{
  return queue->heap->len;
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
