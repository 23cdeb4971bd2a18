/* mend-manual-clock.c — MendManualClock: virtual time for tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-clock-private.h"
#include "mend-manual-clock.h"
#include "mend-timer-queue-private.h"

/**
 * MendManualClock:
 *
 * A clock whose time moves only when told to.
 *
 * Tests, libmend's own and apps', use it to run a five-minute retry schedule
 * in microseconds of real time: [method@Mend.ManualClock.advance] moves time
 * forward and runs every timer that comes due, in deadline order, before it
 * returns. Timers run on the thread that advances the clock.
 *
 * Monotonic time starts at 0; wall-clock time starts at the value given to
 * [ctor@Mend.ManualClock.new] and moves with it.
 *
 * Example:
 *
 * ```c
 * g_autoptr(MendClock) clock = mend_manual_clock_new (1764500000000000);
 * g_autoptr(MendChat) chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, NULL);
 *
 * mend_chat_submit (chat, "Fix the failing build", NULL, NULL);
 * // The first attempt failed with a 529; its wait fires now, not in 250 ms:
 * mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 500);
 * ```
 */

struct _MendManualClock
{
  MendClock       parent_instance;

  MendTimerQueue *queue;
  gint64          now_us;
  gint64          wall_start_us;
  guint           last_id;
};

G_DEFINE_FINAL_TYPE (MendManualClock, mend_manual_clock, MEND_TYPE_CLOCK)

static gint64
mend_manual_clock_get_monotonic_time (MendClock *clock)
{
  return MEND_MANUAL_CLOCK (clock)->now_us;
}

static gint64
mend_manual_clock_get_real_time (MendClock *clock)
{
  MendManualClock *self = MEND_MANUAL_CLOCK (clock);

  return self->wall_start_us + self->now_us;
}

static guint
mend_manual_clock_add_timer (MendClock      *clock,
                             gint64          deadline_us,
                             MendClockFunc   func,
                             gpointer        user_data,
                             GDestroyNotify  notify)
{
  MendManualClock *self = MEND_MANUAL_CLOCK (clock);
  guint id;

  do
    id = ++self->last_id;
  while (id == 0 || mend_timer_queue_contains (self->queue, id));

  mend_timer_queue_add (self->queue, id, deadline_us, func, user_data, notify);

  return id;
}

static gboolean
mend_manual_clock_remove_timer (MendClock *clock,
                                guint      timer_id)
{
  MendManualClock *self = MEND_MANUAL_CLOCK (clock);
  MendTimerCall call;

  if (!mend_timer_queue_steal (self->queue, timer_id, &call))
    return FALSE;

  mend_timer_call_finish (&call, FALSE);
  return TRUE;
}

static void
mend_manual_clock_finalize (GObject *object)
{
  MendManualClock *self = (MendManualClock *) object;

  g_clear_pointer (&self->queue, mend_timer_queue_free);

  G_OBJECT_CLASS (mend_manual_clock_parent_class)->finalize (object);
}

static void
mend_manual_clock_class_init (MendManualClockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  MendClockClass *clock_class = MEND_CLOCK_CLASS (klass);

  object_class->finalize = mend_manual_clock_finalize;

  clock_class->get_monotonic_time = mend_manual_clock_get_monotonic_time;
  clock_class->get_real_time = mend_manual_clock_get_real_time;
  clock_class->add_timer = mend_manual_clock_add_timer;
  clock_class->remove_timer = mend_manual_clock_remove_timer;
}

static void
mend_manual_clock_init (MendManualClock *self)
{
  self->queue = mend_timer_queue_new ();
}

/**
 * mend_manual_clock_new:
 * @wall_start_us: the wall-clock time to start at, in microseconds since the
 *   Unix epoch
 *
 * Creates a clock whose time moves only with
 * [method@Mend.ManualClock.advance].
 *
 * Returns: (transfer full) (type MendManualClock): a new manual clock
 */
MendClock *
mend_manual_clock_new (gint64 wall_start_us)
{
  MendManualClock *self = g_object_new (MEND_TYPE_MANUAL_CLOCK, NULL);

  self->wall_start_us = wall_start_us;

  return MEND_CLOCK (self);
}

/* Runs the earliest timer due at or before @limit_us, moving time to its
 * deadline first so that the callback sees the time it was scheduled for. */
static gboolean
run_next_due (MendManualClock *self,
              gint64           limit_us)
{
  MendTimerCall call;
  gint64 deadline;

  /* A countdown that someone started to watch since ticks from now on. */
  mend_clock_poll (MEND_CLOCK (self));
  if (!mend_timer_queue_pop_due (self->queue, limit_us, &deadline, &call))
    return FALSE;

  self->now_us = MAX (self->now_us, deadline);
  mend_timer_call_finish (&call, TRUE);

  return TRUE;
}

/**
 * mend_manual_clock_advance:
 * @self: a manual clock
 * @ms: how far to move time, in milliseconds
 *
 * Moves time forward by @ms and runs, before returning, every timer whose
 * deadline falls within that span, in deadline order, including timers that
 * those callbacks add within the span. Timers with the same deadline run in
 * the order they were added.
 */
void
mend_manual_clock_advance (MendManualClock *self,
                           guint64          ms)
{
  gint64 target;

  g_return_if_fail (MEND_IS_MANUAL_CLOCK (self));

  if (ms > (guint64) (G_MAXINT64 - 1 - self->now_us) / 1000)
    target = G_MAXINT64 - 1;
  else
    target = self->now_us + (gint64) ms * 1000;

  g_object_ref (self);
  while (run_next_due (self, target))
    ;
  self->now_us = MAX (self->now_us, target);
  g_object_unref (self);
}

/**
 * mend_manual_clock_advance_to_next:
 * @self: a manual clock
 *
 * Moves time to the earliest pending deadline and runs every timer due then.
 *
 * Returns: %TRUE if a timer ran, %FALSE if none was pending
 */
gboolean
mend_manual_clock_advance_to_next (MendManualClock *self)
{
  gint64 earliest;

  g_return_val_if_fail (MEND_IS_MANUAL_CLOCK (self), FALSE);

  mend_clock_poll (MEND_CLOCK (self));
  earliest = mend_timer_queue_get_earliest (self->queue);
  if (earliest == G_MAXINT64)
    return FALSE;

  g_object_ref (self);
  self->now_us = MAX (self->now_us, earliest);
  while (run_next_due (self, self->now_us))
    ;
  g_object_unref (self);

  return TRUE;
}

/**
 * mend_manual_clock_get_n_pending:
 * @self: a manual clock
 *
 * Counts the timers that have not run and were not removed.
 *
 * Returns: the number of pending timers
 */
guint
mend_manual_clock_get_n_pending (MendManualClock *self)
{
  g_return_val_if_fail (MEND_IS_MANUAL_CLOCK (self), 0);

  return mend_timer_queue_get_length (self->queue);
}

/**
 * mend_manual_clock_jump_real_time:
 * @self: a manual clock
 * @ms: how far wall-clock time moves, in milliseconds (negative: back)
 *
 * Moves wall-clock time alone, as a machine's does while it sleeps (the
 * monotonic clock stands still in a suspend) or when its clock is set:
 * no timer runs. A wait that follows the wall clock (a usage limit's
 * reset, [property@Mend.RetryWait:at-reset]) sees it at its next check.
 */
void
mend_manual_clock_jump_real_time (MendManualClock *self,
                                  gint64           ms)
{
  g_return_if_fail (MEND_IS_MANUAL_CLOCK (self));
  g_return_if_fail (ms > G_MININT64 / 1000 && ms < G_MAXINT64 / 1000);

  self->wall_start_us += ms * 1000;
}
