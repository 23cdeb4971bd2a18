/* test-attack-deferred.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the chat's deferred mend_chat_send_next () (a send asked
 * from a handler of a turn that ended as it started runs once that start
 * returns) and on the thread rule's deferred work (a chat whose last
 * reference goes on another thread stops its turn from its own context).
 * Turns run by hand: an attempt handler that succeeds or fails at once is
 * a sender that answers inside send_async (). Virtual time; every object
 * is finalized.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000
#define BAD_REQUEST "API Error: 400 bad request"

/* Attempts that end inside their start */

static void
fail_at_once (MendTurn     *turn,
              guint         attempt,
              GCancellable *cancellable,
              gpointer      data)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (BAD_REQUEST);

  mend_turn_fail (turn, failure);
}

static void
succeed_at_once (MendTurn     *turn,
                 guint         attempt,
                 GCancellable *cancellable,
                 gpointer      data)
{
  mend_turn_succeed (turn);
}

typedef struct
{
  MendClock *clock;
  MendChat  *chat;
  GPtrArray *started;      /* the prompts, in the order their turns started */
  guint      depth;        /* turn-finished handlers running, nested */
  guint      max_depth;
  guint      finished;
  gboolean   acted;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, NULL);
  f->started = g_ptr_array_new_with_free_func (g_free);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  mend_chat_close (f->chat);
  g_assert_finalize_object (f->chat);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (f->clock);
  g_ptr_array_unref (f->started);
}

static const char *
started_at (Fixture *f,
            guint    i)
{
  g_assert_cmpuint (i, <, f->started->len);
  return g_ptr_array_index (f->started, i);
}

/* The first turn runs by hand, and keeps the chat busy while the queue
 * fills with @n messages. */
static MendTurn *
busy_with_queue (Fixture *f,
                 guint    n)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  g_assert_true (mend_chat_submit (f->chat, "First", NULL, NULL));
  mend_queue_set_max_items (queue, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *text = g_strdup_printf ("Message %u", i);

      g_assert_true (mend_chat_submit (f->chat, text, NULL, NULL));
    }
  g_assert_cmpuint (mend_queue_get_length (queue), ==, n);
  return mend_chat_get_turn (f->chat);
}

/* Removes the Continue a failure put at the head, as an app that skips
 * to the next message does. */
static void
drop_continue (MendChat *chat)
{
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autoptr(MendQueueItem) head = NULL;

  if (mend_queue_get_length (queue) == 0)
    return;
  head = g_list_model_get_item (G_LIST_MODEL (queue), 0);
  if (g_strcmp0 (mend_queue_item_get_text (head), mend_chat_get_continue_prompt (chat)) == 0)
    g_assert_true (mend_queue_remove (queue, mend_queue_item_get_id (head), NULL));
}

/* turn-started: "First" by hand; each queued message stopped as it
 * starts (an app's Stop that came in as the turn began). */
static void
on_started_stop_messages (MendChat *chat,
                          MendTurn *turn,
                          Fixture  *f)
{
  g_ptr_array_add (f->started, g_strdup (mend_turn_get_prompt (turn)));
  if (g_str_has_prefix (mend_turn_get_prompt (turn), "Message"))
    mend_chat_stop (chat);
  else
    mend_test_run_by_hand (turn);
}

static void
on_finished_send_next (MendChat *chat,
                       MendTurn *turn,
                       Fixture  *f)
{
  f->finished++;
  f->depth++;
  f->max_depth = MAX (f->max_depth, f->depth);
  drop_continue (chat);
  mend_chat_send_next (chat);
  f->depth--;
}

/* "A queue of turns that end as they start never nests": a turn stopped
 * in turn-started ended as it started too, and the send_next () of its
 * turn-finished handler must not start the next a frame deeper. */
static void
test_stopped_as_they_start_do_not_nest (Fixture       *f,
                                        gconstpointer  data)
{
  MendTurn *first;

  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_stop_messages), f);
  first = busy_with_queue (f, 50);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished_send_next), f);
  mend_turn_stop (first);

  g_assert_cmpuint (f->finished, ==, 51);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 0);
  /* The first send, from outside any start, runs at once: one level. */
  g_assert_cmpuint (f->max_depth, <=, 2);
}

/* turn-started: "Message 0" fails inside its start, every other turn
 * runs by hand. */
static void
on_started_message_0_fails (MendChat *chat,
                            MendTurn *turn,
                            Fixture  *f)
{
  g_ptr_array_add (f->started, g_strdup (mend_turn_get_prompt (turn)));
  if (g_strcmp0 (mend_turn_get_prompt (turn), "Message 0") == 0)
    g_signal_connect (turn, "attempt", G_CALLBACK (fail_at_once), NULL);
  else
    mend_test_run_by_hand (turn);
}

/* On the end of "Message 0": Send (the head, "Message 1"), then a new
 * message typed at once. */
static void
on_finished_send_then_submit (MendChat *chat,
                              MendTurn *turn,
                              Fixture  *f)
{
  if (mend_turn_get_state (turn) != MEND_TURN_FAILED)
    return;
  drop_continue (chat);
  g_assert_true (mend_chat_send_next (chat));
  if (g_strcmp0 (mend_turn_get_prompt (turn), "Message 0") == 0)
    g_assert_true (mend_chat_submit (chat, "Late", NULL, NULL));
}

/* send_next () said the head starts; a message submitted after it must
 * queue behind it, as it would had the head started at once. */
static void
test_deferred_send_then_submit_keeps_the_order (Fixture       *f,
                                                gconstpointer  data)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (BAD_REQUEST);
  MendTurn *first;
  g_autoptr(MendQueueItem) head = NULL;

  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_message_0_fails), f);
  first = busy_with_queue (f, 2);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished_send_then_submit), f);
  mend_turn_fail (first, failure);

  /* First, Message 0 (failed at once), then the head sent: Message 1. */
  g_assert_cmpstr (started_at (f, 1), ==, "Message 0");
  g_assert_cmpstr (started_at (f, 2), ==, "Message 1");
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "Message 1");
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 1);
  head = g_list_model_get_item (G_LIST_MODEL (mend_chat_get_queue (f->chat)), 0);
  g_assert_cmpstr (mend_queue_item_get_text (head), ==, "Late");
}

/* On the end of "Message 0": Send, then Stop. */
static void
on_finished_send_then_stop (MendChat *chat,
                            MendTurn *turn,
                            Fixture  *f)
{
  if (mend_turn_get_state (turn) != MEND_TURN_FAILED)
    return;
  drop_continue (chat);
  g_assert_true (mend_chat_send_next (chat));
  if (g_strcmp0 (mend_turn_get_prompt (turn), "Message 0") == 0)
    mend_chat_stop (chat);
}

/* The user's Stop "ends the running turn at once": pressed after a Send
 * that said its turn starts, nothing runs after it. */
static void
test_deferred_send_then_stop_runs_nothing (Fixture       *f,
                                           gconstpointer  data)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (BAD_REQUEST);
  MendTurn *first;

  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_message_0_fails), f);
  first = busy_with_queue (f, 2);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished_send_then_stop), f);
  mend_turn_fail (first, failure);

  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), !=, MEND_LIFECYCLE_BUSY);
}

/* turn-started: every queued message answers inside its start, some
 * failing, some succeeding; the handlers of the end move the queue on. */
static void
on_started_at_once (MendChat *chat,
                    MendTurn *turn,
                    Fixture  *f)
{
  const char *prompt = mend_turn_get_prompt (turn);
  guint n;

  g_ptr_array_add (f->started, g_strdup (prompt));
  if (!g_str_has_prefix (prompt, "Message "))
    {
      mend_test_run_by_hand (turn);
      return;
    }
  n = (guint) g_ascii_strtoull (prompt + strlen ("Message "), NULL, 10);
  g_signal_connect (turn, "attempt", G_CALLBACK (n % 3 == 0 ? fail_at_once : succeed_at_once), NULL);
}

static void
on_finished_skip_failures (MendChat *chat,
                           MendTurn *turn,
                           Fixture  *f)
{
  f->finished++;
  f->depth++;
  f->max_depth = MAX (f->max_depth, f->depth);
  if (mend_turn_get_state (turn) == MEND_TURN_FAILED)
    {
      drop_continue (chat);
      mend_chat_send_next (chat);
    }
  f->depth--;
}

/* Held: a queue of turns that succeed or fail inside send_async (),
 * mixed, runs every message once, in order, nesting no deeper than the
 * first send from a handler outside any start, and leaves
 * the chat ready or in error, never busy. */
static void
test_mixed_answers_at_once (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (BAD_REQUEST);
  MendTurn *first;

  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_at_once), f);
  first = busy_with_queue (f, 30);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished_skip_failures), f);
  mend_turn_fail (first, failure);

  g_assert_cmpuint (f->started->len, ==, 31);
  for (guint i = 0; i < 30; i++)
    {
      g_autofree char *text = g_strdup_printf ("Message %u", i);

      g_assert_cmpstr (started_at (f, i + 1), ==, text);
    }
  g_assert_cmpuint (f->max_depth, <=, 2);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), !=, MEND_LIFECYCLE_BUSY);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 0);
}

/* On the end of "Message 0": Send, then drop the app's last reference
 * to the chat (a window closed by the handler). */
static void
on_finished_send_then_unref (MendChat *chat,
                             MendTurn *turn,
                             Fixture  *f)
{
  if (mend_turn_get_state (turn) != MEND_TURN_FAILED || f->acted)
    return;
  f->acted = TRUE;
  drop_continue (chat);
  g_assert_true (mend_chat_send_next (chat));
  mend_chat_close (chat);
  g_object_unref (chat);
}

/* Held: the chat stays alive through its drain, and closed, starts
 * nothing more. */
static void
test_deferred_send_then_unref (void)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (BAD_REQUEST);
  Fixture f = { 0 };
  MendTurn *first;

  f.clock = mend_manual_clock_new (WALL_START);
  f.chat = g_object_new (MEND_TYPE_CHAT, "clock", f.clock, NULL);
  f.started = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f.chat, "turn-started", G_CALLBACK (on_started_message_0_fails), &f);
  first = g_object_ref (busy_with_queue (&f, 2));
  g_signal_connect (f.chat, "turn-finished", G_CALLBACK (on_finished_send_then_unref), &f);
  g_object_add_weak_pointer (G_OBJECT (f.chat), (gpointer *) &f.chat);
  mend_turn_fail (first, failure);

  g_assert_null (f.chat);
  g_assert_cmpuint (f.started->len, ==, 2);
  g_assert_finalize_object (first);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (f.clock);
  g_ptr_array_unref (f.started);
}

/* The thread rule's deferred work */

static gpointer
unref_on_worker (gpointer data)
{
  g_object_unref (data);
  return NULL;
}

static void
note_thread (MendTurn   *turn,
             GParamSpec *pspec,
             GThread   **thread)
{
  *thread = g_thread_self ();
}

/* A chat dropped on a worker while its turn waits for a retry, the main
 * thread not in its loop at that moment (it joins the worker): the turn
 * must be stopped from the chat's thread, where the app's handlers of
 * the turn expect to run (a GTK app's), never on the worker. */
static void
chat_dropped_on_worker_while_waiting_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  GThread *stopped_on = NULL;
  GThread *worker;
  MendTurn *turn;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  mend_test_run_turns_by_hand (chat);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  turn = g_object_ref (mend_chat_get_turn (chat));
  mend_turn_fail (turn, failure);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_signal_connect (turn, "notify::state", G_CALLBACK (note_thread), &stopped_on);

  worker = g_thread_new ("dropper", unref_on_worker, chat);
  g_thread_join (worker);
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_assert_true (stopped_on == g_thread_self ());
  /* The retry's wait went with it: the clock holds nothing more. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_assert_finalize_object (turn);
  g_assert_finalize_object (clock);
}

static void
test_chat_dropped_on_worker_while_waiting (void)
{
  if (g_test_subprocess ())
    {
      chat_dropped_on_worker_while_waiting_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

typedef struct
{
  gboolean done;
  gboolean worked;
  GThread *stopped_on;
} OwnContext;

/* A worker with a main context of its own, pushed as its thread-default
 * while it makes and uses a chat; the main thread runs the global
 * default context meanwhile. */
static gpointer
chat_on_own_context (gpointer data)
{
  OwnContext *own = data;
  GMainContext *context = g_main_context_new ();
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  MendClock *clock;
  MendChat *chat;
  MendTurn *turn;

  g_main_context_push_thread_default (context);
  clock = mend_manual_clock_new (WALL_START);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  mend_test_run_turns_by_hand (chat);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  turn = g_object_ref (mend_chat_get_turn (chat));
  mend_turn_fail (turn, failure);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (clock));
  while (g_main_context_iteration (context, FALSE))
    ;
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  mend_turn_succeed (turn);
  own->worked = mend_chat_get_lifecycle (chat) == MEND_LIFECYCLE_READY;

  /* And a waiting turn, its chat dropped on the worker: stopped there. */
  g_clear_object (&turn);
  g_assert_true (mend_chat_submit (chat, "Again", NULL, NULL));
  turn = g_object_ref (mend_chat_get_turn (chat));
  mend_turn_fail (turn, failure);
  g_signal_connect (turn, "notify::state", G_CALLBACK (note_thread), &own->stopped_on);
  g_object_unref (chat);
  while (g_main_context_iteration (context, FALSE))
    ;
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_assert_finalize_object (turn);
  g_assert_finalize_object (clock);

  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  g_atomic_int_set (&own->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

/* Held: the thread rule admits the worker on its own context. */
static void
own_context_on_a_worker_child (void)
{
  OwnContext own = { 0 };
  GThread *worker;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  worker = g_thread_new ("own-context", chat_on_own_context, &own);
  while (!g_atomic_int_get (&own.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (worker);
  g_assert_true (own.worked);
  g_assert_true (own.stopped_on == worker);
}

static void
test_own_context_on_a_worker (void)
{
  if (g_test_subprocess ())
    {
      own_context_on_a_worker_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/Mend/AttackDeferred/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("stopped-as-they-start-do-not-nest", test_stopped_as_they_start_do_not_nest);
  ADD ("send-then-submit-keeps-the-order", test_deferred_send_then_submit_keeps_the_order);
  ADD ("send-then-stop-runs-nothing", test_deferred_send_then_stop_runs_nothing);
  ADD ("mixed-answers-at-once", test_mixed_answers_at_once);
#undef ADD
  g_test_add_func ("/Mend/AttackDeferred/send-then-unref", test_deferred_send_then_unref);
  g_test_add_func ("/Mend/AttackDeferred/threads/chat-dropped-on-a-worker-while-waiting",
                   test_chat_dropped_on_worker_while_waiting);
  g_test_add_func ("/Mend/AttackDeferred/threads/own-context-on-a-worker", test_own_context_on_a_worker);

  return g_test_run ();
}
