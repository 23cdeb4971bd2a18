/* test-agent-process.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAgentProcess with small agents of the test's own making (a shell
 * line, the fake Claude Code in fake-agent.py): what a dying agent leaves
 * in the failure, the bounds on its standard error, an agent that cannot
 * start. The real CLI is in test-claude-code.c.
 */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <glib/gstdio.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000

typedef struct
{
  MendClock        *clock;
  MendChat         *chat;
  MendAgentProcess *agent;
  GPtrArray        *finished;   /* MendTurn, owned */
} Fixture;

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->finished = g_ptr_array_new ();
}

static void
start_chat (Fixture            *f,
            const char * const *argv)
{
  f->agent = mend_agent_process_new (argv);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "sender", f->agent, NULL);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
}

/* Closes the chat, ends its agent, and finalizes the chat and its turns. */
static void
end_chat (Fixture *f)
{
  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      mend_agent_terminate (MEND_AGENT (f->agent));
      g_signal_handlers_disconnect_by_data (f->chat, f);
      g_assert_finalize_object (g_steal_pointer (&f->chat));
    }
  while (g_main_context_iteration (NULL, FALSE))
    ;
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_set_size (f->finished, 0);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  end_chat (f);
  g_ptr_array_unref (f->finished);
  if (f->agent != NULL)
    g_assert_finalize_object (f->agent);
  g_assert_finalize_object (f->clock);
}

/* Runs the loop until the turn leaves RUNNING, with a watchdog. */
static void
run_attempt (Fixture  *f,
             MendTurn *turn)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  while (mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
}

static MendTurn *
submit (Fixture    *f,
        const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (f->chat, text, NULL, &error));
  g_assert_no_error (error);
  return mend_chat_get_turn (f->chat);
}

/* The agent dies at its first prompt, saying why on stderr: the attempt
 * fails as a dropped connection, with those words. */
static void
test_dying_agent_fails_the_attempt_with_its_stderr (Fixture       *f,
                                                    gconstpointer  data)
{
  const char *argv[] = { "/bin/sh", "-c", "read line; echo 'fatal: the model is gone' >&2; exit 3", NULL };
  MendTurn *turn;
  MendFailure *failure;

  start_chat (f, argv);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  failure = mend_turn_get_last_failure (turn);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "fatal: the model is gone"));
  g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
  g_assert_null (mend_agent_get_identifier (MEND_AGENT (f->agent)));

  /* The retry starts the agent again. */
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
  mend_chat_stop (f->chat);
}

/* Standard error is kept to its last bytes, and credentials in it are not
 * repeated. */
static void
test_stderr_is_bounded_and_redacted (Fixture       *f,
                                     gconstpointer  data)
{
  const char *argv[] = {
    "/bin/sh", "-c",
    "read line; i=0; while [ $i -lt 2000 ]; do echo 'noise noise noise noise noise' >&2; i=$((i+1)); done; "
    "echo 'key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 refused' >&2; exit 1",
    NULL
  };
  g_autofree char *text = NULL;
  MendTurn *turn;

  start_chat (f, argv);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);

  text = mend_agent_dup_stderr (MEND_AGENT (f->agent));
  g_assert_nonnull (text);
  g_assert_cmpuint (strlen (text), <=, MEND_AGENT_PROCESS_STDERR_MAX_BYTES);
  g_assert_nonnull (strstr (text, "refused"));
  g_assert_null (strstr (text, "abcdefghijklmnopqrstuvwxyz0123456789"));
  g_assert_null (strstr (mend_failure_get_message (mend_turn_get_last_failure (turn)),
                         "abcdefghijklmnopqrstuvwxyz0123456789"));
  mend_chat_stop (f->chat);
}

/* A key the agent was given, written on standard error where the
 * shown tail's cut falls inside it: the tail is redacted before it is
 * cut, so that no piece of the key is shown. */
#define CUT_KEY "q8Zr3xV0pL9wT2mN5bK7cutKEYsecondHALF0123456"

static void
test_stderr_cut_inside_a_key_shows_none_of_it (Fixture       *f,
                                               gconstpointer  data)
{
  /* After the key's 20th byte, exactly the tail's size. */
  g_autofree char *script = g_strdup_printf ("read line; head -c 5000 /dev/zero | tr '\\0' n >&2; "
                                             "printf '%%s\\n' \"$KEY\" >&2; "
                                             "head -c %u /dev/zero | tr '\\0' t >&2; exit 1",
                                             (guint) (MEND_AGENT_STDERR_MAX_BYTES - (strlen (CUT_KEY) - 20) - 1));
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autofree char *text = NULL;
  MendTurn *turn;

  start_chat (f, argv);
  mend_agent_setenv (MEND_AGENT (f->agent), "ANTHROPIC_API_KEY", CUT_KEY);
  mend_agent_setenv (MEND_AGENT (f->agent), "KEY", CUT_KEY);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);

  text = mend_agent_dup_stderr (MEND_AGENT (f->agent));
  g_assert_nonnull (text);
  g_assert_cmpuint (strlen (text), <=, MEND_AGENT_STDERR_MAX_BYTES);
  g_assert_null (strstr (text, "secondHALF"));
  g_assert_null (strstr (mend_failure_get_message (mend_turn_get_last_failure (turn)), "secondHALF"));
  mend_chat_stop (f->chat);
}

/* An agent that writes its JSON with spaces after the colons and commas
 * (Python's json.dumps): the first prompt hangs until interrupted, and
 * the interrupted turn's result reads like a success; the second prompt
 * fails with a 529 after a tool call, or, with "ok" in it, succeeds.
 * Each prompt read is appended to $PROMPTS. */
static const char spaced_agent[] =
  "import json, os, sys\n"
  "def w(o):\n"
  "    sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()\n"
  "log = open(os.environ['PROMPTS'], 'a')\n"
  "n = 0\n"
  "for line in sys.stdin:\n"
  "    m = json.loads(line)\n"
  "    if m.get('type') == 'control_request':\n"
  "        w({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'interrupted', 'session_id': 's-1'})\n"
  "        continue\n"
  "    if m.get('type') != 'user':\n"
  "        continue\n"
  "    n += 1\n"
  "    text = m['message']['content']\n"
  "    log.write(text + '\\n'); log.flush()\n"
  "    w({'type': 'system', 'subtype': 'init', 'session_id': 's-1'})\n"
  "    if 'hang' in text:\n"
  "        continue\n"
  "    if 'ok' in text:\n"
  "        w({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'answer ' + text, 'session_id': 's-1'})\n"
  "        continue\n"
  "    w({'type': 'assistant', 'message': {'model': 'claude-sonnet-4-5', 'role': 'assistant', 'content': [\n"
  "        {'type': 'tool_use', 'id': 'toolu_1', 'name': 'Bash', 'input': {'command': 'make'}}]}, 'session_id': 's-1'})\n"
  "    w({'type': 'result', 'subtype': 'success', 'is_error': True, 'api_error_status': 529,\n"
  "       'result': 'API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}',\n"
  "       'session_id': 's-1'})\n";

static char *
prompts_read (void)
{
  g_autofree char *path = g_build_filename (g_get_home_dir (), "prompts", NULL);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return g_strdup ("");
  return contents;
}

static void
start_spaced_agent (Fixture *f)
{
  const char *argv[] = { MEND_TEST_PYTHON, "-c", spaced_agent, NULL };
  g_autofree char *path = g_build_filename (g_get_home_dir (), "prompts", NULL);

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  start_chat (f, argv);
  mend_agent_setenv (MEND_AGENT (f->agent), "PROMPTS", path);
}

/* After a Stop, the interrupted turn's result is told from the next
 * prompt's by reading it as JSON, not by its bytes: the next prompt is
 * sent, and succeeds on its own answer. */
static void
test_spaced_json_stop_keeps_the_next_prompt (Fixture       *f,
                                             gconstpointer  data)
{
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  MendTurn *first;
  MendTurn *second;
  g_autofree char *read = NULL;

  start_spaced_agent (f);
  first = submit (f, "hang on");
  for (;;)
    {
      g_autofree char *so_far = prompts_read ();

      if (strstr (so_far, "hang on") != NULL)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
  mend_chat_stop (f->chat);
  g_assert_cmpint (mend_turn_get_state (first), ==, MEND_TURN_STOPPED);

  second = submit (f, "ok then");
  run_attempt (f, second);

  read = prompts_read ();
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_SUCCEEDED);
  g_assert_nonnull (strstr (read, "ok then"));
}

/* A tool call in an assistant message written with spaces is output:
 * the 529 after it fails the turn as partial, and the attempt is not
 * replayed (the tool would run again). */
static void
test_spaced_json_tool_call_is_output (Fixture       *f,
                                      gconstpointer  data)
{
  g_autofree char *read = NULL;
  MendTurn *turn;

  start_spaced_agent (f);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);

  read = prompts_read ();
  g_assert_true (mend_turn_get_output_seen (turn));
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_true (mend_failure_get_partial (mend_turn_get_last_failure (turn)));
  g_assert_cmpstr (read, ==, "Fix the build\n");
}

/* An agent that opens session s-42 (or goes on with the one it is
 * resumed on) and answers each prompt; its command line is appended to
 * $ARGV_LOG. */
static const char session_agent[] =
  "import json, os, sys\n"
  "open(os.environ['ARGV_LOG'], 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
  "session = sys.argv[sys.argv.index('--resume') + 1] if '--resume' in sys.argv else 's-42'\n"
  "for line in sys.stdin:\n"
  "    print(json.dumps({'type': 'system', 'subtype': 'init', 'session_id': session}), flush=True)\n"
  "    print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'Done.',\n"
  "                      'session_id': session}), flush=True)\n";

static MendChat *
session_chat (Fixture *f)
{
  const char *argv[] = { MEND_TEST_PYTHON, "-c", session_agent, "-", NULL };
  g_autofree char *log = g_build_filename (g_get_home_dir (), "argv", NULL);

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  start_chat (f, argv);
  mend_agent_process_set_resume_option (f->agent, "--resume");
  mend_agent_setenv (MEND_AGENT (f->agent), "ARGV_LOG", log);
  return f->chat;
}

/* The chat's saved state keeps its agent's session: a chat restored from
 * it in front of a new agent process resumes that session. */
static void
test_saved_state_keeps_the_session (Fixture       *f,
                                    gconstpointer  data)
{
  g_autofree char *state = NULL;
  g_autofree char *log = g_build_filename (g_get_home_dir (), "argv", NULL);
  g_autofree char *argv_log = NULL;
  g_autoptr(GError) error = NULL;
  MendTurn *turn;

  session_chat (f);
  turn = submit (f, "First");
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "s-42");
  state = mend_chat_save_state (f->chat);
  g_assert_nonnull (strstr (state, "s-42"));

  /* The app ends, and starts again. */
  end_chat (f);
  mend_test_finalize_eventually (g_steal_pointer (&f->agent));

  session_chat (f);
  g_assert_null (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_true (mend_chat_restore_state (f->chat, state, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "s-42");

  turn = submit (f, "Second");
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_true (g_file_get_contents (log, &argv_log, NULL, NULL));
  g_assert_cmpstr (argv_log, ==, "-\n- --resume s-42\n");

  /* A sender state that names no session is refused, and changes nothing. */
  g_assert_false (mend_sender_restore_state (MEND_SENDER (f->agent), "{\"sessionId\": 42}", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpstr (mend_agent_get_session_id (MEND_AGENT (f->agent)), ==, "s-42");
  mend_chat_stop (f->chat);
}

/* A program that does not exist cannot be made to work by retrying. */
static void
test_missing_program_gives_up (Fixture       *f,
                               gconstpointer  data)
{
  const char *argv[] = { "/nonexistent/claude", "-p", NULL };
  MendTurn *turn;

  start_chat (f, argv);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 0);
}

/* The fake Claude Code answers in stream-json: the result ends the
 * attempt, the session id is kept, and a second turn goes to the same
 * process. */
static void
test_fake_agent_turns_share_a_process (Fixture       *f,
                                       gconstpointer  data)
{
  const char *argv[] = { MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/fake-agent.py", "turn-529", NULL };
  MendTurn *turn;

  start_chat (f, argv);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);
  /* The fake's first attempt meets a 529. */
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpuint (mend_failure_get_status (mend_turn_get_last_failure (turn)), ==, 529);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_nonnull (mend_agent_get_session_id (MEND_AGENT (f->agent)));

  turn = submit (f, "Then update the changelog");
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
  g_assert_true (mend_agent_get_running (MEND_AGENT (f->agent)));
}

/* The chat attaches itself to the agent it is given as its sender: no
 * more wiring, and the agent lets go when the chat goes. */
static void
test_the_chat_attaches_itself (Fixture       *f,
                               gconstpointer  data)
{
  const char *argv[] = { MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/fake-agent.py", "turn-529", NULL };
  MendChat *chat;
  MendTurn *turn;

  start_chat (f, argv);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (f->agent)) == f->chat);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);
  /* The result line reached the chat's turn through the host alone. */
  g_assert_cmpuint (mend_failure_get_status (mend_turn_get_last_failure (turn)), ==, 529);

  chat = g_steal_pointer (&f->chat);
  mend_chat_close (chat);
  mend_agent_terminate (MEND_AGENT (f->agent));
  g_signal_handlers_disconnect_by_data (chat, f);
  g_assert_finalize_object (chat);
  g_assert_null (mend_agent_get_chat (MEND_AGENT (f->agent)));
}

/* A turn run by the agent with no chat at all still gets its result. */
static void
test_a_turn_without_a_chat_runs (Fixture       *f,
                                 gconstpointer  data)
{
  const char *argv[] = { MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/fake-agent.py", "turn-529", NULL };
  g_autoptr(MendTurn) turn = NULL;

  f->agent = mend_agent_process_new (argv);
  turn = g_object_new (MEND_TYPE_TURN, "prompt", "Fix the build", "clock", f->clock,
                       "sender", f->agent, NULL);
  mend_turn_start (turn, NULL);
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  g_assert_cmpuint (mend_failure_get_status (mend_turn_get_last_failure (turn)), ==, 529);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  mend_agent_terminate (MEND_AGENT (f->agent));
  g_assert_finalize_object (g_steal_pointer (&turn));
}

/* The agent dies at the first prompt; a handler of the turn's end (it gave
 * up: no retries) submits the next turn at once, which the agent started
 * again answers. The end of the first agent's output is not that turn's. */
static void
on_finished_submit_again (MendChat *chat,
                          MendTurn *turn,
                          Fixture  *f)
{
  if (f->finished->len == 1)
    g_assert_true (mend_chat_submit (chat, "Then the changelog", NULL, NULL));
}

static void
test_turn_started_from_the_exit_failure_is_not_failed_by_it (Fixture       *f,
                                                            gconstpointer  data)
{
  g_autofree char *dir = g_dir_make_tmp ("mend-agent-process-XXXXXX", NULL);
  g_autofree char *script = g_strdup_printf (
    "n=$(cat '%s/n' 2>/dev/null || echo 0); echo $((n + 1)) > '%s/n';"
    "if [ \"$n\" = 0 ]; then read line; exit 3; fi;"
    "while read line; do echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\"}'; done",
    dir, dir);
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autofree char *counter = g_build_filename (dir, "n", NULL);
  MendTurn *second;

  mend_error_policy_set_max_retries (policy, 0);
  f->agent = mend_agent_process_new (argv);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "sender", f->agent, "policy", policy, NULL);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect_after (f->chat, "turn-finished", G_CALLBACK (on_finished_submit_again), f);

  run_attempt (f, submit (f, "Fix the build"));
  g_assert_cmpuint (f->finished->len, ==, 1);
  g_assert_cmpint (mend_turn_get_state (g_ptr_array_index (f->finished, 0)), ==, MEND_TURN_FAILED);
  second = mend_chat_get_turn (f->chat);
  g_assert_nonnull (second);
  run_attempt (f, second);
  g_assert_cmpuint (f->finished->len, ==, 2);
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);

  g_unlink (counter);
  g_rmdir (dir);
}

/* An agent's output feeds one chat: a second chat made with it is refused,
 * and the first keeps it. */
static void
test_second_chat_is_refused (Fixture       *f,
                             gconstpointer  data)
{
  const char *argv[] = { "/bin/cat", NULL };
  MendChat *other;

  start_chat (f, argv);
  g_test_expect_message (G_LOG_DOMAIN, G_LOG_LEVEL_CRITICAL, "*one chat at a time*");
  other = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "sender", f->agent, NULL);
  g_test_assert_expected_messages ();
  g_assert_true (mend_agent_get_chat (MEND_AGENT (f->agent)) == f->chat);
  g_assert_finalize_object (other);
  g_assert_true (mend_agent_get_chat (MEND_AGENT (f->agent)) == f->chat);
}

/* SIGPIPE's disposition now. */
static gboolean
sigpipe_is_default (void)
{
  struct sigaction action;

  g_assert_no_errno (sigaction (SIGPIPE, NULL, &action));
  return action.sa_handler == SIG_DFL;
}

/* Submits the next prompt from inside the first turn's end: the chat
 * starts it as its queue moves on, in the same dispatch, before the loop
 * has read that the agent's output ended. */
static void
submit_next_at_once (MendChat *chat,
                     MendTurn *turn,
                     gboolean *submitted)
{
  if (*submitted)
    return;

  g_assert_true (sigpipe_is_default ());
  g_assert_true (mend_chat_submit (chat, "Then update the changelog", NULL, NULL));
  *submitted = TRUE;
}

/* The agent stops reading its input, answers, and exits; the next
 * prompt's write meets a closed input. Written to a pipe, it would raise
 * SIGPIPE, whose default action ends this process: the agent's input is
 * a socket, and the write fails as an error. The attempt fails as a
 * dropped connection, and the retry starts the agent again. */
static void
test_agent_gone_before_the_next_write (Fixture       *f,
                                       gconstpointer  data)
{
  const char *argv[] = {
    "/bin/sh", "-c",
    "read line; exec 0<&-; "
    "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}'; "
    "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
    "\"result\":\"Done\",\"session_id\":\"s1\"}'",
    NULL
  };
  gboolean submitted = FALSE;
  MendTurn *turn;
  MendTurn *next;

  /* GIO ignores SIGPIPE for the whole process once it makes its first
   * socket: the test undoes that, so that a write raising SIGPIPE kills it. */
  g_type_class_unref (g_type_class_ref (G_TYPE_SOCKET));
  signal (SIGPIPE, SIG_DFL);

  start_chat (f, argv);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (submit_next_at_once), &submitted);
  turn = submit (f, "Fix the build");
  run_attempt (f, turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_true (submitted);
  g_signal_handlers_disconnect_by_func (f->chat, submit_next_at_once, &submitted);

  /* The next turn's prompt went to the agent that had stopped reading:
   * not to one started anew. */
  next = mend_chat_get_turn (f->chat);
  g_assert_nonnull (next);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);
  run_attempt (f, next);
  g_assert_true (sigpipe_is_default ());
  g_assert_cmpint (mend_turn_get_state (next), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (next)), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 1);

  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_attempt (f, next);
  g_assert_cmpint (mend_turn_get_state (next), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==, 2);
}

static void
test_claude_code_preset (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(MendAgentProcess) agent = mend_agent_process_new_claude_code (NULL);
  const char * const *argv = mend_agent_get_argv (MEND_AGENT (agent));
  g_autofree char *joined = g_strjoinv (" ", (char **) argv);

  g_assert_cmpstr (joined, ==, "claude -p --input-format stream-json --output-format stream-json --verbose");
  g_assert_cmpstr (mend_agent_process_get_resume_option (agent), ==, "--resume");
  g_assert_null (mend_agent_get_environ (MEND_AGENT (agent)));
  g_assert_false (mend_agent_get_running (MEND_AGENT (agent)));

  mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_MAX_RETRIES", "2");
  g_assert_cmpstr (g_environ_getenv ((char **) mend_agent_get_environ (MEND_AGENT (agent)),
                                     "CLAUDE_CODE_MAX_RETRIES"), ==, "2");
  mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_MAX_RETRIES", NULL);
  g_assert_null (g_environ_getenv ((char **) mend_agent_get_environ (MEND_AGENT (agent)),
                                   "CLAUDE_CODE_MAX_RETRIES"));
  g_assert_finalize_object (g_steal_pointer (&agent));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/Mend/AgentProcess/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("dying-agent-fails-the-attempt-with-its-stderr", test_dying_agent_fails_the_attempt_with_its_stderr);
  ADD ("stderr-is-bounded-and-redacted", test_stderr_is_bounded_and_redacted);
  ADD ("stderr-cut-inside-a-key-shows-none-of-it", test_stderr_cut_inside_a_key_shows_none_of_it);
  ADD ("spaced-json-stop-keeps-the-next-prompt", test_spaced_json_stop_keeps_the_next_prompt);
  ADD ("spaced-json-tool-call-is-output", test_spaced_json_tool_call_is_output);
  ADD ("saved-state-keeps-the-session", test_saved_state_keeps_the_session);
  ADD ("missing-program-gives-up", test_missing_program_gives_up);
  ADD ("fake-agent-turns-share-a-process", test_fake_agent_turns_share_a_process);
  ADD ("the-chat-attaches-itself", test_the_chat_attaches_itself);
  ADD ("a-turn-without-a-chat-runs", test_a_turn_without_a_chat_runs);
  ADD ("turn-started-from-the-exit-failure-is-not-failed-by-it", test_turn_started_from_the_exit_failure_is_not_failed_by_it);
  ADD ("second-chat-is-refused", test_second_chat_is_refused);
  ADD ("claude-code-preset", test_claude_code_preset);
  ADD ("agent-gone-before-the-next-write-is-no-sigpipe", test_agent_gone_before_the_next_write);

#undef ADD

  return g_test_run ();
}
