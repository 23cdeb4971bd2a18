/* test-agent-life.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The life of an agent's child process, for both agent senders
 * (MendAgentProcess and MendAcpAgent), against tests/support/hostile-child-agent.py:
 * an agent that exits while a process it started holds its output, one that
 * ignores SIGTERM, one that ends its own tools on SIGTERM, one that forks and
 * exits without end. Waits between attempts are virtual (a MendManualClock);
 * the processes run in real time, under a watchdog.
 */

#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <libmend.h>

#include "mend-agent-child-private.h"
#include "mend-test-utils.h"

#ifndef MEND_TEST_PYTHON
# define MEND_TEST_PYTHON "/usr/bin/python3"
#endif

#define WALL_START 1764500000000000
#define WATCHDOG_SECONDS 20
/* Short, so that the tests that wait for SIGKILL stay quick. */
#define TEST_GRACE_MS 300

typedef struct
{
  MendClock *clock;
  MendAgent *agent;
  MendChat  *chat;
  char      *dir;
  gint64     deadline;
} Fixture;

typedef gboolean (*Check) (Fixture *f);

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->dir = g_dir_make_tmp ("mend-agent-life-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->deadline = g_get_monotonic_time () + (gint64) mend_test_real_time (WATCHDOG_SECONDS) * G_USEC_PER_SEC;
}

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Runs the loop until @check holds; the processes are real, so the loop
 * is woken every few milliseconds to look at their files. */
static void
run_until (Fixture *f,
           Check    check)
{
  guint id = g_timeout_add (5, wake, NULL);

  while (!check (f))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, f->deadline);
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (id);
}

static gboolean
closes_done (Fixture *f)
{
  return mend_agent_child_get_n_closing () == 0;
}

static gboolean
has_file (Fixture    *f,
          const char *name)
{
  g_autofree char *path = g_build_filename (f->dir, name, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static gboolean
is_ready (Fixture *f)
{
  return has_file (f, "ready");
}

static gboolean
turn_left_running (Fixture *f)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);

  return turn == NULL || mend_turn_get_state (turn) != MEND_TURN_RUNNING;
}

static pid_t
read_pid (Fixture    *f,
          const char *name)
{
  g_autofree char *path = g_build_filename (f->dir, name, NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return (pid_t) g_ascii_strtoll (text, NULL, 10);
}

/* A process's state and group, from /proc: FALSE once it is reaped. */
static gboolean
read_stat (const char *pid,
           char       *state,
           int        *ppid,
           int        *pgrp)
{
  g_autofree char *path = g_build_filename ("/proc", pid, "stat", NULL);
  g_autofree char *stat = NULL;
  const char *end;

  return g_file_get_contents (path, &stat, NULL, NULL) &&
         (end = strrchr (stat, ')')) != NULL &&
         sscanf (end + 1, " %c %d %d", state, ppid, pgrp) == 3;
}

/* Dead: reaped, or a zombie that its new parent has not reaped yet. */
static gboolean
process_is_dead (pid_t pid)
{
  g_autofree char *name = g_strdup_printf ("%d", (int) pid);
  char state;
  int ppid, pgrp;

  return !read_stat (name, &state, &ppid, &pgrp) || state == 'Z';
}

typedef enum
{
  LIVE_IN_GROUP,
  ZOMBIE_CHILDREN,
} Count;

static guint
count_processes (Count what,
                 pid_t group)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint n = 0;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      char state;
      int ppid, pgrp;

      if (!g_ascii_isdigit (name[0]) || !read_stat (name, &state, &ppid, &pgrp))
        continue;
      if (what == LIVE_IN_GROUP ? pgrp == group && state != 'Z'
                                : ppid == getpid () && state == 'Z')
        n++;
    }

  return n;
}

/* Children of this process that died and were not reaped. */
static guint
count_zombies (void)
{
  return count_processes (ZOMBIE_CHILDREN, 0);
}

/* No child of this process left unreaped. GLib reaps an agent on its
 * worker thread when the kernel reports the exit, a moment after the
 * group is gone: the count is taken once that moment is over. */
static guint
count_zombies_settled (void)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) mend_test_real_time (5) * G_USEC_PER_SEC;
  guint n;

  while ((n = count_zombies ()) > 0 && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return n;
}

/* After SIGKILL, the kernel takes a moment to end a group. */
static void
wait_group_gone (Fixture *f,
                 pid_t    group)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) mend_test_real_time (5) * G_USEC_PER_SEC;

  while (count_processes (LIVE_IN_GROUP, group) > 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_usleep (1000);
    }
}

static void
start_chat (Fixture    *f,
            GType       type,
            const char *behaviour,
            guint       grace_ms)
{
  const char *argv[] = {
    MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/hostile-child-agent.py",
    type == MEND_TYPE_AGENT_PROCESS ? "stream-json" : "acp", behaviour, f->dir, NULL
  };
  g_autoptr(GError) error = NULL;

  f->agent = g_object_new (type, "argv", argv, "terminate-grace-ms", grace_ms, NULL);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "sender", f->agent, NULL);
  g_assert_true (mend_chat_submit (f->chat, "Go", NULL, &error));
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(GFile) dir = g_file_new_for_path (f->dir);
  g_autoptr(GFileEnumerator) children = g_file_enumerate_children (dir, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                                                   G_FILE_QUERY_INFO_NONE, NULL, NULL);
  GFileInfo *info;

  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      g_assert_finalize_object (f->chat);
    }
  if (f->agent != NULL)
    g_assert_finalize_object (f->agent);
  /* Whatever a test left running is ended before the next starts. */
  run_until (f, closes_done);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (f->clock);

  while (children != NULL && (info = g_file_enumerator_next_file (children, NULL, NULL)) != NULL)
    {
      g_autofree char *path = g_build_filename (f->dir, g_file_info_get_name (info), NULL);

      g_unlink (path);
      g_object_unref (info);
    }
  g_rmdir (f->dir);
  g_free (f->dir);
}

static void
assert_attempt_failed_as_transport (Fixture *f)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);
  MendFailure *failure;

  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_WAITING);
  failure = mend_turn_get_last_failure (turn);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
}

/* The agent exits while a process it forked keeps its output open for five
 * minutes: the attempt fails at the agent's exit, the forked process ends
 * with the run, and the next attempt starts the agent again. */
static void
test_exit_with_a_grandchild_holding_stdout (Fixture       *f,
                                            gconstpointer  data)
{
  GType type = GPOINTER_TO_SIZE (data);
  pid_t tool;

  start_chat (f, type, "grandchild", TEST_GRACE_MS);
  run_until (f, turn_left_running);
  assert_attempt_failed_as_transport (f);
  g_assert_false (mend_agent_get_running (f->agent));

  tool = read_pid (f, "tool.pid");
  run_until (f, closes_done);
  wait_group_gone (f, read_pid (f, "agent.pid"));
  g_assert_true (process_is_dead (tool));
  g_assert_cmpuint (count_zombies_settled (), ==, 0);

  /* Started again, as any agent that exited. */
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, turn_left_running);
  g_assert_cmpuint (mend_agent_get_n_starts (f->agent), ==, 2);
  assert_attempt_failed_as_transport (f);
}

/* The agent and its tool ignore SIGTERM: both are killed after the grace
 * period, and the attempt failed at once. */
static void
test_sigterm_ignored_is_killed_after_the_grace (Fixture       *f,
                                                gconstpointer  data)
{
  GType type = GPOINTER_TO_SIZE (data);
  pid_t agent;
  pid_t tool;
  gint64 terminated_at;

  start_chat (f, type, "ignore-term", TEST_GRACE_MS);
  run_until (f, is_ready);
  agent = read_pid (f, "agent.pid");
  g_assert_cmpint (agent, ==, g_ascii_strtoll (mend_agent_get_identifier (f->agent), NULL, 10));
  tool = read_pid (f, "tool.pid");

  terminated_at = g_get_monotonic_time ();
  mend_agent_terminate (f->agent);
  run_until (f, turn_left_running);
  assert_attempt_failed_as_transport (f);
  /* They ignored it: alive until the grace period is over. */
  g_assert_false (process_is_dead (tool));

  run_until (f, closes_done);
  g_assert_cmpint (g_get_monotonic_time () - terminated_at, >=, TEST_GRACE_MS * 1000);
  wait_group_gone (f, agent);
  g_assert_true (process_is_dead (tool));
  g_assert_cmpuint (count_zombies_settled (), ==, 0);
}

/* The agent ends its own tool on SIGTERM and exits: it got SIGTERM, not
 * SIGKILL, and nothing waits for the (long) grace period. */
static void
test_sigterm_lets_the_agent_end_its_tools (Fixture       *f,
                                           gconstpointer  data)
{
  GType type = GPOINTER_TO_SIZE (data);
  pid_t tool;

  start_chat (f, type, "term-children", 60 * 1000);
  run_until (f, is_ready);
  tool = read_pid (f, "tool.pid");

  mend_agent_terminate (f->agent);
  run_until (f, turn_left_running);
  assert_attempt_failed_as_transport (f);
  run_until (f, closes_done);
  g_assert_true (has_file (f, "term"));
  wait_group_gone (f, read_pid (f, "agent.pid"));
  g_assert_true (process_is_dead (tool));
  g_assert_cmpuint (count_zombies_settled (), ==, 0);
}

/* An agent that forks and exits again and again: its first exit ends the
 * run, and the whole group is killed, however many it forked. */
static void
test_fork_and_exit_in_a_loop_is_ended (Fixture       *f,
                                       gconstpointer  data)
{
  GType type = GPOINTER_TO_SIZE (data);

  start_chat (f, type, "fork-loop", TEST_GRACE_MS);
  run_until (f, turn_left_running);
  assert_attempt_failed_as_transport (f);

  run_until (f, closes_done);
  /* It forked on while the grace period ran; then the group was killed. */
  g_assert_true (is_ready (f));
  wait_group_gone (f, read_pid (f, "agent.pid"));
  g_assert_cmpuint (count_zombies_settled (), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  static const struct
  {
    const char *name;
    GType     (*get_type) (void);
  } senders[] = {
    { "stream-json", mend_agent_process_get_type },
#if MEND_HAS_ACP
    { "acp", mend_acp_agent_get_type },
#endif
  };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (senders); i++)
    {
      gpointer type = GSIZE_TO_POINTER (senders[i].get_type ());
      g_autofree char *p1 = g_strdup_printf ("/Mend/AgentLife/%s/exit-with-a-grandchild-holding-stdout-ends-the-attempt", senders[i].name);
      g_autofree char *p2 = g_strdup_printf ("/Mend/AgentLife/%s/sigterm-ignored-is-killed-after-the-grace", senders[i].name);
      g_autofree char *p3 = g_strdup_printf ("/Mend/AgentLife/%s/sigterm-lets-the-agent-end-its-tools", senders[i].name);
      g_autofree char *p4 = g_strdup_printf ("/Mend/AgentLife/%s/fork-and-exit-in-a-loop-is-ended", senders[i].name);

      g_test_add (p1, Fixture, type, fixture_set_up, test_exit_with_a_grandchild_holding_stdout, fixture_tear_down);
      g_test_add (p2, Fixture, type, fixture_set_up, test_sigterm_ignored_is_killed_after_the_grace, fixture_tear_down);
      g_test_add (p3, Fixture, type, fixture_set_up, test_sigterm_lets_the_agent_end_its_tools, fixture_tear_down);
      g_test_add (p4, Fixture, type, fixture_set_up, test_fork_and_exit_in_a_loop_is_ended, fixture_tear_down);
    }

  return g_test_run ();
}
