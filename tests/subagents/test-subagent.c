/* test-subagent.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendSubagent as an app meets it: an item of its chat's MendSubagentRetry,
 * made from what an agent's stream said, read-only, each change told as
 * one notification per property once the step is done, its entry as JSON,
 * and back from the chat's saved state.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"

/* The gateway's words for a subagent's 503, as Claude Code reports them
 * (the same text as tests/subagents/test-subagent-retry.c's GATEWAY_503). */
#define GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available (error type server_error, HTTP 503)"

/* Claude Code's stream-json for a Task subagent, in the shapes
 * tests/stream/test-stream-observer.c takes from the CLI's output. */
#define STARTED_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a7c41e2\"," \
  "\"tool_use_id\":\"toolu_01\",\"description\":\"Push relay for GCP lane bundles\"," \
  "\"session_id\":\"s-1\",\"uuid\":\"u-4\"}"
#define STARTED_NO_CALL_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"b81f0c3\"," \
  "\"description\":\"Survey the tree\",\"session_id\":\"s-1\",\"uuid\":\"u-5\"}"
#define FAILED_503_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41e2\"," \
  "\"status\":\"failed\",\"summary\":\"" GATEWAY_503 "\",\"session_id\":\"s-1\"}"

typedef struct
{
  MendClock         *clock;
  MendChat          *chat;
  MendSubagentRetry *retry;
  guint              prompts;
} Fixture;

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Fixture  *f)
{
  if (strstr (mend_turn_get_prompt (turn), "SendMessage") != NULL)
    f->prompts++;
  mend_test_run_by_hand (turn);
}

static MendChat *
new_chat (Fixture   *f,
          MendClock *clock)
{
  MendErrorPolicy *resume = mend_error_policy_new_for_resume ();
  MendChat *chat;

  mend_error_policy_set_stagger_ms (resume, 0);
  chat = g_object_new (MEND_TYPE_CHAT,
                       "id", "chat-1",
                       "clock", clock,
                       "resume-policy", resume,
                       NULL);
  g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), f);
  g_object_unref (resume);
  return chat;
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  f->chat = new_chat (f, f->clock);
  f->retry = mend_chat_get_subagents (f->chat);
}

/* The subagents die with their chat: no one else keeps them. */
static void
finalize_chat_and_subagents (MendChat *chat)
{
  GListModel *model = G_LIST_MODEL (mend_chat_get_subagents (chat));
  g_autoptr(GPtrArray) subagents = g_ptr_array_new ();

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    g_ptr_array_add (subagents, g_list_model_get_item (model, i));
  g_assert_finalize_object (chat);
  for (guint i = 0; i < subagents->len; i++)
    g_assert_finalize_object (g_ptr_array_index (subagents, i));
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  finalize_chat_and_subagents (f->chat);
  g_assert_finalize_object (f->clock);
}

static void
advance (Fixture *f,
         guint64  ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), ms);
}

static void
fail (Fixture    *f,
      const char *id,
      const char *text)
{
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (text);

  mend_subagent_retry_note_failed (f->retry, id, failure);
}

/* Every property read through GObject is what its getter says. */
static void
assert_properties_match_getters (MendSubagent *sub)
{
  g_autofree char *id = NULL;
  g_autofree char *agent_id = NULL;
  g_autofree char *name = NULL;
  g_autoptr(MendRetryWait) wait = NULL;
  g_autoptr(MendFailure) failure = NULL;
  MendSubagentState state;
  gboolean retryable;
  guint attempts;

  g_object_get (sub,
                "id", &id,
                "agent-id", &agent_id,
                "name", &name,
                "state", &state,
                "retry", &wait,
                "retryable", &retryable,
                "failure", &failure,
                "attempts", &attempts,
                NULL);
  g_assert_cmpstr (id, ==, mend_subagent_get_id (sub));
  g_assert_cmpstr (agent_id, ==, mend_subagent_get_agent_id (sub));
  g_assert_cmpstr (name, ==, mend_subagent_get_name (sub));
  g_assert_cmpint (state, ==, mend_subagent_get_state (sub));
  g_assert_true (wait == mend_subagent_get_retry (sub));
  g_assert_cmpint (retryable, ==, mend_subagent_get_retryable (sub));
  g_assert_true (failure == mend_subagent_get_failure (sub));
  g_assert_cmpuint (attempts, ==, mend_subagent_get_attempts (sub));
}

#define assert_json(sub, expected) G_STMT_START { \
  g_autofree char *_json = mend_subagent_to_json (sub); \
  g_assert_cmpstr (_json, ==, expected); \
} G_STMT_END

static void
test_properties_are_read_only (void)
{
  /* Kept up to date by its subagent retry alone. */
  const MendTestProperty expected[] = {
    { "id", G_TYPE_STRING, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "agent-id", G_TYPE_STRING, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "name", G_TYPE_STRING, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "state", MEND_TYPE_SUBAGENT_STATE, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "retry", MEND_TYPE_RETRY_WAIT, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "retryable", G_TYPE_BOOLEAN, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "failure", MEND_TYPE_FAILURE, G_PARAM_READABLE, G_PARAM_WRITABLE },
    { "attempts", G_TYPE_UINT, G_PARAM_READABLE, G_PARAM_WRITABLE },
  };
  g_autoptr(GTypeClass) klass = g_type_class_ref (MEND_TYPE_SUBAGENT);

  g_assert_true (G_TYPE_IS_FINAL (MEND_TYPE_SUBAGENT));
  mend_test_assert_properties (MEND_TYPE_SUBAGENT, expected, G_N_ELEMENTS (expected));
  g_assert_cmpint (G_PARAM_SPEC_ENUM (g_object_class_find_property (G_OBJECT_CLASS (klass), "state"))->default_value,
                   ==, MEND_SUBAGENT_RUNNING);
}

/* A start makes it: its ids and name as given, running, nothing to retry;
 * the list holds that very object. */
static void
test_a_start_makes_a_running_subagent (Fixture       *f,
                                       gconstpointer  data)
{
  MendSubagent *sub = mend_subagent_retry_note_started (f->retry, "toolu_1", "agent-a", "Push relay");
  g_autoptr(MendSubagent) item = NULL;

  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (f->retry)) == MEND_TYPE_SUBAGENT);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->retry)), ==, 1);
  item = g_list_model_get_item (G_LIST_MODEL (f->retry), 0);
  g_assert_true (item == sub);
  g_assert_true (mend_subagent_retry_lookup (f->retry, "toolu_1") == sub);
  g_assert_true (mend_subagent_retry_lookup (f->retry, "agent-a") == sub);

  g_assert_cmpstr (mend_subagent_get_id (sub), ==, "toolu_1");
  g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, "agent-a");
  g_assert_cmpstr (mend_subagent_get_name (sub), ==, "Push relay");
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_RUNNING);
  g_assert_null (mend_subagent_get_retry (sub));
  g_assert_false (mend_subagent_get_retryable (sub));
  g_assert_null (mend_subagent_get_failure (sub));
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 0);
  assert_properties_match_getters (sub);
  assert_json (sub, "{\"subagentId\":\"toolu_1\",\"agentId\":\"agent-a\",\"name\":\"Push relay\","
                    "\"state\":\"running\",\"retryable\":false,\"retry\":null}");
}

/* From the agent's stream: the call's id, the task's agent id, the
 * description; a failure line fails it, and it waits to be resumed. A
 * task with no call is known by its agent id. */
static void
test_a_stream_line_makes_it (Fixture       *f,
                             gconstpointer  data)
{
  MendStreamObserver *observer = mend_stream_observer_new (f->chat);
  MendSubagent *sub;
  MendRetryWait *wait;

  g_assert_true (mend_stream_observer_feed_line (observer, STARTED_LINE, -1));
  sub = mend_subagent_retry_lookup (f->retry, "toolu_01");
  g_assert_nonnull (sub);
  g_assert_cmpstr (mend_subagent_get_id (sub), ==, "toolu_01");
  g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, "a7c41e2");
  g_assert_cmpstr (mend_subagent_get_name (sub), ==, "Push relay for GCP lane bundles");
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_RUNNING);

  g_assert_true (mend_stream_observer_feed_line (observer, FAILED_503_LINE, -1));
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_FAILED);
  g_assert_nonnull (mend_subagent_get_failure (sub));
  g_assert_cmpstr (mend_failure_get_message (mend_subagent_get_failure (sub)), ==, GATEWAY_503);
  g_assert_cmpint (mend_failure_get_kind (mend_subagent_get_failure (sub)), ==, MEND_FAILURE_TRANSIENT);
  g_assert_true (mend_subagent_get_retryable (sub));
  wait = mend_subagent_get_retry (sub);
  g_assert_nonnull (wait);
  g_assert_cmpuint (mend_retry_wait_get_attempt (wait), ==, 1);
  g_assert_cmpuint (mend_retry_wait_get_max_retries (wait), ==, 4);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (wait), ==, 20000);
  assert_properties_match_getters (sub);
  assert_json (sub, "{\"subagentId\":\"toolu_01\",\"agentId\":\"a7c41e2\","
                    "\"name\":\"Push relay for GCP lane bundles\",\"state\":\"failed\",\"retryable\":true,"
                    "\"retry\":{\"attempt\":1,\"of\":4,\"reason\":\"capacity\",\"nextAt\":1764500020000}}");

  g_assert_true (mend_stream_observer_feed_line (observer, STARTED_NO_CALL_LINE, -1));
  sub = mend_subagent_retry_lookup (f->retry, "b81f0c3");
  g_assert_nonnull (sub);
  g_assert_cmpstr (mend_subagent_get_id (sub), ==, "b81f0c3");
  g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, "b81f0c3");
  g_assert_cmpstr (mend_subagent_get_name (sub), ==, "Survey the tree");
  assert_properties_match_getters (sub);

  g_assert_finalize_object (observer);
  mend_chat_close (f->chat);
}

/* An agent id not known, and no name: both NULL, in the entry as null; a
 * failure then cannot be retried by anyone. A failure of an id never
 * started makes a subagent known by that id. */
static void
test_what_is_not_known_is_null (Fixture       *f,
                                gconstpointer  data)
{
  MendSubagent *sub = mend_subagent_retry_note_started (f->retry, "toolu_9", NULL, NULL);

  g_assert_null (mend_subagent_get_agent_id (sub));
  g_assert_null (mend_subagent_get_name (sub));
  assert_properties_match_getters (sub);
  assert_json (sub, "{\"subagentId\":\"toolu_9\",\"agentId\":null,\"name\":null,"
                    "\"state\":\"running\",\"retryable\":false,\"retry\":null}");

  fail (f, "toolu_9", GATEWAY_503);
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_FAILED);
  g_assert_false (mend_subagent_get_retryable (sub));
  g_assert_null (mend_subagent_get_retry (sub));
  assert_json (sub, "{\"subagentId\":\"toolu_9\",\"agentId\":null,\"name\":null,"
                    "\"state\":\"failed\",\"retryable\":false,\"retry\":null}");

  fail (f, "agent-unseen", GATEWAY_503);
  sub = mend_subagent_retry_lookup (f->retry, "agent-unseen");
  g_assert_nonnull (sub);
  g_assert_cmpstr (mend_subagent_get_id (sub), ==, "agent-unseen");
  g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, "agent-unseen");
  g_assert_true (mend_subagent_get_retryable (sub));
  g_assert_nonnull (mend_subagent_get_retry (sub));
  mend_chat_close (f->chat);
}

/* The name is the agent's untrusted text, kept as given, cut at a
 * character boundary past MEND_SUBAGENT_MAX_NAME_BYTES; an id past
 * MEND_SUBAGENT_MAX_ID_BYTES makes no subagent. */
static void
test_names_and_ids_are_bounded (Fixture       *f,
                                gconstpointer  data)
{
  const char *odd = "Say \"done\"\nthen\tstop";
  g_autoptr(GString) long_name = g_string_new ("x");
  g_autofree char *long_id = g_strnfill (MEND_SUBAGENT_MAX_ID_BYTES + 1, 'i');
  g_autofree char *longest_id = g_strnfill (MEND_SUBAGENT_MAX_ID_BYTES, 'i');
  MendSubagent *sub;
  const char *kept;

  sub = mend_subagent_retry_note_started (f->retry, "toolu_1", "agent-a", odd);
  g_assert_cmpstr (mend_subagent_get_name (sub), ==, odd);

  /* One byte, then three-byte characters across the limit. */
  while (long_name->len < MEND_SUBAGENT_MAX_NAME_BYTES + 10)
    g_string_append (long_name, "€");
  sub = mend_subagent_retry_note_started (f->retry, "toolu_2", "agent-b", long_name->str);
  kept = mend_subagent_get_name (sub);
  g_assert_cmpuint (strlen (kept), <=, MEND_SUBAGENT_MAX_NAME_BYTES);
  g_assert_cmpuint (strlen (kept), >, MEND_SUBAGENT_MAX_NAME_BYTES - 3);
  g_assert_true (g_utf8_validate (kept, -1, NULL));
  g_assert_true (strncmp (kept, long_name->str, strlen (kept)) == 0);
  assert_properties_match_getters (sub);

  g_assert_null (mend_subagent_retry_note_started (f->retry, long_id, "agent-c", "too long"));
  g_assert_null (mend_subagent_retry_note_started (f->retry, "toolu_3", long_id, "too long"));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->retry)), ==, 2);
  sub = mend_subagent_retry_note_started (f->retry, longest_id, "agent-d", "just fits");
  g_assert_nonnull (sub);
  g_assert_cmpstr (mend_subagent_get_id (sub), ==, longest_id);
}

typedef struct
{
  GPtrArray *notified;     /* property names, in order */
  gboolean   consistent;   /* each handler saw getter == g_object_get */
  MendSubagentState state; /* what the step ends with, as seen in handlers */
  gboolean   has_retry;
  gboolean   retryable;
  guint      attempts;
  MendFailure *failure;
  gboolean   saw_step_done;
} Notes;

static void
on_notify (MendSubagent *sub,
           GParamSpec   *pspec,
           Notes        *notes)
{
  g_auto(GValue) value = G_VALUE_INIT;

  g_ptr_array_add (notes->notified, (gpointer) g_intern_string (pspec->name));
  /* What a handler reads is the step's end, whichever property it hears of
   * first. */
  if (mend_subagent_get_state (sub) != notes->state ||
      (mend_subagent_get_retry (sub) != NULL) != notes->has_retry ||
      mend_subagent_get_retryable (sub) != notes->retryable ||
      mend_subagent_get_attempts (sub) != notes->attempts ||
      mend_subagent_get_failure (sub) != notes->failure)
    notes->saw_step_done = FALSE;

  g_value_init (&value, pspec->value_type);
  g_object_get_property (G_OBJECT (sub), pspec->name, &value);
  if (g_str_equal (pspec->name, "state"))
    notes->consistent &= g_value_get_enum (&value) == (gint) mend_subagent_get_state (sub);
  else if (g_str_equal (pspec->name, "retry"))
    notes->consistent &= g_value_get_object (&value) == (gpointer) mend_subagent_get_retry (sub);
  else if (g_str_equal (pspec->name, "retryable"))
    notes->consistent &= g_value_get_boolean (&value) == mend_subagent_get_retryable (sub);
  else if (g_str_equal (pspec->name, "failure"))
    notes->consistent &= g_value_get_object (&value) == (gpointer) mend_subagent_get_failure (sub);
  else if (g_str_equal (pspec->name, "attempts"))
    notes->consistent &= g_value_get_uint (&value) == mend_subagent_get_attempts (sub);
  else
    notes->consistent = FALSE;  /* id, agent-id and name never change */
}

static void
expect_step (Notes             *notes,
             MendSubagentState  state,
             gboolean           has_retry,
             gboolean           retryable,
             guint              attempts)
{
  g_ptr_array_set_size (notes->notified, 0);
  notes->state = state;
  notes->has_retry = has_retry;
  notes->retryable = retryable;
  notes->attempts = attempts;
  notes->saw_step_done = TRUE;
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

#define assert_notified(notes, expected) G_STMT_START { \
  g_autoptr(GPtrArray) _s = g_ptr_array_copy ((notes)->notified, NULL, NULL); \
  g_autofree char *_got = NULL; \
  g_ptr_array_sort (_s, compare_names); \
  g_ptr_array_add (_s, NULL); \
  _got = g_strjoinv (" ", (char **) _s->pdata); \
  g_assert_cmpstr (_got, ==, expected); \
  g_assert_true ((notes)->saw_step_done); \
  g_assert_true ((notes)->consistent); \
} G_STMT_END

/* Through its life each step notifies each property that changed, once,
 * and every handler reads the step done; the ids and name never change. */
static void
test_each_step_notifies_what_changed (Fixture       *f,
                                      gconstpointer  data)
{
  Notes notes = { g_ptr_array_new (), TRUE, MEND_SUBAGENT_RUNNING, FALSE, FALSE, 0, NULL, TRUE };
  MendSubagent *sub = mend_subagent_retry_note_started (f->retry, "toolu_1", "agent-a", "Push relay");
  g_autoptr(MendFailure) first = mend_failure_new_from_text (GATEWAY_503);
  g_autoptr(MendFailure) second = mend_failure_new_from_text ("API Error: 529 overloaded_error Overloaded");

  g_signal_connect (sub, "notify", G_CALLBACK (on_notify), &notes);

  /* Failed: waits for its first resume. */
  expect_step (&notes, MEND_SUBAGENT_FAILED, TRUE, TRUE, 0);
  notes.failure = first;
  mend_subagent_retry_note_failed (f->retry, "agent-a", first);
  assert_notified (&notes, "failure retry retryable state");

  /* Its wait fires: a resume prompt is sent. */
  expect_step (&notes, MEND_SUBAGENT_FAILED, FALSE, TRUE, 1);
  advance (f, 20000);
  g_assert_cmpuint (f->prompts, ==, 1);
  assert_notified (&notes, "attempts retry");

  /* It runs again: what it last failed on stays. */
  expect_step (&notes, MEND_SUBAGENT_RUNNING, FALSE, FALSE, 1);
  g_assert_true (mend_subagent_retry_note_started (f->retry, "toolu_send", "agent-a", NULL) == sub);
  assert_notified (&notes, "retryable state");
  g_assert_true (mend_subagent_get_failure (sub) == first);

  /* It fails again, on something else: the next attempt waits. */
  expect_step (&notes, MEND_SUBAGENT_FAILED, TRUE, TRUE, 1);
  notes.failure = second;
  mend_subagent_retry_note_failed (f->retry, "agent-a", second);
  assert_notified (&notes, "failure retry retryable state");
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (mend_subagent_get_retry (sub)), ==, 45000);

  /* It ends: its wait is skipped, nothing can be retried. */
  expect_step (&notes, MEND_SUBAGENT_COMPLETED, FALSE, FALSE, 1);
  mend_subagent_retry_note_ended (f->retry, "agent-a", MEND_SUBAGENT_COMPLETED);
  assert_notified (&notes, "retry retryable state");

  /* An end told twice changes nothing, and notifies nothing. */
  expect_step (&notes, MEND_SUBAGENT_COMPLETED, FALSE, FALSE, 1);
  mend_subagent_retry_note_ended (f->retry, "agent-a", MEND_SUBAGENT_COMPLETED);
  assert_notified (&notes, "");

  g_assert_cmpstr (mend_subagent_get_id (sub), ==, "toolu_1");
  g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, "agent-a");
  g_assert_cmpstr (mend_subagent_get_name (sub), ==, "Push relay");
  assert_json (sub, "{\"subagentId\":\"toolu_1\",\"agentId\":\"agent-a\",\"name\":\"Push relay\","
                    "\"state\":\"completed\",\"retryable\":false,\"retry\":null}");

  mend_turn_succeed (mend_chat_get_turn (f->chat));
  g_signal_handlers_disconnect_by_data (sub, &notes);
  g_ptr_array_unref (notes.notified);
}

/* retryable: TRUE while the agent id is known and the chat is open, also
 * after a Stop and once the automatic attempts are used up; FALSE once the
 * chat closed, or the subagent runs again, ended, was replaced or
 * forgotten. */
static void
test_retryable_follows_its_documentation (Fixture       *f,
                                          gconstpointer  data)
{
  MendSubagent *waiting = mend_subagent_retry_note_started (f->retry, "toolu_1", "agent-a", "a");
  MendSubagent *exhausted = mend_subagent_retry_note_started (f->retry, "toolu_2", "agent-b", "b");
  MendSubagent *replaced = g_object_ref (mend_subagent_retry_note_started (f->retry, "toolu_3", "agent-c", "c"));
  MendSubagent *forgotten;
  MendSubagent *ended = mend_subagent_retry_note_started (f->retry, "toolu_5", "agent-e", "e");

  /* Used up: four prompts, each turn ending with it still failed. */
  fail (f, "agent-b", GATEWAY_503);
  for (guint attempt = 1; attempt <= 4; attempt++)
    {
      g_assert_true (mend_subagent_get_retryable (exhausted));
      g_assert_true (mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock)));
      g_assert_cmpuint (mend_subagent_get_attempts (exhausted), ==, attempt);
      mend_turn_succeed (mend_chat_get_turn (f->chat));
    }
  g_assert_null (mend_subagent_get_retry (exhausted));
  g_assert_cmpint (mend_subagent_get_state (exhausted), ==, MEND_SUBAGENT_FAILED);
  g_assert_true (mend_subagent_get_retryable (exhausted));

  /* Replaced by a new one of its name: no longer retryable, gone. */
  fail (f, "agent-c", GATEWAY_503);
  g_assert_true (mend_subagent_get_retryable (replaced));
  mend_subagent_retry_note_started (f->retry, "toolu_3b", "agent-c2", "c");
  g_assert_false (mend_subagent_get_retryable (replaced));
  g_assert_null (mend_subagent_get_retry (replaced));
  g_assert_null (mend_subagent_retry_lookup (f->retry, "toolu_3"));
  g_assert_finalize_object (replaced);

  /* Ended. */
  fail (f, "agent-e", "API Error: 400 invalid_request_error");
  g_assert_true (mend_subagent_get_retryable (ended));
  g_assert_null (mend_subagent_get_retry (ended));
  mend_subagent_retry_note_ended (f->retry, "agent-e", MEND_SUBAGENT_CANCELLED);
  g_assert_false (mend_subagent_get_retryable (ended));
  g_assert_cmpint (mend_subagent_get_state (ended), ==, MEND_SUBAGENT_CANCELLED);

  /* Stopped: its wait goes, a person's Retry still can work. */
  fail (f, "agent-a", GATEWAY_503);
  g_assert_nonnull (mend_subagent_get_retry (waiting));
  mend_chat_stop (f->chat);
  g_assert_null (mend_subagent_get_retry (waiting));
  g_assert_true (mend_subagent_get_retryable (waiting));
  g_assert_cmpint (mend_subagent_get_state (waiting), ==, MEND_SUBAGENT_FAILED);

  /* Runs again. */
  mend_subagent_retry_note_resumed (f->retry, "agent-a");
  g_assert_false (mend_subagent_get_retryable (waiting));
  fail (f, "agent-a", GATEWAY_503);
  g_assert_true (mend_subagent_get_retryable (waiting));

  /* Forgotten: past max-failed, the oldest failed one no retry waits for. */
  mend_chat_stop (f->chat);
  mend_subagent_retry_set_max_failed (f->retry, 2);
  forgotten = mend_subagent_retry_lookup (f->retry, "toolu_2");
  g_assert_nonnull (forgotten);
  g_object_ref (forgotten);
  mend_subagent_retry_note_started (f->retry, "toolu_6", "agent-f", "f");
  fail (f, "agent-f", GATEWAY_503);
  mend_chat_stop (f->chat);
  g_assert_null (mend_subagent_retry_lookup (f->retry, "toolu_2"));
  g_assert_false (mend_subagent_get_retryable (forgotten));
  g_assert_finalize_object (forgotten);

  /* The chat closed. */
  g_assert_true (mend_subagent_get_retryable (waiting));
  mend_chat_close (f->chat);
  g_assert_false (mend_subagent_get_retryable (waiting));
  assert_properties_match_getters (waiting);
}

static void
count_notify (GObject    *object,
              GParamSpec *pspec,
              guint      *count)
{
  (*count)++;
}

/* attempts counts the resume prompts sent, a person's Retry included. */
static void
test_attempts_count_the_prompts_sent (Fixture       *f,
                                      gconstpointer  data)
{
  MendSubagent *sub = mend_subagent_retry_note_started (f->retry, "toolu_1", "agent-a", "a");
  g_autoptr(GError) error = NULL;
  guint notified = 0;

  g_signal_connect (sub, "notify::attempts", G_CALLBACK (count_notify), &notified);
  fail (f, "agent-a", GATEWAY_503);
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 0);
  g_assert_cmpuint (notified, ==, 0);

  advance (f, 20000);
  g_assert_cmpuint (f->prompts, ==, 1);
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 1);
  g_assert_cmpuint (notified, ==, 1);

  /* The prompt's turn ends with it still failed: the next wait, no
   * prompt yet. */
  mend_turn_succeed (mend_chat_get_turn (f->chat));
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 1);
  g_assert_cmpuint (notified, ==, 1);

  /* A person's Retry sends one now, in place of the wait. */
  g_assert_true (mend_subagent_retry_resume_now (f->retry, "toolu_1", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (f->prompts, ==, 2);
  g_assert_null (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 2);
  g_assert_cmpuint (notified, ==, 2);

  /* A second click while it runs is refused and counts nothing. */
  g_assert_false (mend_subagent_retry_resume_now (f->retry, "toolu_1", &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY);
  g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 2);
  g_assert_cmpuint (notified, ==, 2);
  assert_properties_match_getters (sub);

  mend_turn_succeed (mend_chat_get_turn (f->chat));
  g_signal_handlers_disconnect_by_data (sub, &notified);
}

/* A chat's saved state keeps its subagents: each comes back as a new
 * object with the same properties and entry, and a waiting one's resume
 * comes at its time. */
static void
test_subagents_come_back_from_the_saved_state (Fixture       *f,
                                               gconstpointer  data)
{
  const char *ids[] = { "toolu_1", "toolu_2", "toolu_3", "toolu_4" };
  MendClock *later = mend_manual_clock_new (MEND_TEST_WALL_START + 5000 * 1000);
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) before = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  MendSubagentRetry *retry;
  MendChat *restored;

  mend_subagent_retry_note_started (f->retry, "toolu_1", "agent-a", "Push relay");
  fail (f, "agent-a", GATEWAY_503);
  mend_subagent_retry_note_started (f->retry, "toolu_2", "agent-b", "Survey");
  mend_subagent_retry_note_ended (f->retry, "agent-b", MEND_SUBAGENT_COMPLETED);
  mend_subagent_retry_note_started (f->retry, "toolu_3", "agent-c", "Check");
  fail (f, "agent-c", "API Error: 400 invalid_request_error");
  mend_subagent_retry_note_started (f->retry, "toolu_4", NULL, NULL);
  fail (f, "toolu_4", GATEWAY_503);
  advance (f, 5000);

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      MendSubagent *sub = mend_subagent_retry_lookup (f->retry, ids[i]);

      g_ptr_array_add (before, g_object_ref (sub));
      g_ptr_array_add (entries, mend_subagent_to_json (sub));
    }
  json = mend_chat_save_state (f->chat);
  mend_chat_close (f->chat);

  restored = new_chat (f, later);
  g_assert_true (mend_chat_restore_state (restored, json, &error));
  g_assert_no_error (error);
  retry = mend_chat_get_subagents (restored);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (retry)), ==, G_N_ELEMENTS (ids));
  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autoptr(MendSubagent) sub = g_list_model_get_item (G_LIST_MODEL (retry), i);
      MendSubagent *old = g_ptr_array_index (before, i);
      g_autofree char *entry = mend_subagent_to_json (sub);

      g_test_message ("subagent %s", ids[i]);
      g_assert_true (sub != old);
      g_assert_cmpstr (mend_subagent_get_id (sub), ==, ids[i]);
      g_assert_cmpstr (entry, ==, g_ptr_array_index (entries, i));
      g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, mend_subagent_get_agent_id (old));
      g_assert_cmpstr (mend_subagent_get_name (sub), ==, mend_subagent_get_name (old));
      g_assert_cmpint (mend_subagent_get_state (sub), ==, mend_subagent_get_state (old));
      g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, mend_subagent_get_attempts (old));
      /* Known agent ids and an open chat: a failed one can be retried. */
      g_assert_cmpint (mend_subagent_get_retryable (sub), ==, i == 0 || i == 2);
      g_assert_cmpint (mend_subagent_get_state (sub), ==, i == 1 ? MEND_SUBAGENT_COMPLETED : MEND_SUBAGENT_FAILED);
      if (mend_subagent_get_failure (old) != NULL)
        {
          g_assert_nonnull (mend_subagent_get_failure (sub));
          g_assert_cmpstr (mend_failure_get_message (mend_subagent_get_failure (sub)), ==,
                           mend_failure_get_message (mend_subagent_get_failure (old)));
          g_assert_cmpint (mend_failure_get_reason (mend_subagent_get_failure (sub)), ==,
                           mend_failure_get_reason (mend_subagent_get_failure (old)));
        }
      else
        g_assert_null (mend_subagent_get_failure (sub));
      assert_properties_match_getters (sub);
    }

  /* The waiting one: resumed at the same wall-clock time as it would
   * have been, 15 s after the restart. */
  {
    MendSubagent *sub = mend_subagent_retry_lookup (retry, "toolu_1");
    MendRetryWait *wait = mend_subagent_get_retry (sub);
    guint prompts = f->prompts;

    g_assert_nonnull (wait);
    g_assert_cmpint (mend_retry_wait_get_next_at (wait), ==, MEND_TEST_WALL_START + 20000 * 1000);
    mend_manual_clock_advance (MEND_MANUAL_CLOCK (later), 14999);
    g_assert_cmpuint (f->prompts, ==, prompts);
    mend_manual_clock_advance (MEND_MANUAL_CLOCK (later), 1);
    g_assert_cmpuint (f->prompts, ==, prompts + 1);
    g_assert_cmpuint (mend_subagent_get_attempts (sub), ==, 1);
  }

  mend_chat_close (restored);
  finalize_chat_and_subagents (restored);
  g_ptr_array_set_size (before, 0);
  g_assert_finalize_object (later);
}

/* A getter given no subagent is a programmer's error: it says so. */
static void
test_getters_refuse_what_is_not_a_subagent (void)
{
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_null (mend_subagent_get_id (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_null (mend_subagent_get_agent_id (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_null (mend_subagent_get_name (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  mend_subagent_get_state (NULL);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_null (mend_subagent_get_retry (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_false (mend_subagent_get_retryable (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_null (mend_subagent_get_failure (NULL));
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_cmpuint (mend_subagent_get_attempts (NULL), ==, 0);
  g_test_assert_expected_messages ();
  g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*MEND_IS_SUBAGENT*");
  g_assert_null (mend_subagent_to_json (NULL));
  g_test_assert_expected_messages ();
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  g_test_add_func ("/Mend/Subagent/properties-are-read-only", test_properties_are_read_only);
  ADD ("/Mend/Subagent/a-start-makes-a-running-subagent", test_a_start_makes_a_running_subagent);
  ADD ("/Mend/Subagent/a-stream-line-makes-it", test_a_stream_line_makes_it);
  ADD ("/Mend/Subagent/what-is-not-known-is-null", test_what_is_not_known_is_null);
  ADD ("/Mend/Subagent/names-and-ids-are-bounded", test_names_and_ids_are_bounded);
  ADD ("/Mend/Subagent/each-step-notifies-what-changed", test_each_step_notifies_what_changed);
  ADD ("/Mend/Subagent/retryable-follows-its-documentation", test_retryable_follows_its_documentation);
  ADD ("/Mend/Subagent/attempts-count-the-prompts-sent", test_attempts_count_the_prompts_sent);
  ADD ("/Mend/Subagent/subagents-come-back-from-the-saved-state", test_subagents_come_back_from_the_saved_state);
  g_test_add_func ("/Mend/Subagent/getters-refuse-what-is-not-a-subagent", test_getters_refuse_what_is_not_a_subagent);

#undef ADD

  return g_test_run ();
}
