/* test-threads.c — a libmend object refuses calls from a thread that is not its own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000

typedef struct
{
  MendChat *chat;
  gboolean  submitted;
  guint     length;
  gboolean  turn_stopped;
} Across;

/* On another thread: each call is refused, and changes nothing. */
static gpointer
use_the_chat (gpointer data)
{
  Across *across = data;
  MendQueue *queue;

  across->submitted = mend_chat_submit (across->chat, "From another thread", NULL, NULL);
  queue = mend_chat_get_queue (across->chat);
  across->length = queue != NULL ? mend_queue_get_length (queue) : G_MAXUINT;
  mend_chat_stop (across->chat);
  return NULL;
}

static void
another_thread_is_refused_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  Across across = { chat, TRUE, 0, FALSE };
  GThread *thread;

  /* The criticals are what is tested: not fatal here. */
  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  mend_test_run_turns_by_hand (chat);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  g_assert_true (mend_chat_submit (chat, "Then the changelog", NULL, NULL));

  thread = g_thread_new ("other", use_the_chat, &across);
  g_thread_join (thread);

  g_assert_false (across.submitted);
  g_assert_cmpuint (across.length, ==, G_MAXUINT);  /* no queue given out */
  /* Nothing changed: the turn still runs, the follow-up still waits. */
  g_assert_cmpint (mend_turn_get_state (mend_chat_get_turn (chat)), ==, MEND_TURN_RUNNING);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_another_thread_is_refused (void)
{
  if (g_test_subprocess ())
    {
      another_thread_is_refused_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*CRITICAL*mend_chat_submit: MendChat * belongs to another thread*"
                             "used only on the thread that runs its main context, or the one that made it while none does*");
  g_test_trap_assert_stderr ("*CRITICAL*mend_chat_get_queue: MendChat*");
  g_test_trap_assert_stderr ("*CRITICAL*mend_chat_stop: MendChat*");
}

typedef struct
{
  GMainContext *context;
  MendChat     *chat;
  MendQueue    *queue;
  gboolean      submitted;
} Worker;

/* A chat made on a worker thread for the worker's own main context. */
static gpointer
run_a_chat (gpointer data)
{
  Worker *worker = data;

  g_main_context_push_thread_default (worker->context);
  worker->chat = g_object_new (MEND_TYPE_CHAT, NULL);
  g_main_context_pop_thread_default (worker->context);
  return NULL;
}

/* The thread that runs an object's main context may use it: a chat made
 * on a worker, for the main thread's context, is used there. */
static void
test_the_thread_of_the_context_may_use_it (void)
{
  Worker worker = { g_main_context_default (), NULL, NULL, FALSE };
  GThread *thread = g_thread_new ("maker", run_a_chat, &worker);

  g_thread_join (thread);
  g_assert_true (g_main_context_acquire (worker.context));
  mend_test_run_turns_by_hand (worker.chat);
  g_assert_true (mend_chat_submit (worker.chat, "Fix the build", NULL, NULL));
  g_assert_nonnull (mend_chat_get_turn (worker.chat));
  mend_chat_close (worker.chat);
  g_main_context_release (worker.context);
  g_assert_finalize_object (worker.chat);
}

static gpointer
use_after_the_main_thread_did (gpointer data)
{
  Worker *worker = data;

  worker->submitted = mend_chat_submit (worker->chat, "From the maker", NULL, NULL);
  return NULL;
}

/* Once another thread ran the object's context and used it, the object is
 * that thread's: its maker is refused even while nobody runs the context. */
static void
maker_refused_after_the_runner_child (void)
{
  Worker worker = { g_main_context_default (), NULL, NULL, TRUE };
  GThread *thread;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  thread = g_thread_new ("maker", run_a_chat, &worker);
  g_thread_join (thread);
  g_assert_true (g_main_context_acquire (worker.context));
  g_assert_cmpint (mend_chat_get_lifecycle (worker.chat), ==, MEND_LIFECYCLE_READY);
  g_main_context_release (worker.context);

  /* The maker is a thread of its own again; it is not the chat's. */
  thread = g_thread_new ("maker-again", use_after_the_main_thread_did, &worker);
  g_thread_join (thread);
  g_assert_false (worker.submitted);

  g_assert_true (g_main_context_acquire (worker.context));
  mend_chat_close (worker.chat);
  g_main_context_release (worker.context);
  g_assert_finalize_object (worker.chat);
}

static void
test_maker_refused_after_the_runner (void)
{
  if (g_test_subprocess ())
    {
      maker_refused_after_the_runner_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*CRITICAL*mend_chat_submit: MendChat * belongs to another thread*");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Threads/another-thread-is-refused-and-changes-nothing", test_another_thread_is_refused);
  g_test_add_func ("/Mend/Threads/the-thread-running-the-context-may-use-it", test_the_thread_of_the_context_may_use_it);
  g_test_add_func ("/Mend/Threads/the-maker-is-refused-once-another-thread-ran-it", test_maker_refused_after_the_runner);

  return g_test_run ();
}
