/* real-acp-fixture.h — a chat over MendAcpAgent running a real ACP agent against tests/model-server.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the end-to-end tests of the ACP agents other than
 * claude-code-acp (test-gemini-acp, test-codex-acp, test-claude-agent-acp):
 * each names its agent (how to find it, how to launch it offline against
 * the scripted server: real-agent-common.c) and the defects it is known to
 * have, and runs the same scenarios. The agent and the server run in real
 * time, libmend's retry waits in virtual time; every object is finalized
 * at the end. A missing agent skips the tests, unless MEND_REQUIRE_AGENTS=1.
 */

#pragma once

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "real-agent-common.h"

#include "mend-acp-agent-private.h"

#define WALL_START 1764500000000000

#define HELLO "Say hello"
#define HELLO_ANSWER "Hello from the stub."
#define FIRST "Fix the build"
#define FIRST_ANSWER "Build fixed."
#define SECOND "Then update the changelog"
#define SECOND_ANSWER "Changelog updated."

typedef struct _Fixture Fixture;

typedef struct
{
  const char    *name;          /* the tests' path: /Mend/<name>/… */
  char         *(*find) (void);
  MendAcpAgent *(*make) (const char *path,
                         const char *base_url);
  /* When the 503-twice turn finished as a known defect of the agent has
   * it finish: the defect, named; otherwise NULL. */
  const char   *(*defect_503_twice) (Fixture  *f,
                                     MendTurn *turn);
  /* The agent's own checks of that turn, when it went as it should
   * (nullable). */
  void          (*check_503_twice)  (Fixture  *f,
                                     MendTurn *turn);
  /* The agent answers the prompt after a failed one at once with an
   * end_turn and no output (claude-agent-acp 0.23.1): libmend reads it
   * as an empty response and tries again, so the turn's last failure is
   * that empty response. */
  gboolean        false_end_turn_after_failure;
} RealAcpAgent;

struct _Fixture
{
  MendClock    *clock;
  MendChat     *chat;
  MendAcpAgent *agent;
  ModelServer   server;
  GPtrArray    *finished;       /* MendTurn, owned */
  GPtrArray    *records;        /* char *, owned */
  GString      *text;           /* the agent_message_chunk texts: what the app shows */
  guint         n_updates;
  gint64        waiting_since_us; /* real time, when a turn began its wait */
};

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Fixture       *f)
{
  f->waiting_since_us = g_get_monotonic_time ();
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Fixture  *f)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), f);
}

static void
on_record (MendChat   *chat,
           const char *json,
           Fixture    *f)
{
  g_test_message ("record: %s", json);
  g_ptr_array_add (f->records, g_strdup (json));
}

/* What an app renders: the text of each message chunk. */
static void
on_update (MendAcpAgent *agent,
           const char   *kind,
           const char   *json,
           Fixture      *f)
{
  g_autoptr(JsonNode) node = NULL;
  JsonObject *content;

  f->n_updates++;
  if (g_strcmp0 (kind, "agent_message_chunk") != 0)
    return;

  node = json_from_string (json, NULL);
  g_assert_nonnull (node);
  content = json_object_get_object_member (json_node_get_object (node), "content");
  if (content != NULL && g_strcmp0 (json_object_get_string_member_with_default (content, "type", NULL), "text") == 0)
    g_string_append (f->text, json_object_get_string_member_with_default (content, "text", ""));
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->clock = mend_manual_clock_new (WALL_START);
  f->finished = g_ptr_array_new ();
  f->records = g_ptr_array_new_with_free_func (g_free);
  f->text = g_string_new (NULL);
  g_test_timer_start ();
}

/* The server with @rules, the agent, and a chat with the agent as its
 * sender; FALSE (the test skipped or failed) when the agent is missing. */
static gboolean
start_chat (Fixture            *f,
            const RealAcpAgent *kind,
            const char         *rules)
{
  g_autofree char *path = kind->find ();
  g_autofree char *base_url = NULL;

  if (path == NULL)
    return FALSE;

  model_server_start (&f->server, rules);
  base_url = model_server_dup_base_url (&f->server);
  f->agent = kind->make (path, base_url);
  g_signal_connect (f->agent, "update", G_CALLBACK (on_update), f);

  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "id", "chat-acp",
                          "clock", f->clock,
                          "sender", f->agent,
                          NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect (f->chat, "record", G_CALLBACK (on_record), f);
  return TRUE;
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  const RealAcpAgent *kind = data;

  g_test_message ("%s: %.1f s in real time", kind->name, g_test_timer_elapsed ());

  if (f->chat != NULL)
    {
      g_autofree char *err = mend_agent_dup_stderr (MEND_AGENT (f->agent));

      if (err != NULL)
        g_test_message ("The agent's stderr: %s", err);
      mend_chat_close (f->chat);
      mend_agent_terminate (MEND_AGENT (f->agent));
      g_assert_false (mend_agent_get_running (MEND_AGENT (f->agent)));
      g_signal_handlers_disconnect_by_data (f->chat, f);
      g_signal_handlers_disconnect_by_data (f->agent, f);
      g_assert_finalize_object (f->chat);
    }

  model_server_stop (&f->server);

  /* Let what the agent's streams left behind finish. */
  while (g_main_context_iteration (NULL, FALSE))
    ;

  /* The turns hold their sender. */
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  if (f->agent != NULL)
    finalize_eventually (f->agent);
  g_ptr_array_unref (f->records);
  g_string_free (f->text, TRUE);
  g_assert_finalize_object (f->clock);
}

/* Only libmend's retry waits run ahead in virtual time, each once it has
 * taken REAL_AGENT_MIN_WAIT_MS of real time. */
static gboolean
turn_is_waiting (gpointer      fixture,
                 gconstpointer data)
{
  Fixture *f = fixture;
  MendTurn *turn = mend_chat_get_turn (f->chat);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_WAITING &&
         g_get_monotonic_time () - f->waiting_since_us >= REAL_AGENT_MIN_WAIT_MS * 1000;
}

static gboolean
n_finished_is (gpointer      fixture,
               gconstpointer data)
{
  Fixture *f = fixture;

  return f->finished->len >= GPOINTER_TO_UINT (data);
}

/* Submits @prompt and runs until its turn finished. */
static MendTurn *
play (Fixture    *f,
      const char *prompt)
{
  g_autoptr(GError) error = NULL;

  guint n = f->finished->len + 1;

  g_assert_true (mend_chat_submit (f->chat, prompt, NULL, &error));
  g_assert_no_error (error);
  real_agent_run_until (MEND_MANUAL_CLOCK (f->clock), turn_is_waiting, MEND_SENDER (f->agent),
                        n_finished_is, f, GUINT_TO_POINTER (n), "the turn to finish");
  return g_ptr_array_index (f->finished, n - 1);
}

/* A prompt, answered: the app sees the model's text, in one attempt and
 * one model request. */
static void
test_prompt_is_answered (Fixture       *f,
                         gconstpointer  data)
{
  MendTurn *turn;

  if (!start_chat (f, data,
                   "[{\"match\": \"" HELLO "\", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" HELLO_ANSWER "\"}}]"))
    return;

  turn = play (f, HELLO);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, HELLO);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_null (mend_turn_get_last_failure (turn));
  g_assert_true (mend_turn_get_output_seen (turn));
  g_assert_cmpstr (f->text->str, ==, HELLO_ANSWER);
  g_assert_cmpstr (mend_acp_agent_get_stop_reason (f->agent), ==, "end_turn");
  g_assert_nonnull (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_cmpuint (model_server_n_requests (&f->server), ==, 1);
  g_assert_cmpuint (real_agent_count_records (f->records, "turn_retry", "scheduled"), ==, 0);
}

/* The rules' indexes, which model_server_n_answered() counts. */
enum { RULE_503, RULE_ANSWER };

/* Two 503s, then the answer: with the agent's own retries off, each of
 * libmend's attempts is one model request, and the third succeeds in the
 * same process and session, after two of libmend's waits. */
static void
test_503_twice_then_success (Fixture       *f,
                             gconstpointer  data)
{
  const RealAcpAgent *kind = data;
  g_autofree char *session = NULL;
  const char *defect;
  MendFailure *failure;
  MendTurn *turn;

  if (!start_chat (f, kind,
                   "[{\"match\": \"" FIRST "\", \"times\": 2, \"answer\": {\"kind\": \"status\", \"status\": 503}},"
                   " {\"match\": \"" FIRST "\", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" FIRST_ANSWER "\"}}]"))
    return;

  turn = play (f, FIRST);
  failure = mend_turn_get_last_failure (turn);
  g_test_message ("attempt %u, %s; the 503 over ACP: %s", mend_turn_get_attempt (turn),
                  mend_turn_get_state (turn) == MEND_TURN_SUCCEEDED ? "succeeded" : "did not succeed",
                  failure ? mend_failure_get_message (failure) : "(no failure)");
  g_test_message ("model requests: %u (503: %u, answer: %u); the text seen: \"%s\"",
                  model_server_n_requests (&f->server), model_server_n_answered (&f->server, RULE_503),
                  model_server_n_answered (&f->server, RULE_ANSWER), f->text->str);

  defect = kind->defect_503_twice ? kind->defect_503_twice (f, turn) : NULL;
  if (defect != NULL)
    {
      g_test_incomplete (defect);
      return;
    }

  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 3);
  g_assert_nonnull (failure);
  g_assert_cmpint (mend_failure_get_reason (failure), ==,
                   kind->false_end_turn_after_failure ? MEND_REASON_EMPTY : MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_true (mend_turn_get_output_seen (turn));
  g_assert_cmpstr (f->text->str, ==, FIRST_ANSWER);
  g_assert_cmpstr (mend_acp_agent_get_stop_reason (f->agent), ==, "end_turn");

  /* libmend's own two waits, in virtual time. */
  g_assert_cmpuint (real_agent_count_records (f->records, "turn_retry", "scheduled"), ==, 2);
  g_assert_cmpuint (real_agent_count_records (f->records, "turn_retry", "fired"), ==, 2);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);

  /* One model request per attempt: the chat's, which the rules answer. */
  g_assert_cmpuint (model_server_n_answered (&f->server, RULE_503), ==, 2);
  g_assert_cmpuint (model_server_n_answered (&f->server, RULE_ANSWER), ==, 1);
  g_assert_cmpuint (model_server_n_requests (&f->server), ==, 3);

  /* One process, one session, all along; an agent that ended a prompt
   * falsely was started again once, and loaded the same session. */
  session = g_strdup (mend_agent_get_session_id (MEND_AGENT (f->agent)));
  g_assert_nonnull (session);
  g_assert_cmpuint (mend_agent_get_n_starts (MEND_AGENT (f->agent)), ==,
                    kind->false_end_turn_after_failure ? 2 : 1);
  g_assert_cmpuint (mend_acp_agent_get_n_loads (f->agent), ==, kind->false_end_turn_after_failure ? 1 : 0);

  if (kind->check_503_twice != NULL)
    kind->check_503_twice (f, turn);
}

/* A turn that a 503 failed once, then a follow-up: each gets its own
 * answer, none the other's or an empty one (an agent whose answers
 * shifted by a prompt after a failure would give the follow-up the first
 * one's). */
static void
test_follow_up_after_a_failure_gets_its_own_answer (Fixture       *f,
                                                    gconstpointer  data)
{
  const RealAcpAgent *kind = data;
  MendTurn *first, *second;

  if (!start_chat (f, kind,
                   "[{\"match\": \"" FIRST "\", \"times\": 1, \"answer\": {\"kind\": \"status\", \"status\": 503}},"
                   " {\"match\": \"" FIRST "\", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" FIRST_ANSWER "\"}},"
                   " {\"match\": \"" SECOND "\", \"times\": 0,"
                   "  \"answer\": {\"kind\": \"text\", \"text\": \"" SECOND_ANSWER "\"}}]"))
    return;

  first = play (f, FIRST);
  g_test_message ("first: attempt %u, text \"%s\"", mend_turn_get_attempt (first), f->text->str);
  g_assert_cmpint (mend_turn_get_state (first), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (f->text->str, ==, FIRST_ANSWER);

  g_string_truncate (f->text, 0);
  second = play (f, SECOND);
  g_test_message ("second: attempt %u, text \"%s\"", mend_turn_get_attempt (second), f->text->str);
  g_assert_cmpint (mend_turn_get_state (second), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (f->text->str, ==, SECOND_ANSWER);
  g_assert_cmpuint (mend_turn_get_attempt (second), ==, 1);
}

/* Registers the scenarios for @kind. */
static void
real_acp_add_tests (const RealAcpAgent *kind)
{
  g_autofree char *answered = g_strdup_printf ("/Mend/%s/prompt-is-answered-with-the-model-text", kind->name);
  g_autofree char *twice = g_strdup_printf ("/Mend/%s/503-twice-then-success-on-the-third-attempt", kind->name);
  g_autofree char *follow_up = g_strdup_printf ("/Mend/%s/follow-up-after-a-failure-gets-its-own-answer", kind->name);

  g_test_add (answered, Fixture, kind, fixture_set_up, test_prompt_is_answered, fixture_tear_down);
  g_test_add (twice, Fixture, kind, fixture_set_up, test_503_twice_then_success, fixture_tear_down);
  g_test_add (follow_up, Fixture, kind, fixture_set_up, test_follow_up_after_a_failure_gets_its_own_answer,
              fixture_tear_down);
}

/* The tests' environment: loopback without proxies, settings in memory. */
static void
real_acp_init (int    *argc,
               char ***argv)
{
  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
}
