/* test-attack-threads.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the thread rule and on the "no silent hang" rule: the last
 * reference of a chat or a stream observer dropped on another thread (as
 * GTask does when a task finishes on a worker), two threads admitted at
 * once, and a turn-finished handler that moves the queue while every turn
 * fails at once. All in virtual time; every object is finalized.
 */

#include <pthread.h>

#include <libmend.h>

#include "mend-test-gate.h"

#include "mend-test-utils.h"

#define WALL_START 1764500000000000

static gpointer
unref_on_worker (gpointer data)
{
  g_object_unref (data);
  return NULL;
}

/* Drops @object's reference on a thread of its own, then lets the main
 * context run whatever that deferred to the object's thread. */
static void
drop_on_another_thread (gpointer object)
{
  GThread *thread = g_thread_new ("dropper", unref_on_worker, object);

  g_thread_join (thread);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* An observer whose last reference goes on a worker still stops reading
 * for its chat: the next turn with nothing to run it fails at once. */
static void
observer_dropped_on_worker_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendStreamObserver *observer = mend_stream_observer_new (chat);

  g_log_set_always_fatal (G_LOG_FATAL_MASK);

  drop_on_another_thread (observer);

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  /* No reader, no sender, no handler: nothing would ever end it. */
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_ERROR);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_observer_dropped_on_worker (void)
{
  if (g_test_subprocess ())
    {
      observer_dropped_on_worker_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

/* A chat whose last reference goes on a worker stops its turn, as a
 * chat dropped on its own thread does: the app holding the turn sees it
 * end. */
static void
chat_dropped_on_worker_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendTurn *turn;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  mend_test_run_turns_by_hand (chat);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  turn = g_object_ref (mend_chat_get_turn (chat));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);

  drop_on_another_thread (chat);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_assert_finalize_object (turn);
  g_assert_finalize_object (clock);
}

static void
test_chat_dropped_on_worker (void)
{
  if (g_test_subprocess ())
    {
      chat_dropped_on_worker_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

typedef struct
{
  GMutex    lock;
  GCond     cond;
  int       step;
  MendChat *chat;
  gboolean  maker_admitted;
} TwoThreads;

static void
wait_for_step (TwoThreads *two,
               int         step)
{
  g_mutex_lock (&two->lock);
  while (two->step < step)
    g_cond_wait (&two->cond, &two->lock);
  g_mutex_unlock (&two->lock);
}

static void
go_to_step (TwoThreads *two,
            int         step)
{
  g_mutex_lock (&two->lock);
  two->step = step;
  g_cond_broadcast (&two->cond);
  g_mutex_unlock (&two->lock);
}

/* The maker: a worker with no thread-default context, so its chat is
 * made for the global default context, which the main thread runs. */
static gpointer
make_and_keep_using (gpointer data)
{
  TwoThreads *two = data;

  two->chat = g_object_new (MEND_TYPE_CHAT, NULL);
  go_to_step (two, 1);
  wait_for_step (two, 2);
  /* The main thread runs the chat's context now: its waits, timers and
   * senders' callbacks are dispatched there. */
  two->maker_admitted = mend_chat_get_queue (two->chat) != NULL;
  go_to_step (two, 3);
  return NULL;
}

/* "A libmend object lives on one thread": while the thread that runs the
 * chat's context is admitted, the maker must not be too, or both touch
 * the chat at once. */
static void
two_threads_admitted_child (void)
{
  TwoThreads two = { 0 };
  GThread *thread;
  gboolean main_admitted;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  g_mutex_init (&two.lock);
  g_cond_init (&two.cond);

  thread = g_thread_new ("maker", make_and_keep_using, &two);
  wait_for_step (&two, 1);
  g_assert_true (g_main_context_acquire (g_main_context_default ()));
  main_admitted = mend_chat_get_queue (two.chat) != NULL;
  go_to_step (&two, 2);
  wait_for_step (&two, 3);
  g_thread_join (thread);

  g_assert_true (main_admitted);
  g_assert_false (two.maker_admitted);

  mend_chat_close (two.chat);
  g_main_context_release (g_main_context_default ());
  g_assert_finalize_object (two.chat);
  g_mutex_clear (&two.lock);
  g_cond_clear (&two.cond);
}

static void
test_two_threads_admitted (void)
{
  if (g_test_subprocess ())
    {
      two_threads_admitted_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* An app that, when a turn fails, drops the Continue and moves to the
 * next message: with no sender every turn fails inside the
 * mend_chat_send_next () that started it. */
static void
skip_to_next (MendChat *chat,
              MendTurn *turn,
              guint    *finished)
{
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autoptr(MendQueueItem) head = NULL;

  (*finished)++;
  if (mend_turn_get_state (turn) != MEND_TURN_FAILED || mend_queue_get_length (queue) == 0)
    return;

  head = g_list_model_get_item (G_LIST_MODEL (queue), 0);
  if (g_strcmp0 (mend_queue_item_get_text (head), mend_chat_get_continue_prompt (chat)) == 0)
    g_assert_true (mend_queue_remove (queue, mend_queue_item_get_id (head), NULL));
  mend_chat_send_next (chat);
}

#define MANY 1000

static gpointer
queue_failing_at_once (gpointer data)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendQueue *queue = mend_chat_get_queue (chat);
  guint finished = 0;

  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*Nothing runs this turn*");

  /* The first turn runs by hand and holds the chat busy while the queue fills. */
  g_signal_connect (chat, "turn-started", G_CALLBACK (mend_test_on_turn_started_by_hand), NULL);
  g_assert_true (mend_chat_submit (chat, "First", NULL, NULL));
  g_signal_handlers_disconnect_by_func (chat, mend_test_on_turn_started_by_hand, NULL);

  mend_queue_set_max_items (queue, MANY);
  for (guint i = 0; i < MANY; i++)
    {
      g_autofree char *text = g_strdup_printf ("Message %u", i);

      g_assert_true (mend_chat_submit (chat, text, NULL, NULL));
    }
  g_assert_cmpuint (mend_queue_get_length (queue), ==, MANY);

  g_signal_connect (chat, "turn-finished", G_CALLBACK (skip_to_next), &finished);
  {
    g_autoptr(MendFailure) refused = mend_failure_new_from_text ("API Error: 400 bad request");

    mend_turn_fail (mend_chat_get_turn (chat), refused);
  }
  g_test_assert_expected_messages ();

  g_assert_cmpuint (finished, ==, MANY + 1);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  return NULL;
}

/* On a thread with a 1 MiB stack, as many thread pools give: each turn
 * that fails inside the mend_chat_send_next () of the one before must not
 * nest a frame deeper, as advance_queue () promises for successes. */
static void
test_queue_failing_at_once_does_not_recurse (void)
{
  pthread_attr_t attr;
  pthread_t thread;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      return;
    }

  g_assert_cmpint (pthread_attr_init (&attr), ==, 0);
  g_assert_cmpint (pthread_attr_setstacksize (&attr, 1024 * 1024), ==, 0);
  g_assert_cmpint (pthread_create (&thread, &attr, queue_failing_at_once, NULL), ==, 0);
  g_assert_cmpint (pthread_join (thread, NULL), ==, 0);
  pthread_attr_destroy (&attr);
}

/* Gates of an origin asked for from many threads at once */

#define N_GATE_WORKERS 8
#define N_GATE_ORIGINS 4

typedef struct
{
  GMutex    lock;
  GCond     cond;
  guint     waiting;
  MendGate *gates[N_GATE_WORKERS][N_GATE_ORIGINS];
} GateRace;

static char *
gate_uri (guint origin,
          guint variant)
{
  /* The same origin behind other paths and queries. */
  return g_strdup_printf ("https://gate-race-%u.example/v%u/messages?try=%u", origin, variant % 3, variant);
}

typedef struct
{
  GateRace *race;
  guint     index;
} GateWorker;

static gpointer
worker_races_for_gates (gpointer data)
{
  GateWorker *w = data;
  GMainContext *context = g_main_context_new ();

  g_main_context_push_thread_default (context);
  /* All ask at once. */
  g_mutex_lock (&w->race->lock);
  if (++w->race->waiting == N_GATE_WORKERS)
    g_cond_broadcast (&w->race->cond);
  while (w->race->waiting < N_GATE_WORKERS)
    g_cond_wait (&w->race->cond, &w->race->lock);
  g_mutex_unlock (&w->race->lock);

  for (guint i = 0; i < 500; i++)
    for (guint o = 0; o < N_GATE_ORIGINS; o++)
      {
        g_autofree char *uri = gate_uri (o, i);
        MendGate *gate = mend_gate_get_for_uri (uri);

        /* Held: its context goes at the end of the thread. */
        if (w->race->gates[w->index][o] == NULL)
          w->race->gates[w->index][o] = g_object_ref (gate);
        g_assert_true (gate == w->race->gates[w->index][o]);
      }
  /* Each is this thread's: used here without a critical. */
  for (guint o = 0; o < N_GATE_ORIGINS; o++)
    {
      g_assert_cmpint (mend_gate_get_state (w->race->gates[w->index][o]), ==, MEND_GATE_CLOSED);
      mend_gate_set_failure_threshold (w->race->gates[w->index][o], 3 + w->index);
    }
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return NULL;
}

static void
test_gates_for_uri_from_many_threads (void)
{
  GateRace race = { 0 };
  GateWorker workers[N_GATE_WORKERS];
  GThread *threads[N_GATE_WORKERS];

  g_mutex_init (&race.lock);
  g_cond_init (&race.cond);
  for (guint t = 0; t < N_GATE_WORKERS; t++)
    {
      workers[t] = (GateWorker) { &race, t };
      threads[t] = g_thread_new ("gate-race", worker_races_for_gates, &workers[t]);
    }
  for (guint t = 0; t < N_GATE_WORKERS; t++)
    g_thread_join (threads[t]);

  /* One gate per origin and thread, none shared, none the main thread's. */
  for (guint o = 0; o < N_GATE_ORIGINS; o++)
    {
      g_autofree char *uri = gate_uri (o, 0);
      MendGate *ours = mend_gate_get_for_uri (uri);

      g_assert_cmpint (mend_gate_get_state (ours), ==, MEND_GATE_CLOSED);
      g_assert_cmpuint (mend_gate_get_failure_threshold (ours), ==, 5);
      for (guint t = 0; t < N_GATE_WORKERS; t++)
        {
          g_assert_true (race.gates[t][o] != ours);
          for (guint u = t + 1; u < N_GATE_WORKERS; u++)
            g_assert_true (race.gates[t][o] != race.gates[u][o]);
          for (guint p = o + 1; p < N_GATE_ORIGINS; p++)
            g_assert_true (race.gates[t][o] != race.gates[t][p]);
        }
    }
  /* Their contexts are gone: no thread's now, let go anywhere. */
  for (guint t = 0; t < N_GATE_WORKERS; t++)
    for (guint o = 0; o < N_GATE_ORIGINS; o++)
      {
        g_assert_cmpuint (mend_gate_get_failure_threshold (race.gates[t][o]), ==, 3 + t);
        g_assert_finalize_object (race.gates[t][o]);
      }
  g_mutex_clear (&race.lock);
  g_cond_clear (&race.cond);
}

/* A context another thread runs after the one that asked: the gate of
 * that context is the same, and now that thread's to use. A thread with
 * no context of its own gets the default context's gate, the main
 * thread's. */
typedef struct
{
  GMainContext *context;
  const char   *uri;
  MendGate     *gate;
} GateHandOver;

static gpointer
worker_asks_in_context (gpointer data)
{
  GateHandOver *h = data;

  g_main_context_push_thread_default (h->context);
  h->gate = mend_gate_get_for_uri (h->uri);
  g_assert_cmpint (mend_gate_get_state (h->gate), ==, MEND_GATE_CLOSED);
  g_main_context_pop_thread_default (h->context);
  return NULL;
}

static gpointer
worker_asks_without_context (gpointer data)
{
  return mend_gate_get_for_uri (data);
}

static void
test_gate_follows_its_context (void)
{
  const char *uri = "https://gate-hand-over.example/v1/messages";
  GateHandOver first = { g_main_context_new (), uri, NULL };
  GateHandOver second = { first.context, uri, NULL };

  g_thread_join (g_thread_new ("gate-first", worker_asks_in_context, &first));
  g_thread_join (g_thread_new ("gate-second", worker_asks_in_context, &second));
  g_assert_nonnull (first.gate);
  g_assert_true (second.gate == first.gate);
  g_assert_true (mend_gate_get_for_uri (uri) != first.gate);
  g_main_context_unref (first.context);

  g_assert_true (g_thread_join (g_thread_new ("gate-none", worker_asks_without_context, (gpointer) uri)) ==
                 mend_gate_get_for_uri (uri));
}

/* A thread that makes a main context for each task and asks for gates
 * in it: each context goes, with its file descriptor and its gates, when
 * the thread lets it go. A gate the thread held on to stays usable. */
static guint
count_open_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

typedef struct
{
  GWeakRef  made[2];
  gboolean  hold;
  MendGate *held;
} GateTask;

static gpointer
worker_task_with_context (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  GateTask *task = data;
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = mend_gate_get_for_uri ("https://per-task.example/v1/messages");
  g_assert_true (mend_gate_get_for_uri ("HTTPS://PER-TASK.example:443/v1/chat") == gate);
  mend_gate_set_failure_threshold (gate, 7);
  g_weak_ref_set (&task->made[0], gate);
  g_weak_ref_set (&task->made[1], mend_gate_get_for_uri ("https://other.example/"));
  if (task->hold)
    task->held = g_object_ref (gate);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return NULL;
}

static void
run_gate_task (GateTask *task)
{
  g_weak_ref_init (&task->made[0], NULL);
  g_weak_ref_init (&task->made[1], NULL);
  g_thread_join (g_thread_new ("gate-task", worker_task_with_context, task));
}

static gpointer
worker_reads_threshold (gpointer data)
{
  return GUINT_TO_POINTER (mend_gate_get_failure_threshold (data));
}

static void
test_gates_go_with_their_context (void)
{
  guint before = 0;

  for (guint i = 0; i < 201; i++)
    {
      GateTask task = { 0 };

      run_gate_task (&task);
      /* The first one settles what is made once. */
      if (i == 0)
        before = count_open_fds ();
      /* Nobody held them: gone with the context. */
      g_assert_null (g_weak_ref_get (&task.made[0]));
      g_assert_null (g_weak_ref_get (&task.made[1]));
      g_weak_ref_clear (&task.made[0]);
      g_weak_ref_clear (&task.made[1]);
    }
  g_assert_cmpuint (count_open_fds (), <=, before);

  /* One held past its context: no thread's, so used and let go here
   * without a critical; the other went. */
  {
    GateTask task = { .hold = TRUE };

    run_gate_task (&task);
    g_assert_null (g_weak_ref_get (&task.made[1]));
    g_assert_cmpuint (mend_gate_get_failure_threshold (task.held), ==, 7);
    g_assert_cmpint (mend_gate_get_state (task.held), ==, MEND_GATE_CLOSED);
    /* This thread took it: another is refused, as with any gate. */
    g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*belongs to another thread*");
    g_assert_null (g_thread_join (g_thread_new ("gate-other", worker_reads_threshold, task.held)));
    g_test_assert_expected_messages ();
    g_weak_ref_clear (&task.made[0]);
    g_weak_ref_clear (&task.made[1]);
    g_assert_finalize_object (task.held);
  }
}

/* A gate held past its context joins a chat on the main thread, which
 * fails and succeeds through it: no critical, nothing read after free. */
static gpointer
worker_holds_a_gate (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = mend_gate_get_for_uri ("https://held.example/v1/messages");
  mend_gate_set_failure_threshold (gate, 1);
  g_object_ref (gate);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return gate;
}

static void
test_gate_held_past_its_context_runs_turns (void)
{
  MendGate *gate = g_thread_join (g_thread_new ("holder", worker_holds_a_gate, NULL));
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "gate", gate, NULL);
  MendChat *other = g_object_new (MEND_TYPE_CHAT, "clock", clock, "gate", gate, NULL);

  mend_test_run_turns_by_hand (chat);
  mend_test_run_turns_by_hand (other);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_http (503, NULL, NULL);
      MendTurn *turn;

      g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
      g_assert_true (mend_chat_submit (other, "Fix the tests", NULL, NULL));
      turn = mend_chat_get_turn (chat);
      if (turn != NULL && mend_turn_get_state (turn) == MEND_TURN_RUNNING)
        mend_turn_fail (turn, failure);
      turn = mend_chat_get_turn (other);
      if (turn != NULL && mend_turn_get_state (turn) == MEND_TURN_RUNNING)
        mend_turn_succeed (turn);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 60 * G_USEC_PER_SEC);
      while (g_main_context_iteration (NULL, FALSE))
        ;
      mend_chat_stop (chat);
      mend_chat_stop (other);
    }
  mend_gate_set_failure_threshold (gate, 4);
  mend_chat_close (chat);
  mend_chat_close (other);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (other);
  g_assert_finalize_object (gate);
  g_assert_finalize_object (clock);
}

/* A chat made on a worker's context with the context's gate: the worker
 * lets its context go while the chat runs a turn, then the chat; the
 * context goes with the chat, and the gate with the context. */
static gpointer
worker_chat_outlives_its_context_ref (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  GWeakRef *weak = data;
  MendClock *clock;
  MendChat *chat;

  g_main_context_push_thread_default (context);
  clock = mend_manual_clock_new (WALL_START);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "gate", mend_gate_get_for_uri ("https://chat.example/"),
                       NULL);
  mend_test_run_turns_by_hand (chat);
  g_weak_ref_set (weak, mend_chat_get_gate (chat));
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);

  /* Still its thread's, through the chat. */
  g_assert_cmpint (mend_turn_get_state (mend_chat_get_turn (chat)), ==, MEND_TURN_RUNNING);
  g_object_unref (chat);
  g_object_unref (clock);
  return NULL;
}

static void
test_chat_outlives_its_context_ref (void)
{
  GWeakRef weak;

  g_weak_ref_init (&weak, NULL);
  g_thread_join (g_thread_new ("chat", worker_chat_outlives_its_context_ref, &weak));
  g_assert_null (g_weak_ref_get (&weak));
  g_weak_ref_clear (&weak);
}

/* Threads that make and drop contexts while others ask for gates of the
 * default context and of their own, and hand held gates over once their
 * context is gone: every gate is used where it is handed, then let go. */
#define N_CHURN_THREADS 4

static gboolean
unref_context (gpointer context)
{
  g_main_context_unref (context);
  return G_SOURCE_REMOVE;
}

#define N_CHURN_ROUNDS 300

static gpointer
worker_churns_contexts (gpointer data)
{
  GAsyncQueue *handed = data;

  for (guint i = 0; i < N_CHURN_ROUNDS; i++)
    {
      GMainContext *context = g_main_context_new ();
      g_autofree char *uri = g_strdup_printf ("https://churn%u.example/", i % 7);
      MendGate *gate;

      g_main_context_push_thread_default (context);
      gate = mend_gate_get_for_uri (uri);
      g_assert_true (mend_gate_get_for_uri ("https://other.example/") != gate);
      if (i % 3 == 0)
        g_object_ref (gate);
      else
        gate = NULL;
      g_main_context_pop_thread_default (context);
      /* Sometimes dropped from inside one of its own dispatches. */
      if (i % 5 == 0)
        {
          GSource *idle = g_idle_source_new ();

          g_source_set_callback (idle, unref_context, context, NULL);
          g_source_attach (idle, context);
          g_source_unref (idle);
          g_main_context_ref (context);
          g_main_context_iteration (context, FALSE);
          g_main_context_unref (context);
        }
      else
        g_main_context_unref (context);
      (void) mend_gate_get_for_uri ("https://default.example/");
      if (gate != NULL)
        g_async_queue_push (handed, gate);
    }
  return NULL;
}

static void
test_contexts_churn_while_gates_are_asked_for (void)
{
  g_autoptr(GAsyncQueue) handed = g_async_queue_new ();
  GThread *threads[N_CHURN_THREADS];
  guint n = 0;

  for (guint t = 0; t < N_CHURN_THREADS; t++)
    threads[t] = g_thread_new ("churn", worker_churns_contexts, handed);
  while (n < N_CHURN_THREADS * N_CHURN_ROUNDS / 3)
    {
      MendGate *gate = g_async_queue_pop (handed);

      mend_gate_set_failure_threshold (gate, 9);
      g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_CLOSED);
      g_object_unref (gate);
      n++;
    }
  for (guint t = 0; t < N_CHURN_THREADS; t++)
    g_thread_join (threads[t]);
}

/* GLib finalizes a context's sources after it frees the context, so a
 * context made meanwhile (on any thread) may have its address: here in a
 * source of the dying context's own finalize. The new context's gates are
 * its own, not the dead one's, and it keeps them. */
typedef struct
{
  guintptr      dead;
  GMainContext *reborn;
  MendGate     *gate;
} Reborn;

static Reborn reborn;

static void
reborn_finalize (GSource *source)
{
  GMainContext *made[16] = { NULL };

  /* Whichever of a few takes the dead one's address, if any does. */
  for (guint i = 0; i < G_N_ELEMENTS (made) && reborn.reborn == NULL; i++)
    {
      made[i] = g_main_context_new ();
      if ((guintptr) made[i] == reborn.dead || i == G_N_ELEMENTS (made) - 1)
        reborn.reborn = g_steal_pointer (&made[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (made); i++)
    g_clear_pointer (&made[i], g_main_context_unref);
  g_main_context_push_thread_default (reborn.reborn);
  reborn.gate = g_object_ref (mend_gate_get_for_uri ("https://reborn.example/v1"));
  g_assert_cmpint (mend_gate_get_state (reborn.gate), ==, MEND_GATE_CLOSED);
  g_main_context_pop_thread_default (reborn.reborn);
}

static GSourceFuncs reborn_funcs = {
  .finalize = reborn_finalize,
};

static void
test_context_at_a_dead_ones_address_has_its_own_gates (void)
{
  GMainContext *context = g_main_context_new ();
  GSource *late;
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = mend_gate_get_for_uri ("https://reborn.example/v1");
  g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_CLOSED);
  g_main_context_pop_thread_default (context);
  /* Attached after the gates' own source, so finalized before it. */
  late = g_source_new (&reborn_funcs, sizeof (GSource));
  g_source_attach (late, context);
  g_source_unref (late);
  reborn.dead = (guintptr) context;
  g_main_context_unref (context);

  g_assert_nonnull (reborn.gate);
  g_main_context_push_thread_default (reborn.reborn);
  g_assert_true (mend_gate_get_for_uri ("https://reborn.example/v1") == reborn.gate);
  g_assert_cmpint (mend_gate_get_state (reborn.gate), ==, MEND_GATE_CLOSED);
  g_main_context_pop_thread_default (reborn.reborn);
  g_object_unref (reborn.gate);
  g_main_context_unref (reborn.reborn);
  if ((guintptr) reborn.reborn != reborn.dead)
    g_test_message ("the new context had another address: the window was not met");
}

/* The network monitor signals on its own thread (here, the main one):
 * a worker's gate hears of it on the worker's thread, from its context,
 * and nothing of the gate runs on the monitor's. */
typedef struct
{
  GMutex               lock;
  GCond                cond;
  MendTestFakeMonitor *monitor;
  gboolean             ready;
  gboolean             changed;
  GThread             *notified_on;
  MendGateState        state;
  gboolean             own_gate;  /* mend_gate_new (), not get_for_uri () */
  GWeakRef             gate;
  MendGate            *held;      /* one held past its context, given over */
} NetworkNews;

static void
on_state_notify (GObject    *gate,
                 GParamSpec *pspec,
                 gpointer    data)
{
  NetworkNews *news = data;

  news->notified_on = g_thread_self ();
}

/* The worker's side: ready, then waits for the monitor's change. */
static void
news_ready_then_wait (NetworkNews *news)
{
  g_mutex_lock (&news->lock);
  news->ready = TRUE;
  g_cond_broadcast (&news->cond);
  while (!news->changed)
    g_cond_wait (&news->cond, &news->lock);
  g_mutex_unlock (&news->lock);
}

/* The test's side: the worker started, and ready. */
static GThread *
news_start (NetworkNews *news,
            GThreadFunc  worker_func)
{
  GThread *worker;

  g_mutex_init (&news->lock);
  g_cond_init (&news->cond);
  worker = g_thread_new ("gate-network", worker_func, news);
  g_mutex_lock (&news->lock);
  while (!news->ready)
    g_cond_wait (&news->cond, &news->lock);
  g_mutex_unlock (&news->lock);
  return worker;
}

/* The worker told the change is made, and done. */
static void
news_finish (NetworkNews *news,
             GThread     *worker)
{
  g_mutex_lock (&news->lock);
  news->changed = TRUE;
  g_cond_broadcast (&news->cond);
  g_mutex_unlock (&news->lock);
  g_thread_join (worker);
  g_assert_finalize_object (news->monitor);
  g_mutex_clear (&news->lock);
  g_cond_clear (&news->cond);
}

/* Once @worker_func is ready, the network goes, here; nothing of the
 * gate runs on this thread, in its context either; the worker then finds
 * the gate offline, told on its own thread. */
static void
run_network_news (NetworkNews *news,
                  GThreadFunc  worker_func)
{
  GThread *worker = news_start (news, worker_func);

  mend_test_fake_monitor_set (news->monitor, FALSE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_null (news->notified_on);
  news_finish (news, worker);
  g_assert_cmpint (news->state, ==, MEND_GATE_OFFLINE);
  g_assert_true (news->notified_on == worker);
}

static gpointer
worker_hears_network (gpointer data)
{
  NetworkNews *news = data;
  GMainContext *context = g_main_context_new ();
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = mend_gate_new (NULL);
  mend_gate_set_network_monitor (gate, G_NETWORK_MONITOR (news->monitor));
  g_signal_connect (gate, "notify::state", G_CALLBACK (on_state_notify), news);

  news_ready_then_wait (news);

  while (g_main_context_iteration (context, FALSE))
    ;
  news->state = mend_gate_get_state (gate);
  g_assert_finalize_object (gate);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return NULL;
}

static void
test_network_news_reach_the_gates_thread (void)
{
  NetworkNews news = { .monitor = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL) };

  run_network_news (&news, worker_hears_network);
}

/* A gate of its own made on a worker, whose context gets network news it
 * never runs: the worker lets the gate and its context go, and both go;
 * the queued news holds neither. */
static gpointer
worker_leaves_news_unread (gpointer data)
{
  NetworkNews *news = data;
  GMainContext *context = g_main_context_new ();
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = news->own_gate ? mend_gate_new (NULL) : g_object_ref (mend_gate_get_for_uri ("https://unread.example/"));
  mend_gate_set_network_monitor (gate, G_NETWORK_MONITOR (news->monitor));
  g_weak_ref_set (&news->gate, gate);

  news_ready_then_wait (news);

  g_main_context_pop_thread_default (context);
  g_object_unref (gate);
  g_main_context_unref (context);
  return NULL;
}

static void
run_news_left_unread (gboolean own_gate)
{
  NetworkNews news = { .monitor = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL), .own_gate = own_gate };
  GThread *worker;

  g_weak_ref_init (&news.gate, NULL);
  worker = news_start (&news, worker_leaves_news_unread);
  for (guint i = 0; i < 100; i++)
    mend_test_fake_monitor_set (news.monitor, i % 2 == 0 ? FALSE : TRUE);
  news_finish (&news, worker);
  g_assert_null (g_weak_ref_get (&news.gate));
  g_weak_ref_clear (&news.gate);
}

static void
test_network_news_left_unread_hold_no_gate (void)
{
  run_news_left_unread (TRUE);
  run_news_left_unread (FALSE);
}

/* A gate held past its context hears the network on the monitor's
 * thread: that is not a use, and the thread that then uses it takes it. */
static gpointer
worker_holds_a_followed_gate (gpointer data)
{
  GMainContext *context = g_main_context_new ();
  MendGate *gate;

  g_main_context_push_thread_default (context);
  gate = g_object_ref (mend_gate_get_for_uri ("https://orphan.example/"));
  mend_gate_set_network_monitor (gate, data);
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return gate;
}

static gpointer
monitor_goes_offline (gpointer data)
{
  mend_test_fake_monitor_set (data, FALSE);
  return NULL;
}

static void
test_orphan_gate_hears_network_without_being_taken (void)
{
  MendTestFakeMonitor *monitor = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL);
  MendGate *gate = g_thread_join (g_thread_new ("holder", worker_holds_a_followed_gate, monitor));

  g_thread_join (g_thread_new ("monitor", monitor_goes_offline, monitor));
  /* This thread is the first to use it. */
  g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_OFFLINE);
  mend_test_fake_monitor_set (monitor, TRUE);
  g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_CLOSED);
  g_assert_finalize_object (gate);
  g_assert_finalize_object (monitor);
}

/* A gate held past its context, taken by a worker that runs a context
 * of its own: it is that worker's as if made there, and the network's
 * news reach it there, not on the global default context. */
static gpointer
worker_takes_an_orphan_gate (gpointer data)
{
  NetworkNews *news = data;
  GMainContext *context = g_main_context_new ();

  g_main_context_push_thread_default (context);
  g_assert_cmpint (mend_gate_get_state (news->held), ==, MEND_GATE_CLOSED);
  g_signal_connect (news->held, "notify::state", G_CALLBACK (on_state_notify), news);

  news_ready_then_wait (news);

  while (g_main_context_iteration (context, FALSE))
    ;
  news->state = mend_gate_get_state (news->held);
  g_assert_finalize_object (g_steal_pointer (&news->held));
  g_main_context_pop_thread_default (context);
  g_main_context_unref (context);
  return NULL;
}

static void
test_orphan_gate_taken_by_a_worker_hears_network_there (void)
{
  NetworkNews news = { .monitor = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL) };

  news.held = g_thread_join (g_thread_new ("holder", worker_holds_a_followed_gate, news.monitor));
  run_network_news (&news, worker_takes_an_orphan_gate);
}

/* A gate held past its context, first used by a worker with no
 * thread-default context while the main thread runs the global default
 * one: it is taken for that context, so it is the main thread's, as an
 * object the worker made would be, and the worker is refused even on
 * its first call, or both touch it at once. */
typedef struct
{
  MendGate *gate;
  gboolean  admitted;
} GateTaker;

static gpointer
worker_without_context_takes (gpointer data)
{
  GateTaker *taker = data;

  taker->admitted = mend_gate_get_network_monitor (taker->gate) != NULL;
  return NULL;
}

static void
orphan_gate_taken_for_a_context_another_runs_child (void)
{
  MendTestFakeMonitor *monitor = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL);
  GateTaker taker = { 0 };

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  taker.gate = g_thread_join (g_thread_new ("holder", worker_holds_a_followed_gate, monitor));
  g_assert_true (g_main_context_acquire (g_main_context_default ()));
  g_thread_join (g_thread_new ("taker", worker_without_context_takes, &taker));

  g_assert_false (taker.admitted);
  g_assert_true (mend_gate_get_network_monitor (taker.gate) == G_NETWORK_MONITOR (monitor));
  g_main_context_release (g_main_context_default ());
  g_assert_finalize_object (taker.gate);
  g_assert_finalize_object (monitor);
}

static void
test_orphan_gate_taken_for_a_context_another_runs (void)
{
  if (g_test_subprocess ())
    {
      orphan_gate_taken_for_a_context_another_runs_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*belongs to another thread*");
}

/* A handler of the state's notify sets the monitor to none, then to
 * another, while the gate hears the first. */
static void
on_state_swaps_monitor (GObject    *gate,
                        GParamSpec *pspec,
                        gpointer    data)
{
  GNetworkMonitor *other = data;

  if (mend_gate_get_network_monitor (MEND_GATE (gate)) == other)
    return;
  mend_gate_set_network_monitor (MEND_GATE (gate), NULL);
  mend_gate_set_network_monitor (MEND_GATE (gate), other);
}

static void
test_state_handler_swaps_the_monitor (void)
{
  MendTestFakeMonitor *first = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL);
  MendTestFakeMonitor *second = g_object_new (MEND_TEST_TYPE_FAKE_MONITOR, NULL);
  MendGate *gate = mend_gate_new (NULL);

  mend_gate_set_network_monitor (gate, G_NETWORK_MONITOR (first));
  g_signal_connect (gate, "notify::state", G_CALLBACK (on_state_swaps_monitor), second);
  mend_test_fake_monitor_set (first, FALSE);
  g_assert_true (mend_gate_get_network_monitor (gate) == G_NETWORK_MONITOR (second));
  g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_CLOSED);
  mend_test_fake_monitor_set (first, TRUE);
  mend_test_fake_monitor_set (second, FALSE);
  g_assert_cmpint (mend_gate_get_state (gate), ==, MEND_GATE_OFFLINE);
  g_assert_finalize_object (first);
  g_assert_finalize_object (gate);
  g_assert_finalize_object (second);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  /* GIO's network monitor keeps the context it was first asked for in:
   * the main thread's, as in an app, not a worker's that the gate tests
   * expect to go. */
  g_network_monitor_get_default ();

  g_test_add_func ("/Mend/AttackThreads/observer-dropped-on-a-worker-stops-reading",
                   test_observer_dropped_on_worker);
  g_test_add_func ("/Mend/AttackThreads/chat-dropped-on-a-worker-stops-its-turn",
                   test_chat_dropped_on_worker);
  g_test_add_func ("/Mend/AttackThreads/maker-and-context-runner-not-both-admitted",
                   test_two_threads_admitted);
  g_test_add_func ("/Mend/AttackThreads/queue-failing-at-once-does-not-recurse",
                   test_queue_failing_at_once_does_not_recurse);
  g_test_add_func ("/Mend/AttackThreads/gates-for-uri-from-many-threads-at-once",
                   test_gates_for_uri_from_many_threads);
  g_test_add_func ("/Mend/AttackThreads/gate-follows-its-context", test_gate_follows_its_context);
  g_test_add_func ("/Mend/AttackThreads/gates-go-with-their-context", test_gates_go_with_their_context);
  g_test_add_func ("/Mend/AttackThreads/gate-held-past-its-context-runs-turns",
                   test_gate_held_past_its_context_runs_turns);
  g_test_add_func ("/Mend/AttackThreads/chat-outlives-its-context-ref", test_chat_outlives_its_context_ref);
  g_test_add_func ("/Mend/AttackThreads/contexts-churn-while-gates-are-asked-for",
                   test_contexts_churn_while_gates_are_asked_for);
  g_test_add_func ("/Mend/AttackThreads/context-at-a-dead-ones-address-has-its-own-gates",
                   test_context_at_a_dead_ones_address_has_its_own_gates);

  g_test_add_func ("/Mend/AttackThreads/orphan-gate-taken-by-a-worker-hears-network-there",
                   test_orphan_gate_taken_by_a_worker_hears_network_there);
  g_test_add_func ("/Mend/AttackThreads/network-news-reach-the-gates-thread",
                   test_network_news_reach_the_gates_thread);
  g_test_add_func ("/Mend/AttackThreads/network-news-left-unread-hold-no-gate",
                   test_network_news_left_unread_hold_no_gate);
  g_test_add_func ("/Mend/AttackThreads/orphan-gate-hears-network-without-being-taken",
                   test_orphan_gate_hears_network_without_being_taken);
  g_test_add_func ("/Mend/AttackThreads/orphan-gate-taken-for-a-context-another-runs",
                   test_orphan_gate_taken_for_a_context_another_runs);
  g_test_add_func ("/Mend/AttackThreads/state-handler-swaps-the-monitor",
                   test_state_handler_swaps_the_monitor);

  return g_test_run ();
}
