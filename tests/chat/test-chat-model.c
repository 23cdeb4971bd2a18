/* test-chat-model.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A model-based random test of MendChat. A seeded generator drives a chat
 * through random sequences of submissions, successes, transient, permanent
 * and limit failures, output, stops, send_next, queue edits, "Retry now" and
 * clock advances, against a small reference model kept here, and checks
 * after every step: no queued item lost or duplicated, at most one turn in
 * flight, the queue moves only after a success or send_next, Continue only
 * on give-up with a non-empty, non-full queue, and `finished` exactly once
 * per turn. A failure names the seed that reproduces it:
 *
 *   MEND_MODEL_SEED=1234 MEND_MODEL_SEQUENCES=1 test-chat-model
 */

#include <libmend.h>

#include "mend-test-utils.h"

#define MAX_ITEMS 16
#define CONTINUE "Continue the current turn"

typedef struct
{
  char *id;
  char *text;
} ModelItem;

typedef enum
{
  M_NONE,     /* no turn */
  M_RUNNING,
  M_WAITING,
} ModelTurnState;

typedef struct
{
  /* The reference model */
  GPtrArray *queue;           /* ModelItem* */
  MendLifecycle lifecycle;
  ModelTurnState turn;
  char *turn_prompt;
  guint attempt;              /* of the model's turn */
  gboolean output_seen;
  gint64 now_ms;
  gint64 fires_at_ms;         /* when waiting */

  /* The system under test */
  MendClock *clock;
  MendChat *chat;
  GHashTable *finished;       /* MendTurn* → count (turns kept alive here) */
  guint turns_started;

  /* Where we are, for the failure message */
  guint32 seed;
  guint step;
  const char *op;
  guint next_text;
} Model;

#define check(m, cond, ...) G_STMT_START { \
  if (!(cond)) \
    { \
      g_autofree char *_what = g_strdup_printf (__VA_ARGS__); \
      g_error ("seed %u, step %u (%s): %s — reproduce with MEND_MODEL_SEED=%u MEND_MODEL_SEQUENCES=1", \
               (m)->seed, (m)->step, (m)->op, _what, (m)->seed); \
    } \
} G_STMT_END

static void
model_item_free (gpointer data)
{
  ModelItem *item = data;

  g_free (item->id);
  g_free (item->text);
  g_free (item);
}

static void
on_finished (MendTurn      *turn,
             MendTurnState  state,
             Model         *m)
{
  guint count = GPOINTER_TO_UINT (g_hash_table_lookup (m->finished, turn));

  g_hash_table_replace (m->finished, g_object_ref (turn), GUINT_TO_POINTER (count + 1));
  check (m, count == 0, "turn finished %u times", count + 1);
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Model    *m)
{
  m->turns_started++;
  g_signal_connect (turn, "finished", G_CALLBACK (on_finished), m);
}

/* The model's own steps. */

static void
model_start_turn (Model      *m,
                  const char *prompt)
{
  m->turn = M_RUNNING;
  g_free (m->turn_prompt);
  m->turn_prompt = g_strdup (prompt);
  m->attempt = 1;
  m->output_seen = FALSE;
  m->lifecycle = MEND_LIFECYCLE_BUSY;
}

static void
model_promote (Model *m)
{
  ModelItem *head;

  if (m->queue->len == 0)
    return;

  head = g_ptr_array_steal_index (m->queue, 0);
  model_start_turn (m, head->text);
  model_item_free (head);
}

static void
model_end_turn (Model         *m,
                MendTurnState  how)
{
  m->turn = M_NONE;
  g_clear_pointer (&m->turn_prompt, g_free);

  switch (how)
    {
    case MEND_TURN_SUCCEEDED:
      m->lifecycle = MEND_LIFECYCLE_READY;
      model_promote (m);
      break;
    case MEND_TURN_FAILED:
      m->lifecycle = MEND_LIFECYCLE_ERROR;
      if (m->queue->len > 0 && m->queue->len < MAX_ITEMS)
        {
          ModelItem *item = g_new0 (ModelItem, 1);

          /* The id is the chat's to choose: read it back after the step. */
          item->text = g_strdup (CONTINUE);
          g_ptr_array_insert (m->queue, 0, item);
        }
      break;
    case MEND_TURN_STOPPED:
    default:
      m->lifecycle = MEND_LIFECYCLE_READY;
      break;
    }
}

static gint64
model_delay (guint retry)
{
  gint64 delay = 250;

  for (guint i = 1; i < retry; i++)
    delay = MIN (4000, delay * 2);
  return delay;
}

/* Compare the chat with the model; adopt the chat's id for a Continue the
 * model just inserted. */
static void
compare (Model *m)
{
  MendQueue *queue = mend_chat_get_queue (m->chat);
  MendTurn *turn = mend_chat_get_turn (m->chat);
  guint n = mend_queue_get_length (queue);
  guint in_flight = 0;
  GHashTableIter iter;
  gpointer key, value;

  check (m, n == m->queue->len, "queue has %u items, model %u", n, m->queue->len);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);
      ModelItem *expected = g_ptr_array_index (m->queue, i);

      if (expected->id == NULL)
        expected->id = g_strdup (mend_queue_item_get_id (item));
      check (m, g_strcmp0 (expected->id, mend_queue_item_get_id (item)) == 0,
             "item %u is %s, model %s", i, mend_queue_item_get_id (item), expected->id);
      check (m, g_strcmp0 (expected->text, mend_queue_item_get_text (item)) == 0,
             "item %u reads “%s”, model “%s”", i, mend_queue_item_get_text (item), expected->text);
    }

  check (m, mend_chat_get_lifecycle (m->chat) == m->lifecycle,
         "lifecycle %d, model %d", mend_chat_get_lifecycle (m->chat), m->lifecycle);

  if (m->turn == M_NONE)
    check (m, turn == NULL, "a turn runs, the model has none");
  else
    {
      check (m, turn != NULL, "no turn, the model has one");
      check (m, g_strcmp0 (mend_turn_get_prompt (turn), m->turn_prompt) == 0,
             "turn runs “%s”, model “%s”", mend_turn_get_prompt (turn), m->turn_prompt);
      check (m, mend_turn_get_attempt (turn) == m->attempt,
             "attempt %u, model %u", mend_turn_get_attempt (turn), m->attempt);
      check (m, mend_turn_get_state (turn) == (m->turn == M_RUNNING ? MEND_TURN_RUNNING : MEND_TURN_WAITING),
             "turn state %d, model %d", mend_turn_get_state (turn), m->turn);
    }

  /* At most one turn in flight: every started turn but the current one has
   * finished, once. */
  g_hash_table_iter_init (&iter, m->finished);
  while (g_hash_table_iter_next (&iter, &key, &value))
    check (m, GPOINTER_TO_UINT (value) == 1, "a turn finished %u times", GPOINTER_TO_UINT (value));
  in_flight = m->turns_started - g_hash_table_size (m->finished);
  check (m, in_flight == (m->turn != M_NONE ? 1u : 0u), "%u turns in flight", in_flight);
}

static void
op_submit (Model *m,
           GRand *rand)
{
  g_autofree char *text = g_strdup_printf ("message %u", m->next_text++);
  g_autoptr(GError) error = NULL;
  gboolean runs_now = (m->lifecycle == MEND_LIFECYCLE_READY || m->lifecycle == MEND_LIFECYCLE_ERROR) &&
                      m->turn == M_NONE;
  gboolean ok = mend_chat_submit (m->chat, text, NULL, &error);

  if (runs_now)
    {
      check (m, ok, "submit refused: %s", error ? error->message : "");
      model_start_turn (m, text);
    }
  else if (m->queue->len >= MAX_ITEMS)
    check (m, !ok && g_error_matches (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL),
           "a full queue took “%s”", text);
  else
    {
      ModelItem *item = g_new0 (ModelItem, 1);

      check (m, ok, "submit refused: %s", error ? error->message : "");
      item->text = g_strdup (text);
      g_ptr_array_add (m->queue, item);
    }
}

static void
op_fail (Model      *m,
         const char *how)
{
  MendTurn *turn = mend_chat_get_turn (m->chat);
  g_autoptr(MendFailure) failure = NULL;

  if (g_str_equal (how, "transient"))
    failure = mend_failure_new_from_http (503, NULL, NULL);
  else if (g_str_equal (how, "permanent"))
    failure = mend_failure_new_from_http (400, NULL, NULL);
  else
    failure = mend_failure_new_from_text ("You've hit your usage limit");

  if (turn != NULL)
    mend_turn_fail (turn, failure);

  /* Only a running attempt can fail; a wait ignores late failures. */
  if (m->turn != M_RUNNING)
    return;

  if (g_str_equal (how, "transient") && !m->output_seen && m->attempt < 5)
    {
      m->turn = M_WAITING;
      m->fires_at_ms = m->now_ms + model_delay (m->attempt);
    }
  else
    model_end_turn (m, MEND_TURN_FAILED);
}

static void
op_succeed (Model *m)
{
  if (mend_chat_get_turn (m->chat) != NULL)
    mend_turn_succeed (mend_chat_get_turn (m->chat));

  if (m->turn == M_RUNNING)
    model_end_turn (m, MEND_TURN_SUCCEEDED);
}

static void
model_fire (Model *m)
{
  m->turn = M_RUNNING;
  m->attempt++;
  m->output_seen = FALSE;
}

static void
op_advance (Model *m,
            GRand *rand)
{
  guint ms = g_rand_int_range (rand, 0, 3000);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (m->clock), ms);
  m->now_ms += ms;
  if (m->turn == M_WAITING && m->fires_at_ms <= m->now_ms)
    model_fire (m);
}

static void
op_queue_edit (Model *m,
               GRand *rand)
{
  MendQueue *queue = mend_chat_get_queue (m->chat);
  ModelItem *item;
  guint i;

  if (m->queue->len == 0)
    return;

  i = g_rand_int_range (rand, 0, m->queue->len);
  item = g_ptr_array_index (m->queue, i);

  if (g_rand_boolean (rand))
    {
      check (m, mend_queue_remove (queue, item->id, NULL), "remove %s failed", item->id);
      g_ptr_array_remove_index (m->queue, i);
    }
  else
    {
      g_autofree char *text = g_strdup_printf ("edited %u", m->next_text++);

      check (m, mend_queue_replace_text (queue, item->id, text, NULL), "replace %s failed", item->id);
      g_free (item->text);
      item->text = g_steal_pointer (&text);
    }
}

static void
run_sequence (guint32 seed,
              guint   steps)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  MendErrorPolicy *policy = mend_error_policy_new ();
  Model m = { 0 };

  m.seed = seed;
  m.queue = g_ptr_array_new_with_free_func (model_item_free);
  m.lifecycle = MEND_LIFECYCLE_READY;
  m.finished = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
  m.clock = mend_manual_clock_new (1764500000000000);

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  m.chat = g_object_new (MEND_TYPE_CHAT, "clock", m.clock, "policy", policy, NULL);
  mend_test_run_turns_by_hand (m.chat);
  g_object_unref (policy);
  g_signal_connect (m.chat, "turn-started", G_CALLBACK (on_turn_started), &m);

  for (m.step = 0; m.step < steps; m.step++)
    {
      guint pick = g_rand_int_range (rand, 0, 100);

      if (pick < 22)
        m.op = "submit", op_submit (&m, rand);
      else if (pick < 37)
        m.op = "succeed", op_succeed (&m);
      else if (pick < 52)
        m.op = "transient failure", op_fail (&m, "transient");
      else if (pick < 56)
        m.op = "permanent failure", op_fail (&m, "permanent");
      else if (pick < 59)
        m.op = "limit failure", op_fail (&m, "limit");
      else if (pick < 63)
        {
          m.op = "note output";
          if (mend_chat_get_turn (m.chat) != NULL)
            mend_turn_note_output (mend_chat_get_turn (m.chat));
          if (m.turn == M_RUNNING)
            m.output_seen = TRUE;
        }
      else if (pick < 68)
        {
          m.op = "stop";
          mend_chat_stop (m.chat);
          if (m.turn != M_NONE)
            model_end_turn (&m, MEND_TURN_STOPPED);
        }
      else if (pick < 74)
        {
          gboolean started;

          m.op = "send next";
          started = mend_chat_send_next (m.chat);
          check (&m, started == (m.turn == M_NONE && m.queue->len > 0),
                 "send_next returned %d", started);
          if (started)
            model_promote (&m);
        }
      else if (pick < 82)
        m.op = "queue edit", op_queue_edit (&m, rand);
      else if (pick < 85)
        {
          m.op = "retry now";
          if (mend_chat_get_turn (m.chat) != NULL)
            mend_turn_retry_now (mend_chat_get_turn (m.chat));
          if (m.turn == M_WAITING)
            model_fire (&m);
        }
      else
        m.op = "advance", op_advance (&m, rand);

      compare (&m);
    }

  mend_chat_close (m.chat);
  g_assert_finalize_object (m.chat);
  g_hash_table_unref (m.finished);
  g_assert_finalize_object (m.clock);
  g_ptr_array_unref (m.queue);
  g_free (m.turn_prompt);
}

static void
test_random_sequences_keep_the_invariants (void)
{
  const char *seed_env = g_getenv ("MEND_MODEL_SEED");
  const char *count_env = g_getenv ("MEND_MODEL_SEQUENCES");
  guint32 first = seed_env ? (guint32) g_ascii_strtoull (seed_env, NULL, 10) : 1;
  guint count = count_env ? (guint) g_ascii_strtoull (count_env, NULL, 10) : 3000;

  for (guint i = 0; i < count; i++)
    run_sequence (first + i, 80);

  g_test_message ("%u random sequences of 80 steps, seeds %u to %u", count, first, first + count - 1);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/ChatModel/random-sequences-keep-the-invariants",
                   test_random_sequences_keep_the_invariants);

  return g_test_run ();
}
