/* mend-timer-queue-private.h — a heap of timers, for the manual clock
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-clock.h"

G_BEGIN_DECLS

/* An ordered set of deadlines (a binary heap): what each clock keeps instead of one GSource
 * per timer. Timers at the same deadline keep the order they were added in.
 * Not thread-safe on its own; the clock that owns it locks around it. */
typedef struct _MendTimerQueue MendTimerQueue;

typedef struct
{
  MendClockFunc  func;
  gpointer       user_data;
  GDestroyNotify notify;
} MendTimerCall;

MendTimerQueue *mend_timer_queue_new          (void);
void            mend_timer_queue_free         (MendTimerQueue *queue);
void            mend_timer_queue_add          (MendTimerQueue *queue,
                                               guint           timer_id,
                                               gint64          deadline_us,
                                               MendClockFunc   func,
                                               gpointer        user_data,
                                               GDestroyNotify  notify);
gboolean        mend_timer_queue_steal        (MendTimerQueue *queue,
                                               guint           timer_id,
                                               MendTimerCall  *call);
gint64          mend_timer_queue_get_earliest (MendTimerQueue *queue);
gboolean        mend_timer_queue_pop_due      (MendTimerQueue *queue,
                                               gint64          now_us,
                                               gint64         *deadline_us,
                                               MendTimerCall  *call);
guint           mend_timer_queue_get_length   (MendTimerQueue *queue);
gboolean        mend_timer_queue_contains     (MendTimerQueue *queue,
                                               guint           timer_id);

void            mend_timer_call_finish        (MendTimerCall  *call,
                                               gboolean        run);

G_END_DECLS
