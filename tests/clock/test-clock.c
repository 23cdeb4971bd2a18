/* test-clock.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <libmend.h>

#include "mend-clock-private.h"

typedef struct
{
  GString *log;
  MendManualClock *clock;
} Fixture;

typedef struct
{
  Fixture *fixture;
  const char *name;
  guint64 schedule_ms;   /* non-zero: add another timer from inside */
  const char *schedule_name;
} Timer;

static void
on_timer (gpointer data)
{
  Timer *timer = data;
  MendClock *clock = MEND_CLOCK (timer->fixture->clock);

  g_string_append_printf (timer->fixture->log, "%s@%" G_GINT64_FORMAT " ",
                          timer->name, mend_clock_get_monotonic_time (clock) / 1000);

  if (timer->schedule_ms != 0)
    {
      Timer *inner = g_new0 (Timer, 1);

      inner->fixture = timer->fixture;
      inner->name = timer->schedule_name;
      mend_clock_add_timeout (clock, timer->schedule_ms, on_timer, inner, g_free);
    }
}

static guint
add (Fixture    *f,
     guint64     ms,
     const char *name)
{
  Timer *timer = g_new0 (Timer, 1);

  timer->fixture = f;
  timer->name = name;
  return mend_clock_add_timeout (MEND_CLOCK (f->clock), ms, on_timer, timer, g_free);
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->log = g_string_new (NULL);
  f->clock = MEND_MANUAL_CLOCK (mend_manual_clock_new (1764500000000000));
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->clock);
  g_string_free (f->log, TRUE);
}

static void
test_manual_fires_in_deadline_order (Fixture       *f,
                                     gconstpointer  data)
{
  add (f, 300, "c");
  add (f, 100, "a");
  add (f, 200, "b");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 3);

  mend_manual_clock_advance (f->clock, 150);
  g_assert_cmpstr (f->log->str, ==, "a@100 ");
  g_assert_cmpint (mend_clock_get_monotonic_time (MEND_CLOCK (f->clock)), ==, 150000);

  mend_manual_clock_advance (f->clock, 1000);
  g_assert_cmpstr (f->log->str, ==, "a@100 b@200 c@300 ");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 0);
  g_assert_cmpint (mend_clock_get_monotonic_time (MEND_CLOCK (f->clock)), ==, 1150000);
}

static void
test_manual_same_deadline_keeps_schedule_order (Fixture       *f,
                                                gconstpointer  data)
{
  add (f, 100, "first");
  add (f, 100, "second");
  add (f, 100, "third");

  mend_manual_clock_advance (f->clock, 100);
  g_assert_cmpstr (f->log->str, ==, "first@100 second@100 third@100 ");
}

static void
test_manual_runs_timers_scheduled_inside_the_span (Fixture       *f,
                                                   gconstpointer  data)
{
  Timer *outer = g_new0 (Timer, 1);

  outer->fixture = f;
  outer->name = "outer";
  outer->schedule_ms = 50;
  outer->schedule_name = "inner";
  mend_clock_add_timeout (MEND_CLOCK (f->clock), 100, on_timer, outer, g_free);
  add (f, 200, "late");

  mend_manual_clock_advance (f->clock, 1000);
  /* The inner timer runs at its own deadline, before the later one. */
  g_assert_cmpstr (f->log->str, ==, "outer@100 inner@150 late@200 ");
}

static void
test_manual_removed_timer_never_fires (Fixture       *f,
                                       gconstpointer  data)
{
  guint id = add (f, 100, "removed");

  add (f, 100, "kept");
  g_assert_true (mend_clock_remove_timeout (MEND_CLOCK (f->clock), id));
  g_assert_false (mend_clock_remove_timeout (MEND_CLOCK (f->clock), id));
  g_assert_false (mend_clock_remove_timeout (MEND_CLOCK (f->clock), 0));

  mend_manual_clock_advance (f->clock, 500);
  g_assert_cmpstr (f->log->str, ==, "kept@100 ");
}

static void
test_manual_advance_to_next (Fixture       *f,
                             gconstpointer  data)
{
  add (f, 5 * 60 * 1000, "five-minutes");
  add (f, 5 * 60 * 1000, "same-time");

  g_assert_true (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpstr (f->log->str, ==, "five-minutes@300000 same-time@300000 ");
  g_assert_false (mend_manual_clock_advance_to_next (f->clock));
}

static void
test_manual_wall_time_moves_with_it (Fixture       *f,
                                     gconstpointer  data)
{
  MendClock *clock = MEND_CLOCK (f->clock);

  g_assert_cmpint (mend_clock_get_real_time (clock), ==, 1764500000000000);
  mend_manual_clock_advance (f->clock, 2500);
  g_assert_cmpint (mend_clock_get_real_time (clock), ==, 1764500002500000);
}

static void
test_manual_huge_delay_never_overflows (Fixture       *f,
                                        gconstpointer  data)
{
  add (f, G_MAXUINT64, "never");
  mend_manual_clock_advance (f->clock, G_MAXUINT32);
  g_assert_cmpstr (f->log->str, ==, "");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 1);
}

static void
test_manual_finalize_frees_pending_data (Fixture       *f,
                                         gconstpointer  data)
{
  /* The Timer structs are freed by the clock at finalize (no leak under
   * valgrind or ASan), and never run. */
  add (f, 100, "pending");
  add (f, 200, "pending");
}

/* Random adds, removals and advances against the obvious reference: every
 * timer not removed fires once, in (deadline, order added) order, never
 * early; a removed one never fires. */

typedef struct
{
  GArray *fired;        /* guint index */
  gint64 *deadline;     /* per index */
  gboolean *removed;
  guint *fire_count;
  MendManualClock *clock;
} Stress;

typedef struct
{
  Stress *stress;
  guint index;
} StressTimer;

static void
on_stress_timer (gpointer data)
{
  StressTimer *timer = data;
  Stress *stress = timer->stress;

  g_assert_false (stress->removed[timer->index]);
  g_assert_cmpint (mend_clock_get_monotonic_time (MEND_CLOCK (stress->clock)), ==, stress->deadline[timer->index]);
  stress->fire_count[timer->index]++;
  g_array_append_val (stress->fired, timer->index);
}

static void
test_manual_random_schedule_matches_reference (void)
{
  const guint n = 20000;
  g_autoptr(GRand) rand = g_rand_new_with_seed (20261130);
  g_autofree guint *ids = g_new0 (guint, n);
  Stress stress = { 0 };
  guint added = 0;

  stress.clock = MEND_MANUAL_CLOCK (mend_manual_clock_new (0));
  stress.fired = g_array_new (FALSE, FALSE, sizeof (guint));
  stress.deadline = g_new0 (gint64, n);
  stress.removed = g_new0 (gboolean, n);
  stress.fire_count = g_new0 (guint, n);

  while (added < n)
    {
      guint op = g_rand_int_range (rand, 0, 10);

      if (op < 6)
        {
          StressTimer *timer = g_new0 (StressTimer, 1);
          guint64 delay = g_rand_int_range (rand, 0, 50);

          timer->stress = &stress;
          timer->index = added;
          stress.deadline[added] = mend_clock_get_monotonic_time (MEND_CLOCK (stress.clock)) + delay * 1000;
          ids[added] = mend_clock_add_timeout (MEND_CLOCK (stress.clock), delay, on_stress_timer, timer, g_free);
          added++;
        }
      else if (op < 8 && added > 0)
        {
          guint victim = g_rand_int_range (rand, 0, added);
          gboolean pending = stress.fire_count[victim] == 0 && !stress.removed[victim];

          g_assert_true (mend_clock_remove_timeout (MEND_CLOCK (stress.clock), ids[victim]) == pending);
          if (pending)
            stress.removed[victim] = TRUE;
        }
      else
        mend_manual_clock_advance (stress.clock, g_rand_int_range (rand, 0, 20));
    }
  mend_manual_clock_advance (stress.clock, 100);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (stress.clock), ==, 0);

  for (guint i = 0; i < n; i++)
    g_assert_cmpuint (stress.fire_count[i], ==, stress.removed[i] ? 0 : 1);
  for (guint i = 1; i < stress.fired->len; i++)
    {
      guint a = g_array_index (stress.fired, guint, i - 1);
      guint b = g_array_index (stress.fired, guint, i);

      g_assert_true (stress.deadline[a] < stress.deadline[b] ||
                     (stress.deadline[a] == stress.deadline[b] && a < b));
    }

  g_array_unref (stress.fired);
  g_free (stress.deadline);
  g_free (stress.removed);
  g_free (stress.fire_count);
  g_assert_finalize_object (stress.clock);
}

/* Real clock */

typedef struct
{
  GMainLoop *loop;
  guint fired;
  guint expected;
  guint early;
} RealState;

typedef struct
{
  RealState *state;
  gint64 earliest_us;  /* no timer may fire more than 1 ms before this */
} RealTimer;

static void
on_real_timer (gpointer data)
{
  RealTimer *timer = data;
  RealState *state = timer->state;

  /* Served by the millisecond: at most one early. */
  if (g_get_monotonic_time () < timer->earliest_us - 1000)
    state->early++;

  if (++state->fired == state->expected)
    g_main_loop_quit (state->loop);
}

static gboolean
watchdog (gpointer data)
{
  g_error ("the real clock did not fire its timers in time");
  return G_SOURCE_REMOVE;
}

static void
test_real_one_source_for_many_timers (void)
{
  MendClock *clock = mend_clock_get_default ();
  RealState state = { 0 };
  guint watchdog_id;
  guint removed_id;

  state.loop = g_main_loop_new (NULL, FALSE);
  state.expected = 200;

  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 0);

  for (guint i = 0; i < state.expected; i++)
    {
      RealTimer *timer = g_new0 (RealTimer, 1);
      guint ms = (i * 7919) % 40;   /* scattered deadlines within 40 ms */

      timer->state = &state;
      timer->earliest_us = g_get_monotonic_time () + ms * 1000;
      mend_clock_add_timeout (clock, ms, on_real_timer, timer, g_free);
    }

  removed_id = mend_clock_add_timeout (clock, 10, on_real_timer, g_new0 (RealTimer, 1), g_free);
  g_assert_true (mend_clock_remove_timeout (clock, removed_id));

  /* However many deadlines are pending: one source on this context. */
  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 1);

  watchdog_id = g_timeout_add_seconds (10, watchdog, NULL);
  g_main_loop_run (state.loop);
  g_source_remove (watchdog_id);

  g_assert_cmpuint (state.fired, ==, state.expected);
  g_assert_cmpuint (state.early, ==, 0);
  /* Nothing pending: the source is given back. */
  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 0);

  g_main_loop_unref (state.loop);
}

static void
test_real_removing_last_timer_drops_source (void)
{
  MendClock *clock = mend_clock_get_default ();
  guint id = mend_clock_add_timeout (clock, 60000, on_real_timer, g_new0 (RealTimer, 1), g_free);

  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 1);
  g_assert_true (mend_clock_remove_timeout (clock, id));
  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 0);
}

static gpointer
thread_func (gpointer data)
{
  MendClock *clock = mend_clock_get_default ();
  g_autoptr(GMainContext) context = g_main_context_new ();
  RealState state = { 0 };
  RealTimer *timer = g_new0 (RealTimer, 1);

  g_main_context_push_thread_default (context);
  state.loop = g_main_loop_new (context, FALSE);
  state.expected = 1;
  timer->state = &state;
  mend_clock_add_timeout (clock, 1, on_real_timer, timer, g_free);
  g_main_loop_run (state.loop);
  g_main_loop_unref (state.loop);
  g_main_context_pop_thread_default (context);

  return GUINT_TO_POINTER (state.fired);
}

static void
test_real_timer_runs_on_thread_default_context (void)
{
  GThread *thread = g_thread_new ("clock-test", thread_func, NULL);

  g_assert_cmpuint (GPOINTER_TO_UINT (g_thread_join (thread)), ==, 1);
  g_assert_cmpuint (mend_clock_get_n_sources (mend_clock_get_default ()), ==, 0);
}

typedef struct
{
  GMainLoop *loop;
  guint      other_id;
  guint      new_id;
  guint      stray;   /* a removed timer that ran all the same */
} Reentry;

static void
on_stray_timer (gpointer data)
{
  ((Reentry *) data)->stray++;
}

static void
on_reentering_timer (gpointer data)
{
  Reentry *r = data;

  /* Removing the only other timer gives the source back mid-dispatch; the
   * timer added next must land on a source the clock still knows. */
  g_assert_true (mend_clock_remove_timeout (mend_clock_get_default (), r->other_id));
  r->new_id = mend_clock_add_timeout (mend_clock_get_default (), 5, on_stray_timer, r, NULL);
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
test_real_timer_added_while_source_is_dropped_can_be_removed (void)
{
  MendClock *clock = mend_clock_get_default ();
  Reentry r = { 0 };

  r.loop = g_main_loop_new (NULL, FALSE);
  mend_clock_add_timeout (clock, 1, on_reentering_timer, &r, NULL);
  r.other_id = mend_clock_add_timeout (clock, 60000, on_stray_timer, &r, NULL);

  while (r.new_id == 0)
    g_main_context_iteration (NULL, TRUE);

  /* The clock still finds the new timer: removing it works, and it never
   * runs afterwards. */
  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 1);
  g_assert_true (mend_clock_remove_timeout (clock, r.new_id));
  g_timeout_add (30, quit_loop, r.loop);
  g_main_loop_run (r.loop);
  g_assert_cmpuint (r.stray, ==, 0);
  g_assert_cmpuint (mend_clock_get_n_sources (clock), ==, 0);

  g_main_loop_unref (r.loop);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/Mend/ManualClock/fires-in-deadline-order", test_manual_fires_in_deadline_order);
  ADD ("/Mend/ManualClock/same-deadline-keeps-schedule-order", test_manual_same_deadline_keeps_schedule_order);
  ADD ("/Mend/ManualClock/runs-timers-scheduled-inside-the-span", test_manual_runs_timers_scheduled_inside_the_span);
  ADD ("/Mend/ManualClock/removed-timer-never-fires", test_manual_removed_timer_never_fires);
  ADD ("/Mend/ManualClock/advance-to-next-deadline", test_manual_advance_to_next);
  ADD ("/Mend/ManualClock/wall-time-moves-with-it", test_manual_wall_time_moves_with_it);
  ADD ("/Mend/ManualClock/huge-delay-never-overflows", test_manual_huge_delay_never_overflows);
  ADD ("/Mend/ManualClock/finalize-frees-pending-timers", test_manual_finalize_frees_pending_data);

#undef ADD

  g_test_add_func ("/Mend/ManualClock/random-schedule-matches-reference", test_manual_random_schedule_matches_reference);
  g_test_add_func ("/Mend/Clock/one-source-for-many-timers", test_real_one_source_for_many_timers);
  g_test_add_func ("/Mend/Clock/removing-last-timer-drops-source", test_real_removing_last_timer_drops_source);
  g_test_add_func ("/Mend/Clock/timer-added-while-source-is-dropped-can-be-removed", test_real_timer_added_while_source_is_dropped_can_be_removed);
  g_test_add_func ("/Mend/Clock/timer-runs-on-thread-default-context", test_real_timer_runs_on_thread_default_context);

  return g_test_run ();
}
