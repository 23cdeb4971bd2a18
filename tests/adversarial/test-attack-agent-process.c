/* test-attack-agent-process.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAgentProcess, the stream-json agent, against a CLI that writes on
 * its standard error without end, one that writes its JSON with escapes
 * no writer needs, and a handler that ends the agent as it starts. The
 * attacks on MendAcpAgent are in test-attack-acp.c.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000
#define WATCHDOG_S 20

static gboolean
tick (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Runs @turn while it runs, @deadline at most (monotonic time); the most
 * resident memory seen meanwhile in *@most, unless NULL. */
static void
run_turn (MendTurn *turn,
          gint64    deadline,
          gsize    *most)
{
  guint ticker = g_timeout_add (20, tick, NULL);

  while (mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
      if (most != NULL)
        *most = MAX (*most, mend_test_resident_bytes ());
    }
  g_source_remove (ticker);
}

/* Closes @chat, ends @agent, and sees every object finalized: @turns
 * (NULL-terminated) too. */
static void
close_all (MendChat         *chat,
           MendAgentProcess *agent,
           MendClock        *clock,
           MendTurn         *turns[])
{
  mend_chat_close (chat);
  mend_agent_terminate (MEND_AGENT (agent));
  g_assert_finalize_object (chat);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  for (guint i = 0; turns[i] != NULL; i++)
    g_assert_finalize_object (turns[i]);
  g_assert_finalize_object (agent);
  g_assert_finalize_object (clock);
}

/* A CLI that runs @script (sh) answers the one prompt of a chat: the turn
 * succeeds. Returns how much the resident memory grew meanwhile, at most. */
static gsize
run_cli_script (const char *script)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = mend_agent_process_new (argv);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  gsize before = mend_test_resident_bytes ();
  gsize most = before;
  MendTurn *turns[2] = { NULL, NULL };

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  turns[0] = g_object_ref (mend_chat_get_turn (chat));
  run_turn (turns[0], g_get_monotonic_time () + 3 * WATCHDOG_S * G_USEC_PER_SEC, &most);
  g_assert_cmpint (mend_turn_get_state (turns[0]), ==, MEND_TURN_SUCCEEDED);

  close_all (chat, agent, clock, turns);
  return most - before;
}

#define INIT_LINE "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}'; "
#define RESULT_LINE \
  "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Done\",\"session_id\":\"s1\"}'; "

/* MendAgentProcess: a CLI that answers, then writes on its standard
 * error without end. Its standard error is read a bounded amount at a
 * time: the loop goes on, and the result is read. */
static void
test_process_stderr_without_end (void)
{
  run_cli_script ("read line; " INIT_LINE RESULT_LINE "exec yes 'an endless complaint' >&2");
}

/* MendAgentProcess: a handler of the start's notifications ends the
 * agent again, before the prompt is written: the attempt fails as a
 * dropped connection, and the retry starts the agent. */
static void
on_process_running_terminate (MendAgentProcess *agent,
                              GParamSpec       *pspec,
                              gboolean         *done)
{
  if (!*done && mend_agent_get_running (MEND_AGENT (agent)))
    {
      *done = TRUE;
      mend_agent_terminate (MEND_AGENT (agent));
    }
}

static void
test_process_running_handler_terminates (void)
{
  const char *argv[] = {
    "/bin/sh", "-c",
    "while read line; do "
    "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}'; "
    "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
    "\"result\":\"Done\",\"session_id\":\"s1\"}'; "
    "done",
    NULL
  };
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = mend_agent_process_new (argv);
  MendChat *chat = NULL;
  gint64 deadline = g_get_monotonic_time () + WATCHDOG_S * G_USEC_PER_SEC;
  guint ticker = g_timeout_add (20, tick, NULL);
  gboolean done = FALSE;
  MendTurn *turn;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, "sender", agent, NULL);
  g_signal_connect (agent, "notify::running", G_CALLBACK (on_process_running_terminate), &done);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  turn = g_object_ref (mend_chat_get_turn (chat));
  while (mend_turn_get_state (turn) == MEND_TURN_RUNNING || mend_turn_get_state (turn) == MEND_TURN_WAITING)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      if (!g_main_context_iteration (NULL, FALSE))
        {
          if (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (clock)) > 0)
            mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (clock));
          else
            g_main_context_iteration (NULL, TRUE);
        }
    }
  g_source_remove (ticker);
  g_assert_true (done);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 2);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (agent)), ==, 2);

  g_signal_handlers_disconnect_by_data (agent, &done);
  close_all (chat, agent, clock, (MendTurn *[]) { turn, NULL });
}

/* MendAgentProcess: a CLI that writes a line of 256 MiB before its
 * result. The line is past the 16 MiB an agent's line is kept to, and is
 * skipped: memory stays bounded, and the result after it is read. */
static void
test_process_endless_line (void)
{
  gsize grew = run_cli_script ("read line; " INIT_LINE "head -c 268435456 /dev/zero | tr '\\0' x; echo; "
                               RESULT_LINE "exec cat >/dev/null");

  /* 16 MiB kept, and under AddressSanitizer the buffers it freed on the
   * way there; not the 256 MiB line. */
  g_test_message ("resident memory grew by %" G_GSIZE_FORMAT " kB", grew / 1024);
  g_assert_cmpuint (grew, <, 128 * 1024 * 1024);
}

/* A CLI that writes each letter of its strings as a \u escape, as JSON
 * allows: "type":"result" as "\u0074\u0079\u0070\u0065":"\u0072…".
 * The first prompt hangs until interrupted, then the interrupted turn's
 * result reads like a success; the second prompt is answered. Each
 * prompt read is appended to $PROMPTS. */
static const char escaping_agent[] =
  "import json, os, re, sys\n"
  "def w(o):\n"
  "    text = json.dumps(o, separators=(',', ':'))\n"
  "    text = re.sub(r'\"(?:[^\"\\\\]|\\\\.)*\"',\n"
  "                  lambda m: re.sub('[A-Za-z]', lambda c: '\\\\u%04x' % ord(c.group()), m.group()), text)\n"
  "    sys.stdout.write(text + '\\n'); sys.stdout.flush()\n"
  "log = open(os.environ['PROMPTS'], 'a')\n"
  "for line in sys.stdin:\n"
  "    m = json.loads(line)\n"
  "    if m.get('type') == 'control_request':\n"
  "        w({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'interrupted', 'session_id': 's-1'})\n"
  "        continue\n"
  "    if m.get('type') != 'user':\n"
  "        continue\n"
  "    text = m['message']['content']\n"
  "    log.write(text + '\\n'); log.flush()\n"
  "    w({'type': 'system', 'subtype': 'init', 'session_id': 's-1'})\n"
  "    if 'hang' in text:\n"
  "        continue\n"
  "    w({'type': 'result', 'subtype': 'success', 'is_error': False, 'result': 'answer', 'session_id': 's-1'})\n";

static char *
prompts_read (const char *path)
{
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return g_strdup ("");
  return contents;
}

/* After a Stop, the interrupted turn's result spelled with escapes is
 * still told from the next prompt's: the next prompt is sent, and
 * succeeds on its own answer; and the first turn's end was read at all. */
static void
test_process_escaped_result_after_a_stop (void)
{
  const char *argv[] = { MEND_TEST_PYTHON, "-c", escaping_agent, NULL };
  g_autofree char *path = g_build_filename (g_get_home_dir (), "prompts", NULL);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendAgentProcess *agent = mend_agent_process_new (argv);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, NULL);
  gint64 deadline = g_get_monotonic_time () + WATCHDOG_S * G_USEC_PER_SEC;
  guint ticker = g_timeout_add (20, tick, NULL);
  g_autofree char *read = NULL;
  MendTurn *turns[3] = { NULL, NULL, NULL };

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  mend_agent_setenv (MEND_AGENT (agent), "PROMPTS", path);
  g_assert_true (mend_chat_submit (chat, "hang on", NULL, NULL));
  turns[0] = g_object_ref (mend_chat_get_turn (chat));
  for (;;)
    {
      g_autofree char *so_far = prompts_read (path);

      if (strstr (so_far, "hang on") != NULL)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (ticker);
  mend_chat_stop (chat);
  g_assert_cmpint (mend_turn_get_state (turns[0]), ==, MEND_TURN_STOPPED);

  g_assert_true (mend_chat_submit (chat, "ok then", NULL, NULL));
  turns[1] = g_object_ref (mend_chat_get_turn (chat));
  run_turn (turns[1], deadline, NULL);

  read = prompts_read (path);
  g_assert_cmpint (mend_turn_get_state (turns[1]), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (read, ==, "hang on\nok then\n");

  close_all (chat, agent, clock, turns);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/AttackAgentProcess/stderr-without-end-does-not-hold-up-the-result",
                   test_process_stderr_without_end);
  g_test_add_func ("/Mend/AttackAgentProcess/running-notify-handler-terminate-fails-the-attempt",
                   test_process_running_handler_terminates);
  g_test_add_func ("/Mend/AttackAgentProcess/line-of-256-mib-is-skipped-in-bounded-memory",
                   test_process_endless_line);
  g_test_add_func ("/Mend/AttackAgentProcess/escaped-result-after-a-stop-keeps-the-next-prompt",
                   test_process_escaped_result_after_a_stop);

  return g_test_run ();
}
