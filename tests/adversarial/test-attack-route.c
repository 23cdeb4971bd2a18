/* test-attack-route.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the way a subagent's failure travels: from a line of the
 * agent's output, through the one host entry that ends a task, the
 * verdict, the scheduler's records on the chat and on the subagent
 * retry, the resume prompt's queue item, to the wait on its clock.
 * Handlers re-enter at each step, and the input is hostile; the clock's
 * own attacks are in test-attack-countdown.c. Every test runs in virtual
 * time and finalizes what it made; run them under AddressSanitizer too.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000
/* Past the resume policy's first delay (20 s) and the chat's stagger. */
#define PAST_FIRST_RESUME_MS 30000

/* Claude Code's system/task_notification for a subagent the gateway
 * failed, as the CLI writes it (tests/data, the recorded stream). */
#define SUMMARY_503 \
  "API Error: 503 no non-exhausted claude accounts available (error type server_error, HTTP 503)"

static MendChat *
new_chat (MendClock *clock)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  MendChat *chat;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-1", "clock", clock, "policy", policy, NULL);
  mend_test_run_turns_by_hand (chat);
  return chat;
}

static void
advance (MendClock *clock,
         guint64    ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), ms);
}

static char *
started_line (const char *task_id,
              const char *tool_use_id,
              const char *description)
{
  GString *line = g_string_new ("{\"type\":\"system\",\"subtype\":\"task_started\"");

  if (task_id != NULL)
    g_string_append_printf (line, ",\"task_id\":\"%s\"", task_id);
  if (tool_use_id != NULL)
    g_string_append_printf (line, ",\"tool_use_id\":\"%s\"", tool_use_id);
  if (description != NULL)
    g_string_append_printf (line, ",\"description\":\"%s\"", description);
  g_string_append (line, ",\"session_id\":\"s-1\"}");
  return g_string_free (line, FALSE);
}

static char *
notification_line (const char *task_id,
                   const char *tool_use_id,
                   const char *status)
{
  GString *line = g_string_new ("{\"type\":\"system\",\"subtype\":\"task_notification\"");

  if (task_id != NULL)
    g_string_append_printf (line, ",\"task_id\":\"%s\"", task_id);
  if (tool_use_id != NULL)
    g_string_append_printf (line, ",\"tool_use_id\":\"%s\"", tool_use_id);
  g_string_append_printf (line, ",\"status\":\"%s\"", status);
  if (g_str_equal (status, "failed"))
    g_string_append (line, ",\"summary\":\"" SUMMARY_503 "\"");
  g_string_append (line, ",\"session_id\":\"s-1\"}");
  return g_string_free (line, FALSE);
}

static gboolean
feed (MendStreamObserver *observer,
      char               *line)
{
  gboolean changed = mend_stream_observer_feed_line (observer, line, -1);

  g_free (line);
  return changed;
}

/* The steps of the subagent records: "outcome attempt[ skipped]". */
static char *
step_of (const char *json)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *obj;

  g_assert_nonnull (node);
  obj = json_node_get_object (node);
  if (g_strcmp0 (json_object_get_string_member (obj, "kind"), "subagent_retry") != 0)
    return NULL;
  return g_strdup_printf ("%s %" G_GINT64_FORMAT "%s%s %s",
                          json_object_get_string_member (obj, "outcome"),
                          json_object_get_int_member (obj, "attempt"),
                          json_object_has_member (obj, "skipped") ? " " : "",
                          json_object_has_member (obj, "skipped")
                            ? json_object_get_string_member (obj, "skipped") : "",
                          json_object_get_string_member (obj, "subagentId"));
}

typedef struct
{
  MendChat          *chat;
  MendSubagentRetry *retry;
  GPtrArray         *chat_steps;
  GPtrArray         *retry_steps;
  /* What a handler does, once, at the record with this outcome. */
  const char        *at;
  void             (*act) (gpointer data);
  /* The same, from a handler of the subagent retry's record. */
  void             (*retry_act) (gpointer data);
  gpointer           act_data;
} Streams;

static void
on_chat_record (MendChat   *chat,
                const char *json,
                Streams    *s)
{
  char *step = step_of (json);
  void (*act) (gpointer) = s->act;

  if (step == NULL)
    return;
  g_ptr_array_add (s->chat_steps, step);
  if (act != NULL && g_str_has_prefix (step, s->at))
    {
      s->act = NULL;
      act (s->act_data);
    }
}

static void
on_retry_record (MendSubagentRetry *retry,
                 const char        *json,
                 Streams           *s)
{
  char *step = step_of (json);
  void (*act) (gpointer) = s->retry_act;

  g_ptr_array_add (s->retry_steps, step);
  if (act != NULL && g_str_has_prefix (step, s->at))
    {
      s->retry_act = NULL;
      act (s->act_data);
    }
}

static void
streams_init (Streams  *s,
              MendChat *chat)
{
  s->chat = chat;
  s->retry = mend_chat_get_subagents (chat);
  s->chat_steps = g_ptr_array_new_with_free_func (g_free);
  s->retry_steps = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (chat, "record", G_CALLBACK (on_chat_record), s);
  g_signal_connect (s->retry, "record", G_CALLBACK (on_retry_record), s);
}

static char *
joined (GPtrArray *steps)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < steps->len; i++)
    g_string_append_printf (out, "%s%s", i ? " | " : "", (const char *) g_ptr_array_index (steps, i));
  return g_string_free (out, FALSE);
}

/* Both streams hold the same steps in the same order: @expected. */
static void
streams_assert (Streams    *s,
                const char *expected)
{
  g_autofree char *chat = joined (s->chat_steps);
  g_autofree char *retry = joined (s->retry_steps);

  g_assert_cmpstr (retry, ==, chat);
  if (expected != NULL)
    g_assert_cmpstr (chat, ==, expected);
}

static void
streams_clear (Streams *s)
{
  g_ptr_array_unref (s->chat_steps);
  g_ptr_array_unref (s->retry_steps);
}

static void
fail_subagent (MendChat   *chat,
               const char *id,
               const char *agent_id,
               const char *name)
{
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (SUMMARY_503);

  mend_subagent_retry_note_started (retry, id, agent_id, name);
  mend_subagent_retry_note_failed (retry, id, failure);
}

/* Re-entrant handlers of the chat's record */

static void
act_stop (gpointer data)
{
  mend_chat_stop (data);
}

static void
act_end_subagent (gpointer data)
{
  Streams *s = data;

  mend_subagent_retry_note_ended (s->retry, "toolu_1", MEND_SUBAGENT_COMPLETED);
}

static void
count_waiting (MendSubagentRetry *retry,
               MendSubagent      *subagent,
               MendRetryWait     *wait,
               guint             *dead)
{
  if (mend_retry_wait_get_state (wait) != MEND_RETRY_WAIT_PENDING)
    (*dead)++;
}

static void
act_replace_subagent (gpointer data)
{
  Streams *s = data;

  mend_subagent_retry_note_started (s->retry, "toolu_2", "agent-b", "Push relay");
}

/* A handler of the chat's record, or of the subagent retry's, that ends
 * the wait at its "scheduled" (Stop, the subagent's end, a new subagent
 * of its name): the skip comes after the scheduled step in both streams,
 * and no dead wait is announced. */
static void
test_record_handler_ending_the_wait_keeps_both_streams_in_order (void)
{
  struct {
    const char *at;
    void      (*act) (gpointer);
    gboolean    on_retry;
    const char *expected;
  } cases[] = {
    { "scheduled", act_stop, FALSE, "scheduled 1 toolu_1 | skipped 1 stopped toolu_1" },
    { "scheduled", act_end_subagent, FALSE, "scheduled 1 toolu_1 | skipped 1 ended toolu_1" },
    { "scheduled", act_replace_subagent, FALSE, "scheduled 1 toolu_1 | skipped 1 replaced toolu_1" },
    { "scheduled", act_stop, TRUE, "scheduled 1 toolu_1 | skipped 1 stopped toolu_1" },
    { "scheduled", act_replace_subagent, TRUE, "scheduled 1 toolu_1 | skipped 1 replaced toolu_1" },
    /* Stop as the prompt fires: the prompt is dropped, after its fired. */
    { "fired", act_stop, FALSE, "scheduled 1 toolu_1 | fired 1 toolu_1 | skipped 1 stopped toolu_1" },
    { "fired", act_stop, TRUE, "scheduled 1 toolu_1 | fired 1 toolu_1 | skipped 1 stopped toolu_1" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock);
      Streams s = { 0 };
      guint dead = 0;

      streams_init (&s, chat);
      s.at = cases[i].at;
      if (cases[i].on_retry)
        s.retry_act = cases[i].act;
      else
        s.act = cases[i].act;
      s.act_data = cases[i].act == act_stop ? (gpointer) chat : (gpointer) &s;
      g_signal_connect (s.retry, "waiting", G_CALLBACK (count_waiting), &dead);

      fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
      advance (clock, 3600 * 1000);
      streams_assert (&s, cases[i].expected);
      g_assert_cmpuint (dead, ==, 0);
      g_assert_null (mend_chat_get_turn (chat));

      mend_chat_close (chat);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
      streams_clear (&s);
    }
}

static void
act_unref (gpointer data)
{
  g_object_unref (data);
}

/* A handler of the chat's record that drops the last reference to the
 * chat, and with it to its subagent retry, at each subagent step: nothing
 * is touched after, and everything is finalized. */
static void
test_chat_record_handler_dropping_the_chat (void)
{
  const char *ats[] = { "scheduled", "fired" };

  for (guint i = 0; i < G_N_ELEMENTS (ats); i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock);
      MendSubagentRetry *retry = mend_chat_get_subagents (chat);
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (SUMMARY_503);
      Streams s = { 0 };

      streams_init (&s, chat);
      s.at = ats[i];
      s.act = act_unref;
      s.act_data = chat;
      g_object_add_weak_pointer (G_OBJECT (chat), (gpointer *) &chat);
      g_object_add_weak_pointer (G_OBJECT (retry), (gpointer *) &retry);

      mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
      mend_subagent_retry_note_failed (retry, "toolu_1", failure);
      if (i == 0)
        {
          g_assert_null (chat);
          g_assert_null (retry);
        }
      advance (clock, 3600 * 1000);
      g_assert_null (chat);
      g_assert_null (retry);
      g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)), ==, 0);
      g_assert_cmpstr (g_ptr_array_index (s.chat_steps, s.chat_steps->len - 1), ==,
                       i == 0 ? "scheduled 1 toolu_1" : "fired 1 toolu_1");

      streams_clear (&s);
      g_assert_finalize_object (clock);
    }
}

static void
act_close (gpointer data)
{
  mend_chat_close (data);
}

static void
act_submit (gpointer data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (data, "Fix the build", NULL, &error));
  g_assert_no_error (error);
}

static guint
queued_resume_prompts (MendQueue *queue)
{
  guint n = 0;

  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);
      const char *provenance = mend_queue_item_get_provenance (item);

      if (provenance != NULL && strstr (provenance, "\"subagent_retry\"") != NULL)
        n++;
    }
  return n;
}

static void
count_turn (MendChat *chat,
            MendTurn *turn,
            guint    *n)
{
  (*n)++;
}

/* A handler of the chat's record that closes the chat as the prompt
 * fires sends nothing, and says so; one that submits the user's message runs it, and
 * the resume prompt queues behind it, never lost. */
static void
test_chat_record_handler_closing_or_submitting_as_the_prompt_fires (void)
{
  for (guint i = 0; i < 2; i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock);
      MendQueue *queue = mend_chat_get_queue (chat);
      Streams s = { 0 };
      guint turns = 0;

      streams_init (&s, chat);
      s.at = "fired";
      s.act = i == 0 ? act_close : act_submit;
      s.act_data = chat;

      fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
      advance (clock, PAST_FIRST_RESUME_MS);
      if (i == 0)
        {
          streams_assert (&s, "scheduled 1 toolu_1 | fired 1 toolu_1 | skipped 1 closed toolu_1");
          g_assert_null (mend_chat_get_turn (chat));
          g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);
          g_assert_false (mend_subagent_get_retryable (mend_subagent_retry_lookup (s.retry, "toolu_1")));
        }
      else
        {
          streams_assert (&s, "scheduled 1 toolu_1 | fired 1 toolu_1");
          g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (chat)), ==, "Fix the build");
          g_assert_cmpuint (queued_resume_prompts (queue), ==, 1);
          /* The user's turn ends: the resume prompt runs next. */
          g_signal_connect (chat, "turn-started", G_CALLBACK (count_turn), &turns);
          mend_turn_succeed (mend_chat_get_turn (chat));
          g_assert_cmpuint (turns, ==, 1);
          g_assert_nonnull (strstr (mend_turn_get_provenance (mend_chat_get_turn (chat)), "\"toolu_1\""));
          mend_turn_succeed (mend_chat_get_turn (chat));
        }

      mend_chat_close (chat);
      streams_clear (&s);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
    }
}


/* Hostile task lines */

typedef struct
{
  MendClock          *clock;
  MendChat           *chat;
  MendSubagentRetry  *retry;
  MendStreamObserver *observer;
} Agent;

static void
agent_init (Agent *a)
{
  a->clock = mend_manual_clock_new (WALL_START);
  a->chat = new_chat (a->clock);
  a->retry = mend_chat_get_subagents (a->chat);
  a->observer = mend_stream_observer_new (a->chat);
}

static void
agent_clear (Agent *a)
{
  mend_chat_close (a->chat);
  g_assert_finalize_object (a->observer);
  g_assert_finalize_object (a->chat);
  g_assert_finalize_object (a->clock);
}

static MendSubagentState
state_of (Agent      *a,
          const char *id)
{
  MendSubagent *subagent = mend_subagent_retry_lookup (a->retry, id);

  g_assert_nonnull (subagent);
  return mend_subagent_get_state (subagent);
}

/* A subagent whose agent id (task_id) is another subagent's id (the
 * tool_use_id of its call): its failure is its own, found by its agent
 * id, and the other runs on. */
static void
test_agent_id_equal_to_another_subagents_id (void)
{
  Agent a;
  MendSubagent *second;

  agent_init (&a);
  g_assert_true (feed (a.observer, started_line ("agent-a", "toolu_A", "First")));
  g_assert_true (feed (a.observer, started_line ("toolu_A", "toolu_B", "Second")));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (a.retry)), ==, 2);

  /* The line names the second by both its ids, or by its agent id alone. */
  g_assert_true (feed (a.observer, notification_line ("toolu_A", "toolu_B", "failed")));
  g_assert_cmpint (state_of (&a, "toolu_B"), ==, MEND_SUBAGENT_FAILED);
  g_assert_cmpint (state_of (&a, "agent-a"), ==, MEND_SUBAGENT_RUNNING);
  second = mend_subagent_retry_lookup (a.retry, "toolu_B");
  g_assert_cmpstr (mend_subagent_get_agent_id (second), ==, "toolu_A");
  g_assert_nonnull (mend_subagent_get_retry (second));

  g_assert_true (feed (a.observer, notification_line ("toolu_A", NULL, "completed")));
  g_assert_cmpint (state_of (&a, "toolu_B"), ==, MEND_SUBAGENT_COMPLETED);
  g_assert_cmpint (state_of (&a, "agent-a"), ==, MEND_SUBAGENT_RUNNING);

  agent_clear (&a);
}

/* Ids at MEND_SUBAGENT_MAX_ID_BYTES are taken; one past it is refused,
 * and the line makes no subagent with the other id in its place: the
 * call's id is no agent id to resume. */
static void
test_failed_line_with_ids_at_and_past_the_cap (void)
{
  Agent a;
  g_autofree char *at_cap = g_strnfill (MEND_SUBAGENT_MAX_ID_BYTES, 'a');
  g_autofree char *past_cap = g_strnfill (MEND_SUBAGENT_MAX_ID_BYTES + 1, 'b');
  MendSubagent *subagent;

  agent_init (&a);

  g_assert_true (feed (a.observer, notification_line (at_cap, "toolu_1", "failed")));
  subagent = mend_subagent_retry_lookup (a.retry, "toolu_1");
  g_assert_nonnull (subagent);
  g_assert_cmpstr (mend_subagent_get_agent_id (subagent), ==, at_cap);

  /* A task id past the cap, then a call id past it. */
  g_assert_false (feed (a.observer, notification_line (past_cap, "toolu_2", "failed")));
  g_assert_null (mend_subagent_retry_lookup (a.retry, "toolu_2"));
  g_assert_false (feed (a.observer, notification_line ("agent-3", past_cap, "failed")));
  g_assert_null (mend_subagent_retry_lookup (a.retry, "agent-3"));
  g_assert_false (feed (a.observer, notification_line (past_cap, NULL, "failed")));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (a.retry)), ==, 1);

  agent_clear (&a);
}

/* One id, an empty one, the same id twice: each failure is one subagent,
 * known after by that id. */
static void
test_failed_lines_with_one_empty_or_the_same_id (void)
{
  Agent a;
  MendSubagent *subagent;

  agent_init (&a);

  g_assert_true (feed (a.observer, notification_line ("agent-1", NULL, "failed")));
  subagent = mend_subagent_retry_lookup (a.retry, "agent-1");
  g_assert_cmpstr (mend_subagent_get_id (subagent), ==, "agent-1");
  g_assert_cmpstr (mend_subagent_get_agent_id (subagent), ==, "agent-1");

  g_assert_true (feed (a.observer, notification_line ("", "toolu_2", "failed")));
  g_assert_nonnull (mend_subagent_retry_lookup (a.retry, "toolu_2"));
  g_assert_true (feed (a.observer, notification_line ("agent-3", "", "failed")));
  g_assert_cmpstr (mend_subagent_get_id (mend_subagent_retry_lookup (a.retry, "agent-3")), ==, "agent-3");
  g_assert_false (feed (a.observer, notification_line ("", "", "failed")));

  g_assert_true (feed (a.observer, notification_line ("same-4", "same-4", "failed")));
  subagent = mend_subagent_retry_lookup (a.retry, "same-4");
  g_assert_cmpstr (mend_subagent_get_agent_id (subagent), ==, "same-4");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (a.retry)), ==, 4);

  /* Told again: the same one, waiting already, changes nothing. */
  g_assert_false (feed (a.observer, notification_line ("same-4", "same-4", "failed")));
  /* Its start is a resume: it runs again, its wait skipped. */
  g_assert_true (feed (a.observer, started_line ("same-4", "same-4", "Again")));
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_RUNNING);
  g_assert_null (mend_subagent_get_retry (subagent));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (a.retry)), ==, 4);

  agent_clear (&a);
}

/* A failed line for a subagent the chat forgot (past max-failed): it is
 * made again, by its agent id, and retried; an end for it is nothing. */
static void
test_failed_line_for_a_forgotten_subagent (void)
{
  Agent a;
  MendSubagent *again;
  g_autoptr(MendFailure) refused = mend_failure_new_from_http (401, NULL, NULL);
  Streams s = { 0 };

  agent_init (&a);
  streams_init (&s, a.chat);
  mend_subagent_retry_set_max_failed (a.retry, 1);

  g_assert_true (feed (a.observer, started_line ("agent-a", "toolu_A", "First")));
  g_assert_true (feed (a.observer, started_line ("agent-b", "toolu_B", "Second")));
  /* Failed on what is never retried: settled, and the older forgotten. */
  mend_subagent_retry_note_failed (a.retry, "toolu_A", refused);
  mend_subagent_retry_note_failed (a.retry, "toolu_B", refused);
  g_assert_null (mend_subagent_retry_lookup (a.retry, "toolu_A"));
  g_assert_false (feed (a.observer, notification_line ("agent-a", "toolu_A", "completed")));
  g_assert_null (mend_subagent_retry_lookup (a.retry, "toolu_A"));

  g_ptr_array_set_size (s.chat_steps, 0);
  g_ptr_array_set_size (s.retry_steps, 0);
  g_assert_true (feed (a.observer, notification_line ("agent-a", "toolu_A", "failed")));
  again = mend_subagent_retry_lookup (a.retry, "toolu_A");
  g_assert_nonnull (again);
  g_assert_cmpstr (mend_subagent_get_agent_id (again), ==, "agent-a");
  g_assert_nonnull (mend_subagent_get_retry (again));
  streams_assert (&s, "scheduled 1 toolu_A");

  agent_clear (&a);
  streams_clear (&s);
}

/* The resume prompt's queue item */

static gboolean
is_resume_prompt (MendQueueItem *item)
{
  const char *provenance = mend_queue_item_get_provenance (item);

  return provenance != NULL && strstr (provenance, "\"subagent_retry\"") != NULL;
}

typedef struct
{
  gboolean pop;
  guint    taken;
} TakeOut;

/* A view that takes a resume prompt out as it is inserted: deletes it, or
 * pops it to send it its own way and drops it. */
static void
take_out_on_insert (GListModel *model,
                    guint       position,
                    guint       removed,
                    guint       added,
                    TakeOut    *t)
{
  g_autoptr(MendQueueItem) item = NULL;

  if (added == 0)
    return;
  item = g_list_model_get_item (model, position);
  if (!is_resume_prompt (item))
    return;
  t->taken++;
  if (t->pop && position == 0)
    g_object_unref (mend_queue_pop (MEND_QUEUE (model)));
  else
    g_assert_true (mend_queue_remove (MEND_QUEUE (model), mend_queue_item_get_id (item), NULL));
}

/* A resume prompt taken out of the queue as it goes in: the subagent is
 * not left "under way" (a person's Retry is one attempt), nothing of it
 * runs after the user's turn, and nothing is lost of the user's. */
static void
test_resume_prompt_taken_out_as_it_is_queued (void)
{
  for (guint i = 0; i < 2; i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock);
      MendSubagentRetry *retry = mend_chat_get_subagents (chat);
      MendQueue *queue = mend_chat_get_queue (chat);
      TakeOut t = { i == 1, 0 };
      g_autoptr(GError) error = NULL;
      Streams s = { 0 };
      MendSubagent *subagent;
      guint turns = 0;

      streams_init (&s, chat);
      g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
      g_signal_connect (queue, "items-changed", G_CALLBACK (take_out_on_insert), &t);
      fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
      advance (clock, PAST_FIRST_RESUME_MS);
      g_assert_cmpuint (t.taken, ==, 1);
      g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);
      streams_assert (&s, "scheduled 1 toolu_1 | fired 1 toolu_1");

      subagent = mend_subagent_retry_lookup (retry, "toolu_1");
      g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
      g_assert_null (mend_subagent_get_retry (subagent));

      /* The user's turn ends: nothing of the prompt runs. */
      g_signal_connect (chat, "turn-started", G_CALLBACK (count_turn), &turns);
      mend_turn_succeed (mend_chat_get_turn (chat));
      g_assert_cmpuint (turns, ==, 0);
      g_assert_null (mend_chat_get_turn (chat));

      /* A person's Retry is one attempt, and runs: the chat is idle. */
      g_signal_handlers_disconnect_by_data (queue, &t);
      g_assert_true (mend_subagent_retry_resume_now (retry, "toolu_1", &error));
      g_assert_no_error (error);
      g_assert_cmpuint (turns, ==, 1);
      g_assert_nonnull (strstr (mend_turn_get_provenance (mend_chat_get_turn (chat)), "\"toolu_1\""));
      mend_turn_succeed (mend_chat_get_turn (chat));
      g_assert_null (mend_subagent_get_retry (subagent));

      mend_chat_close (chat);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
      streams_clear (&s);
    }
}

static guint
count_steps (GPtrArray  *steps,
             const char *prefix)
{
  guint n = 0;

  for (guint i = 0; i < steps->len; i++)
    if (g_str_has_prefix (g_ptr_array_index (steps, i), prefix))
      n++;
  return n;
}

/* More resume prompts than the queue keeps room for, behind the user's
 * turn: those that find no room are skipped as not sent, their subagents
 * left free for a person's Retry, and none of the queued ones is lost. */
static void
test_resume_prompts_past_the_queues_room (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  MendQueue *queue = mend_chat_get_queue (chat);
  g_autoptr(GError) error = NULL;
  Streams s = { 0 };
  guint queued;

  streams_init (&s, chat);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  for (guint i = 0; i < 40; i++)
    {
      g_autofree char *id = g_strdup_printf ("toolu_%u", i);
      g_autofree char *agent_id = g_strdup_printf ("agent-%u", i);
      g_autofree char *name = g_strdup_printf ("Task %u", i);

      fail_subagent (chat, id, agent_id, name);
    }
  advance (clock, 3600 * 1000);
  streams_assert (&s, NULL);
  queued = queued_resume_prompts (queue);
  g_assert_cmpuint (queued, >, 0);
  g_assert_cmpuint (queued, <, 40);
  g_assert_cmpuint (count_steps (s.chat_steps, "fired"), ==, 40);
  g_assert_cmpuint (count_steps (s.chat_steps, "skipped 1 not_sent"), ==, 40 - queued);

  /* One that was not sent is free for a person's Retry; it queues. */
  for (guint i = 0; i < 40; i++)
    {
      g_autofree char *id = g_strdup_printf ("toolu_%u", i);
      MendSubagent *subagent = mend_subagent_retry_lookup (retry, id);

      g_assert_nonnull (subagent);
      g_assert_null (mend_subagent_get_retry (subagent));
    }
  g_assert_true (mend_queue_remove (queue, mend_queue_item_get_id (mend_queue_peek (queue)), NULL));
  g_assert_true (mend_subagent_retry_resume_now (retry, "toolu_39", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (queued_resume_prompts (queue), ==, queued);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  streams_clear (&s);
}

typedef struct
{
  MendChat *chat;
  gboolean  close;
  guint     n;
} StopOnInsert;

static void
stop_on_insert (GListModel   *model,
                guint         position,
                guint         removed,
                guint         added,
                StopOnInsert *t)
{
  g_autoptr(MendQueueItem) item = NULL;

  if (added == 0)
    return;
  item = g_list_model_get_item (model, position);
  if (!is_resume_prompt (item) || t->n++ > 0)
    return;
  /* The subagent is busy with this prompt already: a second is refused. */
  g_assert_false (mend_subagent_retry_resume_now (mend_chat_get_subagents (t->chat), "toolu_1", NULL));
  if (t->close)
    mend_chat_close (t->chat);
  else
    mend_chat_stop (t->chat);
}

/* A view that presses Stop, or closes the chat, as the resume prompt goes
 * into the queue: the prompt is taken back at once, said skipped after
 * its fired, and never runs. */
static void
test_stop_or_close_as_the_resume_prompt_is_queued (void)
{
  for (guint i = 0; i < 2; i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock);
      MendQueue *queue = mend_chat_get_queue (chat);
      StopOnInsert t = { chat, i == 1, 0 };
      Streams s = { 0 };
      guint turns = 0;

      streams_init (&s, chat);
      g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
      g_assert_true (mend_chat_submit (chat, "Then the docs", NULL, NULL));
      g_signal_connect (queue, "items-changed", G_CALLBACK (stop_on_insert), &t);
      fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
      advance (clock, PAST_FIRST_RESUME_MS);
      g_assert_cmpuint (t.n, ==, 1);
      streams_assert (&s, i == 0 ? "scheduled 1 toolu_1 | fired 1 toolu_1 | skipped 1 stopped toolu_1"
                                 : "scheduled 1 toolu_1 | fired 1 toolu_1 | skipped 1 closed toolu_1");
      g_assert_cmpuint (queued_resume_prompts (queue), ==, 0);
      /* The user's message stays. */
      g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);

      g_signal_handlers_disconnect_by_data (queue, &t);
      g_signal_connect (chat, "turn-started", G_CALLBACK (count_turn), &turns);
      if (i == 0)
        {
          g_assert_true (mend_chat_send_next (chat));
          g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (chat)), ==, "Then the docs");
          mend_turn_succeed (mend_chat_get_turn (chat));
          g_assert_cmpuint (turns, ==, 1);
        }

      mend_chat_close (chat);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
      streams_clear (&s);
    }
}

/* Handlers of the subagent retry's signals */

typedef struct
{
  MendStreamObserver *observer;
  const char         *task_id;
  const char         *tool_use_id;
  guint               n;
} FeedOnFired;

static void
feed_failed_on_fired (MendSubagentRetry *retry,
                      MendSubagent      *subagent,
                      const char        *prompt_id,
                      FeedOnFired       *f)
{
  if (f->n++ == 0)
    feed (f->observer, notification_line (f->task_id, f->tool_use_id, "failed"));
}

/* A fired handler that feeds a failed line: for the same subagent, it
 * plans nothing more, and the prompt goes out; for another, never seen,
 * that one is made and waits, after the first's steps, in both streams. */
static void
test_fired_handler_feeding_a_failed_line (void)
{
  const char *cases[][3] = {
    { "agent-a", "toolu_1", "scheduled 1 toolu_1 | fired 1 toolu_1" },
    { "agent-b", "toolu_2", "scheduled 1 toolu_1 | fired 1 toolu_1 | scheduled 1 toolu_2" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Agent a;
      Streams s = { 0 };
      FeedOnFired f = { NULL, cases[i][0], cases[i][1], 0 };
      guint turns = 0;

      agent_init (&a);
      streams_init (&s, a.chat);
      f.observer = a.observer;
      g_signal_connect (a.chat, "turn-started", G_CALLBACK (count_turn), &turns);
      g_signal_connect (a.retry, "fired", G_CALLBACK (feed_failed_on_fired), &f);

      g_assert_true (feed (a.observer, started_line ("agent-a", "toolu_1", "Push relay")));
      g_assert_true (feed (a.observer, notification_line ("agent-a", "toolu_1", "failed")));
      advance (a.clock, PAST_FIRST_RESUME_MS);
      streams_assert (&s, cases[i][2]);
      g_assert_cmpuint (turns, ==, 1);
      g_assert_nonnull (strstr (mend_turn_get_provenance (mend_chat_get_turn (a.chat)), "\"toolu_1\""));
      g_assert_null (mend_subagent_get_retry (mend_subagent_retry_lookup (a.retry, "toolu_1")));
      if (i == 1)
        g_assert_nonnull (mend_subagent_get_retry (mend_subagent_retry_lookup (a.retry, "toolu_2")));

      agent_clear (&a);
      streams_clear (&s);
    }
}

static void
crowd_on_fired (MendSubagentRetry *retry,
                MendSubagent      *subagent,
                const char        *prompt_id,
                guint             *n)
{
  if ((*n)++ > 0)
    return;
  /* Running subagents past every cap: the oldest goes, under way or not. */
  for (guint i = 0; i < 1100; i++)
    {
      g_autofree char *id = g_strdup_printf ("toolu_crowd_%u", i);

      mend_subagent_retry_note_started (retry, id, id, NULL);
    }
}

/* A fired handler that crowds the subagent out of the list: its prompt
 * is not sent, and says so after its fired, in both streams. */
static void
test_fired_handler_crowding_the_subagent_out (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock);
  Streams s = { 0 };
  guint n = 0, turns = 0;

  streams_init (&s, chat);
  g_signal_connect (chat, "turn-started", G_CALLBACK (count_turn), &turns);
  g_signal_connect (s.retry, "fired", G_CALLBACK (crowd_on_fired), &n);
  fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
  advance (clock, PAST_FIRST_RESUME_MS);
  streams_assert (&s, "scheduled 1 toolu_1 | fired 1 toolu_1 | skipped 1 forgotten toolu_1");
  g_assert_null (mend_subagent_retry_lookup (s.retry, "toolu_1"));
  g_assert_cmpuint (turns, ==, 0);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  streams_clear (&s);
}

typedef struct
{
  guint   n;
  GError *error;
} ClickOnFired;

static void
click_retry_on_fired (MendSubagentRetry *retry,
                      MendSubagent      *subagent,
                      const char        *prompt_id,
                      ClickOnFired      *c)
{
  if (c->n++ == 0)
    g_assert_false (mend_subagent_retry_resume_now (retry, mend_subagent_get_id (subagent), &c->error));
}

/* A person's Retry clicked from a handler of the prompt's fired (the
 * automatic attempt, or a first click): an attempt runs, so it is busy,
 * and one prompt goes out, counted once. */
static void
test_retry_clicked_as_the_prompt_fires_is_busy (void)
{
  for (guint i = 0; i < 2; i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock);
      MendSubagentRetry *retry = mend_chat_get_subagents (chat);
      ClickOnFired c = { 0, NULL };
      Streams s = { 0 };
      guint turns = 0;

      streams_init (&s, chat);
      g_signal_connect (chat, "turn-started", G_CALLBACK (count_turn), &turns);
      fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
      g_signal_connect (retry, "fired", G_CALLBACK (click_retry_on_fired), &c);
      if (i == 0)
        advance (clock, PAST_FIRST_RESUME_MS);
      else
        g_assert_true (mend_subagent_retry_resume_now (retry, "toolu_1", NULL));
      g_assert_error (c.error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY);
      g_assert_cmpuint (turns, ==, 1);
      g_assert_cmpuint (mend_subagent_get_attempts (mend_subagent_retry_lookup (retry, "toolu_1")), ==, 1);
      streams_assert (&s, "scheduled 1 toolu_1 | fired 1 toolu_1");

      g_clear_error (&c.error);
      mend_chat_close (chat);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
      streams_clear (&s);
    }
}

static void
replace_on_waiting (MendSubagentRetry *retry,
                    MendSubagent      *subagent,
                    MendRetryWait     *wait,
                    Agent             *a)
{
  if (g_str_equal (mend_subagent_get_id (subagent), "toolu_1"))
    feed (a->observer, started_line ("agent-b", "toolu_2", "Push relay"));
}

/* A waiting handler whose line replaces the subagent (a new one of its
 * name): the wait is skipped once, and the new one runs. */
static void
test_waiting_handler_replacing_the_subagent (void)
{
  Agent a;
  Streams s = { 0 };

  agent_init (&a);
  streams_init (&s, a.chat);
  g_signal_connect (a.retry, "waiting", G_CALLBACK (replace_on_waiting), &a);

  g_assert_true (feed (a.observer, started_line ("agent-a", "toolu_1", "Push relay")));
  g_assert_true (feed (a.observer, notification_line ("agent-a", "toolu_1", "failed")));
  streams_assert (&s, "scheduled 1 toolu_1 | skipped 1 replaced toolu_1");
  g_assert_null (mend_subagent_retry_lookup (a.retry, "toolu_1"));
  g_assert_cmpint (state_of (&a, "toolu_2"), ==, MEND_SUBAGENT_RUNNING);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (a.retry)), ==, 1);
  advance (a.clock, 3600 * 1000);
  g_assert_null (mend_chat_get_turn (a.chat));

  agent_clear (&a);
  streams_clear (&s);
}

/* The verdict */

/* A subagent whose resume prompt's turn runs fails again on what is never
 * retried (a refused key): when that turn ends, no next attempt waits. */
static void
test_permanent_failure_during_the_prompts_turn_is_not_retried (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) refused = mend_failure_new_from_http (401, NULL, NULL);
  Streams s = { 0 };
  MendSubagent *subagent;

  streams_init (&s, chat);
  fail_subagent (chat, "toolu_1", "agent-a", "Push relay");
  advance (clock, PAST_FIRST_RESUME_MS);
  g_assert_nonnull (mend_chat_get_turn (chat));
  mend_subagent_retry_note_failed (retry, "toolu_1", refused);
  mend_turn_succeed (mend_chat_get_turn (chat));

  subagent = mend_subagent_retry_lookup (retry, "toolu_1");
  g_assert_cmpint (mend_subagent_get_state (subagent), ==, MEND_SUBAGENT_FAILED);
  g_assert_null (mend_subagent_get_retry (subagent));
  g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (subagent)), ==, MEND_REASON_AUTH);
  streams_assert (&s, "scheduled 1 toolu_1 | fired 1 toolu_1");
  advance (clock, 3600 * 1000);
  g_assert_null (mend_chat_get_turn (chat));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  streams_clear (&s);
}

static void
keep_reason (MendChat   *chat,
             const char *json,
             GPtrArray  *reasons)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *obj = json_node_get_object (node);

  if (g_strcmp0 (json_object_get_string_member (obj, "kind"), "subagent_retry") == 0)
    g_ptr_array_add (reasons, g_strdup_printf ("%s %s",
                                               json_object_get_string_member (obj, "outcome"),
                                               json_object_get_string_member (obj, "reason")));
}

/* A rule the app added to the resume policy names the reason of what its
 * retries carry: the records, the wait and the subagent's failure agree,
 * whether the subagent is retried or cannot be (no agent id). */
static void
test_resume_policy_rule_names_the_reason_of_records_and_wait (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(MendErrorPolicy) resume = mend_error_policy_new_for_resume ();
  g_autoptr(MendFailure) failure = mend_failure_new_from_text ("upstream pool drained");
  g_autoptr(GPtrArray) reasons = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  MendChat *chat;
  MendSubagentRetry *retry;
  MendSubagent *subagent;
  MendFailure *kept;

  g_assert_true (mend_error_policy_add_rule (resume, "pool drained", MEND_REASON_CAPACITY,
                                             "our gateway: every upstream account is busy", &error));
  g_assert_no_error (error);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "resume-policy", resume, NULL);
  mend_test_run_turns_by_hand (chat);
  retry = mend_chat_get_subagents (chat);
  g_signal_connect (chat, "record", G_CALLBACK (keep_reason), reasons);

  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "toolu_1", failure);
  subagent = mend_subagent_retry_lookup (retry, "toolu_1");
  g_assert_nonnull (mend_subagent_get_retry (subagent));
  g_assert_cmpint (mend_retry_wait_get_reason (mend_subagent_get_retry (subagent)), ==, MEND_REASON_CAPACITY);
  kept = mend_subagent_get_failure (subagent);
  g_assert_cmpint (mend_failure_get_reason (kept), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (kept), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpuint (reasons->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (reasons, 0), ==, "scheduled capacity");

  advance (clock, PAST_FIRST_RESUME_MS);
  g_assert_cmpstr (g_ptr_array_index (reasons, 1), ==, "fired capacity");
  mend_turn_succeed (mend_chat_get_turn (chat));
  /* Still failed after its prompt's turn: the next attempt, the same reason. */
  g_assert_cmpstr (g_ptr_array_index (reasons, 2), ==, "scheduled capacity");

  /* One that cannot be retried carries what the policy read it as too. */
  mend_subagent_retry_note_started (retry, "toolu_2", NULL, "Lint");
  mend_subagent_retry_note_failed (retry, "toolu_2", failure);
  kept = mend_subagent_get_failure (mend_subagent_retry_lookup (retry, "toolu_2"));
  g_assert_cmpint (mend_failure_get_reason (kept), ==, MEND_REASON_CAPACITY);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}


int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Mend/AttackRoute/record-handler-ending-the-wait-keeps-both-streams-in-order",
                   test_record_handler_ending_the_wait_keeps_both_streams_in_order);
  g_test_add_func ("/Mend/AttackRoute/chat-record-handler-dropping-the-chat",
                   test_chat_record_handler_dropping_the_chat);
  g_test_add_func ("/Mend/AttackRoute/chat-record-handler-closing-or-submitting-as-the-prompt-fires",
                   test_chat_record_handler_closing_or_submitting_as_the_prompt_fires);
  g_test_add_func ("/Mend/AttackRoute/resume-prompt-taken-out-as-it-is-queued",
                   test_resume_prompt_taken_out_as_it_is_queued);
  g_test_add_func ("/Mend/AttackRoute/stop-or-close-as-the-resume-prompt-is-queued",
                   test_stop_or_close_as_the_resume_prompt_is_queued);
  g_test_add_func ("/Mend/AttackRoute/resume-prompts-past-the-queues-room",
                   test_resume_prompts_past_the_queues_room);
  g_test_add_func ("/Mend/AttackRoute/fired-handler-feeding-a-failed-line",
                   test_fired_handler_feeding_a_failed_line);
  g_test_add_func ("/Mend/AttackRoute/fired-handler-crowding-the-subagent-out",
                   test_fired_handler_crowding_the_subagent_out);
  g_test_add_func ("/Mend/AttackRoute/retry-clicked-as-the-prompt-fires-is-busy",
                   test_retry_clicked_as_the_prompt_fires_is_busy);
  g_test_add_func ("/Mend/AttackRoute/waiting-handler-replacing-the-subagent",
                   test_waiting_handler_replacing_the_subagent);
  g_test_add_func ("/Mend/AttackRoute/agent-id-equal-to-another-subagents-id",
                   test_agent_id_equal_to_another_subagents_id);
  g_test_add_func ("/Mend/AttackRoute/failed-line-with-ids-at-and-past-the-cap",
                   test_failed_line_with_ids_at_and_past_the_cap);
  g_test_add_func ("/Mend/AttackRoute/failed-lines-with-one-empty-or-the-same-id",
                   test_failed_lines_with_one_empty_or_the_same_id);
  g_test_add_func ("/Mend/AttackRoute/failed-line-for-a-forgotten-subagent",
                   test_failed_line_for_a_forgotten_subagent);
  g_test_add_func ("/Mend/AttackRoute/permanent-failure-during-the-prompts-turn-is-not-retried",
                   test_permanent_failure_during_the_prompts_turn_is_not_retried);
  g_test_add_func ("/Mend/AttackRoute/resume-policy-rule-names-the-reason-of-records-and-wait",
                   test_resume_policy_rule_names_the_reason_of_records_and_wait);

  return g_test_run ();
}
