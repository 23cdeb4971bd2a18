/* bench-countdown.c — main-loop wakeups of visible countdowns
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * N MendRetryWaits on the real default clock, each with a handler of
 * notify::remaining-seconds as a countdown label has, with deadlines that
 * share nothing (one minute plus 137 ms × i); the loop runs S seconds.
 * Against the naive countdown: one 1 s g_timeout_add() per label, started
 * when its wait was. A poll function that counts and forwards to g_poll()
 * shows every time the loop went to sleep and woke up.
 *
 * usage: bench-countdown [--seconds S] N…
 *
 * Prints, for each N, one machine-readable line:
 *   RESULT countdown n=… seconds=… mend_per_min=… naive_per_min=… notifications=…
 */

#include <locale.h>
#include <stdio.h>

#include <libmend.h>

#include "bench-common.h"


static void
on_remaining (MendRetryWait *wait,
              GParamSpec    *pspec,
              guint         *notifications)
{
  (*notifications)++;
}

static gboolean
on_label_tick (gpointer data)
{
  (*(guint *) data)++;
  return G_SOURCE_CONTINUE;
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

/* Wakeups per minute of @n countdowns over @ms of the loop. */
static double
run (gboolean  naive,
     guint     n,
     guint     ms,
     guint    *notifications)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GPtrArray) waits = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GArray) timers = g_array_new (FALSE, FALSE, sizeof (guint));
  gint64 start;

  *notifications = 0;
  for (guint i = 0; i < n; i++)
    {
      if (naive)
        {
          guint id = g_timeout_add (1000, on_label_tick, notifications);

          g_array_append_val (timers, id);
          /* Labels start when their waits do: not together. */
          g_usleep (137 * 1000 / MAX (n, 1));
          continue;
        }
      g_ptr_array_add (waits, mend_retry_wait_new (NULL, 60000 + 137 * i, 1, 4, MEND_REASON_CAPACITY));
      g_signal_connect (g_ptr_array_index (waits, i), "notify::remaining-seconds",
                        G_CALLBACK (on_remaining), notifications);
    }

  g_timeout_add (ms, quit_loop, loop);
  start = g_get_monotonic_time ();
  bench_n_wakeups = 0;
  g_main_loop_run (loop);

  for (guint i = 0; i < timers->len; i++)
    g_source_remove (g_array_index (timers, guint, i));
  for (guint i = 0; i < waits->len; i++)
    {
      g_signal_handlers_disconnect_by_data (g_ptr_array_index (waits, i), notifications);
      mend_retry_wait_cancel (g_ptr_array_index (waits, i));
    }
  while (g_main_context_iteration (NULL, FALSE))
    ;

  /* Not counted: the wakeup of the timer that ends the run. */
  return (bench_n_wakeups - 1) * 60.0 * G_USEC_PER_SEC / (double) (g_get_monotonic_time () - start);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  gdouble seconds = 10.0;
  const GOptionEntry entries[] = {
    { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &seconds, "How long the loop runs (default 10)", "S" },
    { NULL }
  };

  setlocale (LC_ALL, "");

  context = g_option_context_new ("N… — main-loop wakeups of N visible countdowns");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("bench-countdown: %s\n", error->message);
      return 2;
    }
  if (argc < 2 || seconds < 1 || seconds > 600)
    {
      g_printerr ("bench-countdown: give counts of countdowns, and --seconds in [1, 600]\n");
      return 2;
    }

  g_main_context_set_poll_func (NULL, bench_counting_poll);
  for (int i = 1; i < argc; i++)
    {
      guint n = (guint) g_ascii_strtoull (argv[i], NULL, 10);
      guint mend_notifications;
      guint naive_notifications;
      double mend = run (FALSE, n, (guint) (seconds * 1000), &mend_notifications);
      double naive = run (TRUE, n, (guint) (seconds * 1000), &naive_notifications);

      g_printerr ("%u countdowns, %.0f s: libmend %.0f wakeups a minute (%u notifications), "
                  "a 1 s timer per label %.0f\n", n, seconds, mend, mend_notifications, naive);
      printf ("RESULT countdown n=%u seconds=%.0f mend_per_min=%.1f naive_per_min=%.1f notifications=%u\n",
              n, seconds, mend, naive, mend_notifications);
      if (n > 0 && mend_notifications == 0)
        return 1;
    }

  return 0;
}
