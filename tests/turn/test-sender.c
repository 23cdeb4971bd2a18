/* test-sender.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end: the same chat code, unchanged, with each of libmend's three
 * senders in front of the same scripted model server
 * (tests/support/model-server.py on 127.0.0.1): MendHttpSender straight at its
 * /v1/messages, MendAgentProcess running the real Claude Code CLI in
 * stream-json mode, and MendAcpAgent running the real claude-code-acp
 * adapter. The agents' own retries are off (CLAUDE_CODE_MAX_RETRIES=0), so
 * that each of libmend's attempts is one model request whatever the
 * sender; libmend's waits run in virtual time. A missing CLI or adapter
 * skips these tests, or fails them with MEND_REQUIRE_AGENTS=1, as CI sets:
 * both are part of the build's setup.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"

/* The scripted model server (tests/support/mend-test-agents.c). */
typedef MendTestModelServer ModelServer;

#define WALL_START 1764500000000000

#define FIRST "Fix the build"
#define FOLLOW_UP "Then update the changelog"

/* The model's answers, the same for every sender. The rules' indexes are
 * what mend_test_model_server_n_answered() counts. */
enum { RULE_529, RULE_FOLLOW_UP, RULE_FIRST };

#define RULES_529_TWICE \
  "[{\"match\": \"" FIRST "\", \"times\": 2, \"answer\": {\"kind\": \"status\", \"status\": 529}}," \
  " {\"match\": \"" FOLLOW_UP "\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Changelog updated.\"}}," \
  " {\"match\": \"" FIRST "\", \"times\": 0, \"answer\": {\"kind\": \"text\", \"text\": \"Build fixed.\"}}]"

#define RULES_401 \
  "[{\"match\": null, \"times\": 0, \"answer\": {\"kind\": \"status\", \"status\": 401}}]"

typedef struct
{
  MendClock   *clock;
  ModelServer  server;
  MendSender  *sender;
  MendChat    *chat;
  GPtrArray   *finished;        /* MendTurn, owned */
  GPtrArray   *records;         /* char *, owned */
  gint64       started_us;      /* virtual, when the first prompt went in */
  guint        n_turns;         /* how many turns play() waits for */
  guint        n_kept;          /* retry steps that found the follow-up queued */
} Fixture;

/* What differs between the senders: how each is made. Nothing else: the
 * chat attaches itself to any of them. */

typedef struct
{
  const char  *name;
  MendSender *(*make)   (const char *base_url);
} SenderKind;

static MendSender *
make_http_sender (const char *base_url)
{
  g_autofree char *uri = g_strconcat (base_url, "/v1/messages", NULL);

  return MEND_SENDER (mend_http_sender_new (uri));
}

static MendSender *
make_agent_process (const char *base_url)
{
  g_autofree char *cli = mend_test_claude_code_cli_find ();

  return cli != NULL ? MEND_SENDER (mend_test_claude_code_process_new (cli, base_url, 0)) : NULL;
}

#if MEND_HAS_ACP
static MendSender *
make_acp_agent (const char *base_url)
{
  g_autofree char *adapter = mend_test_claude_code_acp_find ();

  return adapter != NULL ? MEND_SENDER (mend_test_claude_code_acp_agent_new (adapter, base_url)) : NULL;
}
#endif

static const SenderKind http_sender = { "http", make_http_sender };
static const SenderKind agent_process = { "agent-process", make_agent_process };
#if MEND_HAS_ACP
static const SenderKind acp_agent = { "acp", make_acp_agent };
#endif

/* The fixture: the same for every sender */

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->clock = mend_manual_clock_new (WALL_START);
  f->finished = g_ptr_array_new ();
  f->records = g_ptr_array_new_with_free_func (g_free);
  g_test_timer_start ();
}

static gboolean
start_chat (Fixture          *f,
            const SenderKind *kind,
            const char       *rules)
{
  g_autofree char *base_url = NULL;

  mend_test_model_server_start (&f->server, rules);
  base_url = mend_test_model_server_dup_base_url (&f->server);
  f->sender = kind->make (base_url);
  if (f->sender == NULL)
    return FALSE;

  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "id", "chat-any-sender",
                          "clock", f->clock,
                          "sender", f->sender,
                          NULL);
  return TRUE;
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  const SenderKind *kind = data;

  g_test_message ("%s: %.1f s in real time, %" G_GINT64_FORMAT " ms of libmend's waits in virtual time",
                  kind->name, g_test_timer_elapsed (),
                  (mend_clock_get_monotonic_time (f->clock) - f->started_us) / 1000);

  if (f->chat != NULL)
    {
      g_autofree char *err = mend_test_agent_dup_stderr (f->sender);

      if (err != NULL)
        g_test_message ("The agent's stderr: %s", err);
      mend_chat_close (f->chat);
      g_assert_finalize_object (f->chat);
    }

  mend_test_model_server_stop (&f->server);

  /* Let what the sender's streams left behind finish. */
  while (g_main_context_iteration (NULL, FALSE))
    ;

  /* The turns hold their sender. */
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  /* Disposing an agent ends its process. */
  if (f->sender != NULL)
    mend_test_finalize_eventually (f->sender);
  g_ptr_array_unref (f->records);
  g_assert_finalize_object (f->clock);
}

/* The chat code: one function for every sender */

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_record (MendChat   *chat,
           const char *json,
           Fixture    *f)
{
  g_test_message ("record: %s", json);
  g_ptr_array_add (f->records, g_strdup (json));

  /* Through every wait and every retry, the chat stays busy and the
   * follow-up stays queued, alone. */
  if (strstr (json, "\"outcome\":\"scheduled\"") != NULL || strstr (json, "\"outcome\":\"fired\"") != NULL)
    {
      g_autofree char *head = mend_test_queue_head (chat);

      g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_BUSY);
      g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);
      g_assert_cmpstr (head, ==, FOLLOW_UP);
      f->n_kept++;
    }
}

static gboolean
n_turns_finished (gpointer      fixture,
                  gconstpointer data)
{
  Fixture *f = fixture;

  return f->finished->len >= f->n_turns;
}

/* Only libmend's retry waits run ahead in virtual time: MendHttpSender's
 * per-attempt timeout is on the same clock, and must not pass while the
 * server answers in real time. */
static gboolean
turn_is_waiting (gpointer      fixture,
                 gconstpointer data)
{
  Fixture *f = fixture;
  MendTurn *turn = mend_chat_get_turn (f->chat);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_WAITING;
}

/* Submits a prompt and a follow-up that queues behind it, and runs until
 * @n_turns turns finished: the agent and the server in real time,
 * libmend's retry waits in virtual time. */
static void
play (Fixture  *f,
      MendChat *chat,
      guint     n_turns)
{
  g_autoptr(GError) error = NULL;

  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect (chat, "record", G_CALLBACK (on_record), f);

  f->started_us = mend_clock_get_monotonic_time (f->clock);
  g_assert_true (mend_chat_submit (chat, FIRST, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (mend_chat_submit (chat, FOLLOW_UP, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_BUSY);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);

  f->n_turns = n_turns;
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), turn_is_waiting, mend_chat_get_sender (chat),
                             n_turns_finished, f, NULL, "the turns to finish");

  g_signal_handlers_disconnect_by_data (chat, f);
}

static MendTurn *
finished (Fixture *f,
          guint    i)
{
  g_assert_cmpuint (i, <, f->finished->len);
  return g_ptr_array_index (f->finished, i);
}

/* Two 529s, then the answer: the turn succeeds at its third attempt after
 * two of libmend's waits (250 and 500 ms, plus up to 250 ms of jitter
 * each), the follow-up waits through them all and runs second. */
static void
test_529_twice_then_success (Fixture       *f,
                             gconstpointer  data)
{
  MendTurn *turn;
  MendFailure *failure;
  MendVerdict *verdict;
  gint64 waited_ms;

  if (!start_chat (f, data, RULES_529_TWICE))
    return;
  play (f, f->chat, 2);

  turn = finished (f, 0);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, FIRST);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 3);
  failure = mend_turn_get_last_failure (turn);
  g_assert_nonnull (failure);
  g_test_message ("the 529: %s", mend_failure_get_message (failure));
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpuint (mend_failure_get_status (failure), ==, 529);
  g_assert_cmpstr (mend_failure_get_api_error_type (failure), ==, "overloaded_error");
  g_assert_false (mend_failure_get_partial (failure));
  verdict = mend_turn_get_last_verdict (turn);
  g_assert_nonnull (verdict);
  g_assert_cmpint (mend_verdict_get_kind (verdict), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpuint (mend_verdict_get_attempt (verdict), ==, 2);
  g_assert_cmpint (mend_verdict_get_delay_ms (verdict), >=, 500);
  g_assert_cmpint (mend_verdict_get_delay_ms (verdict), <=, 750);

  turn = finished (f, 1);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, FOLLOW_UP);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  g_assert_null (mend_turn_get_last_failure (turn));
  g_assert_true (mend_turn_get_output_seen (turn));

  /* libmend's own two waits, in virtual time. */
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "scheduled"), ==, 2);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "fired"), ==, 2);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "exhausted"), ==, 0);
  g_assert_cmpuint (f->n_kept, ==, 4);
  waited_ms = (mend_clock_get_monotonic_time (f->clock) - f->started_us) / 1000;
  g_assert_cmpint (waited_ms, >=, 250 + 500);
  g_assert_cmpint (waited_ms, <=, 250 + 500 + 2 * 250);

  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 0);

  /* One request per attempt: three for the first prompt, one for the
   * follow-up. */
  g_assert_cmpuint (mend_test_model_server_n_answered (&f->server, RULE_529), ==, 2);
  g_assert_cmpuint (mend_test_model_server_n_answered (&f->server, RULE_FIRST), ==, 1);
  g_assert_cmpuint (mend_test_model_server_n_answered (&f->server, RULE_FOLLOW_UP), ==, 1);
  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 4);
}

/* A bad key: one attempt, no wait, the turn FAILED with a permanent
 * verdict; the chat gives up and keeps the follow-up, behind "Continue
 * the current turn". */
static void
test_401_is_one_attempt (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(MendQueueItem) second = NULL;
  g_autofree char *head = NULL;
  MendTurn *turn;
  MendFailure *failure;
  MendVerdict *verdict;

  if (!start_chat (f, data, RULES_401))
    return;
  play (f, f->chat, 1);

  turn = finished (f, 0);
  g_assert_cmpstr (mend_turn_get_prompt (turn), ==, FIRST);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (mend_turn_get_attempt (turn), ==, 1);
  failure = mend_turn_get_last_failure (turn);
  g_assert_nonnull (failure);
  g_test_message ("the 401: %s", mend_failure_get_message (failure));
  /* The reason is common to all; the status and the API's error type are
   * not: claude-code-acp answers a 401 with only the CLI's words
   * ("Internal error: Invalid API key · Fix external API key"), where
   * MendHttpSender has the response and the CLI's result names both. */
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_AUTH);
  g_test_message ("status %u, API error type %s", mend_failure_get_status (failure),
                  mend_failure_get_api_error_type (failure));
  verdict = mend_turn_get_last_verdict (turn);
  g_assert_nonnull (verdict);
  g_assert_true (mend_verdict_get_failure (verdict) == failure);
  g_assert_cmpint (mend_verdict_get_kind (verdict), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (mend_verdict_get_attempt (verdict), ==, 1);

  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "scheduled"), ==, 0);
  g_assert_cmpuint (mend_test_count_records (f->records, "turn_retry", "fired"), ==, 0);
  g_assert_cmpuint (mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock)), ==, 0);
  g_assert_cmpint (mend_clock_get_monotonic_time (f->clock), ==, f->started_us);

  /* Nothing was promoted: the follow-up is still queued, Continue in
   * front of it. */
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 2);
  head = mend_test_queue_head (f->chat);
  g_assert_cmpstr (head, ==, mend_chat_get_continue_prompt (f->chat));
  second = g_list_model_get_item (G_LIST_MODEL (mend_chat_get_queue (f->chat)), 1);
  g_assert_cmpstr (mend_queue_item_get_text (second), ==, FOLLOW_UP);

  g_assert_cmpuint (mend_test_model_server_n_requests (&f->server), ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  const SenderKind *kinds[] = {
    &http_sender, &agent_process,
#if MEND_HAS_ACP
    &acp_agent,
#endif
  };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  /* The senders and the request counts go over loopback: no proxy. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *p529 = g_strdup_printf ("/Mend/AnySender/%s/529-twice-then-success-keeps-the-follow-up",
                                               kinds[i]->name);
      g_autofree char *p401 = g_strdup_printf ("/Mend/AnySender/%s/401-is-one-attempt-and-keeps-the-follow-up",
                                               kinds[i]->name);

      g_test_add (p529, Fixture, kinds[i], fixture_set_up, test_529_twice_then_success, fixture_tear_down);
      g_test_add (p401, Fixture, kinds[i], fixture_set_up, test_401_is_one_attempt, fixture_tear_down);
    }

  return g_test_run ();
}
