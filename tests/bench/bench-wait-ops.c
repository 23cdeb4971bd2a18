/* bench-wait-ops.c — what one retry wait costs to make, fire and cancel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For instruction counts under callgrind (bench_callgrind.py): N waits on
 * the real default clock, each with a ::fired handler (how an app hears
 * of it), against N g_timeout_add () sources, each with its callback, the
 * naive way. A stage makes them ("create"), then cancels each ("cancel":
 * mend_retry_wait_cancel () and the app's unref; g_source_remove ()), or
 * runs the main loop until every one has fired ("fire": all due at once).
 * The process ends right after its stage, so that the difference between
 * two sizes is the stage's per wait.
 *
 * usage: bench-wait-ops mend|naive create|cancel|fire N
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <libmend.h>

static guint fired;

static void
on_fired (MendRetryWait *wait,
          gpointer       data)
{
  fired++;
}

static gboolean
on_timeout (gpointer data)
{
  fired++;
  return G_SOURCE_REMOVE;
}

int
main (int   argc,
      char *argv[])
{
  gboolean mend;
  const char *stage;
  guint n;
  g_autofree gpointer *made = NULL;

  if (argc != 4)
    return 2;
  mend = g_str_equal (argv[1], "mend");
  stage = argv[2];
  n = (guint) g_ascii_strtoull (argv[3], NULL, 10);
  made = g_new0 (gpointer, MAX (n, 1));

  /* Types, the default clock and its board: not per wait. */
  if (mend)
    {
      MendRetryWait *wait = mend_retry_wait_new (NULL, 60000, 1, 4, MEND_REASON_CAPACITY);

      mend_retry_wait_cancel (wait);
      g_object_unref (wait);
    }
  else
    g_source_remove (g_timeout_add (60000, on_timeout, NULL));
  while (g_main_context_iteration (NULL, FALSE))
    ;

  /* Due at once in "fire", after a minute otherwise. */
  for (guint i = 0; i < n; i++)
    {
      guint delay = g_str_equal (stage, "fire") ? 0 : 60000 + i;

      if (mend)
        {
          MendRetryWait *wait = mend_retry_wait_new (NULL, delay, 1, 4, MEND_REASON_CAPACITY);

          g_signal_connect (wait, "fired", G_CALLBACK (on_fired), NULL);
          made[i] = wait;
        }
      else
        made[i] = GUINT_TO_POINTER (g_timeout_add (delay, on_timeout, NULL));
    }

  if (g_str_equal (stage, "cancel"))
    for (guint i = 0; i < n; i++)
      {
        if (mend)
          {
            mend_retry_wait_cancel (made[i]);
            g_object_unref (made[i]);
          }
        else
          g_source_remove (GPOINTER_TO_UINT (made[i]));
      }
  else if (g_str_equal (stage, "fire"))
    {
      while (fired < n)
        g_main_context_iteration (NULL, TRUE);
      /* The app lets go of each fired wait. */
      for (guint i = 0; i < n && mend; i++)
        g_object_unref (made[i]);
    }

  fflush (stdout);
  _exit (fired == (g_str_equal (stage, "fire") ? n : 0) ? 0 : 1);
}
