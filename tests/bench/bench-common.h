/* bench-common.h — what the benchmarks share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include <glib.h>

/* CPU time of this process, user and system, in microseconds. */
static inline gint64
bench_cpu_time_us (void)
{
  struct rusage ru;

  getrusage (RUSAGE_SELF, &ru);

  return ((gint64) ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * G_USEC_PER_SEC
         + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* Whole writes and reads on a pipe between a measuring child and its
 * parent. */
static inline gboolean
bench_write_all (int           fd,
                 gconstpointer data,
                 gsize         size)
{
  const char *p = data;

  while (size > 0)
    {
      gssize n = write (fd, p, size);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      size -= (gsize) n;
    }

  return TRUE;
}

static inline gboolean
bench_read_all (int      fd,
                gpointer data,
                gsize    size)
{
  char *p = data;

  while (size > 0)
    {
      gssize n = read (fd, p, size);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      size -= (gsize) n;
    }

  return TRUE;
}

/* A poll function that counts the polls that could sleep (timeout ≠ 0):
 * the main loop's wakeups. */
static guint bench_n_wakeups;

static inline gint
bench_counting_poll (GPollFD *fds,
                     guint    n_fds,
                     gint     timeout)
{
  if (timeout != 0)
    bench_n_wakeups++;

  return g_poll (fds, n_fds, timeout);
}
