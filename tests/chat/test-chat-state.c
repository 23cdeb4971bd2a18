/* test-chat-state.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Saved state: nothing queued and no pending retry is lost to a crash.
 */

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000
#define GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available"

typedef struct
{
  guint started;
  guint attempts;
  guint last_attempt;
  GPtrArray *prompts;
} Seen;

static void
on_attempt (MendTurn     *turn,
            guint         n,
            GCancellable *cancellable,
            Seen         *seen)
{
  seen->attempts++;
  seen->last_attempt = n;
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Seen     *seen)
{
  seen->started++;
  g_ptr_array_add (seen->prompts, g_strdup (mend_turn_get_prompt (turn)));
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), seen);
}

static MendChat *
new_chat (MendClock *clock,
          Seen      *seen)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendChat *chat;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "id", "saved-chat", "clock", clock, "policy", policy, NULL);
  mend_test_run_turns_by_hand (chat);
  g_object_unref (policy);
  if (seen != NULL)
    g_signal_connect (chat, "turn-started", G_CALLBACK (on_turn_started), seen);
  return chat;
}

static void
seen_init (Seen *seen)
{
  memset (seen, 0, sizeof *seen);
  seen->prompts = g_ptr_array_new_with_free_func (g_free);
}

static void
seen_clear (Seen *seen)
{
  g_ptr_array_unref (seen->prompts);
}

static MendFailure *
failure_with_retry_after (const char *seconds)
{
  SoupMessageHeaders *headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  MendFailure *failure;

  soup_message_headers_append (headers, "Retry-After", seconds);
  failure = mend_failure_new_from_http (503, headers, NULL);
  soup_message_headers_unref (headers);
  return failure;
}

/* A chat with a waiting turn at attempt 2 of a 30 s wait, two queued
 * messages, and a subagent waiting to be resumed. */
static char *
busy_state (MendClock *clock)
{
  MendChat *chat = new_chat (clock, NULL);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) first = mend_failure_new_from_http (500, NULL, NULL);
  g_autoptr(MendFailure) second = failure_with_retry_after ("30");
  g_autoptr(MendFailure) sub_failure = mend_failure_new_from_text (GATEWAY_503);
  char *json;

  g_assert_true (mend_chat_submit (chat, "Fix the build", "{\"kind\":\"user\"}", NULL));
  g_assert_true (mend_chat_submit (chat, "A", NULL, NULL));
  g_assert_true (mend_chat_submit (chat, "B\nsecond line", "{\"kind\":\"voice\"}", NULL));
  mend_turn_fail (mend_chat_get_turn (chat), first);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 250);
  mend_turn_fail (mend_chat_get_turn (chat), second);
  g_assert_cmpuint (mend_turn_get_attempt (mend_chat_get_turn (chat)), ==, 2);

  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", sub_failure);

  json = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  return json;
}

static void
test_round_trip_keeps_queue_turn_and_subagents (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *json = busy_state (clock);
  MendClock *later = mend_manual_clock_new (WALL_START + 250 * 1000 + (gint64) 10 * G_USEC_PER_SEC);
  g_autoptr(GError) error = NULL;
  MendChat *chat;
  MendQueue *queue;
  MendTurn *turn;
  MendSubagent *sub;
  Seen seen;

  seen_init (&seen);
  chat = new_chat (later, &seen);
  g_assert_true (mend_chat_restore_state (chat, json, &error));
  g_assert_no_error (error);

  queue = mend_chat_get_queue (chat);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 2);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, "A");
  g_assert_nonnull (mend_queue_find (queue, "q1"));
  g_assert_cmpstr (mend_queue_item_get_provenance (mend_queue_find (queue, "q2")), ==, "{\"kind\":\"voice\"}");
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_find (queue, "q2")), ==, "B\nsecond line");

  /* The turn is announced, its attempt count kept, still waiting. */
  g_assert_cmpuint (seen.started, ==, 1);
  turn = mend_chat_get_turn (chat);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Fix the build");
  g_assert_cmpstr (mend_turn_get_provenance (turn), ==, "{\"kind\":\"user\"}");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_BUSY);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_CAPACITY);

  /* The subagent's resume is pending too, at its time. */
  sub = mend_subagent_retry_lookup (mend_chat_get_subagents (chat), "toolu_1");
  g_assert_nonnull (sub);
  g_assert_nonnull (mend_subagent_get_retry (sub));
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 1);
  g_assert_true (mend_subagent_get_retryable (sub));

  /* It fires at its original time: 30 s after the save, 10 s have passed. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (later), 19999);
  g_assert_cmpuint (seen.attempts, ==, 0);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (later), 1);
  g_assert_cmpuint (seen.attempts, ==, 1);
  g_assert_cmpuint (seen.last_attempt, ==, 3);

  /* New ids never collide with the restored ones. */
  g_assert_true (mend_chat_submit (chat, "C", NULL, NULL));
  g_assert_nonnull (mend_queue_find (queue, "q3"));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (later);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

static void
test_waiting_turn_and_held_resume_both_come_back (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *saved = busy_state (clock);
  g_autoptr(JsonNode) root = json_from_string (saved, NULL);
  JsonObject *sub_obj;
  g_autofree char *json = NULL;
  g_autoptr(GError) error = NULL;
  MendQueue *queue;
  MendTurn *turn;
  MendChat *chat;
  Seen seen;

  /* The subagent's wait fired during the agent's own turn: its prompt is
   * held, to go out when the chat can take it. */
  sub_obj = json_array_get_object_element (json_object_get_array_member (json_node_get_object (root), "subagents"), 0);
  json_object_set_boolean_member (sub_obj, "held", TRUE);
  json_object_set_int_member (sub_obj, "attempts", 1);
  json_object_set_null_member (sub_obj, "retry");
  json = json_to_string (root, FALSE);

  seen_init (&seen);
  chat = new_chat (clock, &seen);
  g_assert_true (mend_chat_restore_state (chat, json, &error));
  g_assert_no_error (error);

  /* The user's turn is back, not replaced by the resume prompt... */
  turn = mend_chat_get_turn (chat);
  g_assert_nonnull (turn);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, "Fix the build");
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpuint (seen.started, ==, 1);

  /* ...and the resume prompt queues behind it, after the user's items. */
  queue = mend_chat_get_queue (chat);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 3);
  {
    g_autoptr(MendQueueItem) last = g_list_model_get_item (G_LIST_MODEL (queue), 2);

    g_assert_nonnull (strstr (mend_queue_item_get_provenance (last), "subagent_retry"));
  }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

/* A chat busy with the user's turn, a subagent's resume prompt queued
 * behind it. */
static char *
state_with_queued_resume_prompt (MendClock *clock)
{
  return mend_test_state_with_queued_resume_prompt (new_chat (clock, NULL), clock);
}

static void
test_restored_resume_prompt_is_taken_back_when_its_subagent_resumes (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *json = state_with_queued_resume_prompt (clock);
  MendChat *chat;
  MendQueue *queue;
  Seen seen;

  seen_init (&seen);
  chat = new_chat (clock, &seen);
  g_assert_true (mend_chat_restore_state (chat, json, NULL));
  queue = mend_chat_get_queue (chat);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);

  /* The agent resumed it on its own: the prompt is no longer wanted, and
   * leaves the queue at once. */
  mend_subagent_retry_note_resumed (mend_chat_get_subagents (chat), "agent-a");
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_cmpuint (seen.started, ==, 1);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

static void
record_outcome (MendSubagentRetry *retry,
                const char        *json,
                GPtrArray         *outcomes)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);

  g_ptr_array_add (outcomes, g_strdup (json_object_get_string_member (json_node_get_object (node), "outcome")));
}

static void
test_restored_resume_prompt_turn_plans_the_next_attempt (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *json = state_with_queued_resume_prompt (clock);
  g_autoptr(GPtrArray) outcomes = g_ptr_array_new_with_free_func (g_free);
  MendSubagent *sub;
  MendChat *chat;
  Seen seen;

  seen_init (&seen);
  chat = new_chat (clock, &seen);
  g_assert_true (mend_chat_restore_state (chat, json, NULL));
  g_signal_connect (mend_chat_get_subagents (chat), "record", G_CALLBACK (record_outcome), outcomes);

  /* The user's turn, then the resume prompt's, which ends with the
   * subagent still failed: its second attempt waits. */
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_cmpuint (seen.started, ==, 2);
  g_assert_nonnull (strstr (mend_turn_get_provenance (mend_chat_get_turn (chat)), "subagent_retry"));
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_cmpuint (outcomes->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (outcomes, 0), ==, "scheduled");
  sub = mend_subagent_retry_lookup (mend_chat_get_subagents (chat), "toolu_1");
  g_assert_cmpuint (mend_retry_wait_get_attempt (mend_subagent_get_retry (sub)), ==, 2);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

static void
test_passed_deadline_fires_at_once_without_burning_an_attempt (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *json = busy_state (clock);
  MendClock *much_later = mend_manual_clock_new (WALL_START + (gint64) 3600 * G_USEC_PER_SEC);
  MendChat *chat;
  Seen seen;

  seen_init (&seen);
  chat = new_chat (much_later, &seen);
  g_assert_true (mend_chat_restore_state (chat, json, NULL));
  g_assert_cmpuint (mend_retry_wait_get_delay_ms (mend_turn_get_wait (mend_chat_get_turn (chat))), ==, 0);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (much_later), 0);
  g_assert_cmpuint (seen.last_attempt, ==, 3);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (much_later);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

static void
test_running_turn_runs_its_attempt_again (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autofree char *json = NULL;
  Seen seen;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  json = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);

  seen_init (&seen);
  chat = new_chat (clock, &seen);
  g_assert_true (mend_chat_restore_state (chat, json, NULL));
  g_assert_cmpuint (seen.started, ==, 1);
  g_assert_cmpuint (seen.attempts, ==, 1);
  g_assert_cmpuint (seen.last_attempt, ==, 1);
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_READY);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

static void
test_error_lifecycle_and_continue_survive (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autoptr(MendFailure) auth = mend_failure_new_from_http (401, NULL, NULL);
  g_autofree char *json = NULL;

  mend_chat_submit (chat, "x", NULL, NULL);
  mend_chat_submit (chat, "A", NULL, NULL);
  mend_turn_fail (mend_chat_get_turn (chat), auth);
  json = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);

  chat = new_chat (clock, NULL);
  g_assert_true (mend_chat_restore_state (chat, json, NULL));
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (mend_chat_get_queue (chat))), ==, "Continue the current turn");
  g_assert_null (mend_chat_get_turn (chat));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_bad_state_is_refused_and_changes_nothing (void)
{
  const struct {
    const char *json;
    int code;
  } cases[] = {
    { "", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[{\"id\":\"q1\",\"te", MEND_STATE_ERROR_INVALID },
    { "[]", MEND_STATE_ERROR_INVALID },
    { "{\"lifecycle\":\"ready\",\"queue\":[]}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":2,\"lifecycle\":\"ready\",\"queue\":[]}", MEND_STATE_ERROR_VERSION },
    { "{\"version\":1,\"lifecycle\":\"busy\",\"queue\":[]}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":{}}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[{\"id\":\"q1\",\"text\":\"x\",\"queuedAt\":1},"
      "{\"id\":\"q1\",\"text\":\"y\",\"queuedAt\":1}]}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[{\"id\":\"q1\",\"text\":7,\"queuedAt\":1}]}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[],\"turn\":{\"id\":\"t\",\"prompt\":\"p\","
      "\"attempt\":99999,\"state\":\"waiting\",\"nextAt\":1}}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[],\"turn\":{\"id\":\"t\",\"prompt\":\"p\","
      "\"attempt\":1,\"state\":\"dancing\"}}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[],\"subagents\":[{\"subagentId\":\"s\","
      "\"state\":\"failed\",\"attempts\":-3}]}", MEND_STATE_ERROR_INVALID },
    { "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[],\"subagents\":[{\"subagentId\":\"s\","
      "\"state\":\"failed\",\"attempts\":0,\"retry\":{\"attempt\":1,\"nextAt\":5}}]}", MEND_STATE_ERROR_INVALID },
  };
  g_autoptr(GString) deep = g_string_new ("{\"version\":1,\"queue\":");

  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');

  for (guint i = 0; i <= G_N_ELEMENTS (cases); i++)
    {
      MendClock *clock = mend_manual_clock_new (WALL_START);
      MendChat *chat = new_chat (clock, NULL);
      g_autoptr(GError) error = NULL;
      const char *json = i < G_N_ELEMENTS (cases) ? cases[i].json : deep->str;
      int code = i < G_N_ELEMENTS (cases) ? cases[i].code : MEND_STATE_ERROR_INVALID;
      g_autofree char *before = mend_chat_save_state (chat);
      g_autofree char *after = NULL;

      g_test_message ("case %u", i);
      g_assert_false (mend_chat_restore_state (chat, json, &error));
      g_assert_error (error, MEND_STATE_ERROR, code);
      g_assert_cmpstr (error->message, !=, "");
      after = mend_chat_save_state (chat);
      g_assert_cmpstr (before, ==, after);
      g_assert_null (mend_chat_get_turn (chat));

      mend_chat_close (chat);
      g_assert_finalize_object (chat);
      g_assert_finalize_object (clock);
    }
}

static void
test_bad_queued_text_is_a_queue_error (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (mend_chat_restore_state (chat,
    "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[{\"id\":\"q1\",\"text\":\"   \",\"queuedAt\":1}]}", &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 0);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_restore_into_a_chat_in_use_is_refused (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *json = busy_state (clock);
  MendChat *chat = new_chat (clock, NULL);
  g_autoptr(GError) error = NULL;

  mend_chat_submit (chat, "already here", NULL, NULL);
  g_assert_false (mend_chat_restore_state (chat, json, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_NOT_EMPTY);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Asserts that @dir_path holds @name and nothing else (nothing when @name
 * is NULL). */
static void
assert_only_file (const char *dir_path,
                  const char *name)
{
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *entry;
  guint n = 0;

  g_assert_nonnull (dir);
  while ((entry = g_dir_read_name (dir)) != NULL)
    {
      g_assert_cmpstr (entry, ==, name);
      n++;
    }
  g_assert_cmpuint (n, ==, name != NULL ? 1 : 0);
}

static void
test_file_save_is_atomic_and_keeps_the_good_file (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *json = busy_state (clock);
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "state", NULL);
  g_autofree char *path = g_build_filename (dir, "chat.json", NULL);
  g_autofree char *big = g_build_filename (dir, "big.json", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  MendChat *chat = new_chat (clock, NULL);
  MendChat *other;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (mend_chat_restore_state (chat, json, NULL));
  g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
  g_assert_no_error (error);

  /* A save that cannot be written leaves the good file as it was: in a
   * child that may not write there (as root, it drops to nobody). */
  g_assert_cmpint (g_chmod (dir, 0555), ==, 0);
  {
    g_autoptr(GSubprocess) child =
      g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error,
                        g_test_get_filename (G_TEST_BUILT, "test-chat-state", NULL),
                        "--save-unwritable", path, NULL);

    g_assert_no_error (error);
    g_assert_true (g_subprocess_wait_check (child, NULL, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (g_chmod (dir, 0700), ==, 0);
  assert_only_file (dir, "chat.json");
  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_nonnull (strstr (contents, "\"Fix the build\""));

  other = new_chat (clock, NULL);
  g_assert_true (mend_chat_restore_state_from_file (other, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (other)), ==, 2);
  mend_chat_close (other);
  g_assert_finalize_object (other);

  /* Text with a NUL, and a missing file, are errors too. */
  g_assert_true (g_file_set_contents (big, "{\"version\":1}\0junk", 18, NULL));
  other = new_chat (clock, NULL);
  g_assert_false (mend_chat_restore_state_from_file (other, big, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (mend_chat_restore_state_from_file (other, "/nonexistent/chat.json", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  mend_chat_close (other);
  g_assert_finalize_object (other);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* The crash test: a child process saves its state in the middle of a wait
 * and is killed with SIGKILL; this process restores it. */

static int
child_main (const char *path)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autoptr(MendFailure) failure = failure_with_retry_after ("30");
  g_autoptr(GError) error = NULL;

  mend_chat_submit (chat, "Deploy staging", NULL, NULL);
  mend_chat_submit (chat, "Then tell the team", NULL, NULL);
  mend_turn_fail (mend_chat_get_turn (chat), failure);
  if (!mend_chat_save_state_to_file (chat, path, &error))
    {
      g_printerr ("child: %s\n", error->message);
      return 1;
    }

  g_print ("saved\n");
  fflush (stdout);
  for (;;)
    g_usleep (G_USEC_PER_SEC);   /* until SIGKILL: the point is the crash */
}

static void
test_state_survives_sigkill_mid_wait (void)
{
  g_autofree char *path = g_build_filename (g_get_user_data_dir (), "crash.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) child = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *line = NULL;
  MendClock *clock;
  MendChat *chat;
  Seen seen;

  g_assert_cmpint (g_mkdir_with_parents (g_get_user_data_dir (), 0700), ==, 0);
  child = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                            g_test_get_filename (G_TEST_BUILT, "test-chat-state", NULL),
                            "--child", path, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (child));
  line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (line, ==, "saved");

  g_subprocess_force_exit (child);
  g_assert_true (g_subprocess_wait (child, NULL, &error));
  g_assert_true (g_subprocess_get_if_signaled (child));
  g_assert_cmpint (g_subprocess_get_term_sig (child), ==, SIGKILL);

  /* A second process, ten seconds later on the wall clock. */
  clock = mend_manual_clock_new (WALL_START + (gint64) 10 * G_USEC_PER_SEC);
  seen_init (&seen);
  chat = new_chat (clock, &seen);
  g_assert_true (mend_chat_restore_state_from_file (chat, path, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (mend_chat_get_queue (chat))), ==, "Then tell the team");
  g_assert_cmpuint (seen.started, ==, 1);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 19999);
  g_assert_cmpuint (seen.attempts, ==, 0);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 1);
  g_assert_cmpuint (seen.attempts, ==, 1);
  g_assert_cmpuint (seen.last_attempt, ==, 2);
  mend_turn_succeed (mend_chat_get_turn (chat));
  g_assert_cmpstr (g_ptr_array_index (seen.prompts, 1), ==, "Then tell the team");

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  seen_clear (&seen);
}

/* Concurrent saves: processes that save to one path while this one reads
 * it. Every read must be a whole state, and every save must succeed. */

#define SAVER_ITEMS 12

/* Saves a chat of its own, @n times, to @path. Exits with the number of
 * saves that failed. */
static int
save_loop_main (const char *path,
                const char *tag,
                const char *count)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  guint64 n = g_ascii_strtoull (count, NULL, 10);
  g_autofree char *padding = g_strnfill (8192, 'x');
  guint failed = 0;

  /* The first runs; the rest queue: a state of about 100 KB. */
  for (guint i = 0; i <= SAVER_ITEMS; i++)
    {
      g_autofree char *text = g_strdup_printf ("%s item %u %s", tag, i, padding);

      if (!mend_chat_submit (chat, text, NULL, NULL))
        return 255;
    }

  for (guint64 i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;

      if (!mend_chat_save_state_to_file (chat, path, &error))
        {
          if (failed++ == 0)
            g_printerr ("%s: %s\n", tag, error->message);
        }
    }

  mend_chat_close (chat);
  g_object_unref (chat);
  g_object_unref (clock);
  return MIN (failed, 254);
}

static void
on_saver_exited (GObject      *source,
                 GAsyncResult *result,
                 gpointer      data)
{
  guint *running = data;

  g_assert_true (g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL));
  (*running)--;
}

static void
test_concurrent_saves_never_show_a_partial_file (void)
{
  const char *tags[] = { "saver-a", "saver-b", "saver-c" };
  g_autofree char *where = g_build_filename (g_get_user_data_dir (), "saves", NULL);
  g_autofree char *path = g_build_filename (where, "shared.json", NULL);
  GSubprocess *savers[G_N_ELEMENTS (tags)];
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(GError) error = NULL;
  guint running = G_N_ELEMENTS (tags);
  guint reads = 0, missing = 0, bad = 0;
  guint id;

  g_assert_cmpint (g_mkdir_with_parents (where, 0700), ==, 0);

  /* A first state, so that the path always exists. */
  {
    MendChat *chat = new_chat (clock, NULL);

    g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
    g_assert_no_error (error);
    mend_chat_close (chat);
    g_assert_finalize_object (chat);
  }

  for (guint i = 0; i < G_N_ELEMENTS (tags); i++)
    {
      savers[i] = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error,
                                    g_test_get_filename (G_TEST_BUILT, "test-chat-state", NULL),
                                    "--save-loop", path, tags[i], "150", NULL);
      g_assert_no_error (error);
      g_subprocess_wait_async (savers[i], NULL, on_saver_exited, &running);
    }

  id = g_timeout_add_seconds (60, mend_test_watchdog, (gpointer) g_test_get_path ());
  while (running > 0)
    {
      MendChat *chat = new_chat (clock, NULL);
      g_autoptr(GError) read_error = NULL;

      if (!mend_chat_restore_state_from_file (chat, path, &read_error))
        {
          if (g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
            missing++;
          else
            bad++;
          if (missing + bad == 1)
            g_test_message ("read %u: %s", reads, read_error->message);
        }
      else if (mend_chat_get_turn (chat) != NULL)
        {
          /* A saver's state, not the first one: whole. */
          g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, SAVER_ITEMS);
        }
      reads++;
      mend_chat_close (chat);
      g_assert_finalize_object (chat);

      while (g_main_context_iteration (NULL, FALSE))
        ;
    }
  g_source_remove (id);

  g_test_message ("%u reads: %u missing, %u not a whole state", reads, missing, bad);
  for (guint i = 0; i < G_N_ELEMENTS (tags); i++)
    {
      g_assert_true (g_subprocess_get_if_exited (savers[i]));
      g_test_message ("%s: %d saves of 150 failed", tags[i], g_subprocess_get_exit_status (savers[i]));
    }
  g_assert_cmpuint (missing, ==, 0);
  g_assert_cmpuint (bad, ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (tags); i++)
    {
      g_assert_cmpint (g_subprocess_get_exit_status (savers[i]), ==, 0);
      g_assert_finalize_object (savers[i]);
    }

  /* No save left a file behind. */
  assert_only_file (where, "shared.json");

  g_assert_finalize_object (clock);
}

static void
test_failed_saves_are_errors_and_leave_nothing (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "saves", NULL);
  g_autofree char *missing = g_build_filename (dir, "no-such-dir", "chat.json", NULL);
  g_autofree char *taken = g_build_filename (dir, "a-directory", NULL);
  g_autofree char *inside = g_build_filename (taken, "kept", NULL);
  g_autofree char *good = g_build_filename (dir, "chat.json", NULL);
  g_autoptr(GError) error = NULL;
  GStatBuf st;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (mend_chat_submit (chat, "Write the release notes", NULL, NULL));

  /* A directory that is not there. */
  g_assert_false (mend_chat_save_state_to_file (chat, missing, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "chat.json"));
  g_clear_error (&error);
  assert_only_file (dir, NULL);

  /* A path that is a directory (with something in it): refused, and the
   * directory and what it holds are left as they were. */
  g_assert_cmpint (g_mkdir (taken, 0700), ==, 0);
  g_assert_true (g_file_set_contents (inside, "mine", -1, NULL));
  g_assert_false (mend_chat_save_state_to_file (chat, taken, &error));
  g_assert_nonnull (error);
  g_assert_true (error->domain == G_IO_ERROR);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_true (g_file_test (inside, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpint (g_remove (inside), ==, 0);
  g_assert_cmpint (g_rmdir (taken), ==, 0);
  assert_only_file (dir, NULL);

  /* A save that works leaves the file alone, the owner's only. */
  g_assert_true (mend_chat_save_state_to_file (chat, good, &error));
  g_assert_no_error (error);
  assert_only_file (dir, "chat.json");
  g_assert_cmpint (g_stat (good, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* The name a save to @dir/@base gives its own file, with @six for its
 * random part: `.HASH.libmend.XXXXXX.saving`. */
static char *
save_file_name (const char *dir,
                const char *base,
                const char *six)
{
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, base, -1);
  g_autofree char *name = g_strdup_printf (".%.16s.libmend.%s.saving", hash, six);

  return g_build_filename (dir, name, NULL);
}

/* A save killed before its rename leaves its file; the next save removes
 * it, and only it: not the file of a save that still runs (it holds a lock
 * on it), nor one of another path's saves, nor a file of another shape,
 * nor one of the right name that is not a regular file. */
static void
test_save_removes_only_the_files_of_dead_saves (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "dead-saves", NULL);
  g_autofree char *path = g_build_filename (dir, "chat.json", NULL);
  g_autofree char *dead = save_file_name (dir, "chat.json", "a1B2c3");
  g_autofree char *live = save_file_name (dir, "chat.json", "Z9y8X7");
  g_autofree char *other_chat = save_file_name (dir, "other.json", "a1B2c3");
  g_autofree char *a_dir = save_file_name (dir, "chat.json", "d1r3ct");
  g_autofree char *a_link = save_file_name (dir, "chat.json", "l1nk00");
  g_autofree char *short_one = save_file_name (dir, "chat.json", "a1B2c");
  g_autofree char *old_shape = g_build_filename (dir, "chat.json.a1B2c3.saving", NULL);
  g_autofree char *notes = g_build_filename (dir, "chat.json.notes.saving", NULL);
  g_autoptr(GError) error = NULL;
  int live_fd;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (dead, "{\"version\":1,", -1, NULL));
  g_assert_true (g_file_set_contents (live, "{\"version\":1,", -1, NULL));
  g_assert_true (g_file_set_contents (other_chat, "{}", -1, NULL));
  g_assert_true (g_file_set_contents (short_one, "{}", -1, NULL));
  g_assert_true (g_file_set_contents (old_shape, "{}", -1, NULL));
  g_assert_true (g_file_set_contents (notes, "mine", -1, NULL));
  g_assert_cmpint (g_mkdir (a_dir, 0700), ==, 0);
  g_assert_cmpint (symlink (notes, a_link), ==, 0);
  live_fd = open (live, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (live_fd, >=, 0);
  g_assert_cmpint (flock (live_fd, LOCK_EX), ==, 0);

  g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (live, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (other_chat, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (short_one, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (old_shape, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (notes, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (a_dir, G_FILE_TEST_IS_DIR));
  g_assert_true (g_file_test (a_link, G_FILE_TEST_IS_SYMLINK));

  /* Once its save is gone, its file goes at the next save. */
  close (live_fd);
  g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (live, G_FILE_TEST_EXISTS));

  g_assert_cmpint (g_remove (other_chat), ==, 0);
  g_assert_cmpint (g_remove (short_one), ==, 0);
  g_assert_cmpint (g_remove (old_shape), ==, 0);
  g_assert_cmpint (g_remove (a_link), ==, 0);
  g_assert_cmpint (g_remove (notes), ==, 0);
  g_assert_cmpint (g_rmdir (a_dir), ==, 0);
  assert_only_file (dir, "chat.json");

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Exits 0 if a save to @path fails as it must, leaving the file as it was. */
static int
unwritable_main (const char *path)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = new_chat (clock, NULL);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_file_get_contents (path, &before, NULL, NULL))
    return 2;
  if (geteuid () == 0 && (setgid (65534) != 0 || setuid (65534) != 0))
    return 3;

  mend_chat_submit (chat, "a different state", NULL, NULL);
  if (mend_chat_save_state_to_file (chat, path, &error))
    return 4;
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED))
    return 7;
  if (!g_file_get_contents (path, &after, NULL, NULL) && access (path, R_OK) == 0)
    return 5;
  if (after != NULL && g_strcmp0 (before, after) != 0)
    return 6;

  mend_chat_close (chat);
  g_object_unref (chat);
  g_object_unref (clock);
  return 0;
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 3 && g_str_equal (argv[1], "--child"))
    return child_main (argv[2]);
  if (argc == 5 && g_str_equal (argv[1], "--save-loop"))
    return save_loop_main (argv[2], argv[3], argv[4]);
  if (argc == 3 && g_str_equal (argv[1], "--save-unwritable"))
    return unwritable_main (argv[2]);

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/ChatState/waiting-turn-and-held-resume-both-come-back", test_waiting_turn_and_held_resume_both_come_back);
  g_test_add_func ("/Mend/ChatState/round-trip-keeps-queue-turn-and-subagents", test_round_trip_keeps_queue_turn_and_subagents);
  g_test_add_func ("/Mend/ChatState/restored-resume-prompt-is-taken-back-when-its-subagent-resumes",
                   test_restored_resume_prompt_is_taken_back_when_its_subagent_resumes);
  g_test_add_func ("/Mend/ChatState/restored-resume-prompt-turn-plans-the-next-attempt",
                   test_restored_resume_prompt_turn_plans_the_next_attempt);
  g_test_add_func ("/Mend/ChatState/passed-deadline-fires-at-once-without-burning-an-attempt", test_passed_deadline_fires_at_once_without_burning_an_attempt);
  g_test_add_func ("/Mend/ChatState/running-turn-runs-its-attempt-again", test_running_turn_runs_its_attempt_again);
  g_test_add_func ("/Mend/ChatState/error-lifecycle-and-continue-survive", test_error_lifecycle_and_continue_survive);
  g_test_add_func ("/Mend/ChatState/bad-state-is-refused-and-changes-nothing", test_bad_state_is_refused_and_changes_nothing);
  g_test_add_func ("/Mend/ChatState/bad-queued-text-is-a-queue-error", test_bad_queued_text_is_a_queue_error);
  g_test_add_func ("/Mend/ChatState/restore-into-a-chat-in-use-is-refused", test_restore_into_a_chat_in_use_is_refused);
  g_test_add_func ("/Mend/ChatState/file-save-is-atomic-and-keeps-the-good-file", test_file_save_is_atomic_and_keeps_the_good_file);
  g_test_add_func ("/Mend/ChatState/state-survives-sigkill-mid-wait", test_state_survives_sigkill_mid_wait);
  g_test_add_func ("/Mend/ChatState/concurrent-saves-never-show-a-partial-file",
                   test_concurrent_saves_never_show_a_partial_file);
  g_test_add_func ("/Mend/ChatState/failed-saves-are-errors-and-leave-nothing",
                   test_failed_saves_are_errors_and_leave_nothing);
  g_test_add_func ("/Mend/ChatState/save-removes-only-the-files-of-dead-saves",
                   test_save_removes_only_the_files_of_dead_saves);

  return g_test_run ();
}
