/* test-attack-lifecycle.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the life of a chat's subagent retry and of the transcript an
 * HTTP sender keeps: handlers that call back into the chat while it
 * restores, pops or fires; saved state and transcripts that an app hands
 * in; and the orders in which a real agent's events arrive. Each test
 * states what must hold, whatever the handlers did; all run in virtual
 * time, and every object is finalized.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"
#include <libsoup/soup.h>

#define WALL_START 1764500000000000
#define GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available (error type server_error, HTTP 503)"
#define FAILURE_503 "{\"reason\":\"capacity\",\"status\":503,\"retryAfterMs\":-1,\"partial\":false,\"message\":\"overloaded\"}"
/* Past the resume policy's first delay and the chat's stagger. */
#define PAST_FIRST_RESUME_MS 30000

static gboolean
is_resume_prompt (const char *provenance)
{
  return provenance != NULL && strstr (provenance, "\"subagent_retry\"") != NULL;
}

/* How many resume prompts wait in @queue. */
static guint
queued_resume_prompts (MendQueue *queue)
{
  guint n = 0;

  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      if (is_resume_prompt (mend_queue_item_get_provenance (item)))
        n++;
    }
  return n;
}

static gboolean
queue_holds_text (MendQueue  *queue,
                  const char *text)
{
  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      if (g_strcmp0 (mend_queue_item_get_text (item), text) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
count_resume_turn (MendChat *chat,
                   MendTurn *turn,
                   guint    *started)
{
  if (is_resume_prompt (mend_turn_get_provenance (turn)))
    (*started)++;
}

/* Succeeds every turn the chat runs until none is left to run. */
static void
run_queue_out (MendChat *chat)
{
  for (guint i = 0; i < 64 && (mend_chat_get_turn (chat) != NULL || mend_chat_send_next (chat)); i++)
    mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_null (mend_chat_get_turn (chat));
}

static char *
saved_subagent (const char *id,
                const char *held,
                const char *prompt_id,
                gboolean    prompt_queued,
                const char *retry)
{
  g_autofree char *prompt = prompt_id ? g_strdup_printf ("\"%s\"", prompt_id) : g_strdup ("null");

  return g_strdup_printf ("{\"subagentId\":\"%s\",\"agentId\":\"agent-%s\",\"name\":\"task %s\","
                          "\"state\":\"failed\",\"attempts\":0,\"retryable\":true,\"manual\":false,"
                          "\"held\":%s,\"promptId\":%s,\"promptQueued\":%s,"
                          "\"failure\":" FAILURE_503 ",\"retry\":%s}",
                          id, id, id, held, prompt, prompt_queued ? "true" : "false",
                          retry ? retry : "null");
}

static char *
saved_queue_item (const char *id,
                  const char *text,
                  const char *provenance)
{
  g_autofree char *quoted = NULL;

  if (provenance != NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), provenance);

      quoted = json_to_string (node, FALSE);
    }
  return g_strdup_printf ("{\"id\":\"%s\",\"text\":\"%s\",\"provenance\":%s,\"queuedAt\":%" G_GINT64_FORMAT "%s}",
                          id, text, quoted ? quoted : "null", WALL_START / 1000,
                          provenance ? ",\"resume\":true" : "");
}

static char *
saved_chat (const char *queue,
            const char *turn,
            const char *subagents)
{
  return g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\",\"queue\":[%s],"
                          "\"turn\":%s,\"subagents\":[%s]}", queue, turn ? turn : "null", subagents);
}

#define SAVED_RUNNING_TURN \
  "{\"id\":\"t1\",\"prompt\":\"Fix the build\",\"provenance\":null,\"attempt\":1,\"state\":\"running\",\"failure\":null}"

/* (a) Re-entrant handlers */

static void
close_on_items_changed (GListModel *model,
                        guint       position,
                        guint       removed,
                        guint       added,
                        MendChat   *chat)
{
  g_signal_handlers_disconnect_by_func (model, close_on_items_changed, chat);
  mend_chat_close (chat);
}

/* A handler of what the restore announces closes the chat: the rest of the
 * restore must not open it again, nor start the saved turn in it. */
static void
test_close_during_restore_keeps_the_chat_closed (gconstpointer data)
{
  gboolean from_queue = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  g_autofree char *sub = saved_subagent ("s", "false", NULL, FALSE, NULL);
  g_autofree char *item = saved_queue_item ("q1", "Then the docs", NULL);
  g_autofree char *state = saved_chat (item, SAVED_RUNNING_TURN, sub);
  g_autoptr(GError) error = NULL;
  gboolean restored;

  g_signal_connect (from_queue ? G_OBJECT (mend_chat_get_queue (chat)) : G_OBJECT (mend_chat_get_subagents (chat)),
                    "items-changed", G_CALLBACK (close_on_items_changed), chat);
  restored = mend_chat_restore_state (chat, state, &error);
  if (!restored)
    g_assert_nonnull (error);

  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_CLOSED);
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_false (mend_chat_submit (chat, "Anything", NULL, NULL));

  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
submit_on_items_changed (GListModel *model,
                         guint       position,
                         guint       removed,
                         guint       added,
                         MendChat   *chat)
{
  g_signal_handlers_disconnect_by_func (model, submit_on_items_changed, chat);
  mend_chat_submit (chat, "Also update the README", NULL, NULL);
}

/* A handler submits while the saved queue comes back: the saved messages
 * are the user's, and none of them may be lost to the new one. */
static void
test_submit_during_restore_loses_no_saved_message (gconstpointer data)
{
  gboolean from_queue = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autofree char *sub = saved_subagent ("s", "false", NULL, FALSE, NULL);
  g_autofree char *first = saved_queue_item ("q1", "First", NULL);
  g_autofree char *second = saved_queue_item ("q2", "Second", NULL);
  g_autofree char *items = g_strdup_printf ("%s,%s", first, second);
  g_autofree char *state = saved_chat (items, NULL, sub);
  g_autoptr(GError) error = NULL;

  g_signal_connect (from_queue ? G_OBJECT (queue) : G_OBJECT (mend_chat_get_subagents (chat)),
                    "items-changed", G_CALLBACK (submit_on_items_changed), chat);
  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);

  g_assert_true (queue_holds_text (queue, "First"));
  g_assert_true (queue_holds_text (queue, "Second"));
  /* Ids stay unique. */
  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      g_assert_true (mend_queue_find (queue, mend_queue_item_get_id (item)) == item);
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

typedef struct
{
  MendSubagentRetry *retry;
  gboolean           done;
  gboolean           sent;
} RetryOnPop;

static void
retry_on_pop (GListModel *model,
              guint       position,
              guint       removed,
              guint       added,
              RetryOnPop *r)
{
  if (r->done || removed == 0)
    return;
  r->done = TRUE;
  r->sent = mend_subagent_retry_resume_now (r->retry, "toolu_1", NULL);
}

/* The resume prompt leaves the queue to run; a view of the queue hears of
 * it and the person presses Retry on its subagent just then. One prompt
 * may reach the agent for that, not two. */
static void
test_retry_from_the_pop_of_its_prompt_sends_one_prompt (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendQueue *queue = mend_chat_get_queue (chat);
  RetryOnPop r = { mend_chat_get_subagents (chat), FALSE, FALSE };
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_subagent_retry_note_started (r.retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (r.retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);
  g_assert_cmpuint (queued_resume_prompts (queue), ==, 1);

  g_signal_connect (queue, "items-changed", G_CALLBACK (retry_on_pop), &r);
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_true (r.done);
  run_queue_out (chat);

  g_assert_cmpuint (started, ==, 1);
  g_assert_cmpuint (queued_resume_prompts (queue), ==, 0);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
stop_on_pop (GListModel *model,
             guint       position,
             guint       removed,
             guint       added,
             MendChat   *chat)
{
  if (removed == 0)
    return;
  g_signal_handlers_disconnect_by_func (model, stop_on_pop, chat);
  mend_chat_stop (chat);
}

/* The queue's head leaves the queue to run, and a view of the queue that
 * hears of it presses Stop: nothing starts after the Stop, neither the
 * user's message, which stays queued, nor a resume prompt, which Stop
 * takes back like any other under way. */
static void
test_stop_from_the_pop_of_the_head_starts_nothing (gconstpointer data)
{
  gboolean resume = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendQueue *queue = mend_chat_get_queue (chat);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  guint started = 0;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  if (resume)
    {
      mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
      mend_subagent_retry_note_failed (retry, "agent-a", failure);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);
      g_assert_cmpuint (queued_resume_prompts (queue), ==, 1);
    }
  else
    g_assert_true (mend_chat_submit (chat, "Then the docs", NULL, NULL));

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  g_signal_connect (queue, "items-changed", G_CALLBACK (stop_on_pop), chat);
  mend_turn_succeed (mend_chat_get_turn (chat));

  g_assert_null (mend_chat_get_turn (chat));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_READY);
  if (resume)
    {
      g_assert_cmpuint (started, ==, 0);
      g_assert_cmpuint (queued_resume_prompts (queue), ==, 0);
      /* Nor does it start later: Stop ended the automatic attempts. */
      mend_chat_send_next (chat);
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);
      g_assert_cmpuint (started, ==, 0);
    }
  else
    g_assert_true (queue_holds_text (queue, "Then the docs"));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
stop_on_fired (MendSubagentRetry *retry,
               MendSubagent      *subagent,
               const char        *prompt_id,
               MendChat          *chat)
{
  mend_chat_stop (chat);
}

static void
stop_on_record (MendChat   *chat,
                const char *json,
                gpointer    data)
{
  if (strstr (json, "\"outcome\":\"fired\"") != NULL)
    mend_chat_stop (chat);
}

/* The app presses Stop from the ::fired of a resume prompt, or from its
 * record: Stop drops every retry under way, and this prompt was one. */
static void
test_stop_from_fired_sends_no_prompt (gconstpointer data)
{
  gboolean from_record = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendSubagent *sub;
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  if (from_record)
    g_signal_connect (chat, "record", G_CALLBACK (stop_on_record), NULL);
  else
    g_signal_connect (retry, "fired", G_CALLBACK (stop_on_fired), chat);
  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);

  g_assert_cmpuint (started, ==, 0);
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_cmpuint (queued_resume_prompts (mend_chat_get_queue (chat)), ==, 0);
  g_assert_null (mend_subagent_get_retry (sub));
  /* A person's Retry still works after a Stop. */
  g_signal_handlers_disconnect_by_func (chat, stop_on_record, NULL);
  g_signal_handlers_disconnect_by_func (retry, stop_on_fired, chat);
  g_assert_true (mend_subagent_retry_resume_now (retry, "toolu_1", NULL));
  g_assert_cmpuint (started, ==, 1);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
resume_or_end_on_fired (MendSubagentRetry *retry,
                        MendSubagent      *subagent,
                        const char        *prompt_id,
                        gpointer           data)
{
  if (GPOINTER_TO_INT (data))
    mend_subagent_retry_note_ended (retry, mend_subagent_get_id (subagent), MEND_SUBAGENT_COMPLETED);
  else
    mend_subagent_retry_note_resumed (retry, mend_subagent_get_agent_id (subagent));
}

/* The agent's stream says the subagent runs again, or completed, as the
 * resume prompt fires (a handler of ::fired tells it): the prompt, taken
 * back, is not sent. */
static void
test_subagent_back_as_its_prompt_fires_sends_no_prompt (gconstpointer data)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  g_signal_connect (retry, "fired", G_CALLBACK (resume_or_end_on_fired), (gpointer) data);
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);

  g_assert_cmpuint (started, ==, 0);
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_cmpuint (queued_resume_prompts (mend_chat_get_queue (chat)), ==, 0);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
fail_again_on_fired (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     const char        *prompt_id,
                     gpointer           data)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);

  mend_subagent_retry_note_failed (retry, mend_subagent_get_agent_id (subagent), failure);
}

/* The agent's stream repeats the subagent's failure as its resume prompt
 * fires: a duplicate notice while a retry is under way changes nothing,
 * so one prompt goes out per attempt and no wait is planned beside it. */
static void
test_failure_repeated_as_the_prompt_fires_plans_nothing_more (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendSubagent *sub;
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  g_signal_connect (retry, "fired", G_CALLBACK (fail_again_on_fired), NULL);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);

  g_assert_cmpuint (started, ==, 1);
  g_assert_null (mend_subagent_get_retry (sub));
  g_signal_handlers_disconnect_by_func (retry, fail_again_on_fired, NULL);

  /* The prompt's turn ends with the subagent still failed: one next
   * attempt, the second. */
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);
  g_assert_cmpuint (started, ==, 2);
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 2);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
drop_chat_on_resume_turn (MendChat  *chat,
                          MendTurn  *turn,
                          MendChat **slot)
{
  if (is_resume_prompt (mend_turn_get_provenance (turn)))
    g_clear_object (slot);
}

/* The app lets go of the chat as the resume prompt's turn starts, keeping
 * only the subagent list: nothing of the chat is touched after, and the
 * list stays readable and inert. */
static void
test_chat_dropped_as_the_resume_turn_starts (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = g_object_ref (mend_chat_get_subagents (chat));
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  g_autoptr(GError) error = NULL;
  MendChat *weak = chat;

  g_object_add_weak_pointer (G_OBJECT (chat), (gpointer *) &weak);
  g_signal_connect (chat, "turn-started", G_CALLBACK (drop_chat_on_resume_turn), &chat);
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);

  g_assert_null (chat);
  g_assert_null (weak);
  g_assert_false (mend_subagent_retry_resume_now (retry, "toolu_1", &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_CLOSED);
  /* Later events of the dead chat's agent change nothing that could run. */
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  g_assert_null (mend_subagent_get_retry (mend_subagent_retry_lookup (retry, "toolu_1")));
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);

  g_assert_finalize_object (retry);
  g_assert_finalize_object (clock);
}

typedef struct
{
  MendChat   *chat;
  const char *state;
  gboolean    restored;
  GError     *error;
} RestoreOnFinish;

static void
restore_on_turn_finished (MendChat        *chat,
                          MendTurn        *turn,
                          RestoreOnFinish *r)
{
  g_signal_handlers_disconnect_by_func (chat, restore_on_turn_finished, r);
  r->restored = mend_chat_restore_state (chat, r->state, &r->error);
}

/* The last turn ends and, from its turn-finished, the app restores a saved
 * chat into this one (it is empty again): the saved turn and queue are
 * back, and the end of the turn that finished runs nothing over them. */
static void
test_restore_from_turn_finished (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  g_autofree char *sub = saved_subagent ("s", "false", NULL, FALSE, NULL);
  g_autofree char *item = saved_queue_item ("q7", "Then the docs", NULL);
  g_autofree char *state = saved_chat (item, SAVED_RUNNING_TURN, sub);
  RestoreOnFinish r = { chat, state, FALSE, NULL };

  g_assert_true (mend_chat_submit (chat, "Hello", NULL, NULL));
  g_signal_connect (chat, "turn-finished", G_CALLBACK (restore_on_turn_finished), &r);
  mend_turn_succeed (mend_chat_get_turn (chat));

  g_assert_no_error (r.error);
  g_assert_true (r.restored);
  g_assert_nonnull (mend_chat_get_turn (chat));
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (chat)), ==, "Fix the build");
  g_assert_true (queue_holds_text (mend_chat_get_queue (chat), "Then the docs"));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_BUSY);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
drop_retry_on_items_changed (GListModel         *model,
                             guint               position,
                             guint               removed,
                             guint               added,
                             MendSubagentRetry **slot)
{
  g_clear_object (slot);
}

static void
set_flag (gpointer data)
{
  *(gboolean *) data = TRUE;
}

/* The chat is gone and the app drops its last reference to the subagent
 * list from a handler of the list itself, as an event arrives. */
static void
test_retry_dropped_from_its_own_items_changed (gconstpointer data)
{
  gboolean start = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = g_object_ref (mend_chat_get_subagents (chat));
  MendSubagentRetry *self = retry;
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  gboolean finalized = FALSE;

  /* A weak pointer would be cleared when the chat disposes the list. */
  g_object_set_data_full (G_OBJECT (retry), "finalized", &finalized, set_flag);
  g_assert_finalize_object (chat);
  g_assert_false (finalized);
  g_signal_connect (retry, "items-changed", G_CALLBACK (drop_retry_on_items_changed), &retry);
  if (start)
    g_assert_null (mend_subagent_retry_note_started (self, "toolu_1", "agent-a", "Push relay"));
  else
    mend_subagent_retry_note_failed (self, "agent-a", failure);

  g_assert_null (retry);
  g_assert_true (finalized);
  g_assert_finalize_object (clock);
}

typedef struct
{
  MendChat   *chat;
  const char *state;
  gboolean    inner;
} RestoreOnChanged;

static void
restore_on_transcript_changed (MendTranscript   *transcript,
                               RestoreOnChanged *r)
{
  g_signal_handlers_disconnect_by_func (transcript, restore_on_transcript_changed, r);
  r->inner = mend_chat_restore_state (r->chat, r->state, NULL);
}

/* The transcript is the first thing a restore changes; from its ::changed
 * the app restores the same state again. Whatever the two calls return,
 * the chat ends up with all of the saved state: its transcript, its queue
 * and its subagents, none lost to the other call's rollback. */
static void
test_restore_from_the_transcripts_changed (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, NULL);
  MendTranscript *transcript = mend_http_sender_get_transcript (sender);
  g_autofree char *sub = saved_subagent ("s", "false", NULL, FALSE, NULL);
  g_autofree char *item = saved_queue_item ("q1", "Then the docs", NULL);
  const char *sender_state = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},"
                             "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}]}],"
                             "\"pending\":[]}";
  g_autoptr(JsonNode) quoted = json_node_init_string (json_node_alloc (), sender_state);
  g_autofree char *quoted_text = json_to_string (quoted, FALSE);
  g_autofree char *state = g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\","
                                            "\"queue\":[%s],\"turn\":null,\"subagents\":[%s],"
                                            "\"senderState\":%s}", item, sub, quoted_text);
  RestoreOnChanged r = { chat, state, FALSE };
  gboolean outer;

  g_signal_connect (transcript, "changed", G_CALLBACK (restore_on_transcript_changed), &r);
  outer = mend_chat_restore_state (chat, state, NULL);
  g_assert_true (outer || r.inner);

  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);
  g_assert_true (queue_holds_text (mend_chat_get_queue (chat), "Then the docs"));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (chat))), ==, 1);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
}

static void
drop_chat_on_transcript_changed (MendTranscript *transcript,
                                 MendChat      **slot)
{
  g_signal_handlers_disconnect_by_func (transcript, drop_chat_on_transcript_changed, slot);
  g_clear_object (slot);
}

static void
submit_on_transcript_changed (MendTranscript *transcript,
                              MendChat       *chat)
{
  g_signal_handlers_disconnect_by_func (transcript, submit_on_transcript_changed, chat);
  g_assert_true (mend_chat_submit (chat, "Also update the README", NULL, NULL));
}

/* The app lets go of the chat, or submits to it, from the ::changed of
 * the transcript that the restore replaces: the restore touches no freed
 * chat, and the saved turn and queue are not lost to the submission. */
static void
test_transcript_changed_during_restore (gconstpointer data)
{
  gboolean drop = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, NULL);
  MendTranscript *transcript = mend_http_sender_get_transcript (sender);
  g_autofree char *sub = saved_subagent ("s", "false", NULL, FALSE, NULL);
  g_autofree char *item = saved_queue_item ("q1", "Then the docs", NULL);
  g_autoptr(JsonNode) quoted = json_node_init_string (json_node_alloc (), "{\"messages\":[],\"pending\":[]}");
  g_autofree char *quoted_text = json_to_string (quoted, FALSE);
  g_autofree char *state = g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\","
                                            "\"queue\":[%s],\"turn\":" SAVED_RUNNING_TURN ",\"subagents\":[%s],"
                                            "\"senderState\":%s}", item, sub, quoted_text);

  /* Something to replace, so that ::changed is emitted. */
  g_assert_true (mend_transcript_load_json (transcript, "[{\"role\":\"user\",\"content\":\"Old\"}]", NULL));
  if (drop)
    {
      MendChat *weak = chat;

      g_object_add_weak_pointer (G_OBJECT (chat), (gpointer *) &weak);
      g_signal_connect (transcript, "changed", G_CALLBACK (drop_chat_on_transcript_changed), &chat);
      mend_chat_restore_state (weak, state, NULL);
      g_assert_null (chat);
      g_assert_null (weak);
    }
  else
    {
      g_signal_connect (transcript, "changed", G_CALLBACK (submit_on_transcript_changed), chat);
      g_assert_true (mend_chat_restore_state (chat, state, NULL));
      g_assert_nonnull (mend_chat_get_turn (chat));
      g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (chat)), ==, "Fix the build");
      g_assert_true (queue_holds_text (mend_chat_get_queue (chat), "Then the docs"));
      g_assert_true (queue_holds_text (mend_chat_get_queue (chat), "Also update the README"));
      mend_chat_close (chat);
      g_assert_finalize_object (chat);
    }

  /* The session may hold the message of a cancelled attempt for a moment. */
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (clock);
}

/* (b) Hostile input */

/* A saved subagent with its retry under way twice over — a wait and a
 * prompt held for the agent's own turn, or a prompt held and one queued —
 * is not a state a chat saves. Restored, it would send two prompts for
 * one attempt: it is refused, or sends one. */
static void
test_restored_retry_under_way_twice_sends_one_prompt (gconstpointer data)
{
  gboolean queued = GPOINTER_TO_INT (data);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autofree char *retry = g_strdup_printf ("{\"attempt\":1,\"nextAt\":%" G_GINT64_FORMAT "}",
                                            WALL_START / 1000 + 20000);
  g_autofree char *sub = saved_subagent ("s", "true", queued ? "sr-4" : NULL, queued, queued ? NULL : retry);
  g_autofree char *item = saved_queue_item ("q1", "Resume it",
                                            "{\"kind\":\"subagent_retry\",\"subagentId\":\"s\",\"agentId\":\"agent-s\","
                                            "\"attempt\":1,\"promptId\":\"sr-4\"}");
  g_autofree char *state = saved_chat (queued ? item : "", SAVED_RUNNING_TURN, sub);
  g_autoptr(GError) error = NULL;
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  if (!mend_chat_restore_state (chat, state, &error))
    {
      g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
      g_assert_null (mend_chat_get_turn (chat));
    }
  else
    {
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);
      g_assert_cmpuint (queued_resume_prompts (queue), <=, 1);
      run_queue_out (chat);
      g_assert_cmpuint (started, <=, 1);
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Counts near G_MAXUINT, numbers past any integer, and the wrong types,
 * where the saved subagents keep their counts: refused, and nothing of
 * them is kept. */
static void
test_restored_counts_out_of_range_are_refused (void)
{
  static const char *const bad[] = {
    "\"attempts\":4294967295",
    "\"attempts\":4294967296",
    "\"attempts\":18446744073709551615",
    "\"attempts\":99999999999999999999",
    "\"attempts\":1e400",
    "\"attempts\":-1",
    "\"attempts\":\"1\"",
    "\"attempts\":1.5",
    "\"retry\":{\"attempt\":4294967295,\"nextAt\":1}",
    "\"retry\":{\"attempt\":0,\"nextAt\":1}",
    "\"retry\":{\"attempt\":1,\"nextAt\":1e400}",
    "\"retry\":{\"attempt\":1,\"nextAt\":-1}",
    "\"retry\":[1]",
    "\"held\":1",
    "\"failure\":\"overloaded\"",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = mend_test_new_chat_by_hand (clock);
      g_autofree char *sub = g_strdup_printf ("{\"subagentId\":\"s\",\"agentId\":\"agent-s\",\"name\":\"n\","
                                              "\"state\":\"failed\",\"attempts\":0,\"retryable\":true,"
                                              "\"manual\":false,\"held\":false,\"promptId\":null,"
                                              "\"promptQueued\":false,\"failure\":" FAILURE_503 ","
                                              "\"retry\":null,%s}", bad[i]);
      g_autofree char *state = saved_chat ("", NULL, sub);
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", bad[i]);
      g_assert_false (mend_chat_restore_state (chat, state, &error));
      g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
      g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (chat))), ==, 0);

      mend_chat_close (chat);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
    }
}

/* A resume prompt in the saved queue whose subagent the state does not
 * know, and two queued prompts that claim one subagent's prompt id: none
 * of them is followed as that subagent's, and its Retry is not blocked by
 * a prompt that is not its own. */
static void
test_resume_prompts_of_unknown_subagents_are_not_followed (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autofree char *sub = saved_subagent ("s", "false", "sr-4", TRUE, NULL);
  g_autofree char *own = saved_queue_item ("q1", "Resume it",
                                           "{\"kind\":\"subagent_retry\",\"subagentId\":\"s\",\"agentId\":\"agent-s\","
                                           "\"attempt\":1,\"promptId\":\"sr-4\"}");
  g_autofree char *twin = saved_queue_item ("q2", "Resume it again",
                                            "{\"kind\":\"subagent_retry\",\"subagentId\":\"s\",\"agentId\":\"agent-s\","
                                            "\"attempt\":1,\"promptId\":\"sr-4\"}");
  g_autofree char *stranger = saved_queue_item ("q3", "Resume another",
                                                "{\"kind\":\"subagent_retry\",\"subagentId\":\"x\",\"agentId\":\"agent-x\","
                                                "\"attempt\":1,\"promptId\":\"sr-9\"}");
  g_autofree char *items = g_strdup_printf ("%s,%s,%s", own, twin, stranger);
  g_autofree char *state = saved_chat (items, NULL, sub);
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  g_assert_null (mend_subagent_retry_lookup (retry, "x"));

  /* The agent resumed it: its own prompt is taken back. */
  mend_subagent_retry_note_resumed (retry, "agent-s");
  g_assert_false (queue_holds_text (queue, "Resume it"));
  g_assert_cmpint (mend_subagent_get_state (mend_subagent_retry_lookup (retry, "s")), ==, MEND_SUBAGENT_RUNNING);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* What a transcript keeps must save and load back. */
static void
assert_transcript_round_trips (MendTranscript *transcript)
{
  g_autofree char *json = mend_transcript_to_json (transcript);
  g_autoptr(MendTranscript) again = mend_transcript_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (g_utf8_validate (json, -1, NULL));
  g_assert_true (mend_transcript_load_json (again, json, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_transcript_get_n_messages (again), ==, mend_transcript_get_n_messages (transcript));
  g_assert_finalize_object (g_steal_pointer (&again));
}

/* JSON that json-glib reads but cannot write back as JSON: a number past
 * a double (written "inf.0") and a lone surrogate escape (written as bytes
 * that are not UTF-8), in a block, a member name or a pending prompt. */
static const char *const unwritable[] = {
  "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"calc\",\"input\":{\"x\":1e400}}",
  "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"calc\",\"input\":{\"x\":-1e999}}",
  "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"calc\",\"input\":{\"x\":\"\\ud800x\"}}",
  "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"calc\",\"input\":{\"\\udfffk\":1}}",
  "{\"type\":\"text\",\"text\":\"fine\",\"citations\":[1e400]}",
};

static void
test_transcript_loads_only_what_it_can_save (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (unwritable); i++)
    {
      MendTranscript *transcript = mend_transcript_new ();
      g_autofree char *json = g_strdup_printf ("[{\"role\":\"user\",\"content\":\"Sum it\"},"
                                               "{\"role\":\"assistant\",\"content\":[%s]}]", unwritable[i]);
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", unwritable[i]);
      if (mend_transcript_load_json (transcript, json, &error))
        assert_transcript_round_trips (transcript);
      else
        {
          g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
          g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
        }
      g_assert_finalize_object (transcript);
    }
}

/* The same, through a chat's saved state: a sender state the transcript
 * took must restore, or the whole chat could never be restored. */
static void
test_chat_state_with_a_loaded_transcript_restores (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (unwritable); i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
      MendHttpSender *sender2 = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
      MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, NULL);
      MendChat *chat2 = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender2, NULL);
      g_autofree char *json = g_strdup_printf ("[{\"role\":\"user\",\"content\":\"Sum it\"},"
                                               "{\"role\":\"assistant\",\"content\":[%s]}]", unwritable[i]);
      g_autofree char *state = NULL;
      g_autoptr(GError) error = NULL;

      g_test_message ("%s", unwritable[i]);
      if (!mend_transcript_load_json (mend_http_sender_get_transcript (sender), json, NULL))
        {
          /* Nor may a restored sender state bring it in. */
          g_autofree char *sender_state = g_strdup_printf ("{\"messages\":[],\"pending\":[%s]}", unwritable[i]);
          g_autofree char *quoted = NULL;
          g_autoptr(JsonNode) node = json_node_init_string (json_node_alloc (), sender_state);

          quoted = json_to_string (node, FALSE);
          state = g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\",\"queue\":[],"
                                   "\"turn\":null,\"subagents\":[],\"senderState\":%s}", quoted);
          if (!mend_chat_restore_state (chat, state, &error))
            g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
          g_clear_pointer (&state, g_free);
          g_clear_error (&error);
        }
      state = mend_chat_save_state (chat);
      g_assert_true (g_utf8_validate (state, -1, NULL));
      g_assert_true (mend_chat_restore_state (chat2, state, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (sender2)), ==,
                        mend_transcript_get_n_messages (mend_http_sender_get_transcript (sender)));

      mend_chat_close (chat);
      mend_chat_close (chat2);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (chat2);
      g_assert_finalize_object (sender);
      g_assert_finalize_object (sender2);
      g_assert_finalize_object (clock);
    }
}

/* A model's answer that json-glib reads but cannot write back, plain and
 * streamed: the turn succeeds, and the chat's saved state still loads. */
static const char JSON_ANSWER_PAST_DOUBLE[] =
  "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\","
  "\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"calc\",\"input\":{\"x\":1e400}}],"
  "\"stop_reason\":\"end_turn\"}";

static const char SSE_ANSWER_LONE_SURROGATE[] =
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"Read\",\"input\":{}}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\\\"\\\\ud800x\\\"}\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

static void
answer_callback (SoupServer        *server,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           data)
{
  gboolean streamed = GPOINTER_TO_INT (data);
  const char *body = streamed ? SSE_ANSWER_LONE_SURROGATE : JSON_ANSWER_PAST_DOUBLE;

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, streamed ? "text/event-stream" : "application/json",
                                    SOUP_MEMORY_STATIC, body, strlen (body));
}

static gboolean
watchdog (gpointer data)
{
  g_error ("the answer did not arrive in time");
  return G_SOURCE_REMOVE;
}

static void
test_answer_that_cannot_be_saved_leaves_a_state_that_loads (gconstpointer data)
{
  SoupServer *server = soup_server_new (NULL, NULL);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(GError) error = NULL;
  g_autofree char *endpoint = NULL;
  g_autofree char *state = NULL;
  MendHttpSender *sender;
  MendHttpSender *sender2;
  MendChat *chat;
  MendChat *chat2;
  GSList *uris;
  guint timeout;

  soup_server_add_handler (server, "/v1/messages", answer_callback, (gpointer) data, NULL);
  g_assert_true (soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  g_assert_no_error (error);
  uris = soup_server_get_uris (server);
  endpoint = g_strdup_printf ("http://127.0.0.1:%d/v1/messages", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  sender = mend_http_sender_new (endpoint);
  sender2 = mend_http_sender_new (endpoint);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender, NULL);
  chat2 = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", sender2, NULL);

  /* Real time only for the loopback I/O. */
  timeout = g_timeout_add_seconds (20, watchdog, NULL);
  g_assert_true (mend_chat_submit (chat, "Sum it", NULL, &error));
  while (mend_chat_get_turn (chat) != NULL)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (timeout);
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_READY);

  state = mend_chat_save_state (chat);
  g_assert_true (g_utf8_validate (state, -1, NULL));
  g_assert_true (mend_chat_restore_state (chat2, state, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (sender2)), ==,
                    mend_transcript_get_n_messages (mend_http_sender_get_transcript (sender)));

  mend_chat_close (chat);
  mend_chat_close (chat2);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (chat2);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
  g_assert_finalize_object (sender2);
  g_assert_finalize_object (clock);
  soup_server_disconnect (server);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (server);
}

/* Duplicate keys: the last one counts, as json-glib reads them; what is
 * loaded is what is written back. Deep nesting is refused. */
static void
test_transcript_duplicate_keys_and_depth (void)
{
  MendTranscript *transcript = mend_transcript_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) deep = g_string_new ("[{\"role\":\"user\",\"content\":[{\"type\":\"x\",\"v\":");
  g_autofree char *json = NULL;

  /* The first message is the user's, whatever a first "role" said. */
  g_assert_false (mend_transcript_load_json (transcript,
                                             "[{\"role\":\"user\",\"role\":\"assistant\",\"content\":\"hi\"}]",
                                             &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_clear_error (&error);

  g_assert_true (mend_transcript_load_json (transcript,
                                            "[{\"role\":\"user\",\"content\":[{\"type\":\"x\"}],\"content\":\"hi\"}]",
                                            &error));
  g_assert_no_error (error);
  json = mend_transcript_to_json (transcript);
  g_assert_cmpstr (json, ==, "[{\"role\":\"user\",\"content\":\"hi\"}]");

  for (guint i = 0; i < 200; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 200; i++)
    g_string_append_c (deep, ']');
  g_string_append (deep, "}]}]");
  g_assert_false (mend_transcript_load_json (transcript, deep->str, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 1);

  g_assert_finalize_object (transcript);
}

/* (c) The orders a real agent produces */

/* The agent resumes the subagent from its resume prompt, and the subagent
 * fails again while that prompt's turn still runs: one next attempt is
 * planned, the second, and the end of the prompt's turn adds none. */
static void
test_subagent_failing_while_its_prompt_runs_plans_one_attempt (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendSubagent *sub;
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);
  g_assert_cmpuint (started, ==, 1);
  g_assert_nonnull (mend_chat_get_turn (chat));

  /* The agent's SendMessage resumes it, and it fails again. */
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_RUNNING);
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);

  /* The prompt's turn ends: the wait planned stays the one. */
  {
    MendRetryWait *wait = mend_subagent_get_retry (sub);

    mend_turn_succeed (mend_chat_get_turn (chat));
    g_assert_true (mend_subagent_get_retry (sub) == wait);
  }
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);
  g_assert_cmpuint (started, ==, 2);
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 2);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* The chat's state is saved while a resume prompt's turn runs, and
 * restored after a restart: the restored turn is still that subagent's,
 * and when it ends with the subagent still failed, the next attempt is
 * planned, as it would have been without the restart. */
static void
test_resume_turn_saved_mid_run_still_plans_the_next (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  g_autoptr(GError) error = NULL;
  g_autofree char *state = NULL;
  MendSubagent *sub;

  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);
  g_assert_nonnull (mend_chat_get_turn (chat));
  g_assert_true (is_resume_prompt (mend_turn_get_provenance (mend_chat_get_turn (chat))));
  state = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);

  chat = mend_test_new_chat_by_hand (clock);
  retry = mend_chat_get_subagents (chat);
  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  sub = mend_subagent_retry_lookup (retry, "toolu_1");
  g_assert_nonnull (mend_chat_get_turn (chat));
  /* Its Retry is busy: the resume runs. */
  g_assert_false (mend_subagent_retry_resume_now (retry, "toolu_1", &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY);

  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* The user deletes the queued resume prompt, then the subagent's failure
 * is told again (a duplicate notice): the subagent is not stranded, the
 * next attempt is planned, and the deleted prompt never runs. */
typedef struct
{
  const char *provenance;
  guint       deleted_started;
  guint       started;
} DeletedPrompt;

static void
on_turn_started_deleted (MendChat      *chat,
                         MendTurn      *turn,
                         DeletedPrompt *d)
{
  if (is_resume_prompt (mend_turn_get_provenance (turn)))
    d->started++;
  if (d->provenance != NULL && g_strcmp0 (mend_turn_get_provenance (turn), d->provenance) == 0)
    d->deleted_started++;
}

static void
test_resume_prompt_deleted_by_the_user_never_runs (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  g_autofree char *provenance = NULL;
  DeletedPrompt d = { NULL, 0, 0 };
  MendQueueItem *item;
  MendSubagent *sub;

  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started_deleted), &d);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), PAST_FIRST_RESUME_MS);
  item = mend_queue_peek (queue);
  g_assert_true (is_resume_prompt (mend_queue_item_get_provenance (item)));
  d.provenance = provenance = g_strdup (mend_queue_item_get_provenance (item));
  g_assert_true (mend_queue_remove (queue, mend_queue_item_get_id (item), NULL));
  g_assert_null (mend_subagent_get_retry (sub));

  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);
  mend_turn_succeed (mend_chat_get_turn (chat));
  run_queue_out (chat);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);
  run_queue_out (chat);
  g_assert_cmpuint (d.deleted_started, ==, 0);
  g_assert_cmpuint (d.started, ==, 1);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* The chat closes while a subagent's wait is pending; the app kept that
 * wait from ::waiting and fires it by hand later: nothing is sent. */
static void
test_close_during_a_pending_wait_then_fired_by_hand (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendRetryWait *wait;
  MendSubagent *sub;
  guint started = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_resume_turn), &started);
  sub = mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  wait = g_object_ref (mend_subagent_get_retry (sub));

  mend_chat_close (chat);
  g_assert_null (mend_subagent_get_retry (sub));
  g_assert_false (mend_subagent_get_retryable (sub));
  mend_retry_wait_fire_now (wait);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10 * 60 * 1000);
  g_assert_cmpuint (started, ==, 0);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 0);

  g_assert_finalize_object (chat);
  g_assert_finalize_object (wait);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  /* Loopback HTTP needs no proxy settings. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_data_func ("/Mend/AttackLifecycle/close-from-a-restored-subagent-keeps-the-chat-closed",
                        GINT_TO_POINTER (FALSE), test_close_during_restore_keeps_the_chat_closed);
  g_test_add_data_func ("/Mend/AttackLifecycle/close-from-a-restored-queue-item-keeps-the-chat-closed",
                        GINT_TO_POINTER (TRUE), test_close_during_restore_keeps_the_chat_closed);
  g_test_add_data_func ("/Mend/AttackLifecycle/submit-from-a-restored-subagent-loses-no-saved-message",
                        GINT_TO_POINTER (FALSE), test_submit_during_restore_loses_no_saved_message);
  g_test_add_data_func ("/Mend/AttackLifecycle/submit-from-a-restored-queue-item-loses-no-saved-message",
                        GINT_TO_POINTER (TRUE), test_submit_during_restore_loses_no_saved_message);
  g_test_add_func ("/Mend/AttackLifecycle/retry-from-the-pop-of-its-prompt-sends-one-prompt",
                   test_retry_from_the_pop_of_its_prompt_sends_one_prompt);
  g_test_add_data_func ("/Mend/AttackLifecycle/stop-from-the-pop-of-a-message-starts-nothing",
                        GINT_TO_POINTER (FALSE), test_stop_from_the_pop_of_the_head_starts_nothing);
  g_test_add_data_func ("/Mend/AttackLifecycle/stop-from-the-pop-of-a-resume-prompt-starts-nothing",
                        GINT_TO_POINTER (TRUE), test_stop_from_the_pop_of_the_head_starts_nothing);
  g_test_add_data_func ("/Mend/AttackLifecycle/stop-from-fired-sends-no-prompt",
                        GINT_TO_POINTER (FALSE), test_stop_from_fired_sends_no_prompt);
  g_test_add_data_func ("/Mend/AttackLifecycle/stop-from-the-fired-record-sends-no-prompt",
                        GINT_TO_POINTER (TRUE), test_stop_from_fired_sends_no_prompt);
  g_test_add_data_func ("/Mend/AttackLifecycle/subagent-resumed-as-its-prompt-fires-sends-no-prompt",
                        GINT_TO_POINTER (FALSE), test_subagent_back_as_its_prompt_fires_sends_no_prompt);
  g_test_add_data_func ("/Mend/AttackLifecycle/subagent-completed-as-its-prompt-fires-sends-no-prompt",
                        GINT_TO_POINTER (TRUE), test_subagent_back_as_its_prompt_fires_sends_no_prompt);
  g_test_add_func ("/Mend/AttackLifecycle/failure-repeated-as-the-prompt-fires-plans-nothing-more",
                   test_failure_repeated_as_the_prompt_fires_plans_nothing_more);
  g_test_add_func ("/Mend/AttackLifecycle/chat-dropped-as-the-resume-turn-starts",
                   test_chat_dropped_as_the_resume_turn_starts);
  g_test_add_func ("/Mend/AttackLifecycle/restore-from-turn-finished",
                   test_restore_from_turn_finished);
  g_test_add_data_func ("/Mend/AttackLifecycle/chat-dropped-from-the-transcripts-changed-during-restore",
                        GINT_TO_POINTER (TRUE), test_transcript_changed_during_restore);
  g_test_add_data_func ("/Mend/AttackLifecycle/submit-from-the-transcripts-changed-during-restore",
                        GINT_TO_POINTER (FALSE), test_transcript_changed_during_restore);
  g_test_add_func ("/Mend/AttackLifecycle/restore-from-the-transcripts-changed",
                   test_restore_from_the_transcripts_changed);
  g_test_add_data_func ("/Mend/AttackLifecycle/retry-dropped-from-its-own-items-changed/started",
                        GINT_TO_POINTER (TRUE), test_retry_dropped_from_its_own_items_changed);
  g_test_add_data_func ("/Mend/AttackLifecycle/retry-dropped-from-its-own-items-changed/failed",
                        GINT_TO_POINTER (FALSE), test_retry_dropped_from_its_own_items_changed);
  g_test_add_data_func ("/Mend/AttackLifecycle/restored-wait-and-held-prompt-send-one-prompt",
                        GINT_TO_POINTER (FALSE), test_restored_retry_under_way_twice_sends_one_prompt);
  g_test_add_data_func ("/Mend/AttackLifecycle/restored-held-and-queued-prompt-send-one-prompt",
                        GINT_TO_POINTER (TRUE), test_restored_retry_under_way_twice_sends_one_prompt);
  g_test_add_func ("/Mend/AttackLifecycle/restored-counts-out-of-range-are-refused",
                   test_restored_counts_out_of_range_are_refused);
  g_test_add_func ("/Mend/AttackLifecycle/resume-prompts-of-unknown-subagents-are-not-followed",
                   test_resume_prompts_of_unknown_subagents_are_not_followed);
  g_test_add_func ("/Mend/AttackLifecycle/transcript-loads-only-what-it-can-save",
                   test_transcript_loads_only_what_it_can_save);
  g_test_add_func ("/Mend/AttackLifecycle/chat-state-with-a-loaded-transcript-restores",
                   test_chat_state_with_a_loaded_transcript_restores);
  g_test_add_data_func ("/Mend/AttackLifecycle/answer-past-a-double-leaves-a-state-that-loads",
                        GINT_TO_POINTER (FALSE), test_answer_that_cannot_be_saved_leaves_a_state_that_loads);
  g_test_add_data_func ("/Mend/AttackLifecycle/streamed-lone-surrogate-leaves-a-state-that-loads",
                        GINT_TO_POINTER (TRUE), test_answer_that_cannot_be_saved_leaves_a_state_that_loads);
  g_test_add_func ("/Mend/AttackLifecycle/transcript-duplicate-keys-and-depth",
                   test_transcript_duplicate_keys_and_depth);
  g_test_add_func ("/Mend/AttackLifecycle/subagent-failing-while-its-prompt-runs-plans-one-attempt",
                   test_subagent_failing_while_its_prompt_runs_plans_one_attempt);
  g_test_add_func ("/Mend/AttackLifecycle/resume-turn-saved-mid-run-still-plans-the-next",
                   test_resume_turn_saved_mid_run_still_plans_the_next);
  g_test_add_func ("/Mend/AttackLifecycle/resume-prompt-deleted-by-the-user-never-runs",
                   test_resume_prompt_deleted_by_the_user_never_runs);
  g_test_add_func ("/Mend/AttackLifecycle/close-during-a-pending-wait-then-fired-by-hand",
                   test_close_during_a_pending_wait_then_fired_by_hand);

  return g_test_run ();
}
