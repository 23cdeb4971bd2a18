/* test-attack.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Lifecycle attacks the re-entrancy torture does not reach: handlers that
 * dispose or free what is emitting, cancellable handlers, a do_classify
 * that calls back in, list items' notifications, a real clock freed by its
 * own timer. Each test names the behaviour it expects; run them under
 * AddressSanitizer too. Attacks through saved state are in
 * test-attack-state.c.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000
#define GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available (error type server_error, HTTP 503)"

/* A policy whose classify calls back into libmend, as a Python
 * do_classify may. */

typedef void (*Hook) (gpointer data);

#define TEST_TYPE_HOOK_POLICY (test_hook_policy_get_type ())
G_DECLARE_FINAL_TYPE (TestHookPolicy, test_hook_policy, TEST, HOOK_POLICY, MendErrorPolicy)

struct _TestHookPolicy
{
  MendErrorPolicy parent_instance;
  Hook            hook;       /* run once, at the next classify */
  gpointer        hook_data;
};

G_DEFINE_FINAL_TYPE (TestHookPolicy, test_hook_policy, MEND_TYPE_ERROR_POLICY)

static MendFailureKind
test_hook_policy_classify (MendErrorPolicy *policy,
                           MendFailure     *failure)
{
  TestHookPolicy *self = TEST_HOOK_POLICY (policy);
  Hook hook = self->hook;

  self->hook = NULL;
  if (hook != NULL)
    hook (self->hook_data);

  return MEND_ERROR_POLICY_CLASS (test_hook_policy_parent_class)->classify (policy, failure);
}

static void
test_hook_policy_class_init (TestHookPolicyClass *klass)
{
  MEND_ERROR_POLICY_CLASS (klass)->classify = test_hook_policy_classify;
}

static void
test_hook_policy_init (TestHookPolicy *self)
{
}

/* Runs the current test again in a child whose freed memory is scribbled
 * over at once (every GObject from malloc, no glibc cache in between), so
 * that a use after free shows without a sanitizer too; a hang shows as the
 * child's timeout. */
static void
trap_in_scribbling_child (void)
{
  g_setenv ("G_SLICE", "always-malloc", TRUE);
  g_setenv ("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165", TRUE);
  g_test_trap_subprocess (NULL, 5 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("GLIBC_TUNABLES");
  g_test_trap_assert_passed ();
}

static void
count_prompt (MendChat *chat,
              MendTurn *turn,
              guint    *n)
{
  (*n)++;
}

/* A chat's turn-finished path after a handler of its own record signal
 * disposed the chat: the chat's reference to the turn is dropped once. */

typedef struct
{
  MendChat *chat;
  MendTurn *turn;
  gboolean  disposed;
} DisposeFromRecord;

static void
grab_turn (MendChat          *chat,
           MendTurn          *turn,
           DisposeFromRecord *d)
{
  g_set_object (&d->turn, turn);
}

static void
dispose_on_gave_up (MendChat          *chat,
                    const char        *json,
                    DisposeFromRecord *d)
{
  if (!d->disposed && strstr (json, "\"gave_up\"") != NULL)
    {
      d->disposed = TRUE;
      g_object_run_dispose (G_OBJECT (chat));
    }
}

static void
test_chat_disposed_from_record_handler_drops_its_turn_once (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  DisposeFromRecord d = { 0 };
  g_autoptr(MendFailure) failure = mend_failure_new_from_http (401, NULL, NULL);
  gpointer weak = NULL;

  d.chat = mend_test_new_chat_by_hand (clock);
  g_signal_connect (d.chat, "turn-started", G_CALLBACK (grab_turn), &d);
  g_signal_connect (d.chat, "record", G_CALLBACK (dispose_on_gave_up), &d);

  g_assert_true (mend_chat_submit (d.chat, "Fix the build", NULL, NULL));
  g_assert_nonnull (d.turn);
  weak = d.turn;
  g_object_add_weak_pointer (G_OBJECT (d.turn), &weak);
  /* Ours, the chat's. */
  g_assert_cmpuint (G_OBJECT (d.turn)->ref_count, ==, 2);

  mend_turn_fail (d.turn, failure);
  g_assert_true (d.disposed);
  /* We still hold a reference: the turn must be alive. */
  g_assert_nonnull (weak);
  g_assert_cmpint (mend_turn_get_state (d.turn), ==, MEND_TURN_FAILED);
  /* The chat let go of it exactly once: ours is the last reference. */
  g_assert_cmpuint (G_OBJECT (d.turn)->ref_count, ==, 1);

  g_assert_finalize_object (d.turn);
  g_assert_finalize_object (d.chat);
  g_assert_finalize_object (clock);
}

/* GObject's contract: a disposed object still answers its methods (maybe
 * with an error), without a memory violation. */
static void
test_disposed_chat_still_answers_its_methods (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  g_autofree char *state = NULL;
  g_autoptr(GError) error = NULL;

  g_object_run_dispose (G_OBJECT (chat));

  g_assert_nonnull (mend_chat_get_subagents (chat));
  state = mend_chat_save_state (chat);
  g_assert_nonnull (state);
  /* A resume prompt's provenance is looked up among the subagents. */
  mend_chat_submit (chat, "Resume it",
                    "{\"kind\":\"subagent_retry\",\"subagentId\":\"s\",\"agentId\":\"a\",\"attempt\":1,\"promptId\":\"sr-1\"}",
                    &error);

  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A standalone turn started with a cancellable, stopped by another handler
 * of that cancellable's cancelled signal, that runs before the turn's own:
 * GLib 2.74's g_cancellable_disconnect() waits for the emission to end. */

static void
stop_turn_on_cancel (GCancellable *cancellable,
                     MendTurn     *turn)
{
  mend_turn_stop (turn);
}

static void
turn_stopped_by_other_cancel_handler_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendTurn *turn = g_object_new (MEND_TYPE_TURN, "prompt", "Fix the build", "clock", clock, NULL);
  GCancellable *cancellable = g_cancellable_new ();

  mend_test_run_by_hand (turn);
  g_cancellable_connect (cancellable, G_CALLBACK (stop_turn_on_cancel), turn, NULL);
  mend_turn_start (turn, cancellable);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);

  g_cancellable_cancel (cancellable);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);

  g_assert_finalize_object (turn);
  g_assert_finalize_object (cancellable);
  g_assert_finalize_object (clock);
}

static void
test_turn_stopped_from_another_cancelled_handler_returns (void)
{
  if (g_test_subprocess ())
    {
      turn_stopped_by_other_cancel_handler_child ();
      return;
    }

  /* A deadlock shows as the child's timeout. */
  g_test_trap_subprocess (NULL, 5 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

static void
drop_turn_on_cancel (GCancellable  *cancellable,
                     MendTurn     **turn)
{
  g_clear_object (turn);
}

static void
turn_dropped_by_cancel_handler_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendTurn *turn = g_object_new (MEND_TYPE_TURN, "prompt", "Fix the build", "clock", clock, NULL);
  GCancellable *cancellable = g_cancellable_new ();
  gpointer weak = turn;

  g_object_add_weak_pointer (G_OBJECT (turn), &weak);
  mend_test_run_by_hand (turn);
  g_cancellable_connect (cancellable, G_CALLBACK (drop_turn_on_cancel), &turn, NULL);
  mend_turn_start (turn, cancellable);

  g_cancellable_cancel (cancellable);
  g_assert_null (turn);
  g_assert_null (weak);

  g_assert_finalize_object (cancellable);
  g_assert_finalize_object (clock);
}

static void
test_turn_dropped_from_a_cancelled_handler_returns (void)
{
  if (g_test_subprocess ())
    {
      turn_dropped_by_cancel_handler_child ();
      return;
    }

  g_test_trap_subprocess (NULL, 5 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* A real clock of the app's own (not the default), whose last reference a
 * timer callback drops: the dispatch that ran it must not touch it after. */

static void
drop_clock (gpointer data)
{
  MendClock **clock = data;

  g_clear_object (clock);
}

static void
real_clock_freed_by_its_own_timer_child (void)
{
  MendClock *clock = g_object_new (MEND_TYPE_CLOCK, NULL);
  gpointer weak = clock;

  g_object_add_weak_pointer (G_OBJECT (clock), &weak);
  mend_clock_add_timeout (clock, 0, drop_clock, &clock, NULL);

  while (clock != NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_null (weak);

  /* Whatever the dispatch did after the callback has happened by now. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
test_real_clock_freed_by_its_own_timer_is_not_touched_after (void)
{
  if (g_test_subprocess ())
    {
      real_clock_freed_by_its_own_timer_child ();
      return;
    }

  /* The dispatch locks the freed clock's mutex: a hang, or a crash. */
  trap_in_scribbling_child ();
}

/* A new top-level subagent of the same name replaces a failed one, here
 * from inside the classification of the old one's next failure notice:
 * the replaced subagent gets no countdown and is never resumed. */

static void
start_namesake (gpointer data)
{
  MendSubagentRetry *retry = data;

  g_assert_nonnull (mend_subagent_retry_note_started (retry, "toolu_2", "agent-b", "Push relay"));
}

typedef struct
{
  GPtrArray *waits;          /* every wait announced */
  guint      unlisted;       /* announced for a subagent not in the list */
  guint      prompts;        /* turns that resume agent-a */
} Announced;

static void
on_subagent_waiting (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     MendRetryWait     *wait,
                     Announced         *a)
{
  g_ptr_array_add (a->waits, g_object_ref (wait));
  if (mend_subagent_retry_lookup (retry, mend_subagent_get_id (subagent)) != subagent)
    a->unlisted++;
}

static void
count_prompts_for_agent_a (MendChat  *chat,
                           MendTurn  *turn,
                           Announced *a)
{
  if (strstr (mend_turn_get_prompt (turn), "agent-a") != NULL)
    a->prompts++;
}

static void
test_subagent_replaced_while_its_failure_is_classified_is_not_resumed (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(TestHookPolicy) policy = g_object_new (TEST_TYPE_HOOK_POLICY, NULL);
  MendChat *chat;
  MendSubagentRetry *retry;
  g_autoptr(MendFailure) refused = mend_failure_new_from_http (401, NULL, NULL);
  g_autoptr(MendFailure) busy = mend_failure_new_from_text (GATEWAY_503);
  Announced a = { g_ptr_array_new_with_free_func (g_object_unref) };

  mend_error_policy_set_jitter (MEND_ERROR_POLICY (policy), MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "resume-policy", policy, NULL);
  mend_test_run_turns_by_hand (chat);
  retry = mend_chat_get_subagents (chat);
  g_signal_connect (chat, "turn-started", G_CALLBACK (count_prompts_for_agent_a), &a);
  g_signal_connect (retry, "waiting", G_CALLBACK (on_subagent_waiting), &a);

  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", refused);
  g_assert_nonnull (mend_subagent_retry_lookup (retry, "toolu_1"));

  policy->hook = start_namesake;
  policy->hook_data = retry;
  mend_subagent_retry_note_failed (retry, "agent-a", busy);
  g_assert_null (mend_subagent_retry_lookup (retry, "toolu_1"));

  /* No countdown for a subagent that is gone... */
  g_assert_cmpuint (a.unlisted, ==, 0);

  /* ...and a wait the UI holds ends as it says: fired means a prompt. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);
  for (guint i = 0; i < a.waits->len; i++)
    if (mend_retry_wait_get_state (g_ptr_array_index (a.waits, i)) == MEND_RETRY_WAIT_FIRED)
      g_assert_cmpuint (a.prompts, >, 0);
  g_assert_cmpuint (a.prompts, ==, 0);

  g_ptr_array_unref (a.waits);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_clear_object (&policy);
  g_assert_finalize_object (clock);
}

/* The queue's views may take an item out while they hear of it (a view
 * that sends at once): the item push returns is still valid. */

static void
pop_on_add (GListModel *model,
            guint       position,
            guint       removed,
            guint       added,
            gpointer    data)
{
  if (added > 0)
    g_object_unref (mend_queue_pop (MEND_QUEUE (model)));
}

static void
test_pushed_item_stays_valid_when_a_view_pops_it (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendQueue *queue = mend_queue_new (clock);
  MendQueueItem *item;
  g_autoptr(GError) error = NULL;

  g_signal_connect (queue, "items-changed", G_CALLBACK (pop_on_add), NULL);
  item = mend_queue_push (queue, "Fix the build", NULL, &error);
  g_assert_no_error (error);

  /* NULL (it is gone), or an item that is still alive. */
  if (item != NULL)
    g_assert_cmpstr (mend_queue_item_get_text (item), ==, "Fix the build");

  g_assert_finalize_object (queue);
  g_assert_finalize_object (clock);
}

/* Disposing a turn's pending wait, or a chat's waiting turn, does not
 * leave the chat BUSY on a wait that can never end. */

static void
fail_transiently (MendChat *chat)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_http (503, NULL, NULL);

  mend_turn_fail (mend_chat_get_turn (chat), failure);
  g_assert_cmpint (mend_turn_get_state (mend_chat_get_turn (chat)), ==, MEND_TURN_WAITING);
}

static void
test_wait_disposed_while_pending_does_not_strand_its_turn (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendTurn *turn;
  MendRetryWait *wait;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  fail_transiently (chat);
  turn = mend_chat_get_turn (chat);
  wait = mend_turn_get_wait (turn);

  g_object_ref (wait);
  g_object_run_dispose (G_OBJECT (wait));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);

  /* The wait ended one way or the other, and the chat is not stuck. */
  g_assert_cmpint (mend_retry_wait_get_state (wait), !=, MEND_RETRY_WAIT_PENDING);
  g_object_unref (wait);
  g_assert_false (mend_chat_get_turn (chat) == turn &&
                  mend_turn_get_state (turn) == MEND_TURN_WAITING);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_turn_disposed_while_waiting_does_not_strand_its_chat (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendTurn *turn;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  g_assert_true (mend_chat_submit (chat, "Then the docs", NULL, NULL));
  fail_transiently (chat);
  turn = mend_chat_get_turn (chat);

  g_object_run_dispose (G_OBJECT (turn));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);

  /* BUSY means a turn that runs, or waits on a pending wait. */
  if (mend_chat_get_lifecycle (chat) == MEND_LIFECYCLE_BUSY)
    {
      MendTurn *now = mend_chat_get_turn (chat);

      g_assert_nonnull (now);
      g_assert_true (mend_turn_get_state (now) == MEND_TURN_RUNNING ||
                     (mend_turn_get_state (now) == MEND_TURN_WAITING &&
                      mend_turn_get_wait (now) != NULL &&
                      mend_retry_wait_get_state (mend_turn_get_wait (now)) == MEND_RETRY_WAIT_PENDING));
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* An app that answers an attempt at once (succeed () inside the attempt
 * handler) still hears a subagent's steps in order: the prompt fired,
 * then the next attempt was scheduled. */

typedef struct
{
  GPtrArray *steps;   /* "outcome attempt" of each subagent record, then signals */
} Steps;

static void
on_step_record (MendSubagentRetry *retry,
                const char        *json,
                Steps             *st)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *obj = json_node_get_object (node);

  g_ptr_array_add (st->steps, g_strdup_printf ("%s %" G_GINT64_FORMAT,
                                               json_object_get_string_member (obj, "outcome"),
                                               json_object_get_int_member (obj, "attempt")));
}

static void
succeed_at_once (MendTurn     *turn,
                 guint         n,
                 GCancellable *cancellable,
                 gpointer      data)
{
  mend_turn_succeed (turn);
}

static void
answer_at_once (MendChat *chat,
                MendTurn *turn,
                gpointer  data)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (succeed_at_once), NULL);
}

static void
test_subagent_steps_stay_in_order_when_the_prompt_turn_ends_at_once (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  Steps st = { g_ptr_array_new_with_free_func (g_free) };

  g_signal_connect (chat, "turn-started", G_CALLBACK (answer_at_once), NULL);
  g_signal_connect (retry, "record", G_CALLBACK (on_step_record), &st);

  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  /* The first wait fires; the prompt's turn succeeds at once and the
   * subagent is still failed: the second attempt is planned. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);

  g_assert_cmpuint (st.steps->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (st.steps, 0), ==, "scheduled 1");
  g_assert_cmpstr (g_ptr_array_index (st.steps, 1), ==, "fired 1");
  g_assert_cmpstr (g_ptr_array_index (st.steps, 2), ==, "scheduled 2");

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  g_ptr_array_unref (st.steps);
}

/* A turn-finished handler that disposes the chat: the disposed chat
 * starts nothing more, here a queued resume prompt. */

static void
dispose_chat_on_turn_finished (MendChat *chat,
                               MendTurn *turn,
                               gpointer  data)
{
  g_signal_handlers_disconnect_by_func (chat, dispose_chat_on_turn_finished, data);
  g_object_run_dispose (G_OBJECT (chat));
}

static void
test_chat_disposed_from_turn_finished_starts_nothing (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  guint turns = 0;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);
  /* The resume prompt queues behind the user's turn. */
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_prompt), &turns);
  g_signal_connect (chat, "turn-finished", G_CALLBACK (dispose_chat_on_turn_finished), NULL);
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_cmpuint (turns, ==, 0);

  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A queue view lets people delete rows; one of them is a subagent's
 * resume prompt. The subagent is not left "under way" for ever. */
static void
test_resume_prompt_removed_from_queue_frees_its_subagent (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  g_autoptr(GError) error = NULL;
  MendQueueItem *prompt;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);
  prompt = mend_queue_peek (queue);
  g_assert_nonnull (prompt);

  g_assert_true (mend_queue_remove (queue, mend_queue_item_get_id (prompt), &error));
  g_assert_no_error (error);

  /* Nothing of its retry is out any more: a person's Retry is one attempt,
   * not "already under way". */
  g_assert_true (mend_subagent_retry_resume_now (retry, "toolu_1", &error));
  g_assert_no_error (error);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A do_classify that ends the attempt itself with another failure: the
 * turn's last failure is the one it gave up on. */

typedef struct
{
  MendTurn    *turn;
  MendFailure *inner;
} InnerFail;

static void
fail_again (gpointer data)
{
  InnerFail *f = data;

  mend_turn_fail (f->turn, f->inner);
}

static void
test_turn_failed_from_inside_classify_keeps_the_deciding_failure (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(TestHookPolicy) policy = g_object_new (TEST_TYPE_HOOK_POLICY, NULL);
  MendTurn *turn = g_object_new (MEND_TYPE_TURN, "prompt", "Fix the build", "clock", clock,
                                 "policy", policy, NULL);
  g_autoptr(MendFailure) outer = mend_failure_new_from_http (503, NULL, NULL);
  g_autoptr(MendFailure) inner = mend_failure_new_from_http (401, NULL, NULL);
  InnerFail f = { turn, inner };

  mend_test_run_by_hand (turn);
  mend_turn_start (turn, NULL);
  policy->hook = fail_again;
  policy->hook_data = &f;
  mend_turn_fail (turn, outer);

  /* The 401 ended the turn: it failed, on that failure. */
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_true (mend_turn_get_last_failure (turn) == inner);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), !=, MEND_FAILURE_TRANSIENT);

  g_assert_finalize_object (turn);
  g_clear_object (&policy);
  g_assert_finalize_object (clock);
}

/* Lowering max-failed forgets subagents, which tells handlers; one of
 * them drops the app's last reference to the chat (which owns the
 * subagent retry). The cap's walk must not go on over freed memory. */

static void
drop_chat_on_items_changed (GListModel  *retry,
                            guint        position,
                            guint        removed,
                            guint        added,
                            MendChat   **chat)
{
  g_signal_handlers_disconnect_by_func (retry, drop_chat_on_items_changed, chat);
  g_clear_object (chat);
}

static void chat_dropped_while_max_failed_forgets_subagents_child (void);

static void
test_chat_dropped_while_max_failed_forgets_subagents (void)
{
  if (g_test_subprocess ())
    chat_dropped_while_max_failed_forgets_subagents_child ();
  else
    trap_in_scribbling_child ();
}

static void
chat_dropped_while_max_failed_forgets_subagents_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  gpointer weak = chat;

  g_object_add_weak_pointer (G_OBJECT (chat), &weak);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree char *id = g_strdup_printf ("toolu_%u", i);
      g_autofree char *agent = g_strdup_printf ("agent-%u", i);
      g_autoptr(MendFailure) failure = mend_failure_new_from_http (401, NULL, NULL);

      mend_subagent_retry_note_started (retry, id, agent, NULL);
      mend_subagent_retry_note_failed (retry, agent, failure);
    }

  /* Forgetting the oldest takes it out of the list. */
  g_signal_connect (retry, "items-changed", G_CALLBACK (drop_chat_on_items_changed), &chat);
  mend_subagent_retry_set_max_failed (retry, 1);
  g_assert_null (chat);
  g_assert_null (weak);

  g_assert_finalize_object (clock);
}

/* A MendSubagent is a list item the UI binds to; its notifications are
 * handlers too. Stop pressed from one, as the retry is set: no countdown is
 * announced for the wait Stop just ended. */

typedef struct
{
  MendChat  *chat;
  GPtrArray *steps;        /* record outcomes, "skipped:why" */
  guint      dead_waits;   /* waits announced that had already ended */
} StopFromNotify;

static void
stop_on_retry_set (MendSubagent   *subagent,
                   GParamSpec     *pspec,
                   StopFromNotify *s)
{
  if (mend_subagent_get_retry (subagent) == NULL)
    return;

  g_signal_handlers_disconnect_by_func (subagent, stop_on_retry_set, s);
  mend_chat_stop (s->chat);
}

static void
on_stop_record (MendSubagentRetry *retry,
                const char        *json,
                StopFromNotify    *s)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *obj = json_node_get_object (node);

  if (json_object_has_member (obj, "skipped"))
    g_ptr_array_add (s->steps, g_strdup_printf ("skipped:%s", json_object_get_string_member (obj, "skipped")));
  else
    g_ptr_array_add (s->steps, g_strdup (json_object_get_string_member (obj, "outcome")));
}

static void
on_stop_waiting (MendSubagentRetry *retry,
                 MendSubagent      *subagent,
                 MendRetryWait     *wait,
                 StopFromNotify    *s)
{
  if (mend_retry_wait_get_state (wait) != MEND_RETRY_WAIT_PENDING)
    s->dead_waits++;
}

static void
test_stop_from_a_subagent_notify_announces_no_dead_wait (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  StopFromNotify s = { NULL, g_ptr_array_new_with_free_func (g_free), 0 };
  MendSubagentRetry *retry;
  MendSubagent *sub;
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);

  s.chat = mend_test_new_chat_by_hand (clock);
  retry = mend_chat_get_subagents (s.chat);
  g_signal_connect (retry, "record", G_CALLBACK (on_stop_record), &s);
  g_signal_connect (retry, "waiting", G_CALLBACK (on_stop_waiting), &s);

  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  g_signal_connect (sub, "notify::retry", G_CALLBACK (stop_on_retry_set), &s);
  mend_subagent_retry_note_failed (retry, "agent-a", failure);

  g_assert_cmpuint (s.dead_waits, ==, 0);
  /* Stop was the last word. */
  g_assert_cmpuint (s.steps->len, >, 0);
  g_assert_cmpstr (g_ptr_array_index (s.steps, s.steps->len - 1), ==, "skipped:stopped");
  g_assert_null (mend_subagent_get_retry (sub));

  g_ptr_array_unref (s.steps);
  mend_chat_close (s.chat);
  g_assert_finalize_object (s.chat);
  g_assert_finalize_object (clock);
}

/* The same list item's notification, as the wait fires: the app drops
 * its last reference to the chat there (a closed tab). */

static void
drop_chat_on_retry_cleared (MendSubagent  *subagent,
                            GParamSpec    *pspec,
                            MendChat     **chat)
{
  if (mend_subagent_get_retry (subagent) != NULL)
    return;

  g_signal_handlers_disconnect_by_func (subagent, drop_chat_on_retry_cleared, chat);
  g_clear_object (chat);
}

static void chat_dropped_from_a_subagent_notify_child (void);

static void
test_chat_dropped_from_a_subagent_notify_as_its_wait_fires (void)
{
  if (g_test_subprocess ())
    {
      chat_dropped_from_a_subagent_notify_child ();
      return;
    }

  trap_in_scribbling_child ();
}

static void
chat_dropped_from_a_subagent_notify_child (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendSubagent *sub;

  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_signal_connect (sub, "notify::retry", G_CALLBACK (drop_chat_on_retry_cleared), &chat);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);
  g_assert_null (chat);

  g_assert_finalize_object (clock);
}

/* When a turn succeeds the queue's head runs next: a message submitted
 * from a handler of the lifecycle's change to READY queues behind it. */

typedef struct
{
  MendChat  *chat;
  GPtrArray *prompts;   /* prompts of the turns started, in order */
  gboolean   submitted;
} SubmitOnReady;

static void
submit_on_ready (MendChat      *chat,
                 GParamSpec    *pspec,
                 SubmitOnReady *s)
{
  if (s->submitted || mend_chat_get_lifecycle (chat) != MEND_LIFECYCLE_READY)
    return;

  s->submitted = TRUE;
  g_assert_true (mend_chat_submit (chat, "C", NULL, NULL));
}

static void
note_prompt (MendChat      *chat,
             MendTurn      *turn,
             SubmitOnReady *s)
{
  g_ptr_array_add (s->prompts, g_strdup (mend_turn_get_prompt (turn)));
}

static void
test_submit_from_lifecycle_notify_queues_behind_the_head (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  SubmitOnReady s = { mend_test_new_chat_by_hand (clock), g_ptr_array_new_with_free_func (g_free), FALSE };

  g_signal_connect (s.chat, "turn-started", G_CALLBACK (note_prompt), &s);
  g_assert_true (mend_chat_submit (s.chat, "Fix the build", NULL, NULL));
  g_assert_true (mend_chat_submit (s.chat, "A", NULL, NULL));
  g_signal_connect (s.chat, "notify::lifecycle", G_CALLBACK (submit_on_ready), &s);

  mend_turn_succeed (mend_chat_get_turn (s.chat));
  g_assert_true (s.submitted);

  /* The user's queued A runs before C, which came later. */
  g_assert_cmpuint (s.prompts->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (s.prompts, 1), ==, "A");

  g_ptr_array_unref (s.prompts);
  mend_chat_close (s.chat);
  g_assert_finalize_object (s.chat);
  g_assert_finalize_object (clock);
}

/* A MendSubagent's notify::failure, emitted while a failure notice is
 * taken in: a handler that learns the subagent ended (its completion came
 * in meanwhile) wins; no resume is planned for an ended subagent. */

static void
end_on_failure_set (MendSubagent      *subagent,
                    GParamSpec        *pspec,
                    MendSubagentRetry *retry)
{
  g_signal_handlers_disconnect_by_func (subagent, end_on_failure_set, retry);
  mend_subagent_retry_note_ended (retry, mend_subagent_get_id (subagent), MEND_SUBAGENT_COMPLETED);
}

static void
test_subagent_ended_while_its_failure_is_taken_in_is_not_resumed (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendSubagent *sub;
  guint turns = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_prompt), &turns);
  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  g_signal_connect (sub, "notify::failure", G_CALLBACK (end_on_failure_set), retry);
  mend_subagent_retry_note_failed (retry, "agent-a", failure);

  /* No resume prompt goes out... */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);
  g_assert_cmpuint (turns, ==, 0);
  /* ...and the subagent stays ended. */
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_COMPLETED);
  g_assert_null (mend_subagent_get_retry (sub));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Mend/Attack/chat-disposed-from-record-handler-drops-its-turn-once",
                   test_chat_disposed_from_record_handler_drops_its_turn_once);
  g_test_add_func ("/Mend/Attack/disposed-chat-still-answers-its-methods",
                   test_disposed_chat_still_answers_its_methods);
  g_test_add_func ("/Mend/Attack/turn-stopped-from-another-cancelled-handler-returns",
                   test_turn_stopped_from_another_cancelled_handler_returns);
  g_test_add_func ("/Mend/Attack/turn-dropped-from-a-cancelled-handler-returns",
                   test_turn_dropped_from_a_cancelled_handler_returns);
  g_test_add_func ("/Mend/Attack/real-clock-freed-by-its-own-timer-is-not-touched-after",
                   test_real_clock_freed_by_its_own_timer_is_not_touched_after);
  g_test_add_func ("/Mend/Attack/subagent-replaced-while-its-failure-is-classified-is-not-resumed",
                   test_subagent_replaced_while_its_failure_is_classified_is_not_resumed);
  g_test_add_func ("/Mend/Attack/pushed-item-stays-valid-when-a-view-pops-it",
                   test_pushed_item_stays_valid_when_a_view_pops_it);
  g_test_add_func ("/Mend/Attack/wait-disposed-while-pending-does-not-strand-its-turn",
                   test_wait_disposed_while_pending_does_not_strand_its_turn);
  g_test_add_func ("/Mend/Attack/turn-disposed-while-waiting-does-not-strand-its-chat",
                   test_turn_disposed_while_waiting_does_not_strand_its_chat);
  g_test_add_func ("/Mend/Attack/subagent-steps-stay-in-order-when-the-prompt-turn-ends-at-once",
                   test_subagent_steps_stay_in_order_when_the_prompt_turn_ends_at_once);
  g_test_add_func ("/Mend/Attack/chat-disposed-from-turn-finished-starts-nothing",
                   test_chat_disposed_from_turn_finished_starts_nothing);
  g_test_add_func ("/Mend/Attack/resume-prompt-removed-from-queue-frees-its-subagent",
                   test_resume_prompt_removed_from_queue_frees_its_subagent);
  g_test_add_func ("/Mend/Attack/turn-failed-from-inside-classify-keeps-the-deciding-failure",
                   test_turn_failed_from_inside_classify_keeps_the_deciding_failure);
  g_test_add_func ("/Mend/Attack/chat-dropped-while-max-failed-forgets-subagents",
                   test_chat_dropped_while_max_failed_forgets_subagents);
  g_test_add_func ("/Mend/Attack/stop-from-a-subagent-notify-announces-no-dead-wait",
                   test_stop_from_a_subagent_notify_announces_no_dead_wait);
  g_test_add_func ("/Mend/Attack/chat-dropped-from-a-subagent-notify-as-its-wait-fires",
                   test_chat_dropped_from_a_subagent_notify_as_its_wait_fires);
  g_test_add_func ("/Mend/Attack/submit-from-lifecycle-notify-queues-behind-the-head",
                   test_submit_from_lifecycle_notify_queues_behind_the_head);
  g_test_add_func ("/Mend/Attack/subagent-ended-while-its-failure-is-taken-in-is-not-resumed",
                   test_subagent_ended_while_its_failure_is_taken_in_is_not_resumed);

  return g_test_run ();
}
