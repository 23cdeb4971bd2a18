/* test-stream-observer-child.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A real child process that speaks Claude Code's stream-json
 * (tests/support/fake-agent.py) feeds a chat through MendStreamObserver: a subagent
 * that a transient upstream error failed is resumed in its chat (seed 003),
 * the resume waits for the agent's own turn, and failures that cannot be
 * retried are not. Waits are virtual (a MendManualClock); only the child
 * runs in real time, under a watchdog.
 */

#include <signal.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-stream-observer-private.h"

#ifndef MEND_TEST_PYTHON
# define MEND_TEST_PYTHON "/usr/bin/python3"
#endif

#define WALL_START 1764500000000000
#define WATCHDOG_SECONDS 20

/* What fake-agent.py names its background subagent. */
#define SPAWN_TOOL_USE_ID "toolu_01Fake0001"
#define AGENT_ID "a7c41e2"
#define AGENT_NAME "Remote acpmux setup overview for Lawrence"

#define TWO_HOURS_MS (2 * 3600 * 1000)

/* The subagent as it was when the agent's own turn began. */
typedef struct
{
  gboolean           known;
  MendSubagentState  state;
  gboolean           has_retry;
  guint              attempt;
  guint              of;
  MendReason         reason;
  gboolean           retryable;
  gboolean           fired_in_own_turn;
} Snapshot;

typedef struct
{
  MendClock          *clock;
  MendChat           *chat;
  MendStreamObserver *observer;
  GSubprocess        *agent;
  GCancellable       *cancellable;

  gboolean            watch_done;
  gboolean            watch_ok;
  GError             *watch_error;

  guint               turns_started;
  guint               turns_finished;
  guint               attempts;
  guint               external_begun;
  guint               external_ended;
  gboolean            external_at_start[8];   /* per started turn */
  GPtrArray          *prompts;       /* per attempt */
  GPtrArray          *provenances;   /* per started turn, may hold NULL */
  GArray             *finished_states;   /* MendTurnState per finished turn */
  GArray             *subagent_at_finish; /* MendSubagentState, -1 if unknown */
  GArray             *own_turns;     /* Snapshot per own turn */
  GPtrArray          *records;       /* subagent_retry records */

  /* Fire a pending resume while the agent's own turn runs. */
  gboolean            advance_in_own_turn;
  /* Submit this while the agent's own turn runs. */
  const char         *submit_in_own_turn;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendErrorPolicy *resume_policy = mend_error_policy_new_for_resume ();

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  mend_error_policy_set_jitter (resume_policy, MEND_JITTER_NONE);
  mend_error_policy_set_stagger_ms (resume_policy, 0);

  f->clock = mend_manual_clock_new (WALL_START);
  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "id", "chat-agent",
                          "clock", f->clock,
                          "policy", policy,
                          "resume-policy", resume_policy,
                          NULL);
  g_object_unref (policy);
  g_object_unref (resume_policy);

  f->observer = mend_stream_observer_new (f->chat);
  f->cancellable = g_cancellable_new ();
  f->prompts = g_ptr_array_new_with_free_func (g_free);
  f->provenances = g_ptr_array_new_with_free_func (g_free);
  f->finished_states = g_array_new (FALSE, FALSE, sizeof (MendTurnState));
  f->subagent_at_finish = g_array_new (FALSE, FALSE, sizeof (int));
  f->own_turns = g_array_new (FALSE, TRUE, sizeof (Snapshot));
  f->records = g_ptr_array_new_with_free_func (g_free);
}

/* GSubprocess's child watch, on GLib's worker thread, holds a reference
 * until just after the child is reaped: wait for it to go, thread-safely. */
static void
release_agent (GSubprocess *agent)
{
  gint64 deadline = g_get_monotonic_time () + WATCHDOG_SECONDS * G_USEC_PER_SEC;
  GWeakRef ref;
  GObject *object;

  g_weak_ref_init (&ref, agent);
  g_object_unref (agent);

  while ((object = g_weak_ref_get (&ref)) != NULL)
    {
      g_object_unref (object);
      if (g_get_monotonic_time () > deadline)
        g_error ("The agent's GSubprocess was never finalized");
      g_thread_yield ();
    }

  g_weak_ref_clear (&ref);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_finalize_object (f->observer);
  g_assert_finalize_object (f->chat);
  g_clear_error (&f->watch_error);
  if (f->agent != NULL)
    release_agent (g_steal_pointer (&f->agent));
  g_assert_finalize_object (f->cancellable);
  g_assert_finalize_object (f->clock);
  g_ptr_array_unref (f->prompts);
  g_ptr_array_unref (f->provenances);
  g_array_unref (f->finished_states);
  g_array_unref (f->subagent_at_finish);
  g_array_unref (f->own_turns);
  g_ptr_array_unref (f->records);
}

static MendSubagent *
subagent (Fixture *f)
{
  return mend_subagent_retry_lookup (mend_chat_get_subagents (f->chat), SPAWN_TOOL_USE_ID);
}

/* Writes one prompt to the agent, as a stream-json user message. */
static void
write_prompt (Fixture    *f,
              const char *prompt)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  g_autofree char *json = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "message");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, prompt);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json = json_generator_to_data (generator, NULL);
  line = g_strconcat (json, "\n", NULL);

  g_output_stream_write_all (g_subprocess_get_stdin_pipe (f->agent),
                             line, strlen (line), NULL, NULL, &error);
  g_assert_no_error (error);
}

static void
on_attempt (MendTurn     *turn,
            guint         n,
            GCancellable *cancellable,
            Fixture      *f)
{
  f->attempts++;
  g_ptr_array_add (f->prompts, g_strdup (mend_turn_get_prompt (turn)));
  write_prompt (f, mend_turn_get_prompt (turn));
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Fixture  *f)
{
  g_assert_cmpuint (f->turns_started, <, G_N_ELEMENTS (f->external_at_start));
  f->external_at_start[f->turns_started] = mend_chat_get_external_turn (chat);
  f->turns_started++;
  g_ptr_array_add (f->provenances, g_strdup (mend_turn_get_provenance (turn)));
  g_signal_connect (turn, "attempt", G_CALLBACK (on_attempt), f);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  MendTurnState state = mend_turn_get_state (turn);
  MendSubagent *sub = subagent (f);
  int sub_state = sub ? (int) mend_subagent_get_state (sub) : -1;

  f->turns_finished++;
  g_array_append_val (f->finished_states, state);
  g_array_append_val (f->subagent_at_finish, sub_state);
  g_signal_handlers_disconnect_by_func (turn, on_attempt, f);
}

static void
on_external_turn (MendChat   *chat,
                  GParamSpec *pspec,
                  Fixture    *f)
{
  Snapshot snapshot = { 0 };
  MendSubagent *sub;
  MendRetryWait *wait;

  if (!mend_chat_get_external_turn (chat))
    {
      f->external_ended++;
      return;
    }

  f->external_begun++;

  sub = subagent (f);
  if (sub != NULL)
    {
      snapshot.known = TRUE;
      snapshot.state = mend_subagent_get_state (sub);
      snapshot.retryable = mend_subagent_get_retryable (sub);
      wait = mend_subagent_get_retry (sub);
      if (wait != NULL)
        {
          guint started = f->turns_started;

          snapshot.has_retry = TRUE;
          snapshot.attempt = mend_retry_wait_get_attempt (wait);
          snapshot.of = mend_retry_wait_get_max_retries (wait);
          snapshot.reason = mend_retry_wait_get_reason (wait);

          /* The wait runs out while the agent's own turn runs: the prompt
           * must wait for that turn's end. */
          if (f->advance_in_own_turn)
            {
              g_object_ref (wait);
              mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock),
                                         mend_retry_wait_get_remaining_ms (wait));
              snapshot.fired_in_own_turn = mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_FIRED;
              g_object_unref (wait);
              g_assert_cmpuint (f->turns_started, ==, started);
              g_assert_null (mend_chat_get_turn (chat));
              g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_queue (chat))), ==, 0);
            }
        }
    }

  g_array_append_val (f->own_turns, snapshot);

  if (f->submit_in_own_turn != NULL)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (mend_chat_submit (chat, f->submit_in_own_turn, NULL, &error));
      g_assert_no_error (error);
      g_assert_null (mend_chat_get_turn (chat));
      f->submit_in_own_turn = NULL;
    }
}

static void
on_record (MendSubagentRetry *subagents,
           const char        *json,
           Fixture           *f)
{
  g_ptr_array_add (f->records, g_strdup (json));
}

static void
on_watched (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Fixture *f = user_data;

  f->watch_ok = mend_stream_observer_watch_finish (MEND_STREAM_OBSERVER (source), result, &f->watch_error);
  f->watch_done = TRUE;
}

static void
start_agent (Fixture    *f,
             const char *scenario)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *script = NULL;

#ifdef MEND_TEST_SRCDIR
  script = g_build_filename (MEND_TEST_SRCDIR, "support", "fake-agent.py", NULL);
#else
  script = g_test_build_filename (G_TEST_DIST, "support", "fake-agent.py", NULL);
#endif

  f->agent = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                               &error, MEND_TEST_PYTHON, script, scenario, NULL);
  g_assert_no_error (error);

  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect (f->chat, "notify::external-turn", G_CALLBACK (on_external_turn), f);
  g_signal_connect (mend_chat_get_subagents (f->chat), "record", G_CALLBACK (on_record), f);

  mend_stream_observer_watch_async (f->observer, g_subprocess_get_stdout_pipe (f->agent),
                                    f->cancellable, on_watched, f);
}

static void
submit (Fixture    *f,
        const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (f->chat, text, NULL, &error));
  g_assert_no_error (error);
}

static gboolean
on_watchdog (gpointer user_data)
{
  g_error ("Timed out after %d s waiting for %s", WATCHDOG_SECONDS, (const char *) user_data);
  return G_SOURCE_REMOVE;
}

typedef gboolean (*Condition) (Fixture *f);

/* Runs the main loop, in real time, until @done holds. */
static void
run_until (Fixture    *f,
           Condition   done,
           const char *what)
{
  guint watchdog = g_timeout_add_seconds (WATCHDOG_SECONDS, on_watchdog, (gpointer) what);

  while (!done (f))
    {
      if (f->watch_done)
        g_error ("The agent's output ended before %s", what);
      g_main_context_iteration (NULL, TRUE);
    }

  g_source_remove (watchdog);
}

static gboolean
watch_is_done (Fixture *f)
{
  return f->watch_done;
}

/* Closes the agent's stdin, reads its output to the end, waits for it. */
static void
finish_agent (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  guint watchdog;

  g_output_stream_close (g_subprocess_get_stdin_pipe (f->agent), NULL, &error);
  g_assert_no_error (error);

  watchdog = g_timeout_add_seconds (WATCHDOG_SECONDS, on_watchdog, (gpointer) "the agent's exit");
  while (!watch_is_done (f))
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (watchdog);

  g_assert_no_error (f->watch_error);
  g_assert_true (f->watch_ok);

  g_subprocess_wait (f->agent, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (f->agent));
  g_assert_cmpint (g_subprocess_get_exit_status (f->agent), ==, 0);

  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 0);
}

static guint
count_records (Fixture    *f,
               const char *outcome)
{
  guint n = 0;

  for (guint i = 0; i < f->records->len; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *object;

      g_assert_true (json_parser_load_from_data (parser, g_ptr_array_index (f->records, i), -1, NULL));
      object = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpstr (json_object_get_string_member (object, "kind"), ==, "subagent_retry");
      if (g_strcmp0 (json_object_get_string_member (object, "outcome"), outcome) == 0)
        n++;
    }

  return n;
}

/* Nothing is left to fire: no timer on the clock, and two hours later no
 * turn started. */
static void
assert_nothing_more_fires (Fixture *f)
{
  guint started = f->turns_started;

  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), TWO_HOURS_MS);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (f->turns_started, ==, started);
  g_assert_null (mend_chat_get_turn (f->chat));
}

static void
assert_resume_provenance (Fixture *f,
                          guint    turn,
                          guint    attempt)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  const char *provenance = g_ptr_array_index (f->provenances, turn);
  const char *prompt;
  JsonObject *object;

  g_assert_nonnull (provenance);
  json_parser_load_from_data (parser, provenance, -1, &error);
  g_assert_no_error (error);
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (object, "kind"), ==, "subagent_retry");
  g_assert_cmpstr (json_object_get_string_member (object, "subagentId"), ==, SPAWN_TOOL_USE_ID);
  g_assert_cmpstr (json_object_get_string_member (object, "agentId"), ==, AGENT_ID);
  g_assert_cmpint (json_object_get_int_member (object, "attempt"), ==, attempt);

  /* Written to the agent as one prompt: resume by agent id with SendMessage. */
  prompt = g_ptr_array_index (f->prompts, turn);
  g_assert_nonnull (strstr (prompt, "SendMessage"));
  g_assert_nonnull (strstr (prompt, AGENT_ID));
  g_assert_nonnull (strstr (prompt, AGENT_NAME));
}

static gboolean
two_own_turns_ended (Fixture *f)
{
  return f->external_ended >= 2;
}

/* agent-503 and agent-reset: failed after the turn, resumed after Claude
 * Code's own turn, then completed. */
static void
check_resumed_in_its_chat (Fixture    *f,
                           const char *scenario,
                           MendReason  reason)
{
  const Snapshot *own;
  MendSubagent *sub;

  f->advance_in_own_turn = TRUE;
  start_agent (f, scenario);
  submit (f, "Write an overview of the remote acpmux setup in the background.");

  /* The failure's own turn, the resume turn, the completion's own turn. */
  run_until (f, two_own_turns_ended, "the agent's second own turn to end");

  g_assert_cmpuint (f->own_turns->len, ==, 2);
  own = &g_array_index (f->own_turns, Snapshot, 0);
  g_assert_true (own->known);
  g_assert_cmpint (own->state, ==, MEND_SUBAGENT_FAILED);
  g_assert_true (own->has_retry);
  g_assert_cmpuint (own->attempt, ==, 1);
  g_assert_cmpuint (own->of, ==, 4);
  g_assert_cmpint (own->reason, ==, reason);
  g_assert_true (own->retryable);
  /* It ran out during Claude Code's own turn, and waited for its end. */
  g_assert_true (own->fired_in_own_turn);

  g_assert_cmpuint (f->turns_started, ==, 2);
  g_assert_cmpuint (f->attempts, ==, 2);
  /* The resume started after the agent's own turn, not inside it. */
  g_assert_false (f->external_at_start[1]);
  g_assert_null (g_ptr_array_index (f->provenances, 0));
  assert_resume_provenance (f, 1, 1);

  /* The resume turn succeeded with the same subagent running again. */
  g_assert_cmpuint (f->turns_finished, ==, 2);
  g_assert_cmpint (g_array_index (f->finished_states, MendTurnState, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpint (g_array_index (f->subagent_at_finish, int, 1), ==, MEND_SUBAGENT_RUNNING);

  /* Then it completed. */
  own = &g_array_index (f->own_turns, Snapshot, 1);
  g_assert_cmpint (own->state, ==, MEND_SUBAGENT_COMPLETED);
  g_assert_false (own->has_retry);
  sub = subagent (f);
  g_assert_nonnull (sub);
  g_assert_cmpstr (mend_subagent_get_agent_id (sub), ==, AGENT_ID);
  g_assert_cmpstr (mend_subagent_get_name (sub), ==, AGENT_NAME);
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_COMPLETED);
  g_assert_null (mend_subagent_get_retry (sub));
  g_assert_false (mend_subagent_get_retryable (sub));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat))), ==, 1);

  g_assert_cmpuint (count_records (f, "scheduled"), ==, 1);
  g_assert_cmpuint (count_records (f, "fired"), ==, 1);
  g_assert_cmpuint (count_records (f, "exhausted"), ==, 0);

  assert_nothing_more_fires (f);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  finish_agent (f);
}

static void
test_503_subagent_is_resumed_in_its_chat (Fixture       *f,
                                          gconstpointer  data)
{
  check_resumed_in_its_chat (f, "agent-503", MEND_REASON_CAPACITY);
}

static void
test_dropped_connection_subagent_is_resumed (Fixture       *f,
                                             gconstpointer  data)
{
  check_resumed_in_its_chat (f, "agent-reset", MEND_REASON_TRANSPORT);
}

static gboolean
one_own_turn_ended (Fixture *f)
{
  return f->external_ended >= 1;
}

static void
check_not_retried (Fixture         *f,
                   const char      *scenario,
                   MendReason       reason,
                   MendFailureKind  kind)
{
  const Snapshot *own;
  MendSubagent *sub;
  MendFailure *failure;

  f->advance_in_own_turn = TRUE;
  start_agent (f, scenario);
  submit (f, "Write an overview of the remote acpmux setup in the background.");
  run_until (f, one_own_turn_ended, "the agent's own turn to end");

  own = &g_array_index (f->own_turns, Snapshot, 0);
  g_assert_true (own->known);
  g_assert_cmpint (own->state, ==, MEND_SUBAGENT_FAILED);
  g_assert_false (own->has_retry);

  sub = subagent (f);
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_FAILED);
  g_assert_null (mend_subagent_get_retry (sub));
  failure = mend_subagent_get_failure (sub);
  g_assert_nonnull (failure);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, reason);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, kind);

  g_assert_cmpuint (count_records (f, "scheduled"), ==, 0);
  g_assert_cmpuint (count_records (f, "fired"), ==, 0);
  g_assert_cmpuint (f->turns_started, ==, 1);
  assert_nothing_more_fires (f);
  finish_agent (f);
}

static void
test_bad_request_subagent_is_not_retried (Fixture       *f,
                                          gconstpointer  data)
{
  check_not_retried (f, "agent-bad-request", MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT);
}

static void
test_usage_limit_subagent_is_not_retried (Fixture       *f,
                                          gconstpointer  data)
{
  check_not_retried (f, "agent-usage-limit", MEND_REASON_USAGE_LIMIT, MEND_FAILURE_LIMIT);
}

static gboolean
five_own_turns_ended (Fixture *f)
{
  return f->external_ended >= 5;
}

static void
test_subagent_that_keeps_failing_is_given_up (Fixture       *f,
                                              gconstpointer  data)
{
  MendSubagent *sub;

  f->advance_in_own_turn = TRUE;
  start_agent (f, "agent-keeps-failing");
  submit (f, "Write an overview of the remote acpmux setup in the background.");

  /* The first failure and four failed resumes, each followed by Claude
   * Code's own turn. */
  run_until (f, five_own_turns_ended, "the fifth own turn to end");

  for (guint i = 0; i < 4; i++)
    {
      const Snapshot *own = &g_array_index (f->own_turns, Snapshot, i);

      g_assert_cmpint (own->state, ==, MEND_SUBAGENT_FAILED);
      g_assert_true (own->has_retry);
      g_assert_cmpuint (own->attempt, ==, i + 1);
      g_assert_cmpuint (own->of, ==, 4);
      g_assert_cmpint (own->reason, ==, MEND_REASON_CAPACITY);
      g_assert_true (own->fired_in_own_turn);
      assert_resume_provenance (f, i + 1, i + 1);
    }
  g_assert_false (g_array_index (f->own_turns, Snapshot, 4).has_retry);

  g_assert_cmpuint (f->turns_started, ==, 5);
  g_assert_cmpuint (count_records (f, "scheduled"), ==, 4);
  g_assert_cmpuint (count_records (f, "fired"), ==, 4);
  g_assert_cmpuint (count_records (f, "exhausted"), ==, 1);

  sub = subagent (f);
  g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_FAILED);
  g_assert_null (mend_subagent_get_retry (sub));
  g_assert_true (mend_subagent_get_retryable (sub));

  assert_nothing_more_fires (f);
  finish_agent (f);
}

static gboolean
turn_is_waiting (Fixture *f)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_WAITING;
}

static gboolean
one_turn_finished (Fixture *f)
{
  return f->turns_finished >= 1;
}

static void
test_turn_529_is_retried_with_the_same_prompt (Fixture       *f,
                                               gconstpointer  data)
{
  MendTurn *turn;
  MendRetryWait *wait;

  start_agent (f, "turn-529");
  submit (f, "Summarize the relay logs.");
  run_until (f, turn_is_waiting, "the turn to wait to retry");

  turn = mend_chat_get_turn (f->chat);
  wait = mend_turn_get_wait (turn);
  g_assert_cmpuint (mend_retry_wait_get_attempt (wait), ==, 1);
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_BUSY);

  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), mend_retry_wait_get_remaining_ms (wait));
  run_until (f, one_turn_finished, "the retried turn to finish");

  g_assert_cmpint (g_array_index (f->finished_states, MendTurnState, 0), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (f->turns_started, ==, 1);
  g_assert_cmpuint (f->attempts, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (f->prompts, 0), ==, "Summarize the relay logs.");
  g_assert_cmpstr (g_ptr_array_index (f->prompts, 1), ==, "Summarize the relay logs.");
  g_assert_false (mend_chat_get_external_turn (f->chat));

  assert_nothing_more_fires (f);
  finish_agent (f);
}

static gboolean
two_turns_finished (Fixture *f)
{
  return f->turns_finished >= 2;
}

static void
test_own_turn_holds_submissions (Fixture       *f,
                                 gconstpointer  data)
{
  f->submit_in_own_turn = "And the follow-up.";
  start_agent (f, "own-turn");
  submit (f, "Check the relay.");
  run_until (f, two_turns_finished, "the follow-up to finish");

  g_assert_cmpuint (f->external_begun, ==, 1);
  g_assert_cmpuint (f->external_ended, ==, 1);
  /* The follow-up started only once the agent's own turn ended. */
  g_assert_false (f->external_at_start[1]);
  g_assert_cmpstr (g_ptr_array_index (f->prompts, 1), ==, "And the follow-up.");
  g_assert_cmpint (g_array_index (f->finished_states, MendTurnState, 0), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpint (g_array_index (f->finished_states, MendTurnState, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_false (mend_chat_get_external_turn (f->chat));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);

  /* Token deltas cost no parse: only init, result and task lines did. */
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), ==, 6);
  g_assert_cmpuint (mend_stream_observer_get_n_lines (f->observer), >, 30);

  finish_agent (f);
}

/* Faults: the agent dies mid-turn, leaves half a line, or floods. */

static void
run_until_watch_done (Fixture *f)
{
  guint watchdog = g_timeout_add_seconds (WATCHDOG_SECONDS, on_watchdog, (gpointer) "the end of the output");

  while (!f->watch_done)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (watchdog);
}

static void
assert_queue_is (Fixture    *f,
                 const char *text)
{
  MendQueue *queue = mend_chat_get_queue (f->chat);

  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, text);
}

static void
test_agent_crash_mid_turn_is_a_dropped_connection (Fixture       *f,
                                                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  start_agent (f, "crash-mid-turn");
  submit (f, "Check the relay.");
  submit (f, "And the follow-up.");
  run_until_watch_done (f);
  g_assert_true (f->watch_ok);

  /* No result will come: the attempt failed like a dropped connection;
   * output was seen, so it is not replayed and the turn gives up… */
  turn = mend_chat_get_turn (f->chat);
  g_assert_null (turn);
  g_assert_cmpint (g_array_index (f->finished_states, MendTurnState, 0), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  /* …and no queued item is lost: Continue goes in front of it. */
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 2);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (mend_chat_get_queue (f->chat))), ==,
                   "Continue the current turn");

  g_subprocess_wait (f->agent, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (f->agent), ==, 1);
}

static void
test_agent_half_line_then_exit (Fixture       *f,
                                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  start_agent (f, "half-line");
  submit (f, "Check the relay.");
  submit (f, "And the follow-up.");
  run_until_watch_done (f);

  /* The half line is bad input, counted; the turn failed before any
   * output, so it waits to be retried. */
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (f->observer), ==, 1);
  turn = mend_chat_get_turn (f->chat);
  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_retry_wait_get_reason (mend_turn_get_wait (turn)), ==, MEND_REASON_TRANSPORT);
  assert_queue_is (f, "And the follow-up.");

  g_subprocess_wait (f->agent, NULL, &error);
  g_assert_no_error (error);
}

static void
test_agent_flood_of_token_deltas (Fixture       *f,
                                  gconstpointer  data)
{
  start_agent (f, "flood");
  submit (f, "Write a long answer.");
  submit (f, "And the follow-up.");
  run_until (f, two_turns_finished, "the flood and the follow-up");

  g_assert_cmpint (g_array_index (f->finished_states, MendTurnState, 0), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_stream_observer_get_n_lines (f->observer), >, 100000);
  /* 100 000 deltas, and only the init and result lines were parsed. */
  g_assert_cmpuint (mend_stream_observer_get_n_parsed (f->observer), <=, 4);
  finish_agent (f);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  /* A write to an agent that died is an error to report, not a signal. */
  signal (SIGPIPE, SIG_IGN);

#define ADD(path, func) \
  g_test_add ("/Mend/Agent/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("503-subagent-is-resumed-in-its-chat", test_503_subagent_is_resumed_in_its_chat);
  ADD ("dropped-connection-subagent-is-resumed", test_dropped_connection_subagent_is_resumed);
  ADD ("bad-request-subagent-is-not-retried", test_bad_request_subagent_is_not_retried);
  ADD ("usage-limit-subagent-is-not-retried", test_usage_limit_subagent_is_not_retried);
  ADD ("subagent-that-keeps-failing-is-given-up", test_subagent_that_keeps_failing_is_given_up);
  ADD ("turn-529-is-retried-with-the-same-prompt", test_turn_529_is_retried_with_the_same_prompt);
  ADD ("own-turn-holds-submissions", test_own_turn_holds_submissions);
  ADD ("agent-crash-mid-turn-is-a-dropped-connection", test_agent_crash_mid_turn_is_a_dropped_connection);
  ADD ("agent-half-line-then-exit", test_agent_half_line_then_exit);
  ADD ("agent-flood-of-token-deltas", test_agent_flood_of_token_deltas);

#undef ADD

  return g_test_run ();
}
