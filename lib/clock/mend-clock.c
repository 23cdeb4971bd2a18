/* mend-clock.c — MendClock: monotonic time and timeouts, real or virtual
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <unistd.h>
#ifdef HAVE_TIMERFD
# include <sys/timerfd.h>
#endif

#include "mend-clock-private.h"
#include "mend-redact-private.h"
#include "mend-timer-queue-private.h"

/**
 * MendClock:
 *
 * Where libmend takes its time from.
 *
 * Every wait in libmend is a timer on a clock, never a call to
 * `g_get_monotonic_time()` or a `g_timeout_add()` of its own, so that tests
 * and apps can drive time by hand with [class@Mend.ManualClock].
 *
 * The default clock, [func@Mend.Clock.get_default], is the real one: GLib's
 * monotonic and wall time, and for each [struct@GLib.MainContext] that has a
 * pending timer, exactly one [struct@GLib.Source] armed at the earliest
 * deadline. A thousand pending waits cost one source, no polling and no
 * periodic tick; the loop wakes only when a deadline comes.
 *
 * Deadlines are served by the millisecond: the loop wakes once at the start
 * of the millisecond a deadline falls in (by a timerfd, to the microsecond,
 * where the system has one) and runs every timer due within it. A timer of
 * the real clock so runs up to a millisecond early and, on an idle machine,
 * well under a millisecond late; ten thousand waits spread over a second
 * cost at most a thousand wakeups.
 *
 * Timers run on the thread-default main context of the thread that added
 * them.
 *
 * Example:
 *
 * ```c
 * static void
 * on_due (gpointer user_data)
 * {
 *   g_print ("two seconds later\n");
 * }
 *
 * MendClock *clock = mend_clock_get_default ();
 * guint id = mend_clock_add_timeout (clock, 2000, on_due, NULL, NULL);
 *
 * // Changed one's mind:
 * mend_clock_remove_timeout (clock, id);
 * ```
 */

typedef struct
{
  GSource         source;
  MendClock      *clock;       /* weak: the clock owns the source */
  MendTimerQueue *queue;
  GMutex         *mutex;
  GHashTable     *sources;
  GMainContext   *context;
  int             timer_fd;    /* -1 without timerfd */
  gint64          armed_us;    /* the wake-up set now, or -1 */
} TimerSource;

#define BUCKET_US 1000

/* Arms the source for the millisecond @deadline_us falls in (G_MAXINT64:
 * nothing pending). A timerfd wakes the loop at its start, to the
 * microsecond; GLib's ready time rounds up to the next millisecond, so it
 * is only the fallback. */
static void
arm (TimerSource *ts,
     gint64       deadline_us)
{
#ifdef HAVE_TIMERFD
  if (ts->timer_fd >= 0)
    {
      struct itimerspec spec = { { 0, 0 }, { 0, 0 } };
      /* 0 would disarm it: a deadline at the epoch is simply due. */
      gint64 at = deadline_us == G_MAXINT64 ? -1 : MAX (deadline_us - deadline_us % BUCKET_US, 1);

      /* Most adds and removals leave the earliest millisecond as it was:
       * no system call for them. */
      if (at == ts->armed_us)
        return;

      if (at > 0)
        {
          spec.it_value.tv_sec = at / G_USEC_PER_SEC;
          spec.it_value.tv_nsec = (at % G_USEC_PER_SEC) * 1000;
        }
      if (timerfd_settime (ts->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL) == 0)
        {
          ts->armed_us = at;
          return;
        }
      mend_warning ("Cannot arm the clock's timer: %s", g_strerror (errno));
    }
#endif

  g_source_set_ready_time ((GSource *) ts, deadline_us == G_MAXINT64 ? -1 : deadline_us);
}

typedef struct
{
  GMutex      mutex;
  GHashTable *sources;   /* GMainContext* → TimerSource* (ref held) */
  guint       last_id;
  void      (*poll) (gpointer data);  /* before a virtual clock's timers run */
  gpointer    poll_data;
} MendClockPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (MendClock, mend_clock, G_TYPE_OBJECT)

/* Nothing pending on that context: give its source back, so a context
 * that had timers once is not kept alive for ever. Called locked. */
static void
drop_source (TimerSource *ts)
{
  if (g_source_is_destroyed ((GSource *) ts))
    return;

  g_source_destroy ((GSource *) ts);
  /* A callback may have dropped this source mid-dispatch and a timer added
   * after it made a new one for the context: remove only our own entry. */
  if (g_hash_table_lookup (ts->sources, ts->context) == ts)
    g_hash_table_remove (ts->sources, ts->context);
}

static gboolean
timer_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  TimerSource *ts = (TimerSource *) source;
  gint64 now = g_get_monotonic_time ();
  /* With a timerfd, every timer of the current millisecond runs now. */
  gint64 limit = ts->timer_fd >= 0 ? now - now % BUCKET_US + BUCKET_US - 1 : now;
  gint64 deadline;
  MendTimerCall call;
  /* A callback may drop the last reference to the clock, whose mutex this
   * dispatch still takes: the clock lives until the dispatch is over. */
  MendClock *clock = g_object_ref (ts->clock);

#ifdef HAVE_TIMERFD
  if (ts->timer_fd >= 0)
    {
      guint64 expirations;

      /* Clears the fd's readiness; EAGAIN when the ready time woke us. */
      while (read (ts->timer_fd, &expirations, sizeof expirations) < 0 && errno == EINTR)
        ;
      ts->armed_us = -1;
    }
#endif

  g_mutex_lock (ts->mutex);
  /* Timers a callback adds at an earlier deadline wait for the next round,
   * so one dispatch cannot run forever. */
  while (mend_timer_queue_pop_due (ts->queue, limit, &deadline, &call))
    {
      g_mutex_unlock (ts->mutex);
      mend_timer_call_finish (&call, TRUE);
      g_mutex_lock (ts->mutex);
    }
  deadline = mend_timer_queue_get_earliest (ts->queue);
  if (deadline == G_MAXINT64)
    drop_source (ts);
  else if (!g_source_is_destroyed (source))
    arm (ts, deadline);
  g_mutex_unlock (ts->mutex);

  g_object_unref (clock);
  return G_SOURCE_CONTINUE;
}

static void
timer_source_finalize (GSource *source)
{
  TimerSource *ts = (TimerSource *) source;

  g_clear_pointer (&ts->queue, mend_timer_queue_free);
  if (ts->timer_fd >= 0)
    close (ts->timer_fd);
}

static GSourceFuncs timer_source_funcs = {
  .dispatch = timer_source_dispatch,
  .finalize = timer_source_finalize,
};

static gint64
mend_clock_real_get_monotonic_time (MendClock *self)
{
  return g_get_monotonic_time ();
}

static gint64
mend_clock_real_get_real_time (MendClock *self)
{
  return g_get_real_time ();
}

static TimerSource *
find_queue_locked (MendClockPrivate *priv,
                   guint             timer_id)
{
  GHashTableIter iter;
  gpointer value;

  /* One queue per context with pending timers: almost always one. */
  g_hash_table_iter_init (&iter, priv->sources);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (mend_timer_queue_contains (((TimerSource *) value)->queue, timer_id))
      return value;

  return NULL;
}

static guint
mend_clock_real_add_timer (MendClock      *self,
                           gint64          deadline_us,
                           MendClockFunc   func,
                           gpointer        user_data,
                           GDestroyNotify  notify)
{
  MendClockPrivate *priv = mend_clock_get_instance_private (self);
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  TimerSource *ts;
  guint id;

  g_mutex_lock (&priv->mutex);

  do
    id = ++priv->last_id;
  while (id == 0 || find_queue_locked (priv, id) != NULL);

  ts = g_hash_table_lookup (priv->sources, context);
  if (ts == NULL)
    {
      ts = (TimerSource *) g_source_new (&timer_source_funcs, sizeof (TimerSource));
      ts->queue = mend_timer_queue_new ();
      ts->clock = self;
      ts->mutex = &priv->mutex;
      ts->sources = priv->sources;
      ts->context = context;
      ts->timer_fd = -1;
      ts->armed_us = -1;
#ifdef HAVE_TIMERFD
      ts->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
      if (ts->timer_fd >= 0)
        g_source_add_unix_fd ((GSource *) ts, ts->timer_fd, G_IO_IN);
#endif
      g_source_set_static_name ((GSource *) ts, "[mend] clock timers");
      g_source_set_priority ((GSource *) ts, G_PRIORITY_DEFAULT);
      /* GLib blocks a source with a file descriptor while it dispatches and
       * wakes its context to unblock it: a second wakeup per deadline. The
       * dispatch is safe to re-enter (a callback running a nested loop), so
       * it need not be blocked. */
      g_source_set_can_recurse ((GSource *) ts, TRUE);
      g_source_attach ((GSource *) ts, context);
      g_hash_table_insert (priv->sources, g_main_context_ref (context), ts);
    }

  mend_timer_queue_add (ts->queue, id, deadline_us, func, user_data, notify);

  if (mend_timer_queue_get_earliest (ts->queue) == deadline_us)
    arm (ts, deadline_us);

  g_mutex_unlock (&priv->mutex);

  return id;
}

static gboolean
mend_clock_real_remove_timer (MendClock *self,
                              guint      timer_id)
{
  MendClockPrivate *priv = mend_clock_get_instance_private (self);
  TimerSource *ts;
  MendTimerCall call;
  gboolean found = FALSE;

  g_mutex_lock (&priv->mutex);
  ts = find_queue_locked (priv, timer_id);
  if (ts != NULL && mend_timer_queue_steal (ts->queue, timer_id, &call))
    {
      gint64 earliest = mend_timer_queue_get_earliest (ts->queue);

      found = TRUE;
      if (earliest == G_MAXINT64)
        drop_source (ts);
      else
        arm (ts, earliest);
    }
  g_mutex_unlock (&priv->mutex);

  if (found)
    mend_timer_call_finish (&call, FALSE);

  return found;
}

static void
mend_clock_finalize (GObject *object)
{
  MendClock *self = (MendClock *) object;
  MendClockPrivate *priv = mend_clock_get_instance_private (self);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, priv->sources);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_source_destroy (value);

  g_clear_pointer (&priv->sources, g_hash_table_unref);
  g_mutex_clear (&priv->mutex);

  G_OBJECT_CLASS (mend_clock_parent_class)->finalize (object);
}

static void
mend_clock_class_init (MendClockClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_clock_finalize;

  klass->get_monotonic_time = mend_clock_real_get_monotonic_time;
  klass->get_real_time = mend_clock_real_get_real_time;
  klass->add_timer = mend_clock_real_add_timer;
  klass->remove_timer = mend_clock_real_remove_timer;
}

static void
mend_clock_init (MendClock *self)
{
  MendClockPrivate *priv = mend_clock_get_instance_private (self);

  g_mutex_init (&priv->mutex);
  priv->sources = g_hash_table_new_full (NULL, NULL,
                                         (GDestroyNotify) g_main_context_unref,
                                         (GDestroyNotify) g_source_unref);
}

/**
 * mend_clock_get_default:
 *
 * Gets the real clock, shared by the whole process.
 *
 * Returns: (transfer none): the default clock
 */
MendClock *
mend_clock_get_default (void)
{
  static MendClock *instance;

  if (g_once_init_enter (&instance))
    g_once_init_leave (&instance, g_object_new (MEND_TYPE_CLOCK, NULL));

  return instance;
}

/**
 * mend_clock_get_monotonic_time:
 * @self: a clock
 *
 * Gets the clock's monotonic time, which never jumps.
 *
 * Returns: the monotonic time in microseconds
 */
gint64
mend_clock_get_monotonic_time (MendClock *self)
{
  g_return_val_if_fail (MEND_IS_CLOCK (self), 0);

  return MEND_CLOCK_GET_CLASS (self)->get_monotonic_time (self);
}

/**
 * mend_clock_get_real_time:
 * @self: a clock
 *
 * Gets the clock's wall-clock time, as shown to people and saved in JSON.
 *
 * Returns: the wall-clock time in microseconds since the Unix epoch
 */
gint64
mend_clock_get_real_time (MendClock *self)
{
  g_return_val_if_fail (MEND_IS_CLOCK (self), 0);

  return MEND_CLOCK_GET_CLASS (self)->get_real_time (self);
}

/**
 * mend_clock_add_timeout:
 * @self: a clock
 * @delay_ms: how long from now, in milliseconds
 * @func: (scope notified) (closure user_data) (destroy notify): called once
 *   when the delay has passed
 * @user_data: data for @func
 * @notify: (nullable): frees @user_data when the timer fired or was removed
 *
 * Adds a one-shot timer. Timers with the same deadline run in the order they
 * were added; a removed timer never runs.
 *
 * Returns: the timer's id, never 0, for [method@Mend.Clock.remove_timeout]
 */
guint
mend_clock_add_timeout (MendClock      *self,
                        guint64         delay_ms,
                        MendClockFunc   func,
                        gpointer        user_data,
                        GDestroyNotify  notify)
{
  gint64 now;
  gint64 deadline;

  g_return_val_if_fail (MEND_IS_CLOCK (self), 0);
  g_return_val_if_fail (func != NULL, 0);

  now = mend_clock_get_monotonic_time (self);
  /* Saturate instead of overflowing: a deadline past the end of time simply
   * never comes. */
  if (delay_ms > (guint64) (G_MAXINT64 - now) / 1000)
    deadline = G_MAXINT64 - 1;
  else
    deadline = now + (gint64) delay_ms * 1000;

  return MEND_CLOCK_GET_CLASS (self)->add_timer (self, deadline, func, user_data, notify);
}

/**
 * mend_clock_remove_timeout:
 * @self: a clock
 * @timer_id: an id from [method@Mend.Clock.add_timeout]
 *
 * Removes a pending timer; it never runs, and its data is freed.
 *
 * Returns: %TRUE if the timer was pending, %FALSE if it already ran or was
 *   removed
 */
gboolean
mend_clock_remove_timeout (MendClock *self,
                           guint      timer_id)
{
  g_return_val_if_fail (MEND_IS_CLOCK (self), FALSE);

  if (timer_id == 0)
    return FALSE;

  return MEND_CLOCK_GET_CLASS (self)->remove_timer (self, timer_id);
}

guint
mend_clock_get_n_sources (MendClock *self)
{
  MendClockPrivate *priv = mend_clock_get_instance_private (self);
  guint n;

  g_mutex_lock (&priv->mutex);
  n = g_hash_table_size (priv->sources);
  g_mutex_unlock (&priv->mutex);

  return n;
}

void
mend_clock_set_poll_func (MendClock *self,
                          void     (*poll) (gpointer data),
                          gpointer   data)
{
  MendClockPrivate *priv = mend_clock_get_instance_private (self);

  priv->poll = poll;
  priv->poll_data = data;
}

void
mend_clock_poll (MendClock *self)
{
  MendClockPrivate *priv = mend_clock_get_instance_private (self);

  if (priv->poll != NULL)
    priv->poll (priv->poll_data);
}
