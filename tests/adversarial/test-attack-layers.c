/* test-attack-layers.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The seams between the layers: a chat attached to its sender (and the
 * agent's `chat` property notified), an agent's own stream observer that
 * reads the attached chat at each line, the chat's subagent retry that
 * sends through the chat and whose records the chat tells again, and an
 * HTTP sender whose answer is set when its attempt is finished. Handlers
 * that drop the last reference of what emits, chats that come and go in
 * every order, the last reference dropped on another thread.
 */

#include "config.h"

#include <libmend.h>

#include "mend-test-server.h"

#define WALL_START 1764500000000000

/* Lines of the Claude Code CLI's stream-json, for the observers below. */
#define INIT_LINE "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}"
#define RESULT_LINE "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Done\",\"session_id\":\"s1\"}"
#define TASK_STARTED_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"agent-a\",\"tool_use_id\":\"toolu_1\"," \
  "\"description\":\"Push relay\",\"task_type\":\"local_agent\"}"
#define TASK_FAILED_LINE \
  "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"agent-a\",\"tool_use_id\":\"toolu_1\"," \
  "\"status\":\"failed\",\"summary\":\"" MEND_TEST_GATEWAY_503 "\"}"

/* The chat attached to its sender */

#if MEND_HAS_AGENTS

/* An agent that is never started: the tests here only attach chats. */
static MendAgentProcess *
idle_agent_new (void)
{
  const char *argv[] = { "/bin/cat", NULL };

  return mend_agent_process_new (argv);
}

typedef struct
{
  GThread   *main_thread;
  guint      n_notified;
  guint      n_elsewhere;
  MendClock *clock;
  MendChat  *second;     /* made by a handler */
  gboolean   make_second;
} ChatNotes;

static void
on_chat_notified (MendAgent  *agent,
                  GParamSpec *pspec,
                  ChatNotes  *notes)
{
  notes->n_notified++;
  if (g_thread_self () != notes->main_thread)
    notes->n_elsewhere++;
}

static gpointer
unref_on_worker (gpointer object)
{
  g_object_unref (object);
  return NULL;
}

/* The last reference of a chat whose sender is an agent goes on another
 * thread (as when a GTask finishes on a worker): the agent, which lives
 * on the main thread, hears that its chat is gone on its own thread, and
 * has no chat as soon as the chat is gone. */
static void
test_chat_dropped_on_a_worker_notifies_the_agent_on_its_thread (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = idle_agent_new ();
  ChatNotes notes = { .main_thread = g_thread_self () };
  MendChat *chat;
  GThread *thread;

  g_signal_connect (agent, "notify::chat", G_CALLBACK (on_chat_notified), &notes);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  g_assert_cmpuint (notes.n_notified, ==, 1);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (agent)) == chat);

  thread = g_thread_new ("dropper", unref_on_worker, chat);
  g_thread_join (thread);
  g_assert_null (mend_agent_get_chat (MEND_AGENT (agent)));
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_assert_cmpuint (notes.n_notified, ==, 2);
  g_assert_cmpuint (notes.n_elsewhere, ==, 0);

  g_signal_handlers_disconnect_by_data (agent, &notes);
  g_assert_finalize_object (agent);
  g_assert_finalize_object (clock);
}

/* A handler of the agent's `notify::chat`, as its chat goes, makes the
 * next chat with the same agent: the new chat has it. */
static void
on_chat_gone_make_another (MendAgent  *agent,
                           GParamSpec *pspec,
                           ChatNotes  *notes)
{
  notes->n_notified++;
  if (notes->make_second && mend_agent_get_chat (agent) == NULL)
    {
      notes->make_second = FALSE;
      notes->second = g_object_new (MEND_TYPE_CHAT, "clock", notes->clock, "sender", agent, NULL);
    }
}

static void
test_notify_chat_handler_makes_the_next_chat_as_one_goes (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = idle_agent_new ();
  ChatNotes notes = { .main_thread = g_thread_self (), .clock = clock };
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);

  g_signal_connect (agent, "notify::chat", G_CALLBACK (on_chat_gone_make_another), &notes);
  notes.make_second = TRUE;
  g_assert_finalize_object (chat);

  /* Gone, then the second attached. */
  g_assert_nonnull (notes.second);
  g_assert_cmpuint (notes.n_notified, ==, 2);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (agent)) == notes.second);

  mend_chat_close (notes.second);
  g_assert_finalize_object (notes.second);
  g_assert_null (mend_agent_get_chat (MEND_AGENT (agent)));
  g_assert_cmpuint (notes.n_notified, ==, 3);
  mend_agent_terminate (MEND_AGENT (agent));
  g_signal_handlers_disconnect_by_data (agent, &notes);
  mend_test_finalize_eventually (agent);
  g_assert_finalize_object (clock);
}

/* A handler of the agent's `notify::chat`, as a chat attaches, makes a
 * second chat with the same agent: refused, with a critical; the first
 * keeps the agent, and the second's end changes nothing. */
static void
on_chat_attached_make_another (MendAgent  *agent,
                               GParamSpec *pspec,
                               ChatNotes  *notes)
{
  notes->n_notified++;
  if (notes->make_second && mend_agent_get_chat (agent) != NULL)
    {
      notes->make_second = FALSE;
      g_test_expect_message ("Mend", G_LOG_LEVEL_CRITICAL, "*one chat at a time*");
      notes->second = g_object_new (MEND_TYPE_CHAT, "clock", notes->clock, "sender", agent, NULL);
      g_test_assert_expected_messages ();
    }
}

static void
test_notify_chat_handler_makes_a_second_chat_as_one_attaches (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = idle_agent_new ();
  ChatNotes notes = { .main_thread = g_thread_self (), .clock = clock, .make_second = TRUE };
  MendChat *chat;

  g_signal_connect (agent, "notify::chat", G_CALLBACK (on_chat_attached_make_another), &notes);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  g_assert_nonnull (notes.second);
  g_assert_cmpuint (notes.n_notified, ==, 1);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (agent)) == chat);

  g_assert_finalize_object (notes.second);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (agent)) == chat);
  g_assert_cmpuint (notes.n_notified, ==, 1);

  g_assert_finalize_object (chat);
  g_assert_null (mend_agent_get_chat (MEND_AGENT (agent)));
  g_assert_cmpuint (notes.n_notified, ==, 2);
  g_signal_handlers_disconnect_by_data (agent, &notes);
  g_assert_finalize_object (agent);
  g_assert_finalize_object (clock);
}

/* A chat disposed by hand while the app holds it lets go of its agent at
 * once, and a later chat may take it; the first one's finalize then
 * changes nothing. */
static void
test_chat_disposed_early_lets_the_next_chat_take_the_agent (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = idle_agent_new ();
  ChatNotes notes = { .main_thread = g_thread_self () };
  MendChat *first = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  MendChat *second;

  g_signal_connect (agent, "notify::chat", G_CALLBACK (on_chat_notified), &notes);
  g_object_run_dispose (G_OBJECT (first));
  g_assert_null (mend_agent_get_chat (MEND_AGENT (agent)));
  second = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (agent)) == second);
  g_object_run_dispose (G_OBJECT (first));
  g_assert_finalize_object (first);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (agent)) == second);
  g_assert_cmpuint (notes.n_notified, ==, 2);

  g_assert_finalize_object (second);
  g_assert_cmpuint (notes.n_notified, ==, 3);
  g_signal_handlers_disconnect_by_data (agent, &notes);
  g_assert_finalize_object (agent);
  g_assert_finalize_object (clock);
}

/* The agent's own observer */

/* The app keeps the agent's observer (MendAgentProcess:observer) after
 * the agent is gone, and feeds it: nothing is fed, nothing is read from
 * the agent that was. */
static void
test_agent_observer_outlives_its_agent (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = idle_agent_new ();
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  MendStreamObserver *observer = g_object_ref (mend_agent_process_get_observer (agent));

  g_assert_finalize_object (chat);
  g_assert_finalize_object (agent);

  g_assert_false (mend_stream_observer_feed_line (observer, INIT_LINE, -1));
  g_assert_false (mend_stream_observer_feed_line (observer, TASK_STARTED_LINE, -1));
  g_assert_false (mend_stream_observer_feed_line (observer, RESULT_LINE, -1));
  g_assert_finalize_object (observer);
  g_assert_finalize_object (clock);
}

/* A lone turn (no chat) whose sender is an agent: the agent's result ends
 * the attempt, which the agent's observer finds as the sender's turn; a
 * second lone turn on the same agent too. */
static gboolean
tick (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static void
run_turn_in_real_time (MendTurn *turn)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  guint ticker = g_timeout_add (20, tick, NULL);

  while (mend_turn_get_state (turn) == MEND_TURN_RUNNING || mend_turn_get_state (turn) == MEND_TURN_IDLE)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (ticker);
}

static void
test_lone_turns_on_one_agent (void)
{
  const char *argv[] = {
    "/bin/sh", "-c",
    "while read line; do "
    "echo '" INIT_LINE "'; "
    "echo '" RESULT_LINE "'; "
    "done",
    NULL
  };
  MendAgentProcess *agent = mend_agent_process_new (argv);
  MendTurn *first = mend_turn_new ("Fix the build", NULL);
  MendTurn *second = mend_turn_new ("And the tests", NULL);

  mend_turn_set_sender (first, MEND_SENDER (agent));
  mend_turn_start (first, NULL);
  run_turn_in_real_time (first);
  g_assert_cmpint (mend_turn_get_state (first), ==, MEND_TURN_SUCCEEDED);
  g_assert_finalize_object (first);

  mend_turn_set_sender (second, MEND_SENDER (agent));
  mend_turn_start (second, NULL);
  run_turn_in_real_time (second);
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (second), ==, 1);
  g_assert_finalize_object (second);

  mend_agent_terminate (MEND_AGENT (agent));
  mend_test_finalize_eventually (agent);
}

#endif /* MEND_HAS_AGENTS */

/* An app's observer fed lines after its chat was disposed: no turn is
 * ended, no resume is planned, and the observer still goes. (The lines
 * still reach the inert chat, as before the layers: an init marks the
 * agent's own turn, a subagent is listed; not checked here.) */
static void
test_app_observer_fed_after_its_chat_was_disposed (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendStreamObserver *observer = mend_stream_observer_new (chat);

  mend_test_submit (chat, "Fix the build");
  g_object_run_dispose (G_OBJECT (chat));
  mend_stream_observer_feed_line (observer, INIT_LINE, -1);
  mend_stream_observer_feed_line (observer, TASK_STARTED_LINE, -1);
  mend_stream_observer_feed_line (observer, TASK_FAILED_LINE, -1);
  mend_stream_observer_feed_line (observer, RESULT_LINE, -1);
  g_assert_null (mend_chat_get_turn (chat));
  g_assert_false (mend_chat_get_external_turn (chat));
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)), ==, 0);

  g_assert_finalize_object (observer);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* The subagent retry's records, told again by the chat */

typedef struct
{
  MendChat *chat;
  guint     n_chat;
  guint     n_retry;
} Records;

static void
on_chat_record_drop_chat (MendChat   *chat,
                          const char *json,
                          Records    *records)
{
  records->n_chat++;
  g_clear_object (&records->chat);
}

static void
on_retry_record (MendSubagentRetry *retry,
                 const char        *json,
                 Records           *records)
{
  records->n_retry++;
}

/* A handler of the chat's `record` drops the last reference to the chat
 * while the chat tells a record of its subagents: the retry is disposed
 * with the chat (its handlers with it, so they hear no more), stays for
 * the rest of its call, and goes with the chat. */
static void
test_chat_record_handler_drops_the_chat (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  Records records = { .chat = mend_test_new_chat_by_hand (clock) };
  MendSubagentRetry *retry = mend_chat_get_subagents (records.chat);
  gpointer weak_retry = retry;

  g_object_add_weak_pointer (G_OBJECT (retry), &weak_retry);
  g_signal_connect (records.chat, "record", G_CALLBACK (on_chat_record_drop_chat), &records);
  g_signal_connect (retry, "record", G_CALLBACK (on_retry_record), &records);
  g_assert_nonnull (mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay"));
  mend_subagent_retry_note_failed (retry, "toolu_1", failure);

  g_assert_null (records.chat);
  g_assert_cmpuint (records.n_chat, ==, 1);
  g_assert_cmpuint (records.n_retry, ==, 0);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_null (weak_retry);
  /* The wait it had is gone with it. */
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)), ==, 0);
  g_assert_finalize_object (clock);
}

/* A handler of the retry's `record` drops the chat: the retry stays for
 * the rest of its call; nothing is sent through the chat that is gone. */
static void
on_retry_record_drop_chat (MendSubagentRetry *retry,
                           const char        *json,
                           Records           *records)
{
  records->n_retry++;
  g_clear_object (&records->chat);
}

static void
test_retry_record_handler_drops_the_chat (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  Records records = { .chat = mend_test_new_chat_by_hand (clock) };
  MendSubagentRetry *retry = g_object_ref (mend_chat_get_subagents (records.chat));

  g_signal_connect (retry, "record", G_CALLBACK (on_retry_record_drop_chat), &records);
  g_assert_nonnull (mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay"));
  mend_subagent_retry_note_failed (retry, "toolu_1", failure);
  g_assert_null (records.chat);

  /* The app still holds the retry: its calls do nothing now. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 600000);
  mend_subagent_retry_note_failed (retry, "toolu_1", failure);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_signal_handlers_disconnect_by_data (retry, &records);
  g_assert_finalize_object (retry);
  g_assert_finalize_object (clock);
}

/* A subagent's wait fires while the agent runs a turn of its own: the
 * prompt is held until that turn ends, then sent (the chat told the
 * retry of the turn). */
static void
test_resume_held_during_the_agents_own_turn (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);

  g_assert_nonnull (mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay"));
  mend_subagent_retry_note_failed (retry, "toolu_1", failure);
  mend_chat_begin_external_turn (chat);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 600000);
  g_assert_null (mend_chat_get_turn (chat));
  mend_chat_end_external_turn (chat);
  g_assert_nonnull (mend_chat_get_turn (chat));
  g_assert_nonnull (strstr (mend_turn_get_prompt (mend_chat_get_turn (chat)), "agent-a"));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (clock);
}

/* The HTTP sender's answer */

#define WHOLE_ANSWER(text) \
  "{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":" \
  "{\"role\":\"assistant\",\"content\":\"" text "\"},\"finish_reason\":\"stop\"}]}"

typedef struct
{
  MendTestHttpChat http;
  GPtrArray       *answers_at_finish;  /* char *: the answer a turn-finished handler saw */
  MendTurnState    state_at_notify;
  guint            n_notified;
  gboolean         drop_chat;
} AnswerFixture;

static void
on_turn_finished_read_answer (MendChat      *chat,
                              MendTurn      *turn,
                              AnswerFixture *f)
{
  g_ptr_array_add (f->answers_at_finish, g_strdup (mend_http_sender_get_answer (f->http.sender)));
}

static void
on_answer_notified (MendHttpSender *sender,
                    GParamSpec     *pspec,
                    AnswerFixture  *f)
{
  MendTurn *turn = f->http.chat ? mend_chat_get_turn (f->http.chat) : NULL;

  f->n_notified++;
  f->state_at_notify = turn ? mend_turn_get_state (turn) : MEND_TURN_IDLE;
  if (f->drop_chat)
    {
      f->drop_chat = FALSE;
      mend_chat_close (f->http.chat);
      g_clear_object (&f->http.chat);
    }
}

static void
answer_fixture_set_up (AnswerFixture *f,
                       gconstpointer  data)
{
  mend_test_http_chat_set_up (&f->http, NULL);
  f->answers_at_finish = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->http.chat, "turn-finished", G_CALLBACK (on_turn_finished_read_answer), f);
  g_signal_connect (f->http.sender, "notify::answer", G_CALLBACK (on_answer_notified), f);
}

static void
answer_fixture_tear_down (AnswerFixture *f,
                          gconstpointer  data)
{
  g_signal_handlers_disconnect_by_data (f->http.sender, f);
  if (f->http.chat == NULL)
    f->http.chat = g_object_new (MEND_TYPE_CHAT, "clock", f->http.clock, NULL);
  else
    g_signal_handlers_disconnect_by_data (f->http.chat, f);
  mend_test_http_chat_tear_down (&f->http, NULL);
  g_ptr_array_unref (f->answers_at_finish);
}

/* Each turn-finished handler sees its own turn's answer, notified while
 * the turn still ran. */
static void
test_answer_is_set_before_turn_finished (AnswerFixture *f,
                                         gconstpointer  data)
{
  static const MendTestHttpReply script[] = {
    { 200, "application/json", WHOLE_ANSWER ("First") },
    { 200, "application/json", WHOLE_ANSWER ("Second") },
  };

  mend_test_http_chat_start (&f->http, script, G_N_ELEMENTS (script));
  mend_test_run_chat_until (f->http.chat, &f->http.served, MEND_TURN_SUCCEEDED, 1);
  g_assert_true (mend_chat_submit (f->http.chat, "And the tests?", NULL, NULL));
  mend_test_run_chat_until (f->http.chat, &f->http.served, MEND_TURN_SUCCEEDED, 2);

  g_assert_cmpuint (f->answers_at_finish->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (f->answers_at_finish, 0), ==, "First");
  g_assert_cmpstr (g_ptr_array_index (f->answers_at_finish, 1), ==, "Second");
  g_assert_cmpuint (f->n_notified, ==, 2);
  g_assert_cmpint (f->state_at_notify, ==, MEND_TURN_RUNNING);
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->http.sender)), ==, 4);
}

/* A `notify::answer` handler closes and drops the chat: the turn ends
 * stopped or succeeded, nothing is used after it is gone. */
static void
test_answer_handler_drops_the_chat (AnswerFixture *f,
                                    gconstpointer  data)
{
  static const MendTestHttpReply script[] = {
    { 200, "application/json", WHOLE_ANSWER ("First") },
  };
  gpointer weak_chat = f->http.chat;
  MendTurn *turn;
  guint id;

  f->drop_chat = TRUE;
  g_object_add_weak_pointer (G_OBJECT (f->http.chat), &weak_chat);
  mend_test_http_chat_start (&f->http, script, G_N_ELEMENTS (script));
  turn = g_object_ref (mend_chat_get_turn (f->http.chat));
  id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());
  while (f->http.chat != NULL || mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_assert_null (weak_chat);
  g_assert_cmpuint (f->n_notified, ==, 1);
  g_assert_cmpstr (mend_http_sender_get_answer (f->http.sender), ==, "First");
  /* Stopped by the close, the answer it had notwithstanding. */
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_STOPPED);
  g_ptr_array_set_size (f->http.finished, 0);
  g_assert_finalize_object (turn);
}

/* A sender driven by the app, whose send_finish is never called: the
 * attempt goes with its task, and nothing leaks. */
static void
on_sent_never_finished (GObject      *source,
                        GAsyncResult *result,
                        gpointer      data)
{
  gboolean *called = data;

  *called = TRUE;
}

static void
test_send_finish_never_called (AnswerFixture *f,
                               gconstpointer  data)
{
  static const MendTestHttpReply script[] = {
    { 200, "application/json", WHOLE_ANSWER ("Unread") },
  };
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  MendTurn *turn = mend_turn_new ("Fix the build", policy);
  gboolean called = FALSE;
  guint id;

  f->http.script = script;
  f->http.n_script = G_N_ELEMENTS (script);
  mend_sender_send_async (MEND_SENDER (f->http.sender), turn, 1, G_PRIORITY_DEFAULT, NULL,
                          on_sent_never_finished, &called);
  id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());
  while (!called)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);
  while (g_main_context_iteration (NULL, FALSE))
    ;

  /* The sender's answer is set by send_finish, which was never called. */
  g_assert_null (mend_http_sender_get_answer (f->http.sender));
  g_assert_cmpuint (f->n_notified, ==, 0);
  g_assert_finalize_object (turn);
}

int
main (int   argc,
      char *argv[])
{
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#if MEND_HAS_AGENTS
  g_test_add_func ("/Mend/AttackLayers/chat-dropped-on-a-worker-notifies-the-agent-on-its-thread",
                   test_chat_dropped_on_a_worker_notifies_the_agent_on_its_thread);
  g_test_add_func ("/Mend/AttackLayers/notify-chat-handler-makes-the-next-chat-as-one-goes",
                   test_notify_chat_handler_makes_the_next_chat_as_one_goes);
  g_test_add_func ("/Mend/AttackLayers/notify-chat-handler-makes-a-second-chat-as-one-attaches",
                   test_notify_chat_handler_makes_a_second_chat_as_one_attaches);
  g_test_add_func ("/Mend/AttackLayers/chat-disposed-early-lets-the-next-chat-take-the-agent",
                   test_chat_disposed_early_lets_the_next_chat_take_the_agent);
  g_test_add_func ("/Mend/AttackLayers/agent-observer-outlives-its-agent",
                   test_agent_observer_outlives_its_agent);
  g_test_add_func ("/Mend/AttackLayers/lone-turns-on-one-agent", test_lone_turns_on_one_agent);
#endif
  g_test_add_func ("/Mend/AttackLayers/app-observer-fed-after-its-chat-was-disposed",
                   test_app_observer_fed_after_its_chat_was_disposed);
  g_test_add_func ("/Mend/AttackLayers/chat-record-handler-drops-the-chat",
                   test_chat_record_handler_drops_the_chat);
  g_test_add_func ("/Mend/AttackLayers/retry-record-handler-drops-the-chat",
                   test_retry_record_handler_drops_the_chat);
  g_test_add_func ("/Mend/AttackLayers/resume-held-during-the-agents-own-turn",
                   test_resume_held_during_the_agents_own_turn);
  g_test_add ("/Mend/AttackLayers/answer-is-set-before-turn-finished", AnswerFixture, NULL,
              answer_fixture_set_up, test_answer_is_set_before_turn_finished, answer_fixture_tear_down);
  g_test_add ("/Mend/AttackLayers/answer-handler-drops-the-chat", AnswerFixture, NULL,
              answer_fixture_set_up, test_answer_handler_drops_the_chat, answer_fixture_tear_down);
  g_test_add ("/Mend/AttackLayers/send-finish-never-called", AnswerFixture, NULL,
              answer_fixture_set_up, test_send_finish_never_called, answer_fixture_tear_down);

  return g_test_run ();
}
