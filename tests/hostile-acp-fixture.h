/* hostile-acp-fixture.h — a chat whose sender is tests/hostile-acp-agent.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the tests that attack MendAcpAgent: the chat runs on a
 * virtual clock, the agent in real time; every turn finished, update
 * emitted and wait's failure is kept; the agent's log of what it read and
 * its number of starts are files in the test's home. Every object is
 * finalized at the end.
 */

#pragma once

#include <string.h>

#include <libmend.h>

#include "real-agent-common.h"

#define WALL_START 1764500000000000
#define GRACE_MS 200

#define CHUNK(text) "{'update': {'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': '" text "'}}}"
/* The model's answer, then the prompt's end: a prompt that ends with no
 * answer is an empty response. */
#define ANSWER_END_TURN "{'answer': {'stopReason': 'end_turn'}}"
#define END_TURN CHUNK ("Done.") ", " ANSWER_END_TURN
#define PERMISSION \
  "{'send': {'jsonrpc': '2.0', 'id': 'perm-1', 'method': 'session/request_permission', 'params': {" \
  "  'sessionId': '$SESSION', 'toolCall': {'toolCallId': 'toolu_1', 'title': 'rm -rf build'}," \
  "  'options': [{'optionId': 'yes', 'name': 'Allow', 'kind': 'allow_once'}," \
  "              {'optionId': 'no', 'name': 'Reject', 'kind': 'reject_once'}]}}}"
/* Claude Code's answer to a prompt when the model is overloaded, as
 * claude-code-acp 0.16.2 sent it (docs: REAL-AGENTS.md). */
#define OVERLOADED \
  "{'error': {'code': -32603, 'message': 'Internal error: API Error: 529 {\\'type\\':\\'error\\'," \
  "\\'error\\':{\\'type\\':\\'overloaded_error\\',\\'message\\':\\'Overloaded\\'}}'}}"

typedef enum
{
  ACT_NONE,
  ACT_STOP,
  ACT_CLOSE,
  ACT_TERMINATE,
  ACT_UNREF,
  ACT_SUBMIT,
  ACT_SET_PROFILE,
} Action;

typedef struct
{
  MendClock    *clock;
  MendChat     *chat;
  MendAcpAgent *agent;
  GPtrArray    *finished;       /* MendTurn, owned */
  GPtrArray    *updates;        /* char *, "kind json", owned */
  GPtrArray    *failures;       /* MendFailure of the waits, owned */
  char         *log;            /* what the agent read */
  char         *count;          /* its number of starts */
  guint         held_request;   /* a request the test answers */
  guint         n_requests;
  Action        action;         /* what a re-entrant handler does, once */
} Fixture;

static inline void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static inline void
on_update (MendAcpAgent *agent,
           const char   *kind,
           const char   *json,
           Fixture      *f)
{
  g_ptr_array_add (f->updates, g_strdup_printf ("%s %s", kind, json));
}

static inline void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Fixture       *f)
{
  g_ptr_array_add (f->failures, g_object_ref (mend_retry_wait_get_failure (wait)));
}

static inline void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Fixture  *f)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), f);
}

static inline void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->clock = mend_manual_clock_new (WALL_START);
  f->finished = g_ptr_array_new ();
  f->updates = g_ptr_array_new_with_free_func (g_free);
  f->failures = g_ptr_array_new_with_free_func (g_object_unref);
  f->log = g_build_filename (g_get_home_dir (), "agent.log", NULL);
  f->count = g_build_filename (g_get_home_dir (), "agent.count", NULL);
}

/* @script is JSON with ' for " (the texts in it have no apostrophe). */
static inline void
start_chat (Fixture    *f,
            const char *script)
{
  g_autofree char *path = g_build_filename (g_get_home_dir (), "script.json", NULL);
  g_autofree char *json = g_strdelimit (g_strdup (script), "'", '"');
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(GError) error = NULL;
  const char *argv[] = { MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/hostile-acp-agent.py", path, NULL };

  g_assert_true (g_file_set_contents (path, json, -1, &error));
  g_assert_no_error (error);

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  f->agent = mend_acp_agent_new (argv);
  mend_agent_setenv (MEND_AGENT (f->agent), "MEND_HOSTILE_ACP_LOG", f->log);
  mend_agent_setenv (MEND_AGENT (f->agent), "MEND_HOSTILE_ACP_COUNT", f->count);
  mend_agent_set_cwd (MEND_AGENT (f->agent), g_get_home_dir ());
  mend_acp_agent_set_cancel_grace_ms (f->agent, GRACE_MS);
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update), f);
  f->chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-attack-acp", "clock", f->clock,
                          "policy", policy, "sender", f->agent, NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
}


static inline void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      g_signal_handlers_disconnect_by_data (f->chat, f);
    }
  if (f->agent != NULL)
    {
      mend_agent_terminate (MEND_AGENT (f->agent));
      g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
      g_signal_handlers_disconnect_by_data (f->agent, f);
    }
  if (f->chat != NULL)
    g_assert_finalize_object (f->chat);

  while (g_main_context_iteration (NULL, FALSE))
    ;

  for (guint i = 0; i < f->finished->len; i++)
    {
      g_signal_handlers_disconnect_by_data (g_ptr_array_index (f->finished, i), f);
      g_assert_finalize_object (g_ptr_array_index (f->finished, i));
    }
  g_ptr_array_unref (f->finished);
  g_ptr_array_unref (f->failures);
  if (f->agent != NULL)
    finalize_eventually (f->agent);
  g_ptr_array_unref (f->updates);
  g_free (f->log);
  g_free (f->count);
  g_assert_finalize_object (f->clock);
}

typedef gboolean (*Predicate) (Fixture *f, gconstpointer data);

/* Real time for the agent; libmend's waits fire in virtual time when
 * nothing else is left to do. */
static inline void
run_until (Fixture       *f,
           Predicate      done,
           gconstpointer  data)
{
  real_agent_run_until (MEND_MANUAL_CLOCK (f->clock), real_agent_always, MEND_SENDER (f->agent),
                        (RealAgentCheck) done, f, data, "the agent");
}

static inline gboolean
n_finished_is (Fixture       *f,
               gconstpointer  data)
{
  return f->finished->len >= GPOINTER_TO_UINT (data);
}

static inline gboolean
not_running (Fixture       *f,
             gconstpointer  data)
{
  return !mend_agent_get_running (MEND_AGENT (f->agent));
}

static inline gboolean
log_has (Fixture       *f,
         gconstpointer  data)
{
  g_autofree char *contents = NULL;

  return g_file_get_contents (f->log, &contents, NULL, NULL) && strstr (contents, data) != NULL;
}

static inline guint
log_count (Fixture    *f,
           const char *text)
{
  g_autofree char *contents = NULL;
  guint n = 0;

  if (!g_file_get_contents (f->log, &contents, NULL, NULL))
    return 0;
  for (const char *p = strstr (contents, text); p != NULL; p = strstr (p + 1, text))
    n++;
  return n;
}

static inline MendTurn *
finished (Fixture *f,
          guint    i)
{
  g_assert_cmpuint (i, <, f->finished->len);
  return g_ptr_array_index (f->finished, i);
}

static inline void
submit (Fixture    *f,
        const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (f->chat, text, NULL, &error));
  g_assert_no_error (error);
}

static inline guint
count_updates (Fixture    *f,
               const char *containing)
{
  guint n = 0;

  for (guint i = 0; i < f->updates->len; i++)
    n += strstr (g_ptr_array_index (f->updates, i), containing) != NULL;
  return n;
}

/* One turn against @script; returns it once finished. */
static inline MendTurn *
run_one_turn (Fixture    *f,
              const char *script)
{
  start_chat (f, script);
  submit (f, "Fix the build");
  run_until (f, n_finished_is, GUINT_TO_POINTER (1));
  return finished (f, 0);
}
