/* test-attack-countdown.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the waits of a clock: deadlines and countdowns that handlers
 * of a tick or a firing make and drop, many waits due at one instant, and
 * clocks of the app's own that keep time their own way. Everything runs in
 * virtual time and is finalized; run these under AddressSanitizer too.
 */

#include <libmend.h>

#define WALL_START 1764500000000000

static void
advance (MendClock *clock,
         guint64    ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), ms);
}

/* A clock of an app's that keeps virtual time its own way and runs a
 * timer already due at once, inside add_timer, as a simple one may,
 * although MendClockClass asks it not to. */
typedef struct
{
  MendClock  parent_instance;
  gint64     now_us;
  GArray    *timers;
  guint      last_id;
} EagerClock;
typedef struct { MendClockClass parent_class; } EagerClockClass;

typedef struct
{
  guint          id;
  gint64         deadline_us;
  MendClockFunc  func;
  gpointer       user_data;
  GDestroyNotify notify;
} EagerTimer;

static GType eager_clock_get_type (void);
G_DEFINE_TYPE (EagerClock, eager_clock, MEND_TYPE_CLOCK)

static gint64
eager_clock_get_monotonic_time (MendClock *clock)
{
  return ((EagerClock *) clock)->now_us;
}

static gint64
eager_clock_get_real_time (MendClock *clock)
{
  return WALL_START + ((EagerClock *) clock)->now_us;
}

static guint
eager_clock_add_timer (MendClock      *clock,
                       gint64          deadline_us,
                       MendClockFunc   func,
                       gpointer        user_data,
                       GDestroyNotify  notify)
{
  EagerClock *self = (EagerClock *) clock;
  EagerTimer timer = { ++self->last_id, deadline_us, func, user_data, notify };

  if (deadline_us <= self->now_us)
    {
      func (user_data);
      if (notify != NULL)
        notify (user_data);
    }
  else
    g_array_append_val (self->timers, timer);
  return timer.id;
}

static gboolean
eager_clock_remove_timer (MendClock *clock,
                          guint      timer_id)
{
  EagerClock *self = (EagerClock *) clock;

  for (guint i = 0; i < self->timers->len; i++)
    {
      EagerTimer timer = g_array_index (self->timers, EagerTimer, i);

      if (timer.id == timer_id)
        {
          g_array_remove_index (self->timers, i);
          if (timer.notify != NULL)
            timer.notify (timer.user_data);
          return TRUE;
        }
    }
  return FALSE;
}

/* Moves time on by @ms and runs what came due, earliest first. */
static void
eager_clock_advance (EagerClock *self,
                     guint64     ms)
{
  gint64 target = self->now_us + (gint64) ms * 1000;

  for (;;)
    {
      guint next = G_MAXUINT;
      EagerTimer timer;

      for (guint i = 0; i < self->timers->len; i++)
        if (g_array_index (self->timers, EagerTimer, i).deadline_us <= target &&
            (next == G_MAXUINT ||
             g_array_index (self->timers, EagerTimer, i).deadline_us <
             g_array_index (self->timers, EagerTimer, next).deadline_us))
          next = i;
      if (next == G_MAXUINT)
        break;
      timer = g_array_index (self->timers, EagerTimer, next);
      g_array_remove_index (self->timers, next);
      self->now_us = MAX (self->now_us, timer.deadline_us);
      timer.func (timer.user_data);
      if (timer.notify != NULL)
        timer.notify (timer.user_data);
    }
  self->now_us = target;
}

static void
eager_clock_finalize (GObject *object)
{
  EagerClock *self = (EagerClock *) object;

  g_assert_cmpuint (self->timers->len, ==, 0);
  g_array_unref (self->timers);
  G_OBJECT_CLASS (eager_clock_parent_class)->finalize (object);
}

static void
eager_clock_class_init (EagerClockClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = eager_clock_finalize;
  MEND_CLOCK_CLASS (klass)->get_monotonic_time = eager_clock_get_monotonic_time;
  MEND_CLOCK_CLASS (klass)->get_real_time = eager_clock_get_real_time;
  MEND_CLOCK_CLASS (klass)->add_timer = eager_clock_add_timer;
  MEND_CLOCK_CLASS (klass)->remove_timer = eager_clock_remove_timer;
}

static void
eager_clock_init (EagerClock *self)
{
  self->timers = g_array_new (FALSE, FALSE, sizeof (EagerTimer));
}

static void
count_signal (gpointer  instance,
              guint    *n)
{
  (*n)++;
}

/* A wait of no delay on a clock that runs it inside add_timer: it fires
 * once, before anyone could hear it, and leaves nothing on its clock nor
 * freed memory behind; a wait beside it counts as any other. */
static void
test_wait_due_at_once_on_a_clock_that_runs_it_inside_add (void)
{
  EagerClock *clock = g_object_new (eager_clock_get_type (), NULL);
  MendRetryWait *now = mend_retry_wait_new (MEND_CLOCK (clock), 0, 1, 4, MEND_REASON_CAPACITY);
  MendRetryWait *later = mend_retry_wait_new (MEND_CLOCK (clock), 2000, 1, 4, MEND_REASON_CAPACITY);
  guint fired = 0;

  g_assert_cmpint (mend_retry_wait_get_state (now), ==, MEND_RETRY_WAIT_FIRED);
  g_assert_false (mend_retry_wait_cancel (now));
  g_assert_cmpint (mend_retry_wait_get_remaining_ms (now), ==, 0);

  g_signal_connect (later, "fired", G_CALLBACK (count_signal), &fired);
  eager_clock_advance (clock, 2000);
  g_assert_cmpuint (fired, ==, 1);
  g_assert_cmpuint (clock->timers->len, ==, 0);

  g_assert_finalize_object (now);
  g_assert_finalize_object (later);
  g_assert_finalize_object (clock);
}


typedef struct
{
  MendClock     *clock;
  GPtrArray     *waits;     /* due at the same instant, owned */
  MendRetryWait *made;
  guint          fired;
  guint          cancelled;
} SameInstant;

static void
same_instant_cancelled (MendRetryWait *wait,
                        SameInstant   *si)
{
  si->cancelled++;
}

static void
same_instant_fired (MendRetryWait *wait,
                    SameInstant   *si)
{
  si->fired++;
  if (si->made != NULL)
    return;
  /* The first ends all the others due with it, drops two of them, and
   * makes one due at once. */
  for (guint i = 0; i < si->waits->len; i++)
    if (g_ptr_array_index (si->waits, i) != wait)
      mend_retry_wait_cancel (g_ptr_array_index (si->waits, i));
  g_ptr_array_remove_index (si->waits, si->waits->len - 1);
  g_ptr_array_remove_index (si->waits, si->waits->len - 1);
  si->made = mend_retry_wait_new (si->clock, 0, 2, 4, MEND_REASON_CAPACITY);
  g_signal_connect (si->made, "fired", G_CALLBACK (same_instant_fired), si);
}

static void
ignore_notify (GObject    *object,
               GParamSpec *pspec,
               gpointer    data)
{
}

/* Many watched waits due at the same instant, the first of which ends
 * the others, drops some and makes one due at once: one fires, the rest
 * are cancelled once each, the new one fires in the same advance, and
 * nothing stays on the clock. */
static void
test_many_waits_due_at_the_same_instant (void)
{
  SameInstant si = { mend_manual_clock_new (WALL_START), g_ptr_array_new_with_free_func (g_object_unref) };

  for (guint i = 0; i < 50; i++)
    {
      MendRetryWait *wait = mend_retry_wait_new (si.clock, 3000, 1, 4, MEND_REASON_CAPACITY);

      g_signal_connect (wait, "fired", G_CALLBACK (same_instant_fired), &si);
      g_signal_connect (wait, "cancelled", G_CALLBACK (same_instant_cancelled), &si);
      g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (ignore_notify), NULL);
      g_ptr_array_add (si.waits, wait);
    }
  advance (si.clock, 1000);
  advance (si.clock, 2000);
  g_assert_cmpuint (si.fired, ==, 2);
  g_assert_cmpuint (si.cancelled, ==, 49);
  g_assert_cmpint (mend_retry_wait_get_state (si.made), ==, MEND_RETRY_WAIT_FIRED);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (si.clock)), ==, 0);

  for (guint i = 0; i < si.waits->len; i++)
    g_signal_handlers_disconnect_by_data (g_ptr_array_index (si.waits, i), &si);
  g_ptr_array_unref (si.waits);
  g_assert_finalize_object (si.made);
  g_assert_finalize_object (si.clock);
}

typedef struct
{
  MendClock     *clock;
  MendRetryWait *ticked;    /* ticked already this second, dropped */
  MendRetryWait *made;
  GString       *log;
} TickMakes;

static void
log_remaining (MendRetryWait *wait,
               GParamSpec    *pspec,
               TickMakes     *t)
{
  g_string_append_printf (t->log, "%s%u ", wait == t->made ? "new:" : "",
                          mend_retry_wait_get_remaining_seconds (wait));
}

static void
tick_makes_and_drops (MendRetryWait *wait,
                      GParamSpec    *pspec,
                      TickMakes     *t)
{
  log_remaining (wait, pspec, t);
  if (t->made != NULL)
    return;
  g_clear_object (&t->ticked);
  t->made = mend_retry_wait_new (t->clock, 2500, 1, 4, MEND_REASON_CAPACITY);
  g_signal_connect (t->made, "notify::remaining-seconds", G_CALLBACK (log_remaining), t);
}

/* A tick's handler that drops a wait the tick reached already and makes a
 * watched one: the new one counts down from the next whole second, on
 * its own, and fires. */
static void
test_tick_handler_making_and_dropping_waits (void)
{
  TickMakes t = { mend_manual_clock_new (WALL_START), NULL, NULL, g_string_new (NULL) };
  MendRetryWait *first;

  t.ticked = mend_retry_wait_new (t.clock, 10000, 1, 4, MEND_REASON_CAPACITY);
  first = mend_retry_wait_new (t.clock, 5000, 1, 4, MEND_REASON_CAPACITY);
  g_signal_connect (t.ticked, "notify::remaining-seconds", G_CALLBACK (ignore_notify), NULL);
  g_signal_connect (first, "notify::remaining-seconds", G_CALLBACK (tick_makes_and_drops), &t);
  for (guint i = 0; i < 5; i++)
    advance (t.clock, 1000);
  g_assert_cmpstr (t.log->str, ==, "4 3 new:2 2 new:1 new:0 1 0 ");
  g_assert_cmpint (mend_retry_wait_get_state (first), ==, MEND_RETRY_WAIT_FIRED);
  g_assert_cmpint (mend_retry_wait_get_state (t.made), ==, MEND_RETRY_WAIT_FIRED);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (t.clock)), ==, 0);

  g_signal_handlers_disconnect_by_data (first, &t);
  g_signal_handlers_disconnect_by_data (t.made, &t);
  g_assert_finalize_object (first);
  g_assert_finalize_object (t.made);
  g_assert_finalize_object (t.clock);
  g_string_free (t.log, TRUE);
}

static void
log_description (MendRetryWait *wait,
                 GParamSpec    *pspec,
                 GString       *log)
{
  g_autofree char *text = mend_retry_wait_describe (wait);

  g_string_append_printf (log, "%s|", text);
}

/* On the app's own clock, which the library cannot ask to look: a watched
 * wait counts down once the main loop has run, and its deadline fires. */
static void
test_app_clock_counts_down_once_the_loop_ran (void)
{
  EagerClock *clock = g_object_new (eager_clock_get_type (), NULL);
  MendRetryWait *wait = mend_retry_wait_new (MEND_CLOCK (clock), 3000, 2, 4, MEND_REASON_CAPACITY);
  g_autoptr(GString) log = g_string_new (NULL);
  guint fired = 0;

  g_signal_connect (wait, "notify::description", G_CALLBACK (log_description), log);
  g_signal_connect (wait, "fired", G_CALLBACK (count_signal), &fired);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  /* The deadline and the tick. */
  g_assert_cmpuint (clock->timers->len, ==, 2);
  for (guint i = 0; i < 3; i++)
    eager_clock_advance (clock, 1000);
  g_assert_cmpstr (log->str, ==, "Retrying in 2 s (retry 2 of 4)|Retrying in 1 s (retry 2 of 4)|"
                                 "Retrying now (retry 2 of 4)|");
  g_assert_cmpuint (fired, ==, 1);
  g_assert_cmpuint (clock->timers->len, ==, 0);

  g_signal_handlers_disconnect_by_data (wait, log);
  g_assert_finalize_object (wait);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Mend/AttackCountdown/wait-due-at-once-on-a-clock-that-runs-it-inside-add",
                   test_wait_due_at_once_on_a_clock_that_runs_it_inside_add);
  g_test_add_func ("/Mend/AttackCountdown/many-waits-due-at-the-same-instant",
                   test_many_waits_due_at_the_same_instant);
  g_test_add_func ("/Mend/AttackCountdown/tick-handler-making-and-dropping-waits",
                   test_tick_handler_making_and_dropping_waits);
  g_test_add_func ("/Mend/AttackCountdown/app-clock-counts-down-once-the-loop-ran",
                   test_app_clock_counts_down_once_the_loop_ran);

  return g_test_run ();
}
