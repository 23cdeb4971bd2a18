/* bench-waits.c — pending retry waits at scale
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Schedules N pending MendRetryWaits on the real default clock, with random
 * deadlines spread over one second, and runs a GMainLoop until all have
 * fired; then the naive way, one g_timeout_add() per wait with the same
 * deadlines, in the same run. Also schedule-then-cancel at the same N.
 *
 * A third run gives the floor of any one-source design: a bare GSource
 * that wakes at the same deadlines and does nothing per wait but count.
 * What mend costs above it is the per-wait work of the library.
 *
 * Every measurement runs in a child process of its own, so that one run's
 * heap and main context cannot flatter or burden the next, and so that
 * getrusage() and VmRSS describe that run alone.
 *
 * usage: bench-waits [--repeat R] [--naive-max N] [--seed S] [N…]
 *
 * Prints a table, then one machine-readable line per result:
 *   RESULT waits n=… mend_cpu_us_per_wait=… naive_cpu_us_per_wait=… ratio=…
 */

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmend.h>

#include "bench-common.h"

#include "mend-clock-private.h"

/* A child that takes longer than this is stuck, not slow. */
#define WATCHDOG_SECONDS 600

typedef enum
{
  IMPL_MEND,
  IMPL_NAIVE,
  IMPL_FLOOR,
} Impl;

static const char *impl_names[] = { "mend", "naive", "floor" };

typedef enum
{
  MODE_FIRE,
  MODE_CANCEL,
} Mode;

typedef struct
{
  Impl         impl;
  Mode         mode;
  guint        n;
  const guint *delays_ms;
} Job;

/* Plain data: it crosses a pipe from the child. */
typedef struct
{
  gboolean ok;
  guint    done;            /* waits that fired, or were cancelled */
  gint64   cpu_us;          /* user + sys, scheduling to the last fire */
  gint64   sched_cpu_us;    /* user + sys of scheduling the N waits */
  gint64   wall_us;
  gint64   rss_growth;      /* bytes of VmRSS the N pending waits added */
  guint    n_sources;       /* the clock's GSources while N are pending */
  guint    sleeps;          /* poll() calls that could block */
} Outcome;

typedef struct
{
  GMainLoop *loop;
  guint      n;
  guint      done;
} Run;


/* A "VmRSS:"-style field of /proc/self/status, in bytes; -1 if unknown. */
static gint64
read_status_bytes (const char *field)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;

  line = strstr (status, field);
  if (line == NULL)
    return -1;

  return g_ascii_strtoll (line + strlen (field), NULL, 10) * 1024;
}

static gboolean
on_fired_hook (GSignalInvocationHint *hint,
               guint                  n_values,
               const GValue          *values,
               gpointer               user_data)
{
  Run *run = user_data;

  /* The wait holds itself while it emits; this drops the app's reference,
   * as an app would once its retry ran. */
  g_object_unref (g_value_get_object (&values[0]));

  if (++run->done == run->n)
    g_main_loop_quit (run->loop);

  return TRUE;
}

static gboolean
on_naive_timeout (gpointer user_data)
{
  Run *run = user_data;

  if (++run->done == run->n)
    g_main_loop_quit (run->loop);

  return G_SOURCE_REMOVE;
}

/* The floor: the sorted deadlines and one source that wakes at each. */
typedef struct
{
  GSource  source;
  Run     *run;
  gint64  *deadlines;
  guint    next;
} FloorSource;

static gboolean
floor_source_dispatch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  FloorSource *fs = (FloorSource *) source;
  gint64 now = g_get_monotonic_time ();

  while (fs->next < fs->run->n && fs->deadlines[fs->next] <= now)
    {
      fs->next++;
      fs->run->done++;
    }

  if (fs->next == fs->run->n)
    {
      g_main_loop_quit (fs->run->loop);
      return G_SOURCE_REMOVE;
    }

  g_source_set_ready_time (source, fs->deadlines[fs->next]);
  return G_SOURCE_CONTINUE;
}

static void
floor_source_finalize (GSource *source)
{
  g_free (((FloorSource *) source)->deadlines);
}

static GSourceFuncs floor_source_funcs = {
  .dispatch = floor_source_dispatch,
  .finalize = floor_source_finalize,
};

static int
compare_int64 (gconstpointer a,
               gconstpointer b)
{
  gint64 ia = *(const gint64 *) a;
  gint64 ib = *(const gint64 *) b;

  return ia < ib ? -1 : ia > ib;
}

static void
schedule_floor (Run         *run,
                const guint *delays_ms)
{
  FloorSource *fs = (FloorSource *) g_source_new (&floor_source_funcs, sizeof (FloorSource));

  fs->run = run;
  fs->deadlines = g_new (gint64, run->n);
  for (guint i = 0; i < run->n; i++)
    fs->deadlines[i] = g_get_monotonic_time () + (gint64) delays_ms[i] * 1000;
  qsort (fs->deadlines, run->n, sizeof (gint64), compare_int64);

  g_source_set_ready_time ((GSource *) fs, fs->deadlines[0]);
  g_source_attach ((GSource *) fs, NULL);
  g_source_unref ((GSource *) fs);
}

static MendRetryWait *
new_wait (guint delay_ms)
{
  return mend_retry_wait_new (NULL, delay_ms, 1, 4, MEND_REASON_CAPACITY);
}

/* Class, default clock, main context and catalogue are made once per
 * process; an app pays for them once too, so they stay out of the figures. */
static void
warm_up (void)
{
  MendRetryWait *wait;
  guint id;

  wait = new_wait (1000);
  mend_retry_wait_cancel (wait);
  g_object_unref (wait);

  id = g_timeout_add (1000, on_naive_timeout, NULL);
  g_source_remove (id);

  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
run_job (const Job *job,
         Outcome   *out)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Run run = { loop, job->n, 0 };
  gpointer *handles;
  gint64 rss_before;
  gint64 cpu_start;
  gint64 wall_start;
  gulong hook_id = 0;
  guint fired_id;

  g_main_context_set_poll_func (NULL, bench_counting_poll);
  warm_up ();
  fired_id = g_signal_lookup ("fired", MEND_TYPE_RETRY_WAIT);

  /* Touched now, so that it is not counted as the waits' memory. */
  handles = g_new0 (gpointer, job->n);
  memset (handles, 1, job->n * sizeof (gpointer));

  if (job->impl == IMPL_MEND && job->mode == MODE_FIRE)
    hook_id = g_signal_add_emission_hook (fired_id, 0, on_fired_hook, &run, NULL);

  rss_before = read_status_bytes ("VmRSS:");
  bench_n_wakeups = 0;
  wall_start = g_get_monotonic_time ();
  cpu_start = bench_cpu_time_us ();

  if (job->impl == IMPL_FLOOR)
    schedule_floor (&run, job->delays_ms);
  else
    for (guint i = 0; i < job->n; i++)
      {
        if (job->impl == IMPL_MEND)
          handles[i] = new_wait (job->delays_ms[i]);
        else
          handles[i] = GUINT_TO_POINTER (g_timeout_add (job->delays_ms[i], on_naive_timeout, &run));
      }

  out->sched_cpu_us = bench_cpu_time_us () - cpu_start;
  out->rss_growth = read_status_bytes ("VmRSS:") - rss_before;
  out->n_sources = mend_clock_get_n_sources (mend_clock_get_default ());

  if (job->mode == MODE_FIRE)
    {
      g_main_loop_run (loop);
    }
  else
    {
      for (guint i = 0; i < job->n; i++)
        {
          if (job->impl == IMPL_MEND)
            {
              if (mend_retry_wait_cancel (handles[i]))
                run.done++;
              g_object_unref (handles[i]);
            }
          else if (g_source_remove (GPOINTER_TO_UINT (handles[i])))
            {
              run.done++;
            }
        }
    }

  out->cpu_us = bench_cpu_time_us () - cpu_start;
  out->wall_us = g_get_monotonic_time () - wall_start;
  out->sleeps = bench_n_wakeups;
  out->done = run.done;
  out->ok = run.done == job->n;

  if (hook_id != 0)
    g_signal_remove_emission_hook (fired_id, hook_id);
  g_free (handles);
}

static gboolean
run_in_child (const Job *job,
              Outcome   *out)
{
  int fds[2];
  pid_t pid;
  int status = 0;
  gboolean ok;

  memset (out, 0, sizeof *out);
  fflush (stdout);
  fflush (stderr);

  if (pipe (fds) != 0)
    g_error ("pipe: %s", g_strerror (errno));

  pid = fork ();
  if (pid < 0)
    g_error ("fork: %s", g_strerror (errno));

  if (pid == 0)
    {
      Outcome result = { 0, };

      close (fds[0]);
      alarm (WATCHDOG_SECONDS);
      run_job (job, &result);
      _exit (bench_write_all (fds[1], &result, sizeof result) ? 0 : 1);
    }

  close (fds[1]);
  ok = bench_read_all (fds[0], out, sizeof *out);
  close (fds[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;

  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      g_printerr ("bench-waits: the %s %s run at n=%u died (status %d)\n",
                  impl_names[job->impl],
                  job->mode == MODE_FIRE ? "fire" : "cancel",
                  job->n, status);
      return FALSE;
    }

  return ok && out->ok;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  gdouble da = *(const gdouble *) a;
  gdouble db = *(const gdouble *) b;

  return da < db ? -1 : da > db ? 1 : 0;
}

static gdouble
median (gdouble *values,
        guint    n)
{
  qsort (values, n, sizeof *values, compare_doubles);

  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

#define MAX_REPEAT 99

/* One way at one N: the samples of each run, then their medians: µs of CPU
 * per wait, µs of CPU per wait spent scheduling, bytes of RSS per pending
 * wait, ms of wall time, wakeups. */
typedef struct
{
  guint    runs;
  gdouble  cpu[MAX_REPEAT];
  gdouble  sched[MAX_REPEAT];
  gdouble  rss[MAX_REPEAT];
  gdouble  wall[MAX_REPEAT];
  gdouble  wakes[MAX_REPEAT];

  gboolean ran;
  gdouble  cpu_per_wait;
  gdouble  sched_per_wait;
  gdouble  rss_per_wait;
  gdouble  wall_ms;
  gdouble  sleeps;
  guint    n_sources;
} Figures;

static gboolean
measure_once (Impl         impl,
              Mode         mode,
              guint        n,
              const guint *delays_ms,
              Figures     *fig)
{
  Job job = { impl, mode, n, delays_ms };
  Outcome out;
  guint r = fig->runs;

  g_assert (r < MAX_REPEAT);

  if (!run_in_child (&job, &out))
    return FALSE;

  fig->cpu[r] = (gdouble) out.cpu_us / n;
  fig->sched[r] = (gdouble) out.sched_cpu_us / n;
  fig->rss[r] = (gdouble) out.rss_growth / n;
  fig->wall[r] = out.wall_us / 1000.0;
  fig->wakes[r] = out.sleeps;
  fig->n_sources = MAX (fig->n_sources, out.n_sources);
  fig->runs++;

  return TRUE;
}

static void
summarize (Figures *fig)
{
  if (fig->runs == 0)
    return;

  fig->ran = TRUE;
  fig->cpu_per_wait = median (fig->cpu, fig->runs);
  fig->sched_per_wait = median (fig->sched, fig->runs);
  fig->rss_per_wait = median (fig->rss, fig->runs);
  fig->wall_ms = median (fig->wall, fig->runs);
  fig->sleeps = median (fig->wakes, fig->runs);
}

static char *
format_figure (const Figures *fig,
               gdouble        value,
               int            decimals)
{
  if (!fig->ran)
    return g_strdup ("skipped");

  return g_strdup_printf ("%.*f", decimals, value);
}

static char *
format_ratio (const Figures *naive,
              const Figures *mend)
{
  if (!naive->ran || !mend->ran || mend->cpu_per_wait <= 0)
    return g_strdup ("skipped");

  return g_strdup_printf ("%.1f", naive->cpu_per_wait / mend->cpu_per_wait);
}

static int
compare_uints (gconstpointer a,
               gconstpointer b)
{
  guint ua = *(const guint *) a;
  guint ub = *(const guint *) b;

  return ua < ub ? -1 : ua > ub;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) sizes = NULL;
  g_autoptr(GArray) ns = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GRand) rand = NULL;
  g_autofree guint *delays_ms = NULL;
  g_autofree Figures *mend_fire = NULL;
  g_autofree Figures *naive_fire = NULL;
  g_autofree Figures *floor_fire = NULL;
  g_autofree Figures *mend_cancel = NULL;
  g_autofree Figures *naive_cancel = NULL;
  gint repeat = 3;
  gint naive_max = 100000;
  gint seed = 1;
  g_autofree char *only = NULL;
  guint max_n = 0;
  gsize instance_size;
  GTypeQuery query;
  gboolean failed = FALSE;
  const GOptionEntry entries[] = {
    { "repeat", 'r', 0, G_OPTION_ARG_INT, &repeat,
      "Runs of each measurement; the median is reported (default 3)", "R" },
    { "naive-max", 0, 0, G_OPTION_ARG_INT, &naive_max,
      "Largest N the naive loop runs at (default 100000)", "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &seed,
      "Seed of the random deadlines (default 1)", "S" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only,
      "Run one way only, in this process, for a profiler: mend-fire, mend-cancel, naive-fire, naive-cancel or floor-fire", "RUN" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &sizes, NULL, "[N…]" },
    { NULL }
  };

  setlocale (LC_ALL, "");

  context = g_option_context_new ("— pending MendRetryWaits at scale against one GSource per wait");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("bench-waits: %s\n", error->message);
      return 2;
    }

  if (sizes == NULL)
    sizes = g_strdupv ((char *[]) { (char *) "1000", (char *) "10000", (char *) "100000", NULL });

  for (guint i = 0; sizes[i] != NULL; i++)
    {
      guint64 n;

      if (!g_ascii_string_to_unsigned (sizes[i], 10, 1, 10000000, &n, &error))
        {
          g_printerr ("bench-waits: N: %s\n", error->message);
          return 2;
        }
      g_array_append_val (ns, n);
      max_n = MAX (max_n, (guint) n);
    }
  g_array_sort (ns, compare_uints);
  repeat = CLAMP (repeat, 1, MAX_REPEAT);

  /* The same random deadlines, in ms over one second, for both ways. */
  rand = g_rand_new_with_seed ((guint32) seed);
  delays_ms = g_new (guint, max_n);
  for (guint i = 0; i < max_n; i++)
    delays_ms[i] = (guint) g_rand_int_range (rand, 0, 1000);

  if (only != NULL)
    {
      Impl impl = g_str_has_prefix (only, "naive") ? IMPL_NAIVE
                  : g_str_has_prefix (only, "floor") ? IMPL_FLOOR : IMPL_MEND;
      Mode mode = g_str_has_suffix (only, "cancel") ? MODE_CANCEL : MODE_FIRE;

      for (guint i = 0; i < ns->len; i++)
        {
          Job job = { impl, mode, g_array_index (ns, guint, i), delays_ms };
          Outcome out = { 0, };

          run_job (&job, &out);
          g_print ("%s n=%u: %.3f µs of CPU per wait, %u wakeups\n",
                   only, job.n, (gdouble) out.cpu_us / job.n, out.sleeps);
        }
      return 0;
    }

  g_type_query (MEND_TYPE_RETRY_WAIT, &query);
  instance_size = query.instance_size;

  mend_fire = g_new0 (Figures, ns->len);
  naive_fire = g_new0 (Figures, ns->len);
  floor_fire = g_new0 (Figures, ns->len);
  mend_cancel = g_new0 (Figures, ns->len);
  naive_cancel = g_new0 (Figures, ns->len);

  g_print ("waits at scale: N pending MendRetryWaits on the real default clock, random\n"
           "deadlines over 1 s, one GMainLoop until all fired; against one g_timeout_add()\n"
           "per wait with the same deadlines. CPU is getrusage user+sys from the first\n"
           "schedule to the last fire, per wait; median of %d run(s), each in a fresh\n"
           "process. RSS is VmRSS growth while the N waits are pending. Wakeups are poll()\n"
           "calls that could sleep; wall ms runs from the first schedule to the last\n"
           "fire. The naive loop runs up to N=%d (--naive-max).\n\n",
           repeat, naive_max);

  /* The ways take turns within each repeat, so that a change in the
   * machine's load while the benchmark runs falls on all of them alike. */
  for (guint i = 0; i < ns->len; i++)
    {
      guint n = g_array_index (ns, guint, i);
      gboolean run_naive = n <= (guint) naive_max;

      for (gint r = 0; r < repeat && !failed; r++)
        {
          failed |= !measure_once (IMPL_MEND, MODE_FIRE, n, delays_ms, &mend_fire[i]);
          failed |= !measure_once (IMPL_FLOOR, MODE_FIRE, n, delays_ms, &floor_fire[i]);
          failed |= !measure_once (IMPL_MEND, MODE_CANCEL, n, delays_ms, &mend_cancel[i]);
          if (run_naive)
            {
              failed |= !measure_once (IMPL_NAIVE, MODE_FIRE, n, delays_ms, &naive_fire[i]);
              failed |= !measure_once (IMPL_NAIVE, MODE_CANCEL, n, delays_ms, &naive_cancel[i]);
            }
        }

      summarize (&mend_fire[i]);
      summarize (&floor_fire[i]);
      summarize (&mend_cancel[i]);
      summarize (&naive_fire[i]);
      summarize (&naive_cancel[i]);
    }

  if (failed)
    {
      g_printerr ("bench-waits: a run failed; no figures\n");
      return 1;
    }

  g_print ("schedule, then run until all fired (CPU µs per wait; scheduling alone in brackets)\n");
  g_print ("%8s %20s %20s %10s %11s %11s %9s %9s %8s\n",
           "N", "mend µs/wait", "naive µs/wait", "naive/mend", "mend wakes", "naive wakes",
           "mend ms", "naive ms", "sources");
  for (guint i = 0; i < ns->len; i++)
    {
      g_autofree char *naive = NULL;
      g_autofree char *ratio = format_ratio (&naive_fire[i], &mend_fire[i]);
      g_autofree char *naive_wakes = format_figure (&naive_fire[i], naive_fire[i].sleeps, 0);
      g_autofree char *naive_wall = format_figure (&naive_fire[i], naive_fire[i].wall_ms, 0);

      if (naive_fire[i].ran)
        naive = g_strdup_printf ("%.2f (%.2f)", naive_fire[i].cpu_per_wait, naive_fire[i].sched_per_wait);
      else
        naive = g_strdup_printf ("skipped (N > %d)", naive_max);

      g_print ("%8u %13.2f (%.2f) %20s %10s %11.0f %11s %9.0f %9s %8u\n",
               g_array_index (ns, guint, i),
               mend_fire[i].cpu_per_wait, mend_fire[i].sched_per_wait,
               naive, ratio, mend_fire[i].sleeps, naive_wakes,
               mend_fire[i].wall_ms, naive_wall, mend_fire[i].n_sources);
    }

  g_print ("\nthe floor of one source: a bare GSource waking at the same deadlines, no\n"
           "per-wait work (CPU µs per wait); mend's cost above it is its per-wait work\n");
  g_print ("%8s %14s %11s %14s\n", "N", "floor µs/wait", "floor wakes", "mend − floor");
  for (guint i = 0; i < ns->len; i++)
    g_print ("%8u %14.2f %11.0f %14.2f\n", g_array_index (ns, guint, i),
             floor_fire[i].cpu_per_wait, floor_fire[i].sleeps,
             mend_fire[i].cpu_per_wait - floor_fire[i].cpu_per_wait);

  g_print ("\nschedule, then cancel each (CPU µs per wait)\n");
  g_print ("%8s %14s %14s %10s\n", "N", "mend µs/wait", "naive µs/wait", "naive/mend");
  for (guint i = 0; i < ns->len; i++)
    {
      g_autofree char *naive = format_figure (&naive_cancel[i], naive_cancel[i].cpu_per_wait, 2);
      g_autofree char *ratio = format_ratio (&naive_cancel[i], &mend_cancel[i]);

      g_print ("%8u %14.2f %14s %10s\n", g_array_index (ns, guint, i),
               mend_cancel[i].cpu_per_wait, naive, ratio);
    }

  g_print ("\nmemory while pending (VmRSS growth per wait; a MendRetryWait instance is %"
           G_GSIZE_FORMAT " bytes)\n", instance_size);
  g_print ("%8s %12s %18s %12s\n", "N", "mend B/wait", "beyond instance", "naive B/wait");
  for (guint i = 0; i < ns->len; i++)
    {
      g_autofree char *naive = format_figure (&naive_fire[i], naive_fire[i].rss_per_wait, 0);

      g_print ("%8u %12.0f %18.0f %12s\n", g_array_index (ns, guint, i),
               mend_fire[i].rss_per_wait, mend_fire[i].rss_per_wait - (gdouble) instance_size,
               naive);
    }
  if (g_array_index (ns, guint, 0) < 10000)
    g_print ("(RSS moves in 4 KiB pages: per-wait figures below N=10000 are coarse)\n");

  g_print ("\n");
  for (guint i = 0; i < ns->len; i++)
    {
      g_autofree char *naive = format_figure (&naive_fire[i], naive_fire[i].cpu_per_wait, 3);
      g_autofree char *naive_sched = format_figure (&naive_fire[i], naive_fire[i].sched_per_wait, 3);
      g_autofree char *naive_rss = format_figure (&naive_fire[i], naive_fire[i].rss_per_wait, 0);
      g_autofree char *naive_wakes = format_figure (&naive_fire[i], naive_fire[i].sleeps, 0);
      g_autofree char *naive_wall = format_figure (&naive_fire[i], naive_fire[i].wall_ms, 0);
      g_autofree char *ratio = format_ratio (&naive_fire[i], &mend_fire[i]);
      g_autofree char *naive_cancel_s = format_figure (&naive_cancel[i], naive_cancel[i].cpu_per_wait, 3);
      g_autofree char *cancel_ratio = format_ratio (&naive_cancel[i], &mend_cancel[i]);

      g_print ("RESULT waits n=%u mend_cpu_us_per_wait=%.3f naive_cpu_us_per_wait=%s ratio=%s"
               " mend_sched_us_per_wait=%.3f naive_sched_us_per_wait=%s"
               " mend_rss_bytes_per_wait=%.0f mend_rss_beyond_instance=%.0f instance_size=%" G_GSIZE_FORMAT
               " naive_rss_bytes_per_wait=%s mend_wakeups=%.0f naive_wakeups=%s"
               " mend_wall_ms=%.0f naive_wall_ms=%s mend_sources=%u"
               " floor_cpu_us_per_wait=%.3f floor_wakeups=%.0f naive_max=%d repeat=%d\n",
               g_array_index (ns, guint, i),
               mend_fire[i].cpu_per_wait, naive, ratio,
               mend_fire[i].sched_per_wait, naive_sched,
               mend_fire[i].rss_per_wait, mend_fire[i].rss_per_wait - (gdouble) instance_size,
               instance_size, naive_rss, mend_fire[i].sleeps, naive_wakes,
               mend_fire[i].wall_ms, naive_wall, mend_fire[i].n_sources,
               floor_fire[i].cpu_per_wait, floor_fire[i].sleeps, naive_max, repeat);
      g_print ("RESULT cancel n=%u mend_cpu_us_per_wait=%.3f naive_cpu_us_per_wait=%s ratio=%s repeat=%d\n",
               g_array_index (ns, guint, i),
               mend_cancel[i].cpu_per_wait, naive_cancel_s, cancel_ratio, repeat);
    }

  if (ns->len > 1)
    {
      guint last = ns->len - 1;
      g_autofree char *naive_growth = NULL;

      if (naive_fire[0].ran && naive_fire[last].ran)
        naive_growth = g_strdup_printf ("%.2f", naive_fire[last].cpu_per_wait / naive_fire[0].cpu_per_wait);
      else
        naive_growth = g_strdup ("skipped");

      g_print ("RESULT growth from=%u to=%u mend_growth=%.2f naive_growth=%s"
               " mend_cancel_growth=%.2f\n",
               g_array_index (ns, guint, 0), g_array_index (ns, guint, last),
               mend_fire[last].cpu_per_wait / mend_fire[0].cpu_per_wait, naive_growth,
               mend_cancel[last].cpu_per_wait / mend_cancel[0].cpu_per_wait);
    }

  return 0;
}
