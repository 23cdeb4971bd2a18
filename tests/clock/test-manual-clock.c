/* test-manual-clock.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendManualClock as a class: a MendClock whose time moves only when told
 * to. Its timers' order and removal are in test-clock.c; here is what the
 * class promises beyond them: where its two times start and how they
 * move, what a timer's callback sees, where advance () and
 * advance_to_next () stop, the pending count, the data's notify, and the
 * thread timers run on.
 */

#include <libmend.h>

#include "mend-test-utils.h"

typedef struct
{
  MendManualClock *clock;
  GString         *log;
} Fixture;

typedef struct
{
  Fixture    *f;
  const char *name;
  guint64     then_ms;      /* add "then" with this delay from inside */
  gboolean    adds_then;
  guint       remove_id;    /* remove this timer from inside */
  guint       own_id;
} Timer;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = MEND_MANUAL_CLOCK (mend_manual_clock_new (MEND_TEST_WALL_START));
  f->log = g_string_new (NULL);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->clock);
  g_string_free (f->log, TRUE);
}

static gint64
now_ms (Fixture *f)
{
  return mend_clock_get_monotonic_time (MEND_CLOCK (f->clock)) / 1000;
}

static void on_timer (gpointer data);

static Timer *
add_timer_full (Fixture    *f,
                guint64     ms,
                const char *name)
{
  Timer *timer = g_new0 (Timer, 1);

  timer->f = f;
  timer->name = name;
  timer->own_id = mend_clock_add_timeout (MEND_CLOCK (f->clock), ms, on_timer, timer, g_free);
  return timer;
}

static guint
add_timer (Fixture    *f,
           guint64     ms,
           const char *name)
{
  return add_timer_full (f, ms, name)->own_id;
}

static void
on_timer (gpointer data)
{
  Timer *timer = data;
  Fixture *f = timer->f;

  g_string_append_printf (f->log, "%s@%" G_GINT64_FORMAT " ", timer->name, now_ms (f));
  if (timer->adds_then)
    {
      gsize before = f->log->len;

      add_timer (f, timer->then_ms, "then");
      /* Never from inside the add. */
      g_assert_cmpuint (f->log->len, ==, before);
    }
  if (timer->remove_id != 0)
    g_string_append_printf (f->log, "removed:%d ",
                            mend_clock_remove_timeout (MEND_CLOCK (f->clock), timer->remove_id));
}

static void
test_is_a_final_clock (void)
{
  MendClock *clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  g_autoptr(GTypeClass) klass = g_type_class_ref (MEND_TYPE_MANUAL_CLOCK);
  g_autoptr(GTypeClass) parent = g_type_class_ref (MEND_TYPE_CLOCK);
  g_autofree GParamSpec **pspecs = NULL;
  g_autofree GParamSpec **parent_pspecs = NULL;
  guint n_pspecs = 0;
  guint n_parent_pspecs = 0;

  g_assert_true (G_TYPE_IS_FINAL (MEND_TYPE_MANUAL_CLOCK));
  g_assert_true (g_type_parent (MEND_TYPE_MANUAL_CLOCK) == MEND_TYPE_CLOCK);
  g_assert_true (MEND_IS_MANUAL_CLOCK (clock));
  g_assert_true (MEND_IS_CLOCK (clock));
  /* It adds no property to a clock's. */
  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n_pspecs);
  parent_pspecs = g_object_class_list_properties (G_OBJECT_CLASS (parent), &n_parent_pspecs);
  g_assert_cmpuint (n_pspecs, ==, n_parent_pspecs);
  /* The real clock is not one. */
  g_assert_false (MEND_IS_MANUAL_CLOCK (mend_clock_get_default ()));

  g_assert_finalize_object (clock);
}

/* Monotonic time starts at 0, wall-clock time at the start given, and
 * both move together, by the milliseconds given, on this clock alone. */
static void
test_times_start_where_promised (void)
{
  const gint64 starts[] = { MEND_TEST_WALL_START, 0, -86400000000, MEND_TEST_WALL_START + 999 };

  for (guint i = 0; i < G_N_ELEMENTS (starts); i++)
    {
      MendClock *clock = mend_manual_clock_new (starts[i]);
      MendClock *other = mend_manual_clock_new (starts[i]);

      g_assert_cmpint (mend_clock_get_monotonic_time (clock), ==, 0);
      g_assert_cmpint (mend_clock_get_real_time (clock), ==, starts[i]);

      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 0);
      g_assert_cmpint (mend_clock_get_monotonic_time (clock), ==, 0);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 1);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 299999);
      g_assert_cmpint (mend_clock_get_monotonic_time (clock), ==, 300000000);
      g_assert_cmpint (mend_clock_get_real_time (clock), ==, starts[i] + 300000000);

      /* Another manual clock keeps its own time. */
      g_assert_cmpint (mend_clock_get_monotonic_time (other), ==, 0);
      g_assert_cmpint (mend_clock_get_real_time (other), ==, starts[i]);

      g_assert_finalize_object (other);
      g_assert_finalize_object (clock);
    }
}

/* Time moves only when told to: a main loop that runs does not move it,
 * nor run a timer that is due. */
static void
test_time_moves_only_when_told (Fixture       *f,
                                gconstpointer  data)
{
  add_timer (f, 0, "due");
  add_timer (f, 1, "soon");
  for (guint i = 0; i < 10; i++)
    g_main_context_iteration (NULL, FALSE);

  g_assert_cmpstr (f->log->str, ==, "");
  g_assert_cmpint (mend_clock_get_monotonic_time (MEND_CLOCK (f->clock)), ==, 0);
  g_assert_cmpint (mend_clock_get_real_time (MEND_CLOCK (f->clock)), ==, MEND_TEST_WALL_START);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 2);

  /* An advance of nothing runs what is due now, and only that. */
  mend_manual_clock_advance (f->clock, 0);
  g_assert_cmpstr (f->log->str, ==, "due@0 ");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 1);
  mend_manual_clock_advance (f->clock, 1);
  g_assert_cmpstr (f->log->str, ==, "due@0 soon@1 ");
}

typedef struct
{
  MendClock *clock;
  gint64     monotonic;
  gint64     real;
} Seen;

static void
on_seen (gpointer data)
{
  Seen *seen = data;

  seen->monotonic = mend_clock_get_monotonic_time (seen->clock);
  seen->real = mend_clock_get_real_time (seen->clock);
}

/* A callback sees the time its timer was due at, on both times, however
 * far the advance goes. */
static void
test_callbacks_see_their_deadline (Fixture       *f,
                                   gconstpointer  data)
{
  Seen seen = { MEND_CLOCK (f->clock), -1, -1 };

  mend_manual_clock_advance (f->clock, 1000);
  mend_clock_add_timeout (MEND_CLOCK (f->clock), 250, on_seen, &seen, NULL);
  mend_manual_clock_advance (f->clock, 60000);

  g_assert_cmpint (seen.monotonic, ==, 1250 * 1000);
  g_assert_cmpint (seen.real, ==, MEND_TEST_WALL_START + 1250 * 1000);
  g_assert_cmpint (mend_clock_get_monotonic_time (MEND_CLOCK (f->clock)), ==, 61000 * 1000);
  g_assert_cmpint (mend_clock_get_real_time (MEND_CLOCK (f->clock)), ==, MEND_TEST_WALL_START + 61000 * 1000);

  /* The same through advance_to_next (). */
  mend_clock_add_timeout (MEND_CLOCK (f->clock), 5 * 60 * 1000, on_seen, &seen, NULL);
  g_assert_true (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpint (seen.monotonic, ==, (61000 + 300000) * (gint64) 1000);
  g_assert_cmpint (seen.real, ==, MEND_TEST_WALL_START + (61000 + 300000) * (gint64) 1000);
}

/* advance () stops at its target: a timer that a callback adds beyond it
 * waits, pending; one added within it runs, never from inside the add. */
static void
test_advance_stops_at_its_target (Fixture       *f,
                                  gconstpointer  data)
{
  Timer *beyond = add_timer_full (f, 100, "beyond-adder");
  Timer *within = add_timer_full (f, 200, "within-adder");

  beyond->adds_then = TRUE;
  beyond->then_ms = 1000;
  within->adds_then = TRUE;
  within->then_ms = 0;

  mend_manual_clock_advance (f->clock, 500);
  g_assert_cmpstr (f->log->str, ==, "beyond-adder@100 within-adder@200 then@200 ");
  g_assert_cmpint (now_ms (f), ==, 500);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 1);

  mend_manual_clock_advance (f->clock, 599);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 1);
  mend_manual_clock_advance (f->clock, 1);
  g_assert_cmpstr (f->log->str, ==, "beyond-adder@100 within-adder@200 then@200 then@1100 ");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 0);
}

/* advance_to_next () moves time to the earliest deadline exactly, runs
 * what is due then (what those add for then too), and nothing later; with
 * nothing pending it moves nothing. */
static void
test_advance_to_next_stops_at_the_earliest (Fixture       *f,
                                            gconstpointer  data)
{
  Timer *first;

  g_assert_false (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpint (now_ms (f), ==, 0);

  add_timer (f, 90000, "later");
  first = add_timer_full (f, 30000, "first");
  first->adds_then = TRUE;
  first->then_ms = 0;
  add_timer (f, 30001, "just-after");

  g_assert_true (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpstr (f->log->str, ==, "first@30000 then@30000 ");
  g_assert_cmpint (now_ms (f), ==, 30000);
  g_assert_cmpint (mend_clock_get_real_time (MEND_CLOCK (f->clock)), ==, MEND_TEST_WALL_START + 30000 * 1000);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 2);

  g_assert_true (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpint (now_ms (f), ==, 30001);
  g_assert_true (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpint (now_ms (f), ==, 90000);
  g_assert_cmpstr (f->log->str, ==, "first@30000 then@30000 just-after@30001 later@90000 ");

  g_assert_false (mend_manual_clock_advance_to_next (f->clock));
  g_assert_cmpint (now_ms (f), ==, 90000);
}

/* The pending count: what was added, less what ran and what was removed,
 * also from inside a callback. */
static void
test_pending_counts_what_has_not_run (Fixture       *f,
                                      gconstpointer  data)
{
  Timer *remover;
  guint victim;
  guint kept;

  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 0);
  victim = add_timer (f, 100, "victim");
  remover = add_timer_full (f, 100, "remover");
  kept = add_timer (f, 100, "kept");
  add_timer (f, 100, "last");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 4);
  g_assert_cmpuint (victim, !=, 0);
  g_assert_cmpuint (kept, !=, victim);
  g_assert_cmpuint (kept, !=, remover->own_id);

  g_assert_true (mend_clock_remove_timeout (MEND_CLOCK (f->clock), victim));
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 3);

  /* The remover takes out one due at the same time, after it, and tries
   * itself: it is no longer pending. */
  remover->remove_id = kept;
  mend_manual_clock_advance (f->clock, 100);
  g_assert_cmpstr (f->log->str, ==, "remover@100 removed:1 last@100 ");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 0);
  g_assert_false (mend_clock_remove_timeout (MEND_CLOCK (f->clock), kept));
}

static void
test_pending_count_when_a_callback_removes_itself (Fixture       *f,
                                                   gconstpointer  data)
{
  Timer *self_remover = add_timer_full (f, 10, "self");

  self_remover->remove_id = self_remover->own_id;
  mend_manual_clock_advance (f->clock, 10);
  g_assert_cmpstr (f->log->str, ==, "self@10 removed:0 ");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (f->clock), ==, 0);
}

typedef struct
{
  GString *log;
  char    *name;
} Noted;

static void
on_noted_timer (gpointer data)
{
  Noted *noted = data;

  g_string_append_printf (noted->log, "run:%s ", noted->name);
}

static void
noted_free (gpointer data)
{
  Noted *noted = data;

  g_string_append_printf (noted->log, "free:%s ", noted->name);
  g_free (noted->name);
  g_free (noted);
}

static guint
add_noted (MendManualClock *clock,
           GString         *log,
           guint64          ms,
           const char      *name)
{
  Noted *noted = g_new0 (Noted, 1);

  noted->log = log;
  noted->name = g_strdup (name);
  return mend_clock_add_timeout (MEND_CLOCK (clock), ms, on_noted_timer, noted, noted_free);
}

/* The data's notify runs once: after the callback for a timer that ran,
 * without it for one removed, and at finalize for one still pending. */
static void
test_notify_frees_the_data_once (void)
{
  g_autoptr(GString) log = g_string_new (NULL);
  MendManualClock *clock = MEND_MANUAL_CLOCK (mend_manual_clock_new (MEND_TEST_WALL_START));
  guint removed;

  add_noted (clock, log, 10, "ran");
  removed = add_noted (clock, log, 20, "removed");
  add_noted (clock, log, 30, "pending");
  g_assert_cmpstr (log->str, ==, "");

  mend_manual_clock_advance (clock, 10);
  g_assert_cmpstr (log->str, ==, "run:ran free:ran ");
  g_assert_true (mend_clock_remove_timeout (MEND_CLOCK (clock), removed));
  g_assert_cmpstr (log->str, ==, "run:ran free:ran free:removed ");
  g_assert_false (mend_clock_remove_timeout (MEND_CLOCK (clock), removed));

  g_assert_finalize_object (clock);
  g_assert_cmpstr (log->str, ==, "run:ran free:ran free:removed free:pending ");
}

typedef struct
{
  MendManualClock *clock;
  GThread         *ran_on;
  guint            runs;
} ThreadRun;

static void
on_thread_timer (gpointer data)
{
  ThreadRun *run = data;

  run->ran_on = g_thread_self ();
  run->runs++;
}

static gpointer
advance_in_thread (gpointer data)
{
  ThreadRun *run = data;

  mend_manual_clock_advance (run->clock, 1000);
  return g_thread_self ();
}

/* Timers run on the thread that advances the clock. */
static void
test_timers_run_on_the_advancing_thread (Fixture       *f,
                                         gconstpointer  data)
{
  ThreadRun run = { f->clock, NULL, 0 };
  GThread *thread;
  gpointer advancer;

  mend_clock_add_timeout (MEND_CLOCK (f->clock), 500, on_thread_timer, &run, NULL);
  thread = g_thread_new ("advancer", advance_in_thread, &run);
  advancer = g_thread_join (thread);

  g_assert_cmpuint (run.runs, ==, 1);
  g_assert_true (run.ran_on == advancer);
  g_assert_true (run.ran_on != g_thread_self ());
  g_assert_cmpint (now_ms (f), ==, 1000);

  /* And on this one when this one advances it. */
  mend_clock_add_timeout (MEND_CLOCK (f->clock), 500, on_thread_timer, &run, NULL);
  mend_manual_clock_advance (f->clock, 500);
  g_assert_cmpuint (run.runs, ==, 2);
  g_assert_true (run.ran_on == g_thread_self ());
}

static void
on_attempt (MendTurn     *turn,
            guint         attempt,
            GCancellable *cancellable,
            GString      *log)
{
  g_string_append_printf (log, "attempt %u; ", attempt);
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 GString  *log)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), log);
}

/* The class's own example: a chat on a manual clock runs its retry when
 * the clock is advanced, and not before. */
static void
test_a_chat_retries_when_the_clock_is_advanced (void)
{
  g_autoptr(GString) log = g_string_new (NULL);
  MendClock *clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendChat *chat;
  MendFailure *failure = mend_failure_new_from_http (529, NULL, NULL);
  MendRetryWait *wait;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, NULL);
  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), log);

  g_assert_true (mend_chat_submit (chat, "Fix the failing build", NULL, NULL));
  g_assert_true (mend_turn_get_clock (mend_chat_get_turn (chat)) == clock);
  mend_turn_fail (mend_chat_get_turn (chat), failure);
  wait = mend_turn_get_wait (mend_chat_get_turn (chat));
  g_assert_nonnull (wait);
  g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, MEND_TEST_WALL_START + 250 * 1000);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)), >=, 1);
  g_assert_cmpstr (log->str, ==, "attempt 1; ");

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 249);
  g_assert_cmpstr (log->str, ==, "attempt 1; ");
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 251);
  g_assert_cmpstr (log->str, ==, "attempt 1; attempt 2; ");

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (policy);
  g_assert_finalize_object (failure);
  g_assert_finalize_object (clock);
}

/* Given what is not a manual clock, its methods say so and do nothing. */
static void
test_methods_refuse_what_is_not_a_manual_clock (void)
{
  MendClock *real = mend_clock_get_default ();
  gint64 before = mend_clock_get_monotonic_time (real);

  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_MANUAL_CLOCK*");
  mend_manual_clock_advance (NULL, 10);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_MANUAL_CLOCK*");
  g_assert_false (mend_manual_clock_advance_to_next (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_MANUAL_CLOCK*");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (NULL), ==, 0);
  g_test_assert_expected_messages ();

  /* The real clock cannot be moved. */
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_MANUAL_CLOCK*");
  mend_manual_clock_advance ((MendManualClock *) real, 3600000);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_MANUAL_CLOCK*");
  g_assert_false (mend_manual_clock_advance_to_next ((MendManualClock *) real));
  g_test_assert_expected_messages ();
  g_assert_cmpint (mend_clock_get_monotonic_time (real) - before, <, 3600000000);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  g_test_add_func ("/Mend/ManualClock/is-a-final-clock", test_is_a_final_clock);
  g_test_add_func ("/Mend/ManualClock/times-start-where-promised", test_times_start_where_promised);
  ADD ("/Mend/ManualClock/time-moves-only-when-told", test_time_moves_only_when_told);
  ADD ("/Mend/ManualClock/callbacks-see-their-deadline", test_callbacks_see_their_deadline);
  ADD ("/Mend/ManualClock/advance-stops-at-its-target", test_advance_stops_at_its_target);
  ADD ("/Mend/ManualClock/advance-to-next-stops-at-the-earliest", test_advance_to_next_stops_at_the_earliest);
  ADD ("/Mend/ManualClock/pending-counts-what-has-not-run", test_pending_counts_what_has_not_run);
  ADD ("/Mend/ManualClock/pending-count-when-a-callback-removes-itself", test_pending_count_when_a_callback_removes_itself);
  g_test_add_func ("/Mend/ManualClock/notify-frees-the-data-once", test_notify_frees_the_data_once);
  ADD ("/Mend/ManualClock/timers-run-on-the-advancing-thread", test_timers_run_on_the_advancing_thread);
  g_test_add_func ("/Mend/ManualClock/a-chat-retries-when-the-clock-is-advanced", test_a_chat_retries_when_the_clock_is_advanced);
  g_test_add_func ("/Mend/ManualClock/methods-refuse-what-is-not-a-manual-clock", test_methods_refuse_what_is_not_a_manual_clock);

#undef ADD

  return g_test_run ();
}
