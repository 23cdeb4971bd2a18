/* test-retry-wait-countdown.c — a clock's waits: one place each for the deadline and the countdown
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <libmend.h>

#include "mend-test-utils.h"

/* A clock and the waits on it (tests/support/mend-test-utils.c). */
typedef MendTestWaitFixture Fixture;

static void
on_description (MendRetryWait *wait,
                GParamSpec    *pspec,
                Fixture       *f)
{
  g_autofree char *text = mend_retry_wait_describe (wait);

  g_string_append_printf (f->log, "%s|", text);
}

/* A watcher of the description connected to a wait the board has looked
 * at already, beside others nobody watches: seen at the next advance,
 * and only then does the board tick. */
static void
test_late_watcher_is_seen_at_the_next_advance (Fixture       *f,
                                               gconstpointer  data)
{
  MendRetryWait *waits[3];

  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    waits[i] = mend_test_wait_new (f, 10000);
  mend_test_wait_advance (f, 1500);
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 3);

  g_signal_connect (waits[2], "notify::description", G_CALLBACK (on_description), f);
  mend_test_wait_advance (f, 100);
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 4);
  mend_test_wait_advance (f, 400);
  g_assert_cmpstr (f->log->str, ==, "Retrying in 8 s (retry 2 of 4)|");

  g_signal_handlers_disconnect_by_func (waits[2], on_description, f);
  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    {
      g_assert_true (mend_retry_wait_cancel (waits[i]));
      g_assert_finalize_object (waits[i]);
    }
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 0);
  g_assert_cmpuint (f->cancelled, ==, 3);
}

static void
on_remaining_cancel (MendRetryWait *wait,
                     GParamSpec    *pspec,
                     Fixture       *f)
{
  f->notified++;
  mend_retry_wait_cancel (wait);
}

/* A tick's handler that ends its wait: the wait leaves its clock whole,
 * deadline and countdown, and nothing ticks or fires after. */
static void
test_cancelled_from_its_own_tick (Fixture       *f,
                                  gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 5000);

  g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (on_remaining_cancel), f);
  mend_test_wait_advance (f, 1000);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_CANCELLED);
  g_assert_cmpuint (f->cancelled, ==, 1);
  /* The tick's notification, then the cancel's. */
  g_assert_cmpuint (f->notified, ==, 2);
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 0);

  mend_test_wait_advance (f, 10000);
  g_assert_cmpuint (f->fired, ==, 0);
  g_assert_cmpuint (f->notified, ==, 2);

  g_signal_handlers_disconnect_by_data (wait, f);
  g_assert_finalize_object (wait);
}

static void
on_remaining_drop (MendRetryWait *wait,
                   GParamSpec    *pspec,
                   Fixture       *f)
{
  f->notified++;
  g_object_unref (wait);
}

/* A tick's handler that drops the last reference to its own wait: the
 * wait is finalized once the tick is done with it, and leaves nothing. */
static void
test_dropped_from_its_own_tick (Fixture       *f,
                                gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 5000);

  g_object_add_weak_pointer (G_OBJECT (wait), (gpointer *) &wait);
  g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (on_remaining_drop), f);
  mend_test_wait_advance (f, 1000);
  g_assert_null (wait);
  g_assert_cmpuint (f->notified, ==, 1);
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 0);

  mend_test_wait_advance (f, 10000);
  g_assert_cmpuint (f->fired, ==, 0);
  g_assert_cmpuint (f->cancelled, ==, 0);
}

typedef struct
{
  MendRetryWait *other;
  guint          n_first;
  guint          n_other;
} Pair;

static void
on_first_drops_other (MendRetryWait *wait,
                      GParamSpec    *pspec,
                      Pair          *pair)
{
  if (pair->n_first++ == 0)
    g_object_unref (pair->other);
}

static void
on_other (MendRetryWait *wait,
          GParamSpec    *pspec,
          Pair          *pair)
{
  pair->n_other++;
}

/* A tick's handler that drops the last reference to a wait the same tick
 * has yet to reach: that wait is gone, and is not ticked. */
static void
test_tick_drops_a_wait_it_has_yet_to_reach (Fixture       *f,
                                            gconstpointer  data)
{
  MendRetryWait *first = mend_test_wait_new (f, 5000);
  Pair pair = { mend_test_wait_new (f, 5000), 0, 0 };

  g_object_add_weak_pointer (G_OBJECT (pair.other), (gpointer *) &pair.other);
  g_signal_connect (first, "notify::remaining-seconds", G_CALLBACK (on_first_drops_other), &pair);
  g_signal_connect (pair.other, "notify::remaining-seconds", G_CALLBACK (on_other), &pair);
  mend_test_wait_advance (f, 1000);
  g_assert_null (pair.other);
  g_assert_cmpuint (pair.n_first, ==, 1);
  g_assert_cmpuint (pair.n_other, ==, 0);
  /* The first's deadline and its tick. */
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 2);

  mend_test_wait_advance (f, 1000);
  g_assert_cmpuint (pair.n_first, ==, 2);

  g_signal_handlers_disconnect_by_data (first, &pair);
  g_assert_true (mend_retry_wait_cancel (first));
  g_assert_finalize_object (first);
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 0);
}

static void
on_any_notify (GObject    *object,
               GParamSpec *pspec,
               GString    *log)
{
  g_string_append_printf (log, "%s ", pspec->name);
}

/* Beside a watched wait, one nobody shows (a handler of every
 * notification is not one of the countdown's) is not ticked: it costs
 * nothing but its deadline. */
static void
test_only_watched_waits_tick (Fixture       *f,
                              gconstpointer  data)
{
  MendRetryWait *shown = mend_test_wait_new (f, 5000);
  MendRetryWait *hidden = mend_test_wait_new (f, 5000);
  g_autoptr(GString) hidden_log = g_string_new (NULL);

  g_signal_connect (shown, "notify::description", G_CALLBACK (on_description), f);
  g_signal_connect (hidden, "notify", G_CALLBACK (on_any_notify), hidden_log);
  for (guint i = 0; i < 4; i++)
    mend_test_wait_advance (f, 1000);
  g_assert_cmpstr (f->log->str, ==,
                   "Retrying in 4 s (retry 2 of 4)|Retrying in 3 s (retry 2 of 4)|"
                   "Retrying in 2 s (retry 2 of 4)|Retrying in 1 s (retry 2 of 4)|");
  g_assert_cmpstr (hidden_log->str, ==, "");

  /* Its own end is notified. */
  mend_test_wait_advance (f, 1000);
  g_assert_cmpuint (f->fired, ==, 2);
  g_assert_nonnull (strstr (hidden_log->str, "state"));
  g_assert_nonnull (strstr (hidden_log->str, "remaining-seconds"));
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 0);

  g_signal_handlers_disconnect_by_data (shown, f);
  g_signal_handlers_disconnect_by_data (hidden, hidden_log);
  g_assert_finalize_object (shown);
  g_assert_finalize_object (hidden);
}

typedef struct
{
  Fixture       *f;
  MendRetryWait *self;
  MendRetryWait *same_deadline;
  MendRetryWait *made;
} Disposer;

/* Ends the wait due at the same instant, drops both, and makes another
 * wait on the same clock. */
static void
on_fired_dispose (MendRetryWait *wait,
                  Disposer      *d)
{
  MendRetryWait *other = d->same_deadline;

  /* Its weak pointer is cleared at the dispose already. */
  g_object_run_dispose (G_OBJECT (other));
  g_object_unref (other);
  g_object_unref (d->self);
  d->made = mend_test_wait_new (d->f, 3000);
}

/* A fired handler that disposes its wait and another due at the same
 * instant, and makes a new one: each leaves its clock once, and the new
 * one counts as any other. */
static void
test_fired_handler_disposes_waits (Fixture       *f,
                                   gconstpointer  data)
{
  Disposer d = { f, mend_test_wait_new (f, 1000), mend_test_wait_new (f, 1000), NULL };
  MendRetryWait *watched = mend_test_wait_new (f, 5000);

  g_signal_connect (watched, "notify::remaining-seconds", G_CALLBACK (on_description), f);
  g_object_add_weak_pointer (G_OBJECT (d.self), (gpointer *) &d.self);
  g_object_add_weak_pointer (G_OBJECT (d.same_deadline), (gpointer *) &d.same_deadline);
  g_signal_connect (d.self, "fired", G_CALLBACK (on_fired_dispose), &d);

  mend_test_wait_advance (f, 1000);
  g_assert_null (d.self);
  g_assert_null (d.same_deadline);
  g_assert_cmpuint (f->fired, ==, 1);
  g_assert_cmpuint (f->cancelled, ==, 1);
  g_assert_nonnull (d.made);
  /* The watched wait's deadline and tick, and the new wait's deadline. */
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 3);

  mend_test_wait_advance (f, 3000);
  g_assert_cmpint (mend_retry_wait_get_state (d.made), ==, MEND_RETRY_WAIT_FIRED);
  g_assert_cmpuint (f->fired, ==, 2);
  g_assert_finalize_object (d.made);
  mend_test_wait_advance (f, 1000);
  g_assert_cmpuint (f->fired, ==, 3);
  g_assert_cmpuint (mend_test_wait_n_pending (f), ==, 0);

  g_signal_handlers_disconnect_by_data (watched, f);
  g_assert_finalize_object (watched);
}

/* A clock of an app's that fails to remove its timers: they stay, and
 * run later. */
typedef struct
{
  MendClock  parent_instance;
  GArray    *timers;
} LeakyClock;
typedef struct { MendClockClass parent_class; } LeakyClockClass;

typedef struct
{
  MendClockFunc  func;
  gpointer       user_data;
  GDestroyNotify notify;
} LeakyTimer;

static GType leaky_clock_get_type (void);
G_DEFINE_TYPE (LeakyClock, leaky_clock, MEND_TYPE_CLOCK)

static guint
leaky_clock_add_timer (MendClock      *clock,
                       gint64          deadline_us,
                       MendClockFunc   func,
                       gpointer        user_data,
                       GDestroyNotify  notify)
{
  LeakyClock *self = (LeakyClock *) clock;
  LeakyTimer timer = { func, user_data, notify };

  g_array_append_val (self->timers, timer);
  return self->timers->len;
}

static gboolean
leaky_clock_remove_timer (MendClock *clock,
                          guint      timer_id)
{
  return FALSE;
}

/* Runs every timer it ever had, as if all were due. */
static void
leaky_clock_run_all (LeakyClock *self)
{
  g_autoptr(GArray) timers = g_steal_pointer (&self->timers);

  self->timers = g_array_new (FALSE, FALSE, sizeof (LeakyTimer));
  for (guint i = 0; i < timers->len; i++)
    {
      LeakyTimer *timer = &g_array_index (timers, LeakyTimer, i);

      timer->func (timer->user_data);
      if (timer->notify != NULL)
        timer->notify (timer->user_data);
    }
}

static void
leaky_clock_finalize (GObject *object)
{
  LeakyClock *self = (LeakyClock *) object;

  g_assert_cmpuint (self->timers->len, ==, 0);
  g_array_unref (self->timers);
  G_OBJECT_CLASS (leaky_clock_parent_class)->finalize (object);
}

static void
leaky_clock_class_init (LeakyClockClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = leaky_clock_finalize;
  MEND_CLOCK_CLASS (klass)->add_timer = leaky_clock_add_timer;
  MEND_CLOCK_CLASS (klass)->remove_timer = leaky_clock_remove_timer;
}

static void
leaky_clock_init (LeakyClock *self)
{
  self->timers = g_array_new (FALSE, FALSE, sizeof (LeakyTimer));
}

/* A deadline whose timer outlived the wait's end, or the wait itself,
 * does nothing when it runs. */
static void
test_timer_that_outlived_its_wait (void)
{
  LeakyClock *clock = g_object_new (leaky_clock_get_type (), NULL);
  Fixture f = { MEND_CLOCK (clock), 0, 0, 0, NULL };
  MendRetryWait *cancelled = mend_test_wait_new (&f, 1000);
  MendRetryWait *dropped = mend_test_wait_new (&f, 1000);

  g_assert_true (mend_retry_wait_cancel (cancelled));
  g_assert_finalize_object (dropped);
  leaky_clock_run_all (clock);
  g_assert_cmpuint (f.fired, ==, 0);
  g_assert_cmpuint (f.cancelled, ==, 1);
  g_assert_cmpint (mend_retry_wait_get_state (cancelled), ==, MEND_RETRY_WAIT_CANCELLED);

  g_assert_finalize_object (cancelled);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, mend_test_wait_fixture_set_up, func, mend_test_wait_fixture_tear_down)

  ADD ("/Mend/Countdown/late-watcher-is-seen-at-the-next-advance",
       test_late_watcher_is_seen_at_the_next_advance);
  ADD ("/Mend/Countdown/cancelled-from-its-own-tick", test_cancelled_from_its_own_tick);
  ADD ("/Mend/Countdown/dropped-from-its-own-tick", test_dropped_from_its_own_tick);
  ADD ("/Mend/Countdown/tick-drops-a-wait-it-has-yet-to-reach",
       test_tick_drops_a_wait_it_has_yet_to_reach);
  ADD ("/Mend/Countdown/only-watched-waits-tick", test_only_watched_waits_tick);
  ADD ("/Mend/Countdown/fired-handler-disposes-waits", test_fired_handler_disposes_waits);

#undef ADD

  g_test_add_func ("/Mend/Countdown/timer-that-outlived-its-wait", test_timer_that_outlived_its_wait);

  return g_test_run ();
}
