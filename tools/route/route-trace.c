/* route-trace.c — the calls from a failed subagent's line to its resume prompt in the queue
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built by tools/route/run against a libmend built with
 * -finstrument-functions: writes the address of every library function
 * entered, with its depth, while the observer parses a failed task line
 * and the resume wait fires and queues the prompt.
 */

#include <stdio.h>

#include <libmend.h>

static FILE *trace;
static int depth;

void __cyg_profile_func_enter (void *fn, void *site) __attribute__ ((no_instrument_function));
void __cyg_profile_func_exit (void *fn, void *site) __attribute__ ((no_instrument_function));

void
__cyg_profile_func_enter (void *fn,
                          void *site)
{
  depth++;
  if (trace != NULL)
    fprintf (trace, "%d %p\n", depth, fn);
}

void
__cyg_profile_func_exit (void *fn,
                         void *site)
{
  depth--;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(MendClock) clock = NULL;
  g_autoptr(MendChat) chat = NULL;
  g_autoptr(MendStreamObserver) observer = NULL;

  /* As an app's running main loop does: its thread owns the context, so
   * that libmend's thread check takes its fast path, as it does there. */
  g_main_context_acquire (g_main_context_default ());
  clock = mend_manual_clock_new (1764500000000000);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "id", "route", NULL);
  observer = mend_stream_observer_new (chat);
  const char *started =
    "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a7c41e2\","
    "\"tool_use_id\":\"toolu_01\",\"description\":\"Push relay\"}";
  const char *failed =
    "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41e2\","
    "\"tool_use_id\":\"toolu_01\",\"status\":\"failed\","
    "\"summary\":\"API Error: 503 no non-exhausted claude accounts available\"}";

  /* The app's turn runs (no sender: it waits for its attempt), so the
   * resume prompt queues behind it. */
  mend_chat_submit (chat, "Fix the build", NULL, NULL);
  mend_stream_observer_feed_line (observer, started, -1);

  /* The classifier's rules are read once a process, at the first
   * failure: not part of any failure's route after that. */
  g_object_unref (mend_failure_new_from_text ("API Error: 503"));

  trace = fopen (argv[1], "w");
  mend_stream_observer_feed_line (observer, failed, -1);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (clock));
  fclose (trace);
  trace = NULL;

  if (mend_queue_get_length (mend_chat_get_queue (chat)) != 1)
    {
      fprintf (stderr, "the resume prompt is not in the queue\n");
      return 1;
    }
  mend_chat_close (chat);
  return 0;
}
