/* test-attack-app-surface.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on what an app binds to: MendChat's Retry, its wait, failure,
 * can-retry and status text, the text-delta stream, the error policy's
 * per-reason schedules, and the model's text a stream observer takes
 * from an agent CLI's lines. Handlers call back into the chat, drop it,
 * retry from inside its own signals; the JSON is hostile. Everything runs
 * in virtual time and is finalized; run these under AddressSanitizer too.
 */

#include "mend-test-server.h"

#define WALL_START 1764500000000000

/* A chat with no sender on a manual clock; the test ends each attempt. */
typedef struct
{
  MendClock *clock;
  MendChat  *chat;
  MendTurn  *turn;          /* the last turn started (borrowed) */
  GPtrArray *started;       /* MendTurn, owned */
  GPtrArray *finished;      /* MendTurn, owned */
  guint      status_notes;
  guint      can_retry_notes;
  GString   *log;
} Fx;

static void
on_started (MendChat *chat,
            MendTurn *turn,
            Fx       *f)
{
  f->turn = turn;
  g_ptr_array_add (f->started, g_object_ref (turn));
  g_string_append_printf (f->log, "started(%s) ", mend_turn_get_prompt (turn));
}

static void
on_finished (MendChat *chat,
             MendTurn *turn,
             Fx       *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
  g_string_append_printf (f->log, "finished(%s) ", mend_turn_get_prompt (turn));
}

static void
fx_set_up (Fx            *f,
           gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->chat = mend_test_new_chat_by_hand (f->clock);
  f->started = g_ptr_array_new_with_free_func (g_object_unref);
  f->finished = g_ptr_array_new_with_free_func (g_object_unref);
  f->log = g_string_new (NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished), f);
}

static void
fx_tear_down (Fx            *f,
              gconstpointer  data)
{
  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      g_assert_finalize_object (f->chat);
    }
  g_ptr_array_unref (f->started);
  g_ptr_array_unref (f->finished);
  while (mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock)))
    ;
  g_assert_finalize_object (f->clock);
  g_string_free (f->log, TRUE);
}

static MendFailure *
http_failure (guint status)
{
  return mend_failure_new_from_http (status, NULL, NULL);
}

static void
fail_turn (MendTurn *turn,
           guint     status)
{
  g_autoptr(MendFailure) failure = http_failure (status);

  mend_turn_fail (turn, failure);
}

/* Submits @text, and fails its attempt with a refused key: a give-up. */
static MendTurn *
give_up (Fx         *f,
         const char *text)
{
  MendTurn *turn;

  mend_test_submit (f->chat, text);
  turn = f->turn;
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, text);
  fail_turn (turn, 401);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_true (mend_chat_get_can_retry (f->chat));
  return turn;
}

static void
advance (Fx     *f,
         guint64 ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), ms);
}

/* The virtual milliseconds to the clock's next wakeup, which runs. */
static gint64
next_wakeup_ms (Fx *f)
{
  gint64 before = mend_clock_get_monotonic_time (f->clock);

  if (!mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock)))
    return -1;
  return (mend_clock_get_monotonic_time (f->clock) - before) / 1000;
}

/* Retry, re-entered ------------------------------------------------------ */

/* Two Retries in a row: the second finds the first's turn running. */
static void
test_retry_twice_in_a_row (Fx            *f,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *failed_id = g_strdup (mend_turn_get_id (give_up (f, "Build it")));

  g_assert_true (mend_chat_retry (f->chat, &error));
  g_assert_no_error (error);
  g_assert_false (mend_chat_retry (f->chat, &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY);
  g_assert_cmpuint (f->started->len, ==, 2);
  g_assert_cmpstr (mend_turn_get_retry_of (f->turn), ==, failed_id);
  g_assert_false (mend_chat_get_can_retry (f->chat));

  /* The Retry gives up too: it is the one to retry now, named by it. */
  {
    g_autofree char *second_id = g_strdup (mend_turn_get_id (f->turn));

    fail_turn (f->turn, 401);
    g_assert_true (mend_chat_get_can_retry (f->chat));
    g_assert_true (mend_chat_retry (f->chat, NULL));
    g_assert_cmpstr (mend_turn_get_retry_of (f->turn), ==, second_id);
    g_assert_cmpstr (mend_turn_get_prompt (f->turn), ==, "Build it");
  }
}

static void
on_started_retry (MendChat *chat,
                  MendTurn *turn,
                  Fx       *f)
{
  g_autoptr(GError) error = NULL;

  if (mend_turn_get_retry_of (turn) == NULL)
    return;
  /* The Retry's own turn runs: a second Retry is refused. */
  g_assert_false (mend_chat_retry (chat, &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY);
  g_string_append (f->log, "refused ");
}

static void
test_retry_from_its_own_turn_started (Fx            *f,
                                      gconstpointer  data)
{
  give_up (f, "Build it");
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_retry), f);
  g_assert_true (mend_chat_retry (f->chat, NULL));
  g_assert_nonnull (strstr (f->log->str, "refused"));
  g_assert_cmpuint (f->started->len, ==, 2);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_RUNNING);
}

static void
on_started_stop (MendChat *chat,
                 MendTurn *turn,
                 Fx       *f)
{
  if (mend_turn_get_retry_of (turn) != NULL)
    mend_chat_stop (chat);
}

/* A Retry stopped by a handler of its own start: it can be retried. */
static void
test_retry_stopped_as_it_starts (Fx            *f,
                                 gconstpointer  data)
{
  give_up (f, "Build it");
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_started_stop), f);
  g_assert_true (mend_chat_retry (f->chat, NULL));
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_true (mend_chat_get_can_retry (f->chat));
}

static void
test_retry_after_close (Fx            *f,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  give_up (f, "Build it");
  mend_chat_close (f->chat);
  g_assert_false (mend_chat_get_can_retry (f->chat));
  g_assert_false (mend_chat_retry (f->chat, &error));
  g_assert_nonnull (error);
  g_assert_cmpuint (f->started->len, ==, 1);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
}

/* A Stop's turn is retried too; the queue stays as it was. */
static void
test_retry_after_stop_keeps_the_queue (Fx            *f,
                                       gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  mend_test_submit (f->chat, "First");
  mend_test_submit (f->chat, "Second");
  mend_chat_stop (f->chat);
  g_assert_true (mend_chat_get_can_retry (f->chat));
  g_assert_null (mend_chat_get_last_failure (f->chat));
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  g_assert_true (mend_chat_retry (f->chat, NULL));
  g_assert_cmpstr (mend_turn_get_prompt (f->turn), ==, "First");
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  mend_turn_succeed (f->turn);
  g_assert_cmpstr (mend_turn_get_prompt (f->turn), ==, "Second");
}

static void
on_can_retry_retry (MendChat   *chat,
                    GParamSpec *pspec,
                    Fx         *f)
{
  f->can_retry_notes++;
  if (mend_chat_get_can_retry (chat) && f->can_retry_notes < 10)
    g_assert_true (mend_chat_retry (chat, NULL));
}

/* An app that retries as soon as it may, from notify::can-retry: the
 * retried turn starts inside the give-up's end. The give-up's
 * turn-finished must still come before the Retry's turn-started, and
 * the Continue item must not outlive the Retry. */
static void
test_retry_from_notify_can_retry (Fx            *f,
                                  gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  mend_test_submit (f->chat, "Build it");
  mend_test_submit (f->chat, "Then test it");
  g_signal_connect (f->chat, "notify::can-retry", G_CALLBACK (on_can_retry_retry), f);
  fail_turn (f->turn, 401);
  g_test_message ("log: %s", f->log->str);
  g_assert_cmpuint (f->started->len, ==, 2);
  g_assert_cmpstr (mend_turn_get_retry_of (f->turn), !=, NULL);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_RUNNING);
  g_assert_true (mend_chat_get_turn (f->chat) == f->turn);
  /* Retry is the same intent as Continue: it takes it out. */
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, "Then test it");
  /* What the app heard, in order. */
  g_assert_cmpstr (f->log->str, ==,
                   "started(Build it) finished(Build it) started(Build it) ");
}

static void
on_status_stop (MendChat   *chat,
                GParamSpec *pspec,
                Fx         *f)
{
  f->status_notes++;
  if (mend_chat_get_wait (chat) != NULL)
    mend_chat_stop (chat);
}

/* The status shows a long wait; its handler presses Stop. */
static void
test_stop_from_notify_status_text (Fx            *f,
                                   gconstpointer  data)
{
  mend_chat_set_quiet_wait_ms (f->chat, 0);
  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_stop), f);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 503);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  g_assert_null (mend_chat_get_wait (f->chat));
  g_assert_true (mend_chat_get_can_retry (f->chat));
  advance (f, 60000);
  g_assert_cmpuint (f->started->len, ==, 1);
  g_assert_true (mend_chat_retry (f->chat, NULL));
}

static void
on_status_unref (MendChat   *chat,
                 GParamSpec *pspec,
                 Fx         *f)
{
  if (f->chat != NULL && mend_chat_get_wait (chat) != NULL)
    g_clear_object (&f->chat);
}

/* The last reference to the chat goes in a handler of its status. */
static void
test_drop_chat_from_notify_status_text (Fx            *f,
                                        gconstpointer  data)
{
  MendTurn *turn;
  GWeakRef weak;

  mend_chat_set_quiet_wait_ms (f->chat, 0);
  g_weak_ref_init (&weak, f->chat);
  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_unref), f);
  mend_test_submit (f->chat, "Build it");
  turn = g_object_ref (f->turn);
  fail_turn (turn, 503);
  g_assert_null (f->chat);
  g_assert_null (g_weak_ref_get (&weak));
  g_weak_ref_clear (&weak);
  advance (f, 60000);
  g_assert_cmpint (mend_turn_get_state (turn), !=, MEND_TURN_RUNNING);
  g_assert_cmpint (mend_turn_get_state (turn), !=, MEND_TURN_WAITING);
  g_object_unref (turn);
}

static void
on_last_failure_close (MendChat   *chat,
                       GParamSpec *pspec,
                       Fx         *f)
{
  if (mend_chat_get_last_failure (chat) != NULL)
    mend_chat_close (chat);
}

static void
test_close_from_notify_last_failure (Fx            *f,
                                     gconstpointer  data)
{
  g_signal_connect (f->chat, "notify::last-failure", G_CALLBACK (on_last_failure_close), f);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 503);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_CLOSED);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_null (mend_chat_get_wait (f->chat));
  g_assert_false (mend_chat_get_can_retry (f->chat));
  advance (f, 60000);
  g_assert_cmpuint (f->started->len, ==, 1);
}

static void
on_wait_submit (MendChat   *chat,
                GParamSpec *pspec,
                Fx         *f)
{
  if (mend_chat_get_wait (chat) != NULL)
    mend_test_submit (chat, "Meanwhile");
}

/* A submission from notify::wait queues behind the waiting turn. */
static void
test_submit_from_notify_wait (Fx            *f,
                              gconstpointer  data)
{
  g_signal_connect (f->chat, "notify::wait", G_CALLBACK (on_wait_submit), f);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 503);
  g_assert_cmpuint (f->started->len, ==, 1);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 1);
  g_signal_handlers_disconnect_by_func (f->chat, on_wait_submit, f);
  advance (f, 60000);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_RUNNING);
  mend_turn_succeed (f->turn);
  g_assert_cmpstr (mend_turn_get_prompt (f->turn), ==, "Meanwhile");
}

static void
on_text_unref (MendChat   *chat,
               MendTurn   *turn,
               const char *text,
               Fx         *f)
{
  g_string_append (f->log, text);
  g_clear_object (&f->chat);
}

/* A text-delta handler drops the chat, from inside the turn's signal. */
static void
test_drop_chat_from_text_delta (Fx            *f,
                                gconstpointer  data)
{
  MendTurn *turn;

  g_signal_connect (f->chat, "text-delta", G_CALLBACK (on_text_unref), f);
  mend_test_submit (f->chat, "Build it");
  turn = g_object_ref (f->turn);
  mend_turn_add_text (turn, "Hello");
  g_assert_null (f->chat);
  /* The turn stopped with its chat: later text is ignored. */
  mend_turn_add_text (turn, " world");
  g_assert_cmpstr (f->log->str, ==, "started(Build it) Hello");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_object_unref (turn);
}

static gboolean
quit_loop (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
on_text_nested_loop (MendChat   *chat,
                     MendTurn   *turn,
                     const char *text,
                     Fx         *f)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);

  g_string_append (f->log, text);
  g_idle_add (quit_loop, loop);
  g_main_loop_run (loop);
  mend_chat_stop (chat);
}

static void
test_nested_loop_and_stop_from_text_delta (Fx            *f,
                                           gconstpointer  data)
{
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (on_text_nested_loop), f);
  mend_test_submit (f->chat, "Build it");
  mend_turn_add_text (f->turn, "Hi");
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_STOPPED);
  /* Text after the end is ignored. */
  mend_turn_add_text (f->turn, "late");
  g_assert_cmpstr (f->log->str, ==, "started(Build it) Hifinished(Build it) ");
  g_assert_true (mend_chat_get_can_retry (f->chat));
}

static void
on_finished_retry (MendChat *chat,
                   MendTurn *turn,
                   Fx       *f)
{
  if (mend_turn_get_state (turn) == MEND_TURN_FAILED && f->started->len < 3)
    g_assert_true (mend_chat_retry (chat, NULL));
}

/* Retry from turn-finished: the give-up's end runs the Retry at once. */
static void
test_retry_from_turn_finished (Fx            *f,
                               gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  mend_test_submit (f->chat, "Build it");
  mend_test_submit (f->chat, "Then test it");
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_finished_retry), f);
  fail_turn (f->turn, 401);
  g_assert_cmpuint (f->started->len, ==, 2);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_RUNNING);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  fail_turn (f->turn, 401);
  g_assert_cmpuint (f->started->len, ==, 3);
  /* One Continue at most, however many give-ups. */
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
}

static void
on_items_changed_close (GListModel *model,
                        guint       position,
                        guint       removed,
                        guint       added,
                        Fx         *f)
{
  if (removed > 0)
    mend_chat_close (f->chat);
}

/* A handler of the Continue item's removal closes the chat: the Retry
 * does not run, and it must not say it did. */
static void
test_retry_closed_by_queue_handler (Fx            *f,
                                    gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);
  g_autoptr(GError) error = NULL;
  gboolean ran;

  mend_test_submit (f->chat, "Build it");
  mend_test_submit (f->chat, "Then test it");
  fail_turn (f->turn, 401);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 2);
  g_signal_connect (queue, "items-changed", G_CALLBACK (on_items_changed_close), f);
  ran = mend_chat_retry (f->chat, &error);
  g_signal_handlers_disconnect_by_func (queue, on_items_changed_close, f);
  g_assert_cmpuint (f->started->len, ==, 1);
  g_assert_false (ran);
  g_assert_nonnull (error);
}

static void
on_items_changed_remove_continue (GListModel *model,
                                  guint       position,
                                  guint       removed,
                                  guint       added,
                                  Fx         *f)
{
  MendQueueItem *head = mend_queue_peek (MEND_QUEUE (model));

  if (head != NULL && g_strcmp0 (mend_queue_item_get_provenance (head), MEND_CHAT_CONTINUE_PROVENANCE) == 0)
    mend_queue_remove (MEND_QUEUE (model), mend_queue_item_get_id (head), NULL);
}

/* The app takes the Continue item out itself as it is queued; Retry
 * then runs the turn again and leaves the follow-up. */
static void
test_continue_removed_by_queue_handler (Fx            *f,
                                        gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  mend_test_submit (f->chat, "Build it");
  mend_test_submit (f->chat, "Then test it");
  g_signal_connect (queue, "items-changed", G_CALLBACK (on_items_changed_remove_continue), f);
  fail_turn (f->turn, 401);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  g_assert_true (mend_chat_retry (f->chat, NULL));
  g_signal_handlers_disconnect_by_func (queue, on_items_changed_remove_continue, f);
  g_assert_cmpstr (mend_turn_get_prompt (f->turn), ==, "Build it");
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  mend_turn_succeed (f->turn);
  g_assert_cmpstr (mend_turn_get_prompt (f->turn), ==, "Then test it");
}

/* The status text ------------------------------------------------------- */

static void
on_status_count (MendChat   *chat,
                 GParamSpec *pspec,
                 Fx         *f)
{
  f->status_notes++;
  g_string_append_printf (f->log, "[%s]", mend_chat_get_status_text (chat));
}

/* Quick retries never change the status, however many. */
static void
test_quick_waits_do_not_change_the_status (Fx            *f,
                                           gconstpointer  data)
{
  mend_error_policy_set_max_delay_ms (mend_chat_get_policy (f->chat), 999);
  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_count), f);
  mend_test_submit (f->chat, "Build it");
  for (guint i = 0; i < 4; i++)
    {
      fail_turn (f->turn, 503);
      g_assert_nonnull (mend_chat_get_wait (f->chat));
      g_assert_cmpuint (mend_retry_wait_get_delay_ms (mend_chat_get_wait (f->chat)), <, 1000);
      g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
      advance (f, 1000);
      g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
    }
  g_assert_cmpuint (f->status_notes, ==, 0);
  mend_turn_succeed (f->turn);
  g_assert_cmpuint (f->status_notes, ==, 0);
}

/* A countdown nobody watches wakes nothing but its deadline; one whose
 * status is watched ticks. */
static void
test_status_ticks_only_while_watched (Fx            *f,
                                      gconstpointer  data)
{
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 429);   /* no hint: the rate limit's 5 s */
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (mend_chat_get_wait (f->chat)), ==, 5000);
  /* Nobody watches: the next wakeup is the deadline. */
  g_assert_cmpint (next_wakeup_ms (f), ==, 5000);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_RUNNING);

  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_count), f);
  fail_turn (f->turn, 429);   /* 10 s */
  f->status_notes = 0;
  g_assert_cmpint (next_wakeup_ms (f), <=, 1000);
  advance (f, 3000);
  g_assert_cmpuint (f->status_notes, >=, 3);
  g_test_message ("%s", f->log->str);
}

/* The app binds the status while a countdown already runs: from then on
 * it ticks. A binding reads the status as it is made (SYNC_CREATE), and
 * that read starts the countdown; so does a handler that reads it. */
static void
test_status_ticks_when_watched_late (Fx            *f,
                                     gconstpointer  data)
{
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 429);   /* 5 s */
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), !=, "");
  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_count), f);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), !=, "");
  advance (f, 3000);
  g_test_message ("%s", f->log->str);
  g_assert_cmpuint (f->status_notes, >=, 3);
}

/* Once nothing watches the status any more, its countdown stops waking
 * the clock. */
static void
test_status_stops_ticking_when_unwatched (Fx            *f,
                                          gconstpointer  data)
{
  gulong id;

  mend_test_submit (f->chat, "Build it");
  id = g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_count), f);
  fail_turn (f->turn, 429);   /* 5 s, watched */
  g_assert_cmpint (next_wakeup_ms (f), <=, 1000);
  g_signal_handler_disconnect (f->chat, id);
  /* Nothing watches any more: the next tick finds it out, and from
   * then on the only wakeup is the deadline, 3 s on. */
  advance (f, 1000);
  g_assert_cmpint (next_wakeup_ms (f), ==, 3000);
}

/* quiet-wait-ms raised in the middle of a countdown shown: the status
 * must not freeze on a countdown that no longer counts. */
static void
test_quiet_wait_raised_mid_countdown (Fx            *f,
                                      gconstpointer  data)
{
  MendRetryWait *wait;
  g_autofree char *before = NULL;
  g_autofree char *remaining = NULL;

  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_count), f);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 429);   /* 5 s */
  wait = mend_chat_get_wait (f->chat);
  before = g_strdup (mend_chat_get_status_text (f->chat));
  g_assert_nonnull (strstr (before, "5 s"));
  mend_chat_set_quiet_wait_ms (f->chat, 60000);
  advance (f, 3000);
  remaining = g_strdup_printf ("%u s", mend_retry_wait_get_remaining_seconds (wait));
  g_test_message ("status: %s; wait: %s left", mend_chat_get_status_text (f->chat), remaining);
  /* Either the countdown goes on, or the status no longer shows one. */
  g_assert_true (strstr (mend_chat_get_status_text (f->chat), "5 s") == NULL);
}

/* quiet-wait-ms lowered mid-wait: the getter and the notifications must
 * agree. */
static void
test_quiet_wait_lowered_mid_wait (Fx            *f,
                                  gconstpointer  data)
{
  mend_chat_set_quiet_wait_ms (f->chat, 60000);
  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status_count), f);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 429);   /* 5 s: quiet */
  g_assert_cmpuint (f->status_notes, ==, 0);
  mend_chat_set_quiet_wait_ms (f->chat, 0);
  advance (f, 1000);
  advance (f, 1000);
  g_test_message ("%s", f->log->str);
  /* No status text that nobody was told of. */
  {
    guint notes = f->status_notes;
    g_autofree char *text = g_strdup (mend_chat_get_status_text (f->chat));

    if (text[0] != '\0')
      g_assert_cmpuint (f->status_notes, >, 0);
    (void) notes;
  }
}

/* A give-up's status names the retries made; a success clears it. */
static void
test_status_after_give_up_and_success (Fx            *f,
                                       gconstpointer  data)
{
  g_autoptr(MendErrorPolicy) policy = NULL;

  mend_error_policy_set_max_retries (mend_chat_get_policy (f->chat), 1);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 503);
  advance (f, 5000);
  fail_turn (f->turn, 503);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_FAILED);
  g_assert_nonnull (strstr (mend_chat_get_status_text (f->chat), "1 retry"));
  g_assert_true (mend_chat_retry (f->chat, NULL));
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
  mend_turn_succeed (f->turn);
  g_assert_null (mend_chat_get_last_failure (f->chat));
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
}

/* The policy's per-reason schedules ------------------------------------ */

static void
assert_policy_unchanged (MendErrorPolicy *policy,
                         const char      *before)
{
  g_autofree char *after = mend_error_policy_to_json (policy);

  g_assert_cmpstr (after, ==, before);
}

static void
test_by_reason_hostile_json (void)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autofree char *before = mend_error_policy_to_json (policy);
  g_autoptr(GString) deep = g_string_new ("{\"byReason\":{\"capacity\":");
  g_autoptr(GString) wide = g_string_new ("{\"byReason\":{\"capacity\":{\"delays\":[");
  g_autoptr(GString) many = g_string_new ("{\"byReason\":{");
  const char *bad[] = {
    "{\"byReason\":[]}",
    "{\"byReason\":null}",
    "{\"byReason\":{\"nonsense\":{}}}",
    "{\"byReason\":{\"\":{}}}",
    "{\"byReason\":{\"RATE_LIMIT\":{}}}",
    "{\"byReason\":{\"rate_limit\":[]}}",
    "{\"byReason\":{\"rate_limit\":5}}",
    "{\"byReason\":{\"rate_limit\":{\"retryAfterMaxMs\":1}}}",
    "{\"byReason\":{\"rate_limit\":{\"staggerMs\":1}}}",
    "{\"byReason\":{\"rate_limit\":{\"rules\":[]}}}",
    "{\"byReason\":{\"rate_limit\":{\"byReason\":{}}}}",
    "{\"byReason\":{\"rate_limit\":{\"maxRetries\":-1}}}",
    "{\"byReason\":{\"rate_limit\":{\"maxRetries\":1.5}}}",
    "{\"byReason\":{\"rate_limit\":{\"maxRetries\":1e300}}}",
    "{\"byReason\":{\"rate_limit\":{\"maxRetries\":100000}}}",
    "{\"byReason\":{\"rate_limit\":{\"multiplier\":0.5}}}",
    "{\"byReason\":{\"rate_limit\":{\"delays\":[-5]}}}",
    "{\"byReason\":{\"rate_limit\":{\"delays\":[null]}}}",
    "{\"byReason\":{\"rate_limit\":{\"delays\":{}}}}",
    "{\"byReason\":{\"rate_limit\":{\"jitter\":\"sometimes\"}}}",
    "{\"byReason\":{\"capacity\":{\"maxRetries\":1}, \"rate_limit\":{\"maxRetries\":\"x\"}}}",
    "{\"maxRetries\":2,\"byReason\":{\"cap\\u0000acity\":{}}}",
    "{\"byReason\":{\"\xff\xfe\":{}}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (mend_error_policy_update_from_json (policy, bad[i], &error));
      g_assert_nonnull (error);
      g_assert_true (g_utf8_validate (error->message, -1, NULL));
      assert_policy_unchanged (policy, before);
    }

  for (guint i = 0; i < 10000; i++)
    g_string_append (deep, "{\"maxRetries\":");
  g_string_append (deep, "1");
  for (guint i = 0; i < 10000; i++)
    g_string_append_c (deep, '}');
  g_string_append (deep, "}}");
  g_assert_false (mend_error_policy_update_from_json (policy, deep->str, NULL));
  assert_policy_unchanged (policy, before);

  for (guint i = 0; i < 200000; i++)
    g_string_append (wide, i == 0 ? "1" : ",1");
  g_string_append (wide, "]}}}");
  g_assert_false (mend_error_policy_update_from_json (policy, wide->str, NULL));
  assert_policy_unchanged (policy, before);

  /* The same reason over and over, by both its spellings. */
  for (guint i = 0; i < 5000; i++)
    g_string_append_printf (many, "%s\"%s\":{\"maxRetries\":%u}", i == 0 ? "" : ",",
                            i % 2 ? "rate-limit" : "rate_limit", i % 7);
  g_string_append (many, "}}");
  {
    g_autoptr(GError) error = NULL;

    if (mend_error_policy_update_from_json (policy, many->str, &error))
      {
        g_autofree char *schedule = mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_RATE_LIMIT);

        g_test_message ("many: %s", schedule);
        g_assert_cmpstr (schedule, ==, "{\"maxRetries\":1}");  /* the last: 4999 % 7 */
      }
  }
}

/* null drops a reason's schedule; duplicates: the last wins. */
static void
test_by_reason_null_and_duplicates (void)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *rate = NULL;
  g_autofree char *capacity = NULL;

  g_assert_true (mend_error_policy_update_from_json (policy,
      "{\"byReason\":{\"rate_limit\":{\"maxRetries\":1},\"capacity\":{\"delays\":[1,2]},"
      "\"rate_limit\":null,\"capacity\":{\"maxRetries\":3}}}", &error));
  g_assert_no_error (error);
  rate = mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_RATE_LIMIT);
  capacity = mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_CAPACITY);
  g_test_message ("rate: %s, capacity: %s", rate, capacity);
  g_assert_null (rate);
  g_assert_cmpstr (capacity, ==, "{\"maxRetries\":3}");
}

/* Round trips: what to_json writes reads back to the same. */
static void
test_by_reason_round_trips (void)
{
  const char *inputs[] = {
    "{}",
    "{\"byReason\":{}}",
    "{\"preset\":\"resume\"}",
    "{\"preset\":\"turn\",\"maxRetries\":0}",
    "{\"delays\":[100,200],\"byReason\":{\"capacity\":{\"maxRetries\":0}}}",
    "{\"byReason\":{\"rate_limit\":{\"delays\":null},\"server\":{\"delays\":[],\"jitter\":\"full\"}}}",
    "{\"maxDelayMs\":10,\"byReason\":{\"timeout\":{\"delays\":[999999]},\"unknown\":{\"multiplier\":3}}}",
    "{\"byReason\":{\"transport\":{\"maxRetries\":1000,\"baseDelayMs\":0,\"maxDelayMs\":0,\"multiplier\":100,\"jitter\":\"decorrelated\",\"jitterMs\":0,\"delays\":[0]}}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(MendErrorPolicy) first = mend_error_policy_new_from_json (inputs[i], &error);
      g_autoptr(MendErrorPolicy) second = NULL;
      g_autofree char *one = NULL;
      g_autofree char *two = NULL;

      g_assert_no_error (error);
      one = mend_error_policy_to_json (first);
      second = mend_error_policy_new_from_json (one, &error);
      g_assert_no_error (error);
      two = mend_error_policy_to_json (second);
      g_test_message ("%s -> %s", inputs[i], one);
      g_assert_cmpstr (one, ==, two);

      for (MendReason r = 0; r <= MEND_REASON_UNKNOWN; r++)
        {
          g_autofree char *a = mend_error_policy_dup_schedule_for_reason (first, r);
          g_autofree char *b = mend_error_policy_dup_schedule_for_reason (second, r);

          g_assert_cmpstr (a, ==, b);
          if (a != NULL)
            {
              g_autoptr(MendErrorPolicy) third = mend_error_policy_new ();
              g_autofree char *c = NULL;

              g_assert_true (mend_error_policy_set_schedule_for_reason (third, r, a, &error));
              g_assert_no_error (error);
              c = mend_error_policy_dup_schedule_for_reason (third, r);
              g_assert_cmpstr (a, ==, c);
            }
        }
    }
}

static void
test_set_schedule_for_reason_bad_json (void)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autofree char *before = NULL;
  const char *bad[] = {
    "", "null", "[]", "1", "\"x\"", "{", "{}}", "{\"maxRetries\":1,}",
    "{\"maxRetries\":1,\"bogus\":2}",
    "{\"maxRetries\":1,\"delays\":[1,\"2\"]}",
    "{\"preset\":\"turn\"}",
    "{\"byReason\":{}}",
    "{\"delays\":[1]} trailing",
  };

  g_assert_true (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_CAPACITY,
                                                            "{\"maxRetries\":2}", NULL));
  before = mend_error_policy_to_json (policy);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_CAPACITY, bad[i], &error));
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
      assert_policy_unchanged (policy, before);
    }

  /* {} is a schedule that sets nothing: the reason follows the policy,
   * and says so the same way as with NULL. */
  {
    g_autofree char *empty = NULL;

    g_assert_true (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_CAPACITY, "{}", NULL));
    empty = mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_CAPACITY);
    g_test_message ("{} reads back as %s", empty);
  }
  g_assert_true (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_CAPACITY, NULL, NULL));
  g_assert_null (mend_error_policy_dup_schedule_for_reason (policy, MEND_REASON_CAPACITY));
}

/* A reason whose schedule allows no retry gives up at its first failure;
 * the others keep theirs. */
static void
test_zero_retries_for_a_reason (Fx            *f,
                                gconstpointer  data)
{
  MendErrorPolicy *policy = mend_chat_get_policy (f->chat);

  g_assert_true (mend_error_policy_set_schedule_for_reason (policy, MEND_REASON_CAPACITY,
                                                            "{\"maxRetries\":0}", NULL));
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 503);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_FAILED);
  g_assert_true (mend_chat_get_can_retry (f->chat));

  g_assert_true (mend_chat_retry (f->chat, NULL));
  fail_turn (f->turn, 500);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_WAITING);
  advance (f, 5000);
  /* Then the reason with none: the turn gives up there. */
  fail_turn (f->turn, 503);
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_FAILED);
}

/* maxRetries 0 — "no retries" — holds for a rate limit too. */
static void
test_max_retries_zero_means_no_retry (Fx            *f,
                                      gconstpointer  data)
{
  MendErrorPolicy *policy = mend_chat_get_policy (f->chat);

  mend_error_policy_set_max_retries (policy, 0);
  mend_test_submit (f->chat, "Build it");
  fail_turn (f->turn, 429);
  g_test_message ("state %s, wait %p", mend_turn_state_to_nick (mend_turn_get_state (f->turn)),
                  (void *) mend_chat_get_wait (f->chat));
  g_assert_cmpint (mend_turn_get_state (f->turn), ==, MEND_TURN_FAILED);
}

/* The model's text from an agent CLI's lines ---------------------------- */

typedef struct
{
  Fx                  fx;
  MendStreamObserver *observer;
  GString            *text;
  guint               n_deltas;
} ObsFx;

static void
on_chat_text (MendChat   *chat,
              MendTurn   *turn,
              const char *text,
              ObsFx      *f)
{
  g_assert_true (g_utf8_validate (text, -1, NULL));
  g_assert_cmpuint (strlen (text), >, 0);
  g_string_append (f->text, text);
  f->n_deltas++;
}

static void
obs_set_up (ObsFx         *f,
            gconstpointer  data)
{
  fx_set_up (&f->fx, data);
  f->observer = mend_stream_observer_new (f->fx.chat);
  f->text = g_string_new (NULL);
  g_signal_connect (f->fx.chat, "text-delta", G_CALLBACK (on_chat_text), f);
  mend_test_submit (f->fx.chat, "Build it");
}

static void
obs_tear_down (ObsFx         *f,
               gconstpointer  data)
{
  g_assert_finalize_object (f->observer);
  g_string_free (f->text, TRUE);
  fx_tear_down (&f->fx, data);
}

static void
feed (ObsFx      *f,
      const char *line)
{
  mend_stream_observer_feed_line (f->observer, line, -1);
}

#define DELTA(t) "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0," \
                 "\"delta\":{\"type\":\"text_delta\",\"text\":\"" t "\"}},\"parent_tool_use_id\":null}"
#define MESSAGE(t) "{\"type\":\"assistant\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"role\":\"assistant\"," \
                   "\"content\":[{\"type\":\"text\",\"text\":\"" t "\"}]},\"parent_tool_use_id\":null}"

static void
test_stream_deltas_then_message (ObsFx         *f,
                                 gconstpointer  data)
{
  feed (f, DELTA ("Hel"));
  feed (f, DELTA ("lo"));
  feed (f, MESSAGE ("Hello"));
  g_assert_cmpstr (f->text->str, ==, "Hello");
  g_assert_cmpuint (f->n_deltas, ==, 2);
}

static void
test_stream_message_without_deltas (ObsFx         *f,
                                    gconstpointer  data)
{
  feed (f, MESSAGE ("Hello"));
  feed (f, "{\"type\":\"assistant\",\"message\":{\"model\":\"<synthetic>\",\"content\":[{\"type\":\"text\",\"text\":\"API Error\"}]}}");
  feed (f, "{\"type\":\"assistant\",\"is_api_error_message\":true,\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"API Error\"}]}}");
  g_assert_cmpstr (f->text->str, ==, "Hello");
}

static void
test_stream_hostile_lines (ObsFx         *f,
                           gconstpointer  data)
{
  g_autoptr(GString) deep = g_string_new ("{\"type\":\"stream_event\",\"event\":");
  g_autoptr(GString) huge = g_string_new ("{\"type\":\"assistant\",\"message\":{\"content\":[");
  g_autoptr(GString) big_text = g_string_new ("{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\","
                                              "\"delta\":{\"type\":\"text_delta\",\"text\":\"");
  const char *odd[] = {
    "{\"type\":\"stream_event\"",
    "{\"type\":\"stream_event\"\"text_delta\"",
    "{\"type\":\"stream_event\",\"event\":null,\"x\":\"text_delta\"}",
    "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":5}}}",
    "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"\"}}}",
    "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"bad \xff\xfe\"}}}",
    "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"nul \\u0000 in it\"}}}",
    "{\"type\":\"assistant\",\"message\":{\"content\":{\"type\":\"text\",\"text\":\"not an array\"}}}",
    "{\"type\":\"assistant\",\"message\":{\"content\":[null,1,\"x\",[],{\"type\":\"text\"},{\"type\":\"text\",\"text\":null}]}}",
    "{\"type\":\"assistant\",\"message\":null}",
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\xc3\"}]}}",
    "{\"type\":\"assistant\"}garbage",
  };

  for (guint i = 0; i < G_N_ELEMENTS (odd); i++)
    feed (f, odd[i]);

  for (guint i = 0; i < 100000; i++)
    g_string_append (deep, "{\"a\":");
  g_string_append (deep, "\"text_delta\"");
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, '}');
  g_string_append_c (deep, '}');
  feed (f, deep->str);

  for (guint i = 0; i < 200000; i++)
    g_string_append (huge, i == 0 ? "{\"type\":\"text\",\"text\":\"x\"}" : ",{\"type\":\"text\",\"text\":\"x\"}");
  g_string_append (huge, "]}}");
  feed (f, huge->str);

  for (guint i = 0; i < 4 * 1024 * 1024; i++)
    g_string_append_c (big_text, 'y');
  g_string_append (big_text, "\"}}}");
  feed (f, big_text->str);

  g_test_message ("%u deltas, %" G_GSIZE_FORMAT " bytes", f->n_deltas, f->text->len);
  g_assert_cmpint (mend_turn_get_state (f->fx.turn), ==, MEND_TURN_RUNNING);
  /* Every text the app got was UTF-8 (on_chat_text checks). */
}

/* A subagent's own answer (its lines carry parent_tool_use_id, as the
 * real CLI writes them: tests/data/claude-code-2.1.328/subagent-503.jsonl)
 * is not the model's answer to the user's turn. */
static void
test_stream_subagent_text_is_not_the_answer (ObsFx         *f,
                                             gconstpointer  data)
{
  feed (f, "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\","
           "\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[{\"type\":\"text\",\"text\":\"Survey done.\"}]},"
           "\"parent_tool_use_id\":\"toolu_scripted0001\",\"agent_id\":\"ad8531770753b2b68\"}");
  feed (f, "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,"
           "\"delta\":{\"type\":\"text_delta\",\"text\":\"sub delta\"}},\"parent_tool_use_id\":\"toolu_scripted0001\"}");
  feed (f, MESSAGE ("The survey runs in the background."));
  g_assert_cmpstr (f->text->str, ==, "The survey runs in the background.");
}

/* The second attempt of a turn whose first streamed deltas and failed:
 * that attempt's message, without deltas, is its answer. */
static void
test_stream_retry_attempt_message (ObsFx         *f,
                                   gconstpointer  data)
{
  mend_error_policy_set_retry_partial (mend_chat_get_policy (f->fx.chat), TRUE);
  feed (f, DELTA ("Hal"));
  fail_turn (f->fx.turn, 503);
  advance (&f->fx, 5000);
  g_assert_cmpint (mend_turn_get_state (f->fx.turn), ==, MEND_TURN_RUNNING);
  g_string_truncate (f->text, 0);
  feed (f, MESSAGE ("Hello"));
  g_assert_cmpstr (f->text->str, ==, "Hello");
}

/* text-delta over HTTP, the chat dropped by its handler --------------- */

static const char sse_body[] =
  "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n"
  "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n"
  "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
  "data: [DONE]\n\n";

typedef struct
{
  MendTestHttpChat *f;
  guint n;
} DropData;

static void
on_http_text_drop (MendChat   *chat,
                   MendTurn   *turn,
                   const char *text,
                   DropData   *d)
{
  d->n++;
  g_clear_object (&d->f->chat);
}

static gboolean
watchdog (gpointer data)
{
  g_error ("%s", (const char *) data);
  return G_SOURCE_REMOVE;
}

static void
test_http_drop_chat_from_text_delta (void)
{
  MendTestHttpChat fixture = { 0 };
  MendTestHttpChat *f = &fixture;
  MendTestHttpReply script[] = {
    { 200, "text/event-stream", sse_body, NULL },
  };
  DropData d = { f, 0 };
  guint dog;

  mend_test_http_chat_set_up_at (f, NULL);
  g_signal_connect (f->chat, "text-delta", G_CALLBACK (on_http_text_drop), &d);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  dog = g_timeout_add_seconds (20, watchdog, (gpointer) "no text arrived");
  while (d.n == 0)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (dog);
  g_assert_null (f->chat);
  /* Let the request wind down. */
  for (guint i = 0; i < 50 && g_main_context_pending (NULL); i++)
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (d.n, ==, 1);
  g_assert_cmpuint (f->deltas->len, >, 0);

  /* The fixture's tear-down, without the chat. */
  g_ptr_array_set_size (f->finished, 0);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (f->sender);
  g_assert_finalize_object (f->clock);
  soup_server_disconnect (f->server);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (f->server);
  g_ptr_array_unref (f->finished);
  g_ptr_array_unref (f->bodies);
  g_ptr_array_unref (f->loaded);
  g_string_free (f->deltas, TRUE);
  g_free (f->endpoint);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define FX(name, func) g_test_add ("/attack-app-surface/" name, Fx, NULL, fx_set_up, func, fx_tear_down)
#define OBS(name, func) g_test_add ("/attack-app-surface/" name, ObsFx, NULL, obs_set_up, func, obs_tear_down)

  FX ("retry/twice-in-a-row", test_retry_twice_in_a_row);
  FX ("retry/from-its-own-turn-started", test_retry_from_its_own_turn_started);
  FX ("retry/stopped-as-it-starts", test_retry_stopped_as_it_starts);
  FX ("retry/after-close", test_retry_after_close);
  FX ("retry/after-stop-keeps-the-queue", test_retry_after_stop_keeps_the_queue);
  FX ("retry/from-notify-can-retry", test_retry_from_notify_can_retry);
  FX ("retry/from-turn-finished", test_retry_from_turn_finished);
  FX ("retry/closed-by-queue-handler", test_retry_closed_by_queue_handler);
  FX ("retry/continue-removed-by-queue-handler", test_continue_removed_by_queue_handler);
  FX ("reentrancy/stop-from-notify-status-text", test_stop_from_notify_status_text);
  FX ("reentrancy/drop-chat-from-notify-status-text", test_drop_chat_from_notify_status_text);
  FX ("reentrancy/close-from-notify-last-failure", test_close_from_notify_last_failure);
  FX ("reentrancy/submit-from-notify-wait", test_submit_from_notify_wait);
  FX ("reentrancy/drop-chat-from-text-delta", test_drop_chat_from_text_delta);
  FX ("reentrancy/nested-loop-and-stop-from-text-delta", test_nested_loop_and_stop_from_text_delta);
  g_test_add_func ("/attack-app-surface/reentrancy/http-drop-chat-from-text-delta", test_http_drop_chat_from_text_delta);
  FX ("status/quick-waits-do-not-change-it", test_quick_waits_do_not_change_the_status);
  FX ("status/ticks-only-while-watched", test_status_ticks_only_while_watched);
  FX ("status/ticks-when-watched-late", test_status_ticks_when_watched_late);
  FX ("status/stops-ticking-when-unwatched", test_status_stops_ticking_when_unwatched);
  FX ("status/quiet-wait-raised-mid-countdown", test_quiet_wait_raised_mid_countdown);
  FX ("status/quiet-wait-lowered-mid-wait", test_quiet_wait_lowered_mid_wait);
  FX ("status/after-give-up-and-success", test_status_after_give_up_and_success);
  g_test_add_func ("/attack-app-surface/policy/by-reason-hostile-json", test_by_reason_hostile_json);
  g_test_add_func ("/attack-app-surface/policy/by-reason-null-and-duplicates", test_by_reason_null_and_duplicates);
  g_test_add_func ("/attack-app-surface/policy/by-reason-round-trips", test_by_reason_round_trips);
  g_test_add_func ("/attack-app-surface/policy/set-schedule-bad-json", test_set_schedule_for_reason_bad_json);
  FX ("policy/zero-retries-for-a-reason", test_zero_retries_for_a_reason);
  FX ("policy/max-retries-zero-means-no-retry", test_max_retries_zero_means_no_retry);
  OBS ("stream/deltas-then-message", test_stream_deltas_then_message);
  OBS ("stream/message-without-deltas", test_stream_message_without_deltas);
  OBS ("stream/hostile-lines", test_stream_hostile_lines);
  OBS ("stream/subagent-text-is-not-the-answer", test_stream_subagent_text_is_not_the_answer);
  OBS ("stream/retry-attempt-message", test_stream_retry_attempt_message);

  return g_test_run ();
}
