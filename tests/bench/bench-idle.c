/* bench-idle.c — main-loop wakeups while one wait is pending
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One MendRetryWait of S seconds on the real default clock, and a GMainLoop
 * that runs until it fires; against the naive countdown, a 100 ms periodic
 * g_timeout_add() that counts the same S seconds down. Beside it, U more
 * waits that nobody watches, due a minute later (the naive way: U more
 * g_timeout_add () sources), and SPREAD = 10 that nobody watches either,
 * due one after the other over the S seconds: the loop wakes at their
 * deadlines and at the wait's, never for the U waits. A poll function that
 * counts and forwards to g_poll() shows every time the loop went to sleep
 * and woke up. Each way runs in a child process of its own.
 *
 * usage: bench-idle [--seconds S] [--unwatched U]
 *
 * Prints the counts, then one machine-readable line:
 *   RESULT idle seconds=… mend_wakeups=… naive_wakeups=… ratio=…
 */

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libmend.h>

#define TICK_MS 100

typedef enum
{
  IMPL_MEND,
  IMPL_NAIVE,
} Impl;

/* Plain data: it crosses a pipe from the child. */
typedef struct
{
  gboolean ok;
  guint    polls;      /* every poll() the loop made */
  guint    wakeups;    /* those that could sleep: timeout ≠ 0 */
  glong    nvcsw;      /* voluntary context switches, from the kernel */
  gint64   cpu_us;
  gint64   wall_us;
} Outcome;

static guint n_polls;
static guint n_wakeups;

static gint
counting_poll (GPollFD *fds,
               guint    n_fds,
               gint     timeout)
{
  n_polls++;
  if (timeout != 0)
    n_wakeups++;

  return g_poll (fds, n_fds, timeout);
}

static void
on_fired (MendRetryWait *wait,
          gpointer       user_data)
{
  g_main_loop_quit (user_data);
}

typedef struct
{
  GMainLoop *loop;
  guint      ticks_left;
} Countdown;

static gboolean
on_tick (gpointer user_data)
{
  Countdown *countdown = user_data;

  if (--countdown->ticks_left > 0)
    return G_SOURCE_CONTINUE;

  g_main_loop_quit (countdown->loop);
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

static guint n_unwatched = 2000;

#define SPREAD 10

static gboolean
on_never (gpointer data)
{
  return G_SOURCE_REMOVE;
}

static void
run_job (Impl     impl,
         guint    delay_ms,
         Outcome *out)
{
  g_autoptr(GPtrArray) others = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(MendRetryWait) wait = NULL;
  Countdown countdown = { loop, MAX (delay_ms / TICK_MS, 1) };
  struct rusage before;
  struct rusage after;
  gint64 wall_start;

  warm_up ();
  g_main_context_set_poll_func (NULL, counting_poll);

  getrusage (RUSAGE_SELF, &before);
  wall_start = g_get_monotonic_time ();
  n_polls = n_wakeups = 0;

  for (guint i = 0; i < SPREAD; i++)
    {
      guint due = delay_ms * (i + 1) / (SPREAD + 1);

      if (impl == IMPL_MEND)
        g_ptr_array_add (others, mend_retry_wait_new (NULL, due, 1, 4, MEND_REASON_CAPACITY));
      else
        g_timeout_add (due, on_never, NULL);
    }
  for (guint i = 0; i < n_unwatched; i++)
    {
      if (impl == IMPL_MEND)
        g_ptr_array_add (others, mend_retry_wait_new (NULL, delay_ms + 60000 + i, 1, 4, MEND_REASON_CAPACITY));
      else
        g_timeout_add (delay_ms + 60000 + i, on_never, NULL);
    }

  if (impl == IMPL_MEND)
    {
      wait = mend_retry_wait_new (NULL, delay_ms, 1, 4, MEND_REASON_CAPACITY);
      g_signal_connect (wait, "fired", G_CALLBACK (on_fired), loop);
    }
  else
    {
      g_timeout_add (TICK_MS, on_tick, &countdown);
    }

  g_main_loop_run (loop);

  getrusage (RUSAGE_SELF, &after);
  out->wall_us = g_get_monotonic_time () - wall_start;
  out->polls = n_polls;
  out->wakeups = n_wakeups;
  out->nvcsw = after.ru_nvcsw - before.ru_nvcsw;
  out->cpu_us = ((gint64) after.ru_utime.tv_sec - before.ru_utime.tv_sec
                 + after.ru_stime.tv_sec - before.ru_stime.tv_sec) * G_USEC_PER_SEC
                + after.ru_utime.tv_usec - before.ru_utime.tv_usec
                + after.ru_stime.tv_usec - before.ru_stime.tv_usec;
  out->ok = impl == IMPL_NAIVE || mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_FIRED;
}

static gboolean
run_in_child (Impl     impl,
              guint    delay_ms,
              Outcome *out)
{
  int fds[2];
  pid_t pid;
  int status = 0;
  gsize got = 0;

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
      alarm (delay_ms / 1000 + 60);
      run_job (impl, delay_ms, &result);
      _exit (write (fds[1], &result, sizeof result) == sizeof result ? 0 : 1);
    }

  close (fds[1]);
  while (got < sizeof *out)
    {
      gssize n = read (fds[0], (char *) out + got, sizeof *out - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += (gsize) n;
    }
  close (fds[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;

  return got == sizeof *out && out->ok && WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  gdouble seconds = 5.0;
  guint delay_ms;
  Outcome mend;
  Outcome naive;
  const GOptionEntry entries[] = {
    { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &seconds, "Length of the wait (default 5)", "S" },
    { "unwatched", 'u', 0, G_OPTION_ARG_INT, &n_unwatched, "Waits nobody watches beside it (default 2000)", "U" },
    { NULL }
  };

  setlocale (LC_ALL, "");

  context = g_option_context_new ("— main-loop wakeups while one MendRetryWait is pending");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("bench-idle: %s\n", error->message);
      return 2;
    }
  if (seconds < 0.1 || seconds > 3600)
    {
      g_printerr ("bench-idle: --seconds must be in [0.1, 3600]\n");
      return 2;
    }
  delay_ms = (guint) (seconds * 1000);

  if (!run_in_child (IMPL_MEND, delay_ms, &mend) ||
      !run_in_child (IMPL_NAIVE, delay_ms, &naive))
    {
      g_printerr ("bench-idle: a run failed; no figures\n");
      return 1;
    }

  g_print ("idle: one MendRetryWait of %u ms on the real default clock, against a\n"
           "%d ms periodic g_timeout_add() counting the same time down. Wakeups are\n"
           "poll() calls that could sleep (timeout ≠ 0), counted by a poll function;\n"
           "context switches are the kernel's voluntary ones. Target: only the\n"
           "deadline, 1–2 wakeups. (A wait made before the loop runs costs one poll\n"
           "that returns at once: attaching the clock's source signals the context.)\n\n",
           delay_ms, TICK_MS);
  g_print ("%-22s %8s %8s %10s %8s %9s\n", "", "wakeups", "polls", "ctx sw", "CPU µs", "wall ms");
  g_print ("%-22s %8u %8u %10ld %8" G_GINT64_FORMAT " %9.1f\n", "MendRetryWait",
           mend.wakeups, mend.polls, mend.nvcsw, mend.cpu_us, mend.wall_us / 1000.0);
  g_print ("%-22s %8u %8u %10ld %8" G_GINT64_FORMAT " %9.1f\n", "100 ms tick countdown",
           naive.wakeups, naive.polls, naive.nvcsw, naive.cpu_us, naive.wall_us / 1000.0);
  g_print ("\nRESULT idle seconds=%g unwatched=%u mend_wakeups=%u naive_wakeups=%u ratio=%.1f"
           " mend_polls=%u naive_polls=%u mend_ctxsw=%ld naive_ctxsw=%ld"
           " mend_cpu_us=%" G_GINT64_FORMAT " naive_cpu_us=%" G_GINT64_FORMAT "\n",
           seconds, n_unwatched, mend.wakeups, naive.wakeups,
           (gdouble) naive.wakeups / MAX (mend.wakeups, 1),
           mend.polls, naive.polls, mend.nvcsw, naive.nvcsw, mend.cpu_us, naive.cpu_us);

  /* Unwatched waits wake the loop at their deadlines only. */
  if (mend.wakeups > SPREAD + 2)
    {
      g_printerr ("bench-idle: target not met: %u wakeups for %d deadlines, %u unwatched waits pending\n",
                  mend.wakeups, SPREAD + 1, n_unwatched);
      return 1;
    }
  return 0;
}
