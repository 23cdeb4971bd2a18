/* test-reentrancy.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Re-entrancy torture. A seeded generator drives a chat, its turns, waits,
 * queue and subagents through random steps; and inside every signal that
 * libmend emits, a handler may call back into the API — stop, submit,
 * send_next, cancel or fire a wait, start, fail, resume or end subagents,
 * edit the queue, end attempts, close the chat, or drop the last reference
 * to it. There is no reference model: what must hold is that nothing
 * crashes or touches freed memory (run it under AddressSanitizer and
 * valgrind), every object is finalized, and after every step:
 *
 * - no queued message of the user's is lost or started twice;
 * - a BUSY chat has a turn, and a turn is RUNNING or WAITING on a pending
 *   wait: nothing is stranded with nothing pending;
 * - a subagent's wait, when it has one, is pending;
 * - every turn finishes exactly once; every record is a JSON object.
 *
 * A failure names the seed that reproduces it:
 *
 *   MEND_TORTURE_SEED=1234 MEND_TORTURE_SEQUENCES=1 test-reentrancy
 */

#include <json-glib/json-glib.h>
#include <libmend.h>

#define MAX_DEPTH 3

typedef enum
{
  ITEM_QUEUED,     /* accepted: in the queue or started */
  ITEM_STARTED,
  ITEM_REMOVED,
} ItemFate;

typedef struct
{
  GRand      *rand;
  MendClock  *clock;
  MendChat   *chat;           /* NULL once a handler dropped it */
  gpointer    chat_weak;      /* cleared when it is finalized */
  GHashTable *items;          /* user text → ItemFate */
  GHashTable *finished;       /* turn id → count */
  GPtrArray  *turns_weak;     /* gpointer* slots of every turn made */
  guint       depth;
  guint       next_text;
  guint       calls;          /* re-entrant calls made */
  gboolean    trace;          /* MEND_TORTURE_TRACE: print every call */

  guint32     seed;
  guint       step;
  const char *op;
} Torture;

#define check(t, cond, ...) G_STMT_START { \
  if (!(cond)) \
    { \
      g_autofree char *_what = g_strdup_printf (__VA_ARGS__); \
      g_error ("seed %u, step %u (%s): %s — reproduce with MEND_TORTURE_SEED=%u MEND_TORTURE_SEQUENCES=1", \
               (t)->seed, (t)->step, (t)->op, _what, (t)->seed); \
    } \
} G_STMT_END

static const char *names[] = { "overview", "tests", "docs" };

static void act (Torture *t);

/* Every handler: maybe call back into the API, a bounded number of levels
 * deep. */
static void
maybe_act (Torture *t)
{
  if (t->depth >= MAX_DEPTH || g_rand_int_range (t->rand, 0, 100) >= 15)
    return;

  t->depth++;
  t->calls++;
  act (t);
  t->depth--;
}

static void
on_any (gpointer instance,
        Torture *t)
{
  maybe_act (t);
}

static void
on_any_1 (gpointer instance,
          gpointer a,
          Torture *t)
{
  maybe_act (t);
}

static void
on_any_2 (gpointer instance,
          gpointer a,
          gpointer b,
          Torture *t)
{
  maybe_act (t);
}

static void
on_any_3 (gpointer instance,
          gpointer a,
          gpointer b,
          gpointer c,
          Torture *t)
{
  maybe_act (t);
}

static void
on_record (gpointer    instance,
           const char *json,
           Torture    *t)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);

  check (t, node != NULL && JSON_NODE_HOLDS_OBJECT (node), "a record is not a JSON object: %s", json);
  maybe_act (t);
}

static void
on_wait_made (MendRetryWait *wait,
              Torture       *t)
{
  g_signal_connect (wait, "fired", G_CALLBACK (on_any), t);
  g_signal_connect (wait, "cancelled", G_CALLBACK (on_any), t);
  g_signal_connect (wait, "notify", G_CALLBACK (on_any_1), t);
}

static void
on_turn_waiting (MendTurn      *turn,
                 MendRetryWait *wait,
                 Torture       *t)
{
  on_wait_made (wait, t);
  maybe_act (t);
}

static void
on_turn_finished (MendTurn      *turn,
                  MendTurnState  state,
                  Torture       *t)
{
  guint count = GPOINTER_TO_UINT (g_hash_table_lookup (t->finished, mend_turn_get_id (turn)));

  check (t, count == 0, "a turn finished %u times", count + 1);
  g_hash_table_replace (t->finished, g_strdup (mend_turn_get_id (turn)), GUINT_TO_POINTER (count + 1));
  maybe_act (t);
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Torture  *t)
{
  const char *prompt = mend_turn_get_prompt (turn);
  gpointer *slot = g_new0 (gpointer, 1);

  if (g_hash_table_contains (t->items, prompt))
    {
      ItemFate fate = GPOINTER_TO_INT (g_hash_table_lookup (t->items, prompt));

      check (t, fate == ITEM_QUEUED, "“%s” started twice, or after it was removed", prompt);
      g_hash_table_replace (t->items, g_strdup (prompt), GINT_TO_POINTER (ITEM_STARTED));
    }

  *slot = turn;
  g_object_add_weak_pointer (G_OBJECT (turn), slot);
  g_ptr_array_add (t->turns_weak, slot);

  g_signal_connect (turn, "attempt", G_CALLBACK (on_any_2), t);
  g_signal_connect (turn, "waiting", G_CALLBACK (on_turn_waiting), t);
  g_signal_connect (turn, "resumed", G_CALLBACK (on_any_1), t);
  g_signal_connect (turn, "exhausted", G_CALLBACK (on_any_1), t);
  g_signal_connect (turn, "finished", G_CALLBACK (on_turn_finished), t);
  g_signal_connect (turn, "notify", G_CALLBACK (on_any_1), t);
  maybe_act (t);
}

static void
on_subagent_waiting (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     MendRetryWait     *wait,
                     Torture           *t)
{
  on_wait_made (wait, t);
  maybe_act (t);
}

/* The API calls, from the driver and from handlers alike. */

static MendRetryWait *
some_wait (Torture *t)
{
  MendSubagentRetry *subagents = mend_chat_get_subagents (t->chat);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (subagents));

  if (mend_chat_get_turn (t->chat) != NULL && (n == 0 || g_rand_boolean (t->rand)))
    return mend_turn_get_wait (mend_chat_get_turn (t->chat));

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(MendSubagent) sub = g_list_model_get_item (G_LIST_MODEL (subagents), i);

      if (mend_subagent_get_retry (sub) != NULL)
        return mend_subagent_get_retry (sub);
    }

  return NULL;
}

static void
do_submit (Torture *t)
{
  g_autofree char *text = g_strdup_printf ("u%u", t->next_text++);

  /* Known before the call: it may start a turn at once. */
  g_hash_table_insert (t->items, g_strdup (text), GINT_TO_POINTER (ITEM_QUEUED));
  if (!mend_chat_submit (t->chat, text, NULL, NULL))
    g_hash_table_remove (t->items, text);
}

static void
do_queue_edit (Torture *t)
{
  MendQueue *queue = mend_chat_get_queue (t->chat);
  guint n = mend_queue_get_length (queue);
  g_autoptr(MendQueueItem) item = NULL;
  g_autofree char *old = NULL;
  g_autofree char *id = NULL;

  if (n == 0)
    return;

  item = g_list_model_get_item (G_LIST_MODEL (queue), g_rand_int_range (t->rand, 0, n));
  old = g_strdup (mend_queue_item_get_text (item));
  id = g_strdup (mend_queue_item_get_id (item));

  /* The books are kept before each call: its handlers may edit the same
   * item again. */
  if (g_rand_boolean (t->rand))
    {
      gboolean known = g_hash_table_contains (t->items, old);

      if (known)
        g_hash_table_replace (t->items, g_strdup (old), GINT_TO_POINTER (ITEM_REMOVED));
      if (!mend_queue_remove (queue, id, NULL) && known)
        g_hash_table_replace (t->items, g_strdup (old), GINT_TO_POINTER (ITEM_QUEUED));
    }
  else
    {
      g_autofree char *text = g_strdup_printf ("u%u", t->next_text++);
      gboolean known = g_hash_table_contains (t->items, old);

      /* An edited Continue or resume prompt stays the library's: a Stop
       * may take a resume prompt back, edited or not. */
      if (known)
        {
          g_hash_table_replace (t->items, g_strdup (old), GINT_TO_POINTER (ITEM_REMOVED));
          g_hash_table_insert (t->items, g_strdup (text), GINT_TO_POINTER (ITEM_QUEUED));
        }
      if (!mend_queue_replace_text (queue, id, text, NULL) && known)
        {
          g_hash_table_remove (t->items, text);
          g_hash_table_replace (t->items, g_strdup (old), GINT_TO_POINTER (ITEM_QUEUED));
        }
    }
}

static void
do_subagent (Torture *t)
{
  MendSubagentRetry *subagents = mend_chat_get_subagents (t->chat);
  guint k = g_rand_int_range (t->rand, 0, 6);
  g_autofree char *id = g_strdup_printf ("toolu_%u", k);
  g_autofree char *agent = g_strdup_printf ("agent-%u", k);

  switch (g_rand_int_range (t->rand, 0, 6))
    {
    case 0:
      mend_subagent_retry_note_started (subagents, id, agent, names[k % G_N_ELEMENTS (names)]);
      break;
    case 1:
    case 2:
      {
        g_autoptr(MendFailure) failure = g_rand_boolean (t->rand)
          ? mend_failure_new_from_http (503, NULL, NULL)
          : mend_failure_new_from_http (401, NULL, NULL);

        mend_subagent_retry_note_failed (subagents, agent, failure);
      }
      break;
    case 3:
      mend_subagent_retry_note_resumed (subagents, agent);
      break;
    case 4:
      mend_subagent_retry_note_ended (subagents, id, g_rand_boolean (t->rand) ? MEND_SUBAGENT_COMPLETED
                                                                              : MEND_SUBAGENT_CANCELLED);
      break;
    default:
      mend_subagent_retry_resume_now (subagents, id, NULL);
      break;
    }
}

static void
act (Torture *t)
{
  MendTurn *turn;
  MendRetryWait *wait;
  int pick;

  if (t->chat == NULL)
    return;

  turn = mend_chat_get_turn (t->chat);
  pick = g_rand_int_range (t->rand, 0, 100);
  if (t->trace)
    {
      MendQueue *queue = mend_chat_get_queue (t->chat);
      g_autoptr(GString) texts = g_string_new (NULL);

      for (guint i = 0; i < mend_queue_get_length (queue); i++)
        {
          g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

          g_string_append_printf (texts, " [%.12s]", mend_queue_item_get_text (item));
        }
      g_printerr ("%*sact %d (turn %.12s, lifecycle %d, queue%s)\n", (int) t->depth * 2, "", pick,
                  turn ? mend_turn_get_prompt (turn) : "-", mend_chat_get_lifecycle (t->chat), texts->str);
    }

  switch (pick)
    {
    case 0 ... 14:
      do_submit (t);
      break;
    case 15 ... 24:
      if (turn != NULL)
        mend_turn_succeed (turn);
      break;
    case 25 ... 34:
      if (turn != NULL)
        {
          g_autoptr(MendFailure) failure = mend_failure_new_from_http (g_rand_boolean (t->rand) ? 529 : 400,
                                                                       NULL, NULL);
          mend_turn_fail (turn, failure);
        }
      break;
    case 35 ... 41:
      mend_chat_stop (t->chat);
      break;
    case 42 ... 47:
      mend_chat_send_next (t->chat);
      break;
    case 48 ... 54:
      wait = some_wait (t);
      if (wait != NULL)
        mend_retry_wait_cancel (wait);
      break;
    case 55 ... 59:
      wait = some_wait (t);
      if (wait != NULL)
        mend_retry_wait_fire_now (wait);
      break;
    case 60 ... 61:
      if (turn != NULL)
        mend_turn_retry_now (turn);
      break;
    case 62 ... 77:
      do_subagent (t);
      break;
    case 78 ... 81:
      if (g_rand_boolean (t->rand))
        mend_chat_begin_external_turn (t->chat);
      else
        mend_chat_end_external_turn (t->chat);
      break;
    case 82 ... 89:
      do_queue_edit (t);
      break;
    case 90:
      if (g_rand_int_range (t->rand, 0, 4) == 0)
        mend_chat_close (t->chat);
      break;
    case 91:
      /* The app lets go of the chat from inside a handler. */
      if (t->depth > 0 && g_rand_int_range (t->rand, 0, 4) == 0)
        g_clear_object (&t->chat);
      break;
    default:
      if (turn != NULL)
        mend_turn_note_output (turn);
      break;
    }
}

static void
check_invariants (Torture *t)
{
  MendQueue *queue;
  MendSubagentRetry *subagents;
  MendTurn *turn;
  GHashTable *queued;
  GHashTableIter iter;
  gpointer key, value;

  if (t->chat == NULL)
    return;

  queue = mend_chat_get_queue (t->chat);
  subagents = mend_chat_get_subagents (t->chat);
  turn = mend_chat_get_turn (t->chat);

  /* Nothing stranded. */
  if (mend_chat_get_lifecycle (t->chat) == MEND_LIFECYCLE_BUSY)
    check (t, turn != NULL, "the chat is BUSY with no turn");
  if (turn != NULL)
    {
      MendTurnState state = mend_turn_get_state (turn);

      check (t, mend_chat_get_lifecycle (t->chat) == MEND_LIFECYCLE_BUSY ||
                mend_chat_get_lifecycle (t->chat) == MEND_LIFECYCLE_CLOSED,
             "a turn runs in lifecycle %d", mend_chat_get_lifecycle (t->chat));
      check (t, state == MEND_TURN_RUNNING || state == MEND_TURN_WAITING,
             "the chat's turn is in state %d", state);
      if (state == MEND_TURN_WAITING)
        check (t, mend_turn_get_wait (turn) != NULL &&
                  mend_retry_wait_get_state (mend_turn_get_wait (turn)) == MEND_RETRY_WAIT_PENDING,
               "a turn waits on no pending wait");
    }
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (subagents)); i++)
    {
      g_autoptr(MendSubagent) sub = g_list_model_get_item (G_LIST_MODEL (subagents), i);
      MendRetryWait *wait = mend_subagent_get_retry (sub);

      check (t, wait == NULL || mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_PENDING,
             "subagent %s keeps a wait that ended", mend_subagent_get_id (sub));
    }

  /* No user message lost, none twice. */
  queued = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);
      const char *text = mend_queue_item_get_text (item);

      if (!g_hash_table_contains (t->items, text))
        continue;
      check (t, !g_hash_table_contains (queued, text), "“%s” is queued twice", text);
      check (t, GPOINTER_TO_INT (g_hash_table_lookup (t->items, text)) == ITEM_QUEUED,
             "“%s” is queued after it started or was removed", text);
      g_hash_table_add (queued, (gpointer) text);
    }
  g_hash_table_iter_init (&iter, t->items);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (GPOINTER_TO_INT (value) == ITEM_QUEUED)
      check (t, g_hash_table_contains (queued, key), "“%s” was lost", (const char *) key);
  g_hash_table_unref (queued);
}

static void
connect_chat (Torture *t)
{
  MendSubagentRetry *subagents = mend_chat_get_subagents (t->chat);

  g_signal_connect (t->chat, "turn-started", G_CALLBACK (on_turn_started), t);
  g_signal_connect (t->chat, "turn-finished", G_CALLBACK (on_any_1), t);
  g_signal_connect (t->chat, "record", G_CALLBACK (on_record), t);
  g_signal_connect (t->chat, "stopped", G_CALLBACK (on_any), t);
  g_signal_connect (t->chat, "notify", G_CALLBACK (on_any_1), t);
  g_signal_connect (mend_chat_get_queue (t->chat), "items-changed", G_CALLBACK (on_any_3), t);
  g_signal_connect (subagents, "waiting", G_CALLBACK (on_subagent_waiting), t);
  g_signal_connect (subagents, "fired", G_CALLBACK (on_any_2), t);
  g_signal_connect (subagents, "resumed", G_CALLBACK (on_any_1), t);
  g_signal_connect (subagents, "skipped", G_CALLBACK (on_any_2), t);
  g_signal_connect (subagents, "exhausted", G_CALLBACK (on_any_1), t);
  g_signal_connect (subagents, "record", G_CALLBACK (on_record), t);
  g_signal_connect (subagents, "items-changed", G_CALLBACK (on_any_3), t);
}

static guint64 total_steps;
static guint64 total_calls;

static void
run_sequence (guint32 seed,
              guint   steps)
{
  Torture t = { 0 };

  t.seed = seed;
  t.trace = g_getenv ("MEND_TORTURE_TRACE") != NULL;
  if (t.trace)
    g_printerr ("seed %u\n", seed);
  t.rand = g_rand_new_with_seed (seed);
  t.clock = mend_manual_clock_new (1764500000000000);
  t.items = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  t.finished = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  t.turns_weak = g_ptr_array_new_with_free_func (g_free);
  t.chat = g_object_new (MEND_TYPE_CHAT, "clock", t.clock, NULL);
  t.chat_weak = t.chat;
  g_object_add_weak_pointer (G_OBJECT (t.chat), &t.chat_weak);
  connect_chat (&t);

  for (t.step = 0; t.step < steps && t.chat != NULL; t.step++)
    {
      if (g_rand_int_range (t.rand, 0, 100) < 20)
        {
          /* Waits of turns (up to 4 s) and of subagents (20 s and up). */
          guint ms = g_rand_boolean (t.rand) ? g_rand_int_range (t.rand, 0, 5000)
                                             : g_rand_int_range (t.rand, 0, 60000);

          t.op = "advance";
          mend_manual_clock_advance (MEND_MANUAL_CLOCK (t.clock), ms);
        }
      else
        {
          t.op = "act";
          act (&t);
        }
      check_invariants (&t);
    }

  total_steps += t.step;
  total_calls += t.calls;
  t.op = "teardown";
  g_clear_object (&t.chat);
  /* Let go of everything: the chat, its turns and waits are finalized,
   * whatever the handlers did. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (t.clock), 24 * 3600 * 1000);
  check (&t, t.chat_weak == NULL, "the chat was not finalized");
  for (guint i = 0; i < t.turns_weak->len; i++)
    {
      gpointer *slot = g_ptr_array_index (t.turns_weak, i);

      check (&t, *slot == NULL, "a turn was not finalized");
    }

  g_assert_finalize_object (t.clock);
  g_ptr_array_unref (t.turns_weak);
  g_hash_table_unref (t.finished);
  g_hash_table_unref (t.items);
  g_rand_free (t.rand);
}

static void
test_handlers_calling_back_keep_the_invariants (void)
{
  const char *seed_env = g_getenv ("MEND_TORTURE_SEED");
  const char *count_env = g_getenv ("MEND_TORTURE_SEQUENCES");
  guint32 first = seed_env ? (guint32) g_ascii_strtoull (seed_env, NULL, 10) : 1;
  guint count = count_env ? (guint) g_ascii_strtoull (count_env, NULL, 10) : 2000;

  for (guint i = 0; i < count; i++)
    run_sequence (first + i, 60);

  g_test_message ("%u sequences of up to 60 steps, seeds %u to %u: %" G_GUINT64_FORMAT " steps, "
                  "%" G_GUINT64_FORMAT " calls back into the API from inside a signal",
                  count, first, first + count - 1, total_steps, total_calls);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Reentrancy/handlers-calling-back-keep-the-invariants",
                   test_handlers_calling_back_keep_the_invariants);

  return g_test_run ();
}
