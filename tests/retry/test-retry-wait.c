/* test-retry-wait.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <locale.h>

#include <glib/gi18n-lib.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000  /* µs */

/* A clock and the waits on it (tests/support/mend-test-utils.c). */
typedef MendTestWaitFixture Fixture;

static void
test_properties (Fixture       *f,
                 gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 4000);
  g_autoptr(MendClock) clock = NULL;
  guint attempt, of;
  MendReason reason;
  guint64 delay;
  gint64 started, next;
  gboolean hint;
  MendRetryWaitState state;
  MendFailure *failure = NULL;

  g_object_get (wait,
                "clock", &clock,
                "attempt", &attempt,
                "max-retries", &of,
                "reason", &reason,
                "delay-ms", &delay,
                "started-at", &started,
                "next-at", &next,
                "server-hint", &hint,
                "state", &state,
                "failure", &failure,
                NULL);

  g_assert_true (clock == f->clock);
  g_assert_cmpuint (attempt, ==, 2);
  g_assert_cmpuint (of, ==, 4);
  g_assert_cmpint (reason, ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (delay, ==, 4000);
  g_assert_cmpint (started, ==, WALL_START);
  g_assert_cmpint (next, ==, WALL_START + 4000 * 1000);
  g_assert_false (hint);
  g_assert_cmpint (state, ==, MEND_RETRY_WAIT_PENDING);
  g_assert_null (failure);

  g_assert_finalize_object (wait);
}

static void
test_construct_with_failure_and_hint (Fixture       *f,
                                      gconstpointer  data)
{
  MendFailure *failure = mend_failure_new_from_http (429, NULL, NULL);
  MendRetryWait *wait = g_object_new (MEND_TYPE_RETRY_WAIT,
                                      "clock", f->clock,
                                      "delay-ms", (guint64) 7000,
                                      "attempt", 1,
                                      "max-retries", 4,
                                      "reason", MEND_REASON_RATE_LIMIT,
                                      "failure", failure,
                                      "server-hint", TRUE,
                                      NULL);

  g_assert_true (mend_retry_wait_get_failure (wait) == failure);
  g_assert_true (mend_retry_wait_get_server_hint (wait));
  g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, WALL_START + 7000000);

  g_assert_finalize_object (wait);
  g_assert_finalize_object (failure);
}

static void
test_fires_once_when_due (Fixture       *f,
                          gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 4000);

  g_assert_cmpint (mend_retry_wait_get_remaining_ms (wait), ==, 4000);
  mend_test_wait_advance (f, 3999);
  g_assert_cmpuint (f->fired, ==, 0);
  g_assert_cmpint (mend_retry_wait_get_remaining_ms (wait), ==, 1);
  mend_test_wait_advance (f, 1);
  g_assert_cmpuint (f->fired, ==, 1);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_FIRED);
  g_assert_cmpint (mend_retry_wait_get_remaining_ms (wait), ==, 0);

  /* Idempotent: nothing fires or cancels twice. */
  g_assert_false (mend_retry_wait_fire_now (wait));
  g_assert_false (mend_retry_wait_cancel (wait));
  mend_test_wait_advance (f, 100000);
  g_assert_cmpuint (f->fired, ==, 1);
  g_assert_cmpuint (f->cancelled, ==, 0);

  g_assert_finalize_object (wait);
}

static void
test_fire_now_skips_the_wait (Fixture       *f,
                              gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 60000);

  g_assert_true (mend_retry_wait_fire_now (wait));
  g_assert_cmpuint (f->fired, ==, 1);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
  mend_test_wait_advance (f, 60000);
  g_assert_cmpuint (f->fired, ==, 1);

  g_assert_finalize_object (wait);
}

static void
test_cancelled_wait_never_fires (Fixture       *f,
                                 gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 1000);

  g_assert_true (mend_retry_wait_cancel (wait));
  g_assert_false (mend_retry_wait_cancel (wait));
  g_assert_false (mend_retry_wait_fire_now (wait));
  mend_test_wait_advance (f, 5000);
  g_assert_cmpuint (f->fired, ==, 0);
  g_assert_cmpuint (f->cancelled, ==, 1);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_CANCELLED);

  g_assert_finalize_object (wait);
}

static void
test_dropped_wait_leaves_no_timer (Fixture       *f,
                                   gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 1000);

  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 1);
  g_assert_finalize_object (wait);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
  mend_test_wait_advance (f, 5000);
  g_assert_cmpuint (f->fired, ==, 0);
}

static void
test_to_json (Fixture       *f,
              gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 4000);
  g_autofree char *json = mend_retry_wait_to_json (wait);

  g_assert_cmpstr (json, ==, "{\"attempt\":2,\"of\":4,\"reason\":\"capacity\",\"nextAt\":1764500004000}");
  g_assert_finalize_object (wait);
}

static void
test_describe_counts_down (Fixture       *f,
                           gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 4000);
  MendRetryWait *longer = mend_test_wait_new (f, 90500);
  MendRetryWait *hours = mend_test_wait_new (f, 3600000 + 120000);
  char *text;

  text = mend_retry_wait_describe (wait);
  g_assert_cmpstr (text, ==, "Retrying in 4 s (retry 2 of 4)");
  g_free (text);

  mend_test_wait_advance (f, 1500);
  text = mend_retry_wait_describe (wait);
  g_assert_cmpstr (text, ==, "Retrying in 3 s (retry 2 of 4)");
  g_free (text);

  text = mend_retry_wait_describe (longer);
  g_assert_cmpstr (text, ==, "Retrying in 1 min 29 s (retry 2 of 4)");
  g_free (text);

  text = mend_retry_wait_describe (hours);
  g_assert_cmpstr (text, ==, "Retrying in 1 h 2 min (retry 2 of 4)");
  g_free (text);

  mend_test_wait_advance (f, 2500);
  text = mend_retry_wait_describe (wait);
  g_assert_cmpstr (text, ==, "Retrying now (retry 2 of 4)");
  g_free (text);

  mend_retry_wait_cancel (longer);
  text = mend_retry_wait_describe (longer);
  g_assert_cmpstr (text, ==, "Retry cancelled");
  g_free (text);

  g_assert_finalize_object (wait);
  g_assert_finalize_object (longer);
  g_assert_finalize_object (hours);
}

static void
test_describe_is_translated (Fixture       *f,
                             gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 4000);
  char *text;

  /* The wait's class has bound the domain to the install directory; point
   * it at the catalogue built in the tree. */
  bindtextdomain (GETTEXT_PACKAGE, MEND_TEST_LOCALEDIR);
  g_setenv ("LANGUAGE", "de", TRUE);
  setlocale (LC_ALL, "C.UTF-8");

  text = mend_retry_wait_describe (wait);
  g_assert_cmpstr (text, ==, "Neuer Versuch in 4 s (Versuch 2 von 4)");
  g_free (text);

  mend_retry_wait_fire_now (wait);
  text = mend_retry_wait_describe (wait);
  g_assert_cmpstr (text, ==, "Neuer Versuch läuft (Versuch 2 von 4)");
  g_free (text);

  g_unsetenv ("LANGUAGE");
  setlocale (LC_ALL, "C");
  g_assert_finalize_object (wait);
}

typedef struct
{
  gboolean done;
  gboolean fired;
  GError *error;
} RunResult;

static void
on_run_done (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  RunResult *r = user_data;

  r->fired = mend_retry_wait_run_finish (MEND_RETRY_WAIT (object), result, &r->error);
  r->done = TRUE;
}

static void
wait_for (RunResult *r)
{
  while (!r->done)
    g_main_context_iteration (NULL, TRUE);
}

static void
test_run_async_completes_when_fired (Fixture       *f,
                                     gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 500);
  RunResult r = { 0 };

  mend_retry_wait_run_async (wait, NULL, on_run_done, &r);
  g_assert_false (r.done);
  mend_test_wait_advance (f, 500);
  wait_for (&r);
  g_assert_no_error (r.error);
  g_assert_true (r.fired);

  g_assert_finalize_object (wait);
}

static void
test_run_async_after_the_end (Fixture       *f,
                              gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 500);
  RunResult r = { 0 };

  mend_retry_wait_fire_now (wait);
  mend_retry_wait_run_async (wait, NULL, on_run_done, &r);
  wait_for (&r);
  g_assert_true (r.fired);

  g_assert_finalize_object (wait);
}

static void
test_run_async_cancel_wait (Fixture       *f,
                            gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 500);
  RunResult r = { 0 };

  mend_retry_wait_run_async (wait, NULL, on_run_done, &r);
  mend_retry_wait_cancel (wait);
  wait_for (&r);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (r.fired);
  g_clear_error (&r.error);

  g_assert_finalize_object (wait);
}

static void
test_run_async_cancellable_cancels_the_wait (Fixture       *f,
                                             gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 500);
  GCancellable *cancellable = g_cancellable_new ();
  RunResult r = { 0 };

  mend_retry_wait_run_async (wait, cancellable, on_run_done, &r);
  g_cancellable_cancel (cancellable);
  wait_for (&r);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&r.error);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_CANCELLED);
  g_assert_cmpuint (f->cancelled, ==, 1);

  mend_test_wait_advance (f, 1000);
  g_assert_cmpuint (f->fired, ==, 0);

  g_assert_finalize_object (wait);
  g_assert_finalize_object (cancellable);
}

static void
test_run_async_already_cancelled (Fixture       *f,
                                  gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 500);
  GCancellable *cancellable = g_cancellable_new ();
  RunResult r = { 0 };

  g_cancellable_cancel (cancellable);
  mend_retry_wait_run_async (wait, cancellable, on_run_done, &r);
  wait_for (&r);
  g_assert_error (r.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&r.error);

  g_assert_finalize_object (wait);
  g_assert_finalize_object (cancellable);
}

static void
test_default_clock_when_null (void)
{
  MendRetryWait *wait = mend_retry_wait_new (NULL, 60000, 1, 4, MEND_REASON_TIMEOUT);

  g_assert_true (mend_retry_wait_get_clock (wait) == mend_clock_get_default ());
  g_assert_cmpint (mend_retry_wait_get_remaining_ms (wait), >, 59000);
  mend_retry_wait_cancel (wait);
  g_assert_finalize_object (wait);
}

/* As the README's programs do: the text, from describe (), at each
 * notification; the property itself is never read. */
static void
on_remaining (MendRetryWait *wait,
              GParamSpec    *pspec,
              GString       *seen)
{
  g_autofree char *text = mend_retry_wait_describe (wait);

  g_string_append_printf (seen, "%s|", text);
}

static void
test_remaining_seconds_counts_down_for_a_handler_that_never_reads (Fixture       *f,
                                                                   gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 4000);
  g_autoptr(GString) seen = g_string_new (NULL);
  gulong id;

  id = g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (on_remaining), seen);
  for (guint i = 0; i < 40; i++)
    mend_test_wait_advance (f, 100);
  g_assert_cmpstr (seen->str, ==,
                   "Retrying in 3 s (retry 2 of 4)|Retrying in 2 s (retry 2 of 4)|"
                   "Retrying in 1 s (retry 2 of 4)|Retrying now (retry 2 of 4)|");
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_FIRED);

  g_signal_handler_disconnect (wait, id);
  g_assert_finalize_object (wait);
}

/* The description property: read, then notified at each change, as a
 * binding to a label's text is. */
static void
test_description_is_bindable (Fixture       *f,
                              gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 2500);
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autofree char *text = NULL;

  g_object_get (wait, "description", &text, NULL);
  g_assert_cmpstr (text, ==, "Retrying in 3 s (retry 2 of 4)");
  g_signal_connect (wait, "notify::description", G_CALLBACK (on_remaining), seen);
  mend_test_wait_advance (f, 1000);
  mend_test_wait_advance (f, 1000);
  mend_test_wait_advance (f, 1000);
  g_assert_cmpstr (seen->str, ==,
                   "Retrying in 2 s (retry 2 of 4)|Retrying in 1 s (retry 2 of 4)|Retrying now (retry 2 of 4)|");
  g_assert_finalize_object (wait);
}

static void
test_remaining_seconds_unwatched_costs_no_wakeup (Fixture       *f,
                                                  gconstpointer  data)
{
  MendRetryWait *wait = mend_test_wait_new (f, 10000);
  g_autoptr(GString) seen = g_string_new (NULL);
  gulong id;

  /* Nobody listening: the deadline is the only timer, read or not. */
  g_assert_cmpuint (mend_retry_wait_get_remaining_seconds (wait), ==, 10);
  mend_test_wait_advance (f, 1500);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 1);

  /* A listener connected later is seen at the next step of time, and one
   * that goes away stops the ticks at the next one. */
  id = g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (on_remaining), seen);
  mend_test_wait_advance (f, 600);
  g_assert_cmpstr (seen->str, ==, "Retrying in 8 s (retry 2 of 4)|");
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 2);
  g_signal_handler_disconnect (wait, id);
  mend_test_wait_advance (f, 1000);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 1);
  g_assert_cmpstr (seen->str, ==, "Retrying in 8 s (retry 2 of 4)|");

  mend_retry_wait_cancel (wait);
  g_assert_finalize_object (wait);
}

typedef struct
{
  MendClock *clock;
  GArray    *at;       /* gint64: monotonic times of the notifications */
} Ticks;

static void
on_tick_seen (MendRetryWait *wait,
              GParamSpec    *pspec,
              Ticks         *ticks)
{
  gint64 now = mend_clock_get_monotonic_time (ticks->clock);

  if (mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_PENDING)
    g_array_append_val (ticks->at, now);
}

/* Ten countdowns with unrelated deadlines drop at the same instants: the
 * clock's whole seconds, one timer for all. */
static void
test_countdowns_share_second_boundaries (Fixture       *f,
                                         gconstpointer  data)
{
  MendRetryWait *waits[10];
  Ticks ticks = { f->clock, g_array_new (FALSE, FALSE, sizeof (gint64)) };

  mend_test_wait_advance (f, 137);
  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    {
      waits[i] = mend_test_wait_new (f, 3000 + 731 * i);
      g_signal_connect (waits[i], "notify::remaining-seconds", G_CALLBACK (on_tick_seen), &ticks);
    }
  /* Ten deadlines and one tick. */
  mend_test_wait_advance (f, 1);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 11);
  for (guint i = 0; i < 12000; i += 50)
    mend_test_wait_advance (f, 50);

  g_assert_cmpuint (ticks.at->len, >=, 20);
  for (guint i = 0; i < ticks.at->len; i++)
    g_assert_cmpint (g_array_index (ticks.at, gint64, i) % G_USEC_PER_SEC, ==, 0);

  for (guint i = 0; i < G_N_ELEMENTS (waits); i++)
    {
      g_signal_handlers_disconnect_by_data (waits[i], &ticks);
      g_assert_finalize_object (waits[i]);
    }
  g_array_unref (ticks.at);
}

/* On the real clock, as an app runs it: a handler connected after the
 * wait was made sees the countdown drop, with the main loop asleep
 * between the ticks. */
static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

static void
on_real_fired (MendRetryWait *wait,
               GMainLoop     *loop)
{
  g_main_loop_quit (loop);
}

static void
test_real_clock_counts_down (void)
{
  MendRetryWait *wait = mend_retry_wait_new (NULL, 2600, 1, 4, MEND_REASON_CAPACITY);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GString) seen = g_string_new (NULL);
  guint watchdog = g_timeout_add_seconds (20, quit_loop, loop);

  g_signal_connect (wait, "fired", G_CALLBACK (on_real_fired), loop);
  g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (on_remaining), seen);
  g_main_loop_run (loop);
  g_source_remove (watchdog);

  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_FIRED);
  /* Two whole seconds pass in 2.6 s: two drops, then the end. */
  g_assert_nonnull (strstr (seen->str, "Retrying in 2 s"));
  g_assert_nonnull (strstr (seen->str, "Retrying in 1 s"));
  g_assert_nonnull (strstr (seen->str, "Retrying now"));
  g_signal_handlers_disconnect_by_data (wait, seen);
  g_assert_finalize_object (wait);
}

/* The waits of three clocks the app may have, watched the ways an app
 * watches: a handler connected from a later callback, on the default
 * clock after a wait made on another context, and on a clock of the
 * app's own. Each counts down. */
typedef struct
{
  MendRetryWait *late;
  guint          n_late;
} Late;

static void
on_count (MendRetryWait *wait,
          GParamSpec    *pspec,
          guint         *n)
{
  if (mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_PENDING)
    (*n)++;
}

static gboolean
connect_late (gpointer data)
{
  Late *late = data;

  g_signal_connect (late->late, "notify::remaining-seconds", G_CALLBACK (on_count), &late->n_late);
  return G_SOURCE_REMOVE;
}

typedef struct { MendClock parent_instance; } AppClock;
typedef struct { MendClockClass parent_class; } AppClockClass;

static GType app_clock_get_type (void);
G_DEFINE_TYPE (AppClock, app_clock, MEND_TYPE_CLOCK)

static guint
app_clock_add_timer (MendClock      *clock,
                     gint64          deadline_us,
                     MendClockFunc   func,
                     gpointer        user_data,
                     GDestroyNotify  notify)
{
  return MEND_CLOCK_CLASS (app_clock_parent_class)->add_timer (clock, deadline_us, func, user_data, notify);
}

static void
app_clock_class_init (AppClockClass *klass)
{
  MEND_CLOCK_CLASS (klass)->add_timer = app_clock_add_timer;
}

static void
app_clock_init (AppClock *self)
{
}

static void
test_real_clock_counts_down_however_watched (void)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  GMainContext *other = g_main_context_new ();
  MendClock *app_clock = g_object_new (app_clock_get_type (), NULL);
  MendRetryWait *elsewhere;
  MendRetryWait *after;
  MendRetryWait *own;
  Late late = { NULL, 0 };
  MendRetryWait *crowd[100];
  guint n_after = 0;
  guint n_own = 0;

  /* More waits than the loop looks over at each turn: a watcher
   * connected late is still seen, at the next whole second of looking. */
  for (guint i = 0; i < G_N_ELEMENTS (crowd); i++)
    crowd[i] = mend_retry_wait_new (NULL, 60000, 1, 4, MEND_REASON_CAPACITY);

  /* A wait made on another context first, still pending. */
  g_main_context_push_thread_default (other);
  elsewhere = mend_retry_wait_new (NULL, 60000, 1, 4, MEND_REASON_CAPACITY);
  g_main_context_pop_thread_default (other);

  late.late = mend_retry_wait_new (NULL, 2400, 1, 4, MEND_REASON_CAPACITY);
  after = mend_retry_wait_new (NULL, 2400, 1, 4, MEND_REASON_CAPACITY);
  g_signal_connect (after, "notify::remaining-seconds", G_CALLBACK (on_count), &n_after);
  own = mend_retry_wait_new (app_clock, 2400, 1, 4, MEND_REASON_CAPACITY);
  g_signal_connect (own, "notify::remaining-seconds", G_CALLBACK (on_count), &n_own);
  /* Connected from a callback of the loop, after a first turn of it. */
  g_timeout_add (150, connect_late, &late);
  g_timeout_add (2300, quit_loop, loop);
  g_main_loop_run (loop);

  g_assert_cmpuint (late.n_late, >=, 1);
  g_assert_cmpuint (n_after, >=, 1);
  g_assert_cmpuint (n_own, >=, 1);

  g_signal_handlers_disconnect_by_data (late.late, &late.n_late);
  g_signal_handlers_disconnect_by_data (after, &n_after);
  g_signal_handlers_disconnect_by_data (own, &n_own);
  mend_retry_wait_cancel (late.late);
  mend_retry_wait_cancel (after);
  mend_retry_wait_cancel (own);
  g_assert_finalize_object (late.late);
  g_assert_finalize_object (after);
  g_assert_finalize_object (own);
  for (guint i = 0; i < G_N_ELEMENTS (crowd); i++)
    {
      mend_retry_wait_cancel (crowd[i]);
      g_assert_finalize_object (crowd[i]);
    }
  g_main_context_push_thread_default (other);
  mend_retry_wait_cancel (elsewhere);
  g_assert_finalize_object (elsewhere);
  g_main_context_pop_thread_default (other);
  g_main_context_unref (other);
  g_assert_finalize_object (app_clock);
}

/* Threads with main contexts of their own make and watch waits on the
 * default clock at once: each context's countdowns are its own. */
static gpointer
churn (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  guint n = 0;

  g_main_context_push_thread_default (context);
  for (guint i = 0; i < 20000; i++)
    {
      MendRetryWait *wait = mend_retry_wait_new (NULL, 5000 + i % 7, 1, 4, MEND_REASON_CAPACITY);

      if (i % 3 == 0)
        g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (on_count), &n);
      g_main_context_iteration (context, FALSE);
      mend_retry_wait_cancel (wait);
      g_object_unref (wait);
    }
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return NULL;
}

static void
test_threads_count_down_apart (void)
{
  GThread *a = g_thread_new ("churn-a", churn, NULL);
  GThread *b = g_thread_new ("churn-b", churn, NULL);

  g_thread_join (a);
  g_thread_join (b);
}

static void
test_server_hint_is_described_as_given (Fixture       *f,
                                        gconstpointer  data)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  SoupMessageHeaders *headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  MendFailure *failure;
  MendRetryWait *wait;
  gboolean hint = FALSE;
  char *text;
  gint64 delay;

  /* Retry-After: 7 with the default jitter: the delay is a little more
   * than 7 s, and the countdown says 7, not 8. */
  soup_message_headers_append (headers, "Retry-After", "7");
  failure = mend_failure_new_from_http (429, headers, NULL);
  delay = mend_error_policy_delay_for (policy, 1, failure, &hint);
  g_assert_true (hint);
  g_assert_cmpint (delay, >=, 7000);
  g_assert_cmpint (delay, <=, 7250);
  wait = mend_retry_wait_new (f->clock, (guint64) delay, 1, 4, MEND_REASON_RATE_LIMIT);
  text = mend_retry_wait_describe (wait);
  g_assert_cmpstr (text, ==, "Retrying in 7 s (retry 1 of 4)");
  g_assert_cmpuint (mend_retry_wait_get_remaining_seconds (wait), ==, 7);

  g_free (text);
  mend_retry_wait_cancel (wait);
  g_assert_finalize_object (wait);
  g_assert_finalize_object (failure);
  soup_message_headers_unref (headers);
  g_assert_finalize_object (policy);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, mend_test_wait_fixture_set_up, func, mend_test_wait_fixture_tear_down)

  ADD ("/Mend/RetryWait/remaining-seconds-counts-down-for-a-handler-that-never-reads",
       test_remaining_seconds_counts_down_for_a_handler_that_never_reads);
  ADD ("/Mend/RetryWait/description-is-bindable", test_description_is_bindable);
  ADD ("/Mend/RetryWait/countdowns-share-second-boundaries", test_countdowns_share_second_boundaries);
  g_test_add_func ("/Mend/RetryWait/real-clock-counts-down", test_real_clock_counts_down);
  g_test_add_func ("/Mend/RetryWait/real-clock-counts-down-however-watched",
                   test_real_clock_counts_down_however_watched);
  g_test_add_func ("/Mend/RetryWait/threads-count-down-apart", test_threads_count_down_apart);
  ADD ("/Mend/RetryWait/remaining-seconds-unwatched-costs-no-wakeup", test_remaining_seconds_unwatched_costs_no_wakeup);
  ADD ("/Mend/RetryWait/server-hint-is-described-as-given", test_server_hint_is_described_as_given);
  ADD ("/Mend/RetryWait/properties", test_properties);
  ADD ("/Mend/RetryWait/construct-with-failure-and-server-hint", test_construct_with_failure_and_hint);
  ADD ("/Mend/RetryWait/fires-once-when-due", test_fires_once_when_due);
  ADD ("/Mend/RetryWait/fire-now-skips-the-wait", test_fire_now_skips_the_wait);
  ADD ("/Mend/RetryWait/cancelled-wait-never-fires", test_cancelled_wait_never_fires);
  ADD ("/Mend/RetryWait/dropped-wait-leaves-no-timer", test_dropped_wait_leaves_no_timer);
  ADD ("/Mend/RetryWait/to-json", test_to_json);
  ADD ("/Mend/RetryWait/describe-counts-down", test_describe_counts_down);
  ADD ("/Mend/RetryWait/describe-is-translated", test_describe_is_translated);
  ADD ("/Mend/RetryWait/run-async-completes-when-fired", test_run_async_completes_when_fired);
  ADD ("/Mend/RetryWait/run-async-after-the-end", test_run_async_after_the_end);
  ADD ("/Mend/RetryWait/run-async-fails-when-wait-cancelled", test_run_async_cancel_wait);
  ADD ("/Mend/RetryWait/run-async-cancellable-cancels-the-wait", test_run_async_cancellable_cancels_the_wait);
  ADD ("/Mend/RetryWait/run-async-already-cancelled", test_run_async_already_cancelled);

#undef ADD

  g_test_add_func ("/Mend/RetryWait/default-clock-when-null", test_default_clock_when_null);

  return g_test_run ();
}
