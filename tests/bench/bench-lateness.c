/* bench-lateness.c — how late waits fire on an idle loop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Schedules N MendRetryWaits on the real default clock with random
 * deadlines over S seconds and records, on g_get_monotonic_time(), how late
 * each one fires: fire time − deadline. Then the same deadlines with one
 * g_timeout_add() each, in the same run. Each way runs in a child process
 * of its own, on a loop with nothing else to do.
 *
 * usage: bench-lateness [--waits N] [--seconds S] [--seed S]
 *
 * Prints p50/p99/max for both, then one machine-readable line:
 *   RESULT lateness n=… mend_p50_us=… mend_p99_us=… mend_max_us=… naive_…
 */

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmend.h>

#include "bench-common.h"

#define WATCHDOG_SECONDS 300

typedef enum
{
  IMPL_MEND,
  IMPL_NAIVE,
} Impl;

typedef struct _Run Run;

typedef struct
{
  Run    *run;
  gint64  deadline_us;
  gint64  fired_us;
} Slot;

struct _Run
{
  GMainLoop *loop;
  guint      n;
  guint      done;
};

static void
slot_fired (Slot *slot)
{
  slot->fired_us = g_get_monotonic_time ();

  if (++slot->run->done == slot->run->n)
    g_main_loop_quit (slot->run->loop);
}

static void
on_fired (MendRetryWait *wait,
          gpointer       user_data)
{
  slot_fired (user_data);
}

static gboolean
on_naive_timeout (gpointer user_data)
{
  slot_fired (user_data);

  return G_SOURCE_REMOVE;
}

static void
warm_up (void)
{
  MendRetryWait *wait = mend_retry_wait_new (NULL, 1000, 1, 4, MEND_REASON_CAPACITY);

  mend_retry_wait_cancel (wait);
  g_object_unref (wait);

  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Fills @lateness_us with one figure per wait, in scheduling order. */
static gboolean
run_job (Impl         impl,
         guint        n,
         const guint *delays_ms,
         gint64      *lateness_us)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autofree Slot *slots = g_new0 (Slot, n);
  g_autofree MendRetryWait **waits = g_new0 (MendRetryWait *, n);
  Run run = { loop, n, 0 };

  warm_up ();

  for (guint i = 0; i < n; i++)
    {
      slots[i].run = &run;
      /* Taken just before the wait is made, so a wait's own later "now"
       * can only make it look later, never earlier. */
      slots[i].deadline_us = g_get_monotonic_time () + (gint64) delays_ms[i] * 1000;

      if (impl == IMPL_MEND)
        {
          waits[i] = mend_retry_wait_new (NULL, delays_ms[i], 1, 4, MEND_REASON_CAPACITY);
          g_signal_connect (waits[i], "fired", G_CALLBACK (on_fired), &slots[i]);
        }
      else
        {
          g_timeout_add (delays_ms[i], on_naive_timeout, &slots[i]);
        }
    }

  g_main_loop_run (loop);

  for (guint i = 0; i < n; i++)
    {
      lateness_us[i] = slots[i].fired_us - slots[i].deadline_us;
      g_clear_object (&waits[i]);
    }

  return run.done == n;
}

static gboolean
run_in_child (Impl         impl,
              guint        n,
              const guint *delays_ms,
              gint64      *lateness_us)
{
  int fds[2];
  pid_t pid;
  int status = 0;
  gboolean ok;

  fflush (stdout);
  fflush (stderr);

  if (pipe (fds) != 0)
    g_error ("pipe: %s", g_strerror (errno));

  pid = fork ();
  if (pid < 0)
    g_error ("fork: %s", g_strerror (errno));

  if (pid == 0)
    {
      gboolean done;

      close (fds[0]);
      alarm (WATCHDOG_SECONDS);
      done = run_job (impl, n, delays_ms, lateness_us);
      _exit (done && bench_write_all (fds[1], lateness_us, n * sizeof (gint64)) ? 0 : 1);
    }

  close (fds[1]);
  ok = bench_read_all (fds[0], lateness_us, n * sizeof (gint64));
  close (fds[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;

  return ok && WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* Jiffies the whole machine spent busy and in all, from /proc/stat: the
 * lateness of a wakeup says as much about other processes as about us. */
static void
read_machine_cpu (guint64 *busy,
                  guint64 *total)
{
  g_autofree char *stat = NULL;
  g_auto(GStrv) fields = NULL;

  *busy = *total = 0;
  if (!g_file_get_contents ("/proc/stat", &stat, NULL, NULL) || !g_str_has_prefix (stat, "cpu "))
    return;

  *strchr (stat, '\n') = '\0';
  fields = g_strsplit_set (stat + 4, " ", -1);
  for (guint i = 0, column = 0; fields[i] != NULL; i++)
    {
      guint64 value;

      if (*fields[i] == '\0')
        continue;
      value = g_ascii_strtoull (fields[i], NULL, 10);
      /* user nice system idle iowait irq softirq steal: idle and iowait
       * are not busy; guest time is already in user. */
      if (column < 8)
        {
          *total += value;
          if (column != 3 && column != 4)
            *busy += value;
        }
      column++;
    }
}

static gboolean
run_measured (Impl         impl,
              guint        n,
              const guint *delays_ms,
              gint64      *lateness_us,
              gdouble     *machine_busy_pct)
{
  guint64 busy0, total0, busy1, total1;
  gboolean ok;

  read_machine_cpu (&busy0, &total0);
  ok = run_in_child (impl, n, delays_ms, lateness_us);
  read_machine_cpu (&busy1, &total1);

  *machine_busy_pct = total1 > total0 ? 100.0 * (busy1 - busy0) / (total1 - total0) : -1;

  return ok;
}

static int
compare_int64 (gconstpointer a,
               gconstpointer b)
{
  gint64 ia = *(const gint64 *) a;
  gint64 ib = *(const gint64 *) b;

  return ia < ib ? -1 : ia > ib;
}

typedef struct
{
  gint64 p50;
  gint64 p99;
  gint64 max;
  gint64 min;
  gdouble mean;
  guint  over_1ms;
} Stats;

/* Nearest-rank percentile of sorted values. */
static gint64
percentile (const gint64 *sorted,
            guint         n,
            guint         p)
{
  guint rank = (guint) (((guint64) p * n + 99) / 100);

  return sorted[MAX (rank, 1) - 1];
}

static void
compute_stats (gint64 *values,
               guint   n,
               Stats  *stats)
{
  gdouble sum = 0;

  qsort (values, n, sizeof *values, compare_int64);

  stats->p50 = percentile (values, n, 50);
  stats->p99 = percentile (values, n, 99);
  stats->max = values[n - 1];
  stats->min = values[0];
  stats->over_1ms = 0;
  for (guint i = 0; i < n; i++)
    {
      sum += values[i];
      if (values[i] >= 1000)
        stats->over_1ms++;
    }
  stats->mean = sum / n;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GRand) rand = NULL;
  g_autofree guint *delays_ms = NULL;
  g_autofree gint64 *mend = NULL;
  g_autofree gint64 *naive = NULL;
  Stats ms;
  Stats ns;
  gdouble mend_busy;
  gdouble naive_busy;
  gint n = 2000;
  gdouble seconds = 2.0;
  gint seed = 1;
  guint span_ms;
  const GOptionEntry entries[] = {
    { "waits", 'n', 0, G_OPTION_ARG_INT, &n, "Waits to schedule (default 2000)", "N" },
    { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &seconds,
      "Spread of the deadlines (default 2)", "S" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed, "Seed of the random deadlines (default 1)", "S" },
    { NULL }
  };

  setlocale (LC_ALL, "");

  context = g_option_context_new ("— how late MendRetryWaits fire, against g_timeout_add()");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("bench-lateness: %s\n", error->message);
      return 2;
    }
  if (n < 1 || seconds <= 0 || seconds > 3600)
    {
      g_printerr ("bench-lateness: --waits must be at least 1, --seconds in (0, 3600]\n");
      return 2;
    }

  span_ms = MAX ((guint) (seconds * 1000), 1);
  rand = g_rand_new_with_seed ((guint32) seed);
  delays_ms = g_new (guint, n);
  for (gint i = 0; i < n; i++)
    delays_ms[i] = (guint) g_rand_int_range (rand, 0, (gint32) span_ms);

  mend = g_new0 (gint64, n);
  naive = g_new0 (gint64, n);

  if (!run_measured (IMPL_MEND, n, delays_ms, mend, &mend_busy) ||
      !run_measured (IMPL_NAIVE, n, delays_ms, naive, &naive_busy))
    {
      g_printerr ("bench-lateness: a run failed; no figures\n");
      return 1;
    }

  compute_stats (mend, n, &ms);
  compute_stats (naive, n, &ns);

  g_print ("lateness: %d waits, random deadlines over %.1f s, on an idle GMainLoop;\n"
           "fire time − deadline on g_get_monotonic_time(), in µs. Each way in a\n"
           "fresh process. Target: p99 under 1000 µs. The machine's CPUs were %.0f%%\n"
           "and %.0f%% busy (all processes, /proc/stat) during the two runs: on a busy\n"
           "machine the tail measures the scheduler as much as the timers.\n\n",
           n, seconds, mend_busy, naive_busy);
  g_print ("%-16s %8s %8s %8s %8s %8s %10s\n", "", "min", "p50", "mean", "p99", "max", ">= 1 ms");
  g_print ("%-16s %8" G_GINT64_FORMAT " %8" G_GINT64_FORMAT " %8.0f %8" G_GINT64_FORMAT
           " %8" G_GINT64_FORMAT " %10u\n",
           "MendRetryWait", ms.min, ms.p50, ms.mean, ms.p99, ms.max, ms.over_1ms);
  g_print ("%-16s %8" G_GINT64_FORMAT " %8" G_GINT64_FORMAT " %8.0f %8" G_GINT64_FORMAT
           " %8" G_GINT64_FORMAT " %10u\n",
           "g_timeout_add", ns.min, ns.p50, ns.mean, ns.p99, ns.max, ns.over_1ms);
  g_print ("\nRESULT lateness n=%d seconds=%g"
           " mend_p50_us=%" G_GINT64_FORMAT " mend_p99_us=%" G_GINT64_FORMAT
           " mend_max_us=%" G_GINT64_FORMAT " mend_over_1ms=%u"
           " naive_p50_us=%" G_GINT64_FORMAT " naive_p99_us=%" G_GINT64_FORMAT
           " naive_max_us=%" G_GINT64_FORMAT " naive_over_1ms=%u ratio_p99=%.2f"
           " mend_machine_busy_pct=%.0f naive_machine_busy_pct=%.0f\n",
           n, seconds, ms.p50, ms.p99, ms.max, ms.over_1ms,
           ns.p50, ns.p99, ns.max, ns.over_1ms,
           ms.p99 > 0 ? (gdouble) ns.p99 / ms.p99 : 0.0,
           mend_busy, naive_busy);

  return 0;
}
