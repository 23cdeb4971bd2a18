/* test-chat.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rules of seed 001: a turn error retries the current turn and never
 * drains the queue.
 */

#include <stdint.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-error-policy-private.h"
#include "mend-queue-private.h"

#define WALL_START 1764500000000000

typedef struct
{
  MendClock *clock;
  MendChat *chat;
  guint attempts;
  guint resumed;
  guint turns_started;
  GPtrArray *prompts;       /* prompt of each attempt */
  GPtrArray *records;       /* JSON text */
  GArray *lifecycles;       /* lifecycle seen at each attempt */
} Fixture;

static void
on_attempt (MendTurn     *turn,
            guint         n,
            GCancellable *cancellable,
            Fixture      *f)
{
  f->attempts++;
  g_ptr_array_add (f->prompts, g_strdup (mend_turn_get_prompt (turn)));
  g_array_append_val (f->lifecycles, (MendLifecycle) { mend_chat_get_lifecycle (f->chat) });
}

static void
on_resumed (MendTurn *turn,
            guint     n,
            Fixture  *f)
{
  f->resumed++;
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Fixture  *f)
{
  f->turns_started++;
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), f);
  g_signal_connect (turn, "resumed", G_CALLBACK (on_resumed), f);
}

static void
on_record (MendChat   *chat,
           const char *json,
           Fixture    *f)
{
  g_ptr_array_add (f->records, g_strdup (json));
}

static MendChat *
new_chat (Fixture    *f,
          const char *id,
          guint       stagger_ms)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendChat *chat;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  mend_error_policy_set_stagger_ms (policy, stagger_ms);
  chat = g_object_new (MEND_TYPE_CHAT,
                       "id", id,
                       "clock", f->clock,
                       "policy", policy,
                       NULL);
  g_object_unref (policy);

  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), f);
  g_signal_connect (chat, "record", G_CALLBACK (on_record), f);
  return chat;
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->chat = new_chat (f, "chat-1", 0);
  f->prompts = g_ptr_array_new_with_free_func (g_free);
  f->records = g_ptr_array_new_with_free_func (g_free);
  f->lifecycles = g_array_new (FALSE, FALSE, sizeof (MendLifecycle));
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->chat);
  g_assert_finalize_object (f->clock);
  g_ptr_array_unref (f->prompts);
  g_ptr_array_unref (f->records);
  g_array_unref (f->lifecycles);
}

static void
advance (Fixture *f,
         guint64  ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), ms);
}

static void
submit (Fixture    *f,
        const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (f->chat, text, NULL, &error));
  g_assert_no_error (error);
}

static void
fail_status (Fixture *f,
             guint    status)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_http (status, NULL, NULL);
  MendTurn *turn = mend_chat_get_turn (f->chat);

  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  mend_turn_fail (turn, failure);
}

static void
succeed (Fixture *f)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);

  g_assert_nonnull (turn);
  mend_turn_succeed (turn);
}

/* The queue's texts, joined with '|'. */
static char *
queue_texts (Fixture *f)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (queue)); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      if (i > 0)
        g_string_append_c (out, '|');
      g_string_append (out, mend_queue_item_get_text (item));
    }

  return g_string_free (out, FALSE);
}

#define assert_queue(f, expected) G_STMT_START { \
  g_autofree char *_texts = queue_texts (f); \
  g_assert_cmpstr (_texts, ==, expected); \
} G_STMT_END

static void
test_retry_keeps_queue_until_success (Fixture       *f,
                                      gconstpointer  data)
{
  submit (f, "first");
  submit (f, "A");
  submit (f, "B");
  assert_queue (f, "A|B");
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);

  fail_status (f, 500);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);
  assert_queue (f, "A|B");
  advance (f, 250);
  fail_status (f, 500);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);
  assert_queue (f, "A|B");
  advance (f, 500);
  g_assert_cmpuint (f->attempts, ==, 3);
  g_assert_cmpuint (f->resumed, ==, 2);
  g_assert_cmpuint (f->turns_started, ==, 1);
  for (guint i = 0; i < f->lifecycles->len; i++)
    g_assert_cmpint (g_array_index (f->lifecycles, MendLifecycle, i), ==, MEND_LIFECYCLE_BUSY);
  for (guint i = 0; i < 3; i++)
    g_assert_cmpstr (g_ptr_array_index (f->prompts, i), ==, "first");

  succeed (f);
  /* The head was promoted: a new turn runs A, B still queued. */
  g_assert_cmpuint (f->turns_started, ==, 2);
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "A");
  assert_queue (f, "B");
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);

  succeed (f);
  succeed (f);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  assert_queue (f, "");
  g_assert_null (mend_chat_get_turn (f->chat));
}

static void
exhaust (Fixture *f)
{
  const guint delays[] = { 250, 500, 1000, 2000 };

  for (guint i = 0; i < G_N_ELEMENTS (delays); i++)
    {
      fail_status (f, 503);
      advance (f, delays[i]);
    }
  fail_status (f, 503);
}

static void
test_give_up_inserts_continue_at_head (Fixture       *f,
                                       gconstpointer  data)
{
  submit (f, "first");
  submit (f, "A");
  submit (f, "B");
  exhaust (f);

  g_assert_cmpuint (f->attempts, ==, 5);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  assert_queue (f, "Continue the current turn|A|B");
  g_assert_null (mend_chat_get_turn (f->chat));

  /* The Continue item is not sent by itself. */
  advance (f, 600000);
  g_assert_cmpuint (f->turns_started, ==, 1);
}

static void
test_give_up_with_empty_queue_inserts_nothing (Fixture       *f,
                                               gconstpointer  data)
{
  submit (f, "first");
  exhaust (f);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  assert_queue (f, "");
}

static void
test_give_up_with_full_queue_loses_nothing (Fixture       *f,
                                            gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);
  g_autoptr(GError) error = NULL;

  submit (f, "first");
  for (guint i = 0; i < 16; i++)
    {
      g_autofree char *text = g_strdup_printf ("item %u", i);
      submit (f, text);
    }
  g_assert_true (mend_queue_is_full (queue));
  g_assert_false (mend_chat_submit (f->chat, "one too many", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL);

  exhaust (f);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 16);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, "item 0");
}

static void
test_stop_during_wait_keeps_queue (Fixture       *f,
                                   gconstpointer  data)
{
  submit (f, "first");
  submit (f, "A");
  fail_status (f, 529);
  mend_chat_stop (f->chat);

  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  advance (f, 60000);
  g_assert_cmpuint (f->attempts, ==, 1);
  assert_queue (f, "A");
  g_assert_null (mend_chat_get_turn (f->chat));

  /* A later successful turn promotes. */
  submit (f, "next");
  g_assert_cmpuint (f->turns_started, ==, 2);
  succeed (f);
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "A");
  assert_queue (f, "");
}

static void
test_stop_during_attempt_keeps_queue (Fixture       *f,
                                      gconstpointer  data)
{
  MendTurn *turn;

  submit (f, "first");
  submit (f, "A");
  turn = g_object_ref (mend_chat_get_turn (f->chat));
  mend_chat_stop (f->chat);

  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  assert_queue (f, "A");
  /* A late answer from the stopped attempt changes nothing. */
  mend_turn_succeed (turn);
  g_assert_cmpuint (f->turns_started, ==, 1);
  assert_queue (f, "A");
  g_assert_finalize_object (turn);

  /* send_next runs the head. */
  g_assert_true (mend_chat_send_next (f->chat));
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "A");
}

static void
test_auth_and_permission_give_up_at_once (Fixture       *f,
                                          gconstpointer  data)
{
  const guint statuses[] = { 401, 403 };

  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    {
      guint before = f->attempts;

      submit (f, "first");
      submit (f, "A");
      fail_status (f, statuses[i]);
      g_assert_cmpuint (f->attempts, ==, before + 1);
      g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
      assert_queue (f, "Continue the current turn|A");
      g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);

      /* Clear for the next status. */
      while (mend_queue_get_length (mend_chat_get_queue (f->chat)) > 0)
        g_object_unref (mend_queue_pop (mend_chat_get_queue (f->chat)));
    }
}

static void
test_failure_after_output_is_not_retried (Fixture       *f,
                                          gconstpointer  data)
{
  submit (f, "first");
  submit (f, "A");
  mend_turn_note_output (mend_chat_get_turn (f->chat));
  fail_status (f, 529);
  g_assert_cmpuint (f->attempts, ==, 1);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  assert_queue (f, "Continue the current turn|A");
}

static void
test_continue_is_an_ordinary_item (Fixture       *f,
                                   gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);
  g_autoptr(GError) error = NULL;
  MendQueueItem *head;

  submit (f, "first");
  submit (f, "A");
  fail_status (f, 401);
  head = mend_queue_peek (queue);
  g_assert_cmpstr (mend_queue_item_get_text (head), ==, "Continue the current turn");
  g_assert_true (mend_queue_replace_text (queue, mend_queue_item_get_id (head),
                                          "Continue, but use the staging key", &error));
  g_assert_no_error (error);

  /* In error, a new message runs at once; its success promotes the edited
   * Continue. */
  submit (f, "retry with the new key");
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "retry with the new key");
  succeed (f);
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "Continue, but use the staging key");
  assert_queue (f, "A");
}

static void
test_stagger_differs_per_chat (Fixture       *f,
                               gconstpointer  data)
{
  MendChat *a = new_chat (f, "chat-a", 1000);
  MendChat *b = new_chat (f, "chat-b", 1000);
  g_autoptr(MendFailure) failure = mend_failure_new_from_http (503, NULL, NULL);
  guint64 da, db;

  g_assert_true (mend_chat_submit (a, "x", NULL, NULL));
  g_assert_true (mend_chat_submit (b, "x", NULL, NULL));
  mend_turn_fail (mend_chat_get_turn (a), failure);
  mend_turn_fail (mend_chat_get_turn (b), failure);

  da = mend_retry_wait_get_delay_ms (mend_turn_get_wait (mend_chat_get_turn (a)));
  db = mend_retry_wait_get_delay_ms (mend_turn_get_wait (mend_chat_get_turn (b)));
  g_assert_cmpuint (da, >=, 250);
  g_assert_cmpuint (da, <, 250 + 1000);
  g_assert_cmpuint (db, >=, 250);
  g_assert_cmpuint (db, <, 250 + 1000);
  g_assert_cmpuint (da, !=, db);
  g_assert_cmpuint (da - 250, ==, mend_error_policy_get_stagger_for (mend_chat_get_policy (a), "chat-a"));

  mend_chat_close (a);
  mend_chat_close (b);
  g_assert_finalize_object (a);
  g_assert_finalize_object (b);
}

static JsonObject *
record_at (Fixture *f,
           guint    i)
{
  static JsonNode *node;
  g_autoptr(GError) error = NULL;

  g_clear_pointer (&node, json_node_unref);
  node = json_from_string (g_ptr_array_index (f->records, i), &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  return json_node_get_object (node);
}

static void
test_records_for_every_step (Fixture       *f,
                             gconstpointer  data)
{
  JsonObject *r;

  submit (f, "first");
  exhaust (f);

  /* Four scheduled, four fired, one exhausted. */
  g_assert_cmpuint (f->records->len, ==, 9);
  for (guint i = 0; i < 8; i++)
    {
      r = record_at (f, i);
      g_assert_cmpstr (json_object_get_string_member (r, "kind"), ==, "turn_retry");
      g_assert_cmpstr (json_object_get_string_member (r, "reason"), ==, "capacity");
      g_assert_cmpint (json_object_get_int_member (r, "attempt"), ==, i / 2 + 1);
      g_assert_cmpint (json_object_get_int_member (r, "of"), ==, 4);
      g_assert_cmpstr (json_object_get_string_member (r, "outcome"), ==, i % 2 ? "fired" : "scheduled");
      g_assert_true (json_object_has_member (r, "nextAt") == (i % 2 == 0));
    }
  r = record_at (f, 0);
  g_assert_cmpint (json_object_get_int_member (r, "nextAt"), ==, WALL_START / 1000 + 250);
  r = record_at (f, 8);
  g_assert_cmpstr (json_object_get_string_member (r, "outcome"), ==, "exhausted");
  g_assert_cmpint (json_object_get_int_member (r, "attempt"), ==, 4);

  /* gave_up and stopped close their turns too. */
  g_ptr_array_set_size (f->records, 0);
  submit (f, "second");
  fail_status (f, 400);
  g_assert_cmpuint (f->records->len, ==, 1);
  r = record_at (f, 0);
  g_assert_cmpstr (json_object_get_string_member (r, "outcome"), ==, "gave_up");
  g_assert_cmpstr (json_object_get_string_member (r, "reason"), ==, "bad-request");

  submit (f, "third");
  fail_status (f, 503);
  mend_chat_stop (f->chat);
  g_assert_cmpuint (f->records->len, ==, 3);
  r = record_at (f, 2);
  g_assert_cmpstr (json_object_get_string_member (r, "outcome"), ==, "stopped");

  /* The turn id ties the records together. */
  g_assert_cmpstr (json_object_get_string_member (record_at (f, 1), "turnId"), !=, "");
  record_at (f, 0);
}

static void
test_submit_refuses_bad_input_and_changes_nothing (Fixture       *f,
                                                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *large = g_strnfill (MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES + 1, 'x');

  g_assert_false (mend_chat_submit (f->chat, "  \n\t", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_clear_error (&error);
  g_assert_false (mend_chat_submit (f->chat, large, NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_clear_error (&error);
  g_assert_cmpuint (f->turns_started, ==, 0);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);

  submit (f, "one\r\ntwo");
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "one\ntwo");
}

static void
test_close_stops_and_refuses (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  submit (f, "first");
  submit (f, "A");
  fail_status (f, 503);
  mend_chat_close (f->chat);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_CLOSED);
  advance (f, 60000);
  g_assert_cmpuint (f->attempts, ==, 1);
  assert_queue (f, "A");

  g_assert_false (mend_chat_submit (f->chat, "more", NULL, &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_CLOSED);
  g_assert_false (mend_chat_send_next (f->chat));
}

static void
test_external_turn_queues_submissions (Fixture       *f,
                                       gconstpointer  data)
{
  mend_chat_begin_external_turn (f->chat);
  submit (f, "while the agent works");
  g_assert_cmpuint (f->turns_started, ==, 0);
  assert_queue (f, "while the agent works");
  /* Its end lets the queue move, like a turn that succeeded. */
  mend_chat_end_external_turn (f->chat);
  g_assert_cmpuint (f->turns_started, ==, 1);
  assert_queue (f, "");
}

static void
test_provenance_reaches_every_attempt (Fixture       *f,
                                       gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  submit (f, "first");
  g_assert_true (mend_chat_submit (f->chat, "A", "{\"kind\":\"voice\"}", NULL));
  g_assert_cmpstr (mend_queue_item_get_provenance (mend_queue_peek (queue)), ==, "{\"kind\":\"voice\"}");
  succeed (f);
  g_assert_cmpstr (mend_turn_get_provenance (mend_chat_get_turn (f->chat)), ==, "{\"kind\":\"voice\"}");
}

typedef struct
{
  guint    runs;
  guintptr lowest;
  guintptr highest;
} Depth;

static void
on_attempt_succeed_at_once (MendTurn     *turn,
                            guint         n,
                            GCancellable *cancellable,
                            Depth        *depth)
{
  char here;

  depth->runs++;
  depth->lowest = MIN (depth->lowest, (guintptr) &here);
  depth->highest = MAX (depth->highest, (guintptr) &here);
  mend_turn_succeed (turn);
}

static void
on_turn_started_succeed (MendChat *chat,
                         MendTurn *turn,
                         Depth    *depth)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt_succeed_at_once), depth);
}

static void
test_queue_drains_by_loop_not_recursion (Fixture       *f,
                                         gconstpointer  data)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);
  Depth depth = { 0, UINTPTR_MAX, 0 };

  mend_queue_set_max_items (queue, 1024);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started_succeed), &depth);
  mend_chat_begin_external_turn (f->chat);
  for (guint i = 0; i < 1024; i++)
    g_assert_true (mend_chat_submit (f->chat, "Next", NULL, NULL));

  /* Every turn succeeds inside its own start: the queue moves on from a
   * loop, so the stack stays as deep as for one turn. */
  mend_chat_end_external_turn (f->chat);
  g_assert_cmpuint (depth.runs, ==, 1024);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);
  g_assert_cmpuint (depth.highest - depth.lowest, <, 16 * 1024);
}

static void
on_nothing_ran (MendChat  *chat,
                MendTurn  *turn,
                GPtrArray *ended)
{
  g_ptr_array_add (ended, g_object_ref (turn));
}

/* A chat that nothing runs: no sender, nothing connected to its turns'
 * "attempt". In a child, where the warning is not fatal. */
static void
nothing_runs_the_turn_child (void)
{
  Fixture f = { 0 };
  g_autoptr(GPtrArray) ended = g_ptr_array_new_with_free_func (g_object_unref);
  const GError *error;
  MendFailure *failure;

  g_log_set_always_fatal (G_LOG_FATAL_MASK);
  f.clock = mend_manual_clock_new (WALL_START);
  f.chat = g_object_new (MEND_TYPE_CHAT, "clock", f.clock, NULL);
  f.prompts = g_ptr_array_new_with_free_func (g_free);
  f.records = g_ptr_array_new_with_free_func (g_free);
  f.lifecycles = g_array_new (FALSE, FALSE, sizeof (MendLifecycle));
  g_signal_connect (f.chat, "turn-finished", G_CALLBACK (on_nothing_ran), ended);
  g_signal_connect (f.chat, "record", G_CALLBACK (on_record), &f);

  /* The follow-ups wait behind the agent's own turn; then the first runs. */
  mend_chat_begin_external_turn (f.chat);
  submit (&f, "first");
  submit (&f, "A");
  submit (&f, "B");
  mend_chat_end_external_turn (f.chat);

  /* It failed at once, saying why, and the queue is whole. */
  g_assert_cmpuint (ended->len, ==, 1);
  g_assert_cmpint (mend_turn_get_state (ended->pdata[0]), ==, MEND_TURN_FAILED);
  failure = mend_turn_get_last_failure (ended->pdata[0]);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  error = mend_failure_get_error (failure);
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_NO_SENDER);
  g_assert_nonnull (strstr (error->message, "no sender"));
  g_assert_cmpint (mend_chat_get_lifecycle (f.chat), ==, MEND_LIFECYCLE_ERROR);
  assert_queue (&f, "Continue the current turn|A|B");
  g_assert_cmpuint (f.records->len, ==, 1);
  g_assert_nonnull (strstr (f.records->pdata[0], "\"outcome\":\"gave_up\""));

  /* The user sends the head: it fails again at once, the follow-ups
   * kept, with no second warning. */
  g_assert_true (mend_chat_send_next (f.chat));
  g_assert_cmpuint (ended->len, ==, 2);
  g_assert_cmpint (mend_turn_get_state (ended->pdata[1]), ==, MEND_TURN_FAILED);
  g_assert_cmpstr (mend_turn_get_prompt (ended->pdata[1]), ==, "Continue the current turn");
  assert_queue (&f, "Continue the current turn|A|B");

  g_ptr_array_set_size (ended, 0);
  fixture_tear_down (&f, NULL);
}

static void
test_nothing_runs_the_turn_fails_at_once (void)
{
  if (g_test_subprocess ())
    {
      nothing_runs_the_turn_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*WARNING*Nothing runs this turn: the chat has no sender*MendSender*");
  g_test_trap_assert_stderr_unmatched ("*Nothing runs this turn*Nothing runs this turn*");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/Mend/Chat/retry-keeps-queue-until-success-then-promotes-head", test_retry_keeps_queue_until_success);
  ADD ("/Mend/Chat/give-up-inserts-continue-at-head", test_give_up_inserts_continue_at_head);
  ADD ("/Mend/Chat/give-up-with-empty-queue-inserts-nothing", test_give_up_with_empty_queue_inserts_nothing);
  ADD ("/Mend/Chat/give-up-with-full-queue-loses-nothing", test_give_up_with_full_queue_loses_nothing);
  ADD ("/Mend/Chat/stop-during-wait-keeps-queue-and-promotes-nothing", test_stop_during_wait_keeps_queue);
  ADD ("/Mend/Chat/stop-during-attempt-keeps-queue-and-promotes-nothing", test_stop_during_attempt_keeps_queue);
  ADD ("/Mend/Chat/401-and-403-give-up-at-once-with-continue", test_auth_and_permission_give_up_at_once);
  ADD ("/Mend/Chat/failure-after-output-is-not-retried", test_failure_after_output_is_not_retried);
  ADD ("/Mend/Chat/continue-is-an-ordinary-editable-item", test_continue_is_an_ordinary_item);
  ADD ("/Mend/Chat/stagger-differs-per-chat-within-range", test_stagger_differs_per_chat);
  ADD ("/Mend/Chat/records-for-every-retry-step", test_records_for_every_step);
  ADD ("/Mend/Chat/submit-refuses-bad-input-and-changes-nothing", test_submit_refuses_bad_input_and_changes_nothing);
  ADD ("/Mend/Chat/close-stops-and-refuses", test_close_stops_and_refuses);
  ADD ("/Mend/Chat/external-turn-queues-submissions", test_external_turn_queues_submissions);
  ADD ("/Mend/Chat/provenance-reaches-every-attempt", test_provenance_reaches_every_attempt);
  ADD ("/Mend/Chat/queue-drains-by-loop-not-recursion", test_queue_drains_by_loop_not_recursion);

#undef ADD
  g_test_add_func ("/Mend/Chat/nothing-runs-the-turn-fails-at-once-keeping-the-queue",
                   test_nothing_runs_the_turn_fails_at_once);

  return g_test_run ();
}
