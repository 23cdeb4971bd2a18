/* test-agent-matrix.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One matrix: the same chat scenarios, played by the same chat code,
 * through six senders in front of tests/support/model-server.py on 127.0.0.1 —
 * MendHttpSender straight at the Messages API, MendAgentProcess running
 * the Claude Code CLI, and MendAcpAgent running claude-code-acp,
 * claude-agent-acp, Gemini CLI (`gemini --acp`) and codex-acp, each
 * against its own provider's API (the launch recipes are
 * mend-test-agents.c's). The agents run in real time with their own
 * retries off (but in the one scenario about them), libmend's waits in
 * virtual time.
 *
 * The test watches as an app does: the chat's turn-started, waiting,
 * turn-finished and record signals, the queue, the sender's text (where
 * the sender shows any), the turn's agent status. What every cell must
 * show is written in matrix_expected[] (sender × scenario, in
 * agent-matrix-table.c); docs/agents.md has the same table. A cell that libmend gets wrong keeps its correct
 * expectation and names the defect: it is reported incomplete, with what
 * was seen. A cell a sender cannot show says why and is skipped, or, where
 * it plays but cannot tell two cases apart, says which way libmend errs
 * and expects exactly that.
 *
 * Paths: /Mend/AgentMatrix/<sender>/<scenario>.
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "agent-matrix.h"
#include "mend-test-utils.h"
#include "mend-test-agents.h"

/* The scripted model server (tests/support/mend-test-agents.c). */
typedef MendTestModelServer ModelServer;

#define WALL_START 1764500000000000

#define FIRST "Fix the build"
#define FIRST_ANSWER "Build fixed."
#define FOLLOW_UP "Then update the changelog"
#define FOLLOW_UP_ANSWER "Changelog updated."
#define CONTINUE MEND_CHAT_DEFAULT_CONTINUE_PROMPT
#define CONTINUE_ANSWER "Carried on."

/* The rules' order, which mend_test_model_server_n_answered() counts. The
 * fault comes first and answers the first turn's Continue too: an agent
 * that kept a failed prompt is asked to continue on its retries. Continue
 * comes before the answer, as a Continue that carries the failed prompt
 * has the prompt's words in it too. */
enum { RULE_FOLLOW_UP, RULE_FAULT, RULE_CONTINUE, RULE_FIRST };

typedef struct
{
  const MatrixSender *sender;
  Scenario            scenario;
} Cell;

typedef struct
{
  const Cell    *cell;
  MendClock     *clock;
  ModelServer    server;
  MendSender    *sender;
  MendChat      *chat;
  GPtrArray     *finished;      /* MendTurn, owned */
  GPtrArray     *waits;         /* MendRetryWait of the first turn, owned */
  guint          n_exhausted;
  GString       *text;          /* the answers' text, as the sender shows it */
  GString       *seen;          /* what was seen, for the cell's message */
  GStrv          queue_after;   /* the queue when the first turn finished */
  MendLifecycle  lifecycle_after;
  gboolean       agent_status_seen;
  char          *first_turn;    /* the first prompt's turn id */
  guint          outcomes[N_RECORD_OUTCOMES]; /* of the first turn's records */
  gint64         waiting_since_us;  /* real time, when the turn began its wait */
  guint          log_handler;
  gint64         last_poll_us;
  guint          polled_faults;
} Fixture;

/* What an app watches */

static void
on_agent_status (MendTurn   *turn,
                 GParamSpec *pspec,
                 Fixture    *f)
{
  const char *status = mend_turn_get_agent_status (turn);

  if (status != NULL)
    {
      f->agent_status_seen = TRUE;
      g_string_append_printf (f->seen, "agent status: %s\n", status);
    }
}

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Fixture       *f)
{
  f->waiting_since_us = g_get_monotonic_time ();
  if (g_strcmp0 (mend_turn_get_prompt (turn), FIRST) == 0)
    g_ptr_array_add (f->waits, g_object_ref (wait));
}

static void
on_exhausted (MendTurn    *turn,
              MendFailure *failure,
              Fixture     *f)
{
  if (g_strcmp0 (mend_turn_get_prompt (turn), FIRST) == 0)
    f->n_exhausted++;
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Fixture  *f)
{
  if (f->first_turn == NULL)
    f->first_turn = g_strdup (mend_turn_get_id (turn));
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), f);
  g_signal_connect (turn, "exhausted", G_CALLBACK (on_exhausted), f);
  g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_agent_status), f);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  MendFailure *failure = mend_turn_get_last_failure (turn);

  g_string_append_printf (f->seen, "turn \"%s\": state %d, attempt %u, last failure: %s\n",
                          mend_turn_get_prompt (turn), mend_turn_get_state (turn), mend_turn_get_attempt (turn),
                          failure ? mend_failure_get_message (failure) : "none");
  g_ptr_array_add (f->finished, g_object_ref (turn));
  g_signal_handlers_disconnect_by_data (turn, f);

  if (f->finished->len == 1)
    {
      GListModel *queue = G_LIST_MODEL (mend_chat_get_queue (chat));
      GStrvBuilder *texts = g_strv_builder_new ();

      for (guint i = 0; i < g_list_model_get_n_items (queue); i++)
        {
          g_autoptr(MendQueueItem) item = g_list_model_get_item (queue, i);

          g_strv_builder_add (texts, mend_queue_item_get_text (item));
        }
      f->queue_after = g_strv_builder_end (texts);
      g_strv_builder_unref (texts);
      f->lifecycle_after = mend_chat_get_lifecycle (chat);
    }
}

static void
on_record (MendChat   *chat,
           const char *json,
           Fixture    *f)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *record = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;

  g_string_append_printf (f->seen, "record: %s\n", json);

  /* The first turn's retry steps, by outcome. */
  if (record == NULL ||
      g_strcmp0 (json_object_get_string_member_with_default (record, "kind", NULL), "turn_retry") != 0 ||
      g_strcmp0 (json_object_get_string_member_with_default (record, "turnId", NULL), f->first_turn) != 0)
    return;
  for (guint i = 0; i < N_RECORD_OUTCOMES; i++)
    if (g_strcmp0 (json_object_get_string_member_with_default (record, "outcome", NULL), record_outcomes[i]) == 0)
      f->outcomes[i]++;
}

static void
on_text_delta (MendHttpSender *sender,
               const char     *delta,
               Fixture        *f)
{
  g_string_append (f->text, delta);
}

#if MEND_HAS_ACP
static void
on_update (MendAcpAgent *agent,
           const char   *kind,
           const char   *json,
           Fixture      *f)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *content;

  g_string_append_printf (f->seen, "ACP update: %s\n", json);
  if (g_strcmp0 (kind, "agent_message_chunk") != 0 || node == NULL)
    return;
  content = json_object_get_object_member (json_node_get_object (node), "content");
  if (content != NULL && g_strcmp0 (json_object_get_string_member_with_default (content, "type", NULL), "text") == 0)
    g_string_append (f->text, json_object_get_string_member_with_default (content, "text", ""));
}
#endif

/* libmend's debug lines (what the agent answered, as the library read
 * it: "ACP error -32603: …"), for the cell's message. */
static void
on_log (const char     *domain,
        GLogLevelFlags  level,
        const char     *message,
        gpointer        user_data)
{
  Fixture *f = user_data;

  g_string_append_printf (f->seen, "libmend: %s\n", message);
}

/* The fixture */

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->cell = data;
  f->clock = mend_manual_clock_new (WALL_START);
  f->finished = g_ptr_array_new ();
  f->waits = g_ptr_array_new_with_free_func (g_object_unref);
  f->text = g_string_new (NULL);
  f->seen = g_string_new (NULL);
  f->log_handler = g_log_set_handler ("Mend", G_LOG_LEVEL_DEBUG, on_log, f);
  g_test_timer_start ();
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_test_message ("%s/%s: %.1f s in real time", f->cell->sender->name, scenario_names[f->cell->scenario],
                  g_test_timer_elapsed ());

  if (f->chat != NULL)
    {
      mend_chat_close (f->chat);
      g_signal_handlers_disconnect_by_data (f->chat, f);
      g_assert_finalize_object (f->chat);
    }
  if (f->sender != NULL)
    {
      g_signal_handlers_disconnect_by_data (f->sender, f);
      if (MEND_IS_AGENT (f->sender))
        {
          mend_agent_terminate (MEND_AGENT (f->sender));
          g_assert_false (mend_agent_get_running (MEND_AGENT (f->sender)));
        }
    }

  mend_test_model_server_stop (&f->server);

  /* Let what the sender's streams left behind finish. */
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_log_remove_handler ("Mend", f->log_handler);
  g_ptr_array_unref (f->waits);
  /* The turns hold their sender. */
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  if (f->sender != NULL)
    mend_test_finalize_eventually (f->sender);
  g_string_free (f->text, TRUE);
  g_string_free (f->seen, TRUE);
  g_strfreev (f->queue_after);
  g_free (f->first_turn);
  g_assert_finalize_object (f->clock);
}

/* The rules of a scenario: its fault, for the sender's API, and answers
 * for everything else. */
static char *
scenario_rules (const Cell *cell)
{
  const char *fault = NULL;
  guint times = 0;

  switch (cell->scenario)
    {
    case SCENARIO_503_TWICE:
      fault = "{\"kind\": \"status\", \"status\": 503}";
      times = 2;
      break;
    case SCENARIO_503_ALWAYS:
    case SCENARIO_STOP_IN_WAIT:
    case SCENARIO_STOP_IN_AGENT_BACKOFF:
      fault = "{\"kind\": \"status\", \"status\": 503}";
      break;
    case SCENARIO_429_HINT:
      fault = "{\"kind\": \"status\", \"status\": 429, \"retry_after\": 2}";
      times = 1;
      break;
    case SCENARIO_USAGE_LIMIT:
      /* The Messages API answers a credit balance used up with a 400; the
       * Gemini API a daily quota, and the OpenAI API insufficient_quota,
       * with a 429. */
      fault = cell->sender->api == MATRIX_API_MESSAGES
              ? "{\"kind\": \"status\", \"status\": 400, \"limit\": \"quota\"}"
              : "{\"kind\": \"status\", \"status\": 429, \"limit\": \"quota\"}";
      break;
    case SCENARIO_401:
      fault = "{\"kind\": \"status\", \"status\": 401}";
      break;
    case SCENARIO_400:
      fault = "{\"kind\": \"status\", \"status\": 400}";
      break;
    case SCENARIO_EMPTY:
      fault = "{\"kind\": \"empty\"}";
      times = cell->sender->requests_per_empty;
      break;
    case SCENARIO_CUT_BEFORE_OUTPUT:
      fault = "{\"kind\": \"drop\", \"after_text\": false}";
      times = cell->sender->requests_per_cut;
      break;
    case SCENARIO_CUT_AFTER_TEXT:
      /* The cut a moment after the text, as a connection breaks: read
       * apart, whatever the machine's pace (an agent may drop text it
       * reads with the cut). */
      fault = "{\"kind\": \"drop\", \"after_text\": true, \"pause_ms\": 300}";
      times = cell->sender->requests_per_cut;
      break;
    default:
      g_assert_not_reached ();
    }

  return g_strdup_printf ("["
                          "{\"match\": \"" FOLLOW_UP "\", \"times\": 0,"
                          " \"answer\": {\"kind\": \"text\", \"text\": \"" FOLLOW_UP_ANSWER "\"}},"
                          "{\"match\": [\"" FIRST "\", \"" CONTINUE "\"], \"times\": %u, \"answer\": %s},"
                          "{\"match\": \"" CONTINUE "\", \"times\": 0,"
                          " \"answer\": {\"kind\": \"text\", \"text\": \"" CONTINUE_ANSWER "\"}},"
                          "{\"match\": \"" FIRST "\", \"times\": 0,"
                          " \"answer\": {\"kind\": \"text\", \"text\": \"" FIRST_ANSWER "\"}}"
                          "]", times, fault);
}

/* The server, the sender and a chat; FALSE (the cell skipped, or failed
 * where agents are required) when the sender's program is missing. */
static gboolean
start_chat (Fixture *f)
{
  const Cell *cell = f->cell;
  g_autofree char *rules = scenario_rules (cell);
  g_autofree char *base_url = NULL;
  guint own_retries = cell->scenario == SCENARIO_STOP_IN_AGENT_BACKOFF ? cell->sender->own_retries : 0;

  g_string_append_printf (f->seen, "rules: %s\n", rules);
  mend_test_model_server_start (&f->server, rules);
  base_url = mend_test_model_server_dup_base_url (&f->server);
  f->sender = cell->sender->make (base_url, own_retries);
  if (f->sender == NULL)
    return FALSE;

  if (MEND_IS_HTTP_SENDER (f->sender))
    g_signal_connect (f->sender, "text-delta", G_CALLBACK (on_text_delta), f);
#if MEND_HAS_ACP
  if (MEND_IS_ACP_AGENT (f->sender))
    g_signal_connect (f->sender, "update", G_CALLBACK (on_update), f);
#endif

  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "id", "chat-agent-matrix",
                          "clock", f->clock,
                          "sender", f->sender,
                          NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_signal_connect (f->chat, "record", G_CALLBACK (on_record), f);
  return TRUE;
}

/* Running the chat */

static gboolean
turn_is_waiting (gpointer      fixture,
                 gconstpointer data)
{
  Fixture *f = fixture;
  MendTurn *turn = mend_chat_get_turn (f->chat);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_WAITING;
}

static gboolean
n_finished_is (gpointer      fixture,
               gconstpointer data)
{
  Fixture *f = fixture;

  return f->finished->len >= GPOINTER_TO_UINT (data);
}

/* A wait of libmend's passes in virtual time once it has taken
 * MEND_TEST_AGENT_MIN_WAIT_MS of real time. */
static gboolean
wait_may_pass (gpointer      fixture,
               gconstpointer data)
{
  Fixture *f = fixture;

  return turn_is_waiting (fixture, data) &&
         g_get_monotonic_time () - f->waiting_since_us >= MEND_TEST_AGENT_MIN_WAIT_MS * 1000;
}

/* Runs until @n turns finished, libmend's waits passing in virtual time;
 * FALSE when the agent took longer than a scenario may. */
static gboolean
run_turns (Fixture *f,
           guint    n)
{
  if (mend_test_agent_run_within (MEND_MANUAL_CLOCK (f->clock), wait_may_pass, n_finished_is,
                                  f, GUINT_TO_POINTER (n), 40000))
    return TRUE;

  g_string_append_printf (f->seen, "after 40 s, %u of %u turns had finished\n", f->finished->len, n);
  return FALSE;
}

static MendTurn *
finished (Fixture *f,
          guint    i)
{
  return i < f->finished->len ? g_ptr_array_index (f->finished, i) : NULL;
}

/* The first prompt's requests: its own, and its retries' that ask to
 * continue (the Continue turn's too, once there is one). */
static guint
first_prompt_requests (Fixture *f)
{
  return mend_test_model_server_n_answered (&f->server, RULE_FAULT) +
         mend_test_model_server_n_answered (&f->server, RULE_CONTINUE) +
         mend_test_model_server_n_answered (&f->server, RULE_FIRST);
}

/* The fault has been answered, asked at most once every 10 ms of real
 * time (the server is another process). */
static gboolean
fault_answered (gpointer      fixture,
                gconstpointer data)
{
  Fixture *f = fixture;
  gint64 now = g_get_monotonic_time ();

  if (now - f->last_poll_us >= 10000)
    {
      f->last_poll_us = now;
      f->polled_faults = mend_test_model_server_n_answered (&f->server, RULE_FAULT);
    }
  return f->polled_faults >= 1;
}

static guint
count_occurrences (const char *haystack,
                   const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

/* How many times the first prompt is in the first model request after
 * the @from-th, the Continue turn's, or -1 when there was none. */
static int
continue_mentions (Fixture *f,
                   guint    from)
{
  g_autofree char *body = mend_test_model_server_dup_request (&f->server, from + 1);

  return body != NULL ? (int) count_occurrences (body, FIRST) : -1;
}

static gboolean
agent_status_seen (gpointer      fixture,
                   gconstpointer data)
{
  Fixture *f = fixture;

  return f->agent_status_seen;
}

/* The scenarios: each plays the chat and fills in what was seen */

static void
play (Fixture *f,
      Seen    *seen)
{
  const Cell *cell = f->cell;
  const MatrixSender *sender = cell->sender;
  g_autoptr(GError) error = NULL;
  MendTurn *first;
  MendFailure *failure;

  g_assert_true (mend_chat_submit (f->chat, FIRST, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (mend_chat_submit (f->chat, FOLLOW_UP, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 1);

  switch (cell->scenario)
    {
    case SCENARIO_STOP_IN_WAIT:
      /* Stop while libmend waits: nothing in flight, nothing sent after. */
      seen->finished = mend_test_agent_run_within (MEND_MANUAL_CLOCK (f->clock), NULL, turn_is_waiting, f, NULL, 40000);
      if (!seen->finished)
        break;
      mend_chat_stop (f->chat);
      seen->finished = f->finished->len == 1;
      seen->wait_cancelled = f->waits->len == 1 &&
                             mend_retry_wait_get_state (g_ptr_array_index (f->waits, 0)) == MEND_RETRY_WAIT_CANCELLED;
      /* A minute of libmend's time, and some real time for the agent:
       * nothing is in flight to come back. */
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 60000);
      mend_test_agent_run_for (500);
      break;

    case SCENARIO_STOP_IN_AGENT_BACKOFF:
      {
        gint64 stop_us;

        /* The agent has its answer to the first request: it waits before
         * its own next one (Claude Code at least 500 ms, Gemini CLI 5 s,
         * Codex about 200 ms). */
        seen->finished = mend_test_agent_run_within (MEND_MANUAL_CLOCK (f->clock), NULL, fault_answered, f, NULL, 40000);
        if (!seen->finished)
          break;
        /* An agent that reports its own retries as it begins to wait:
         * the Stop comes once it has (or after 300 ms); any other, 30 ms
         * into its wait. */
        if (!matrix_expected[sender->id][cell->scenario].agent_status ||
            !mend_test_agent_run_within (MEND_MANUAL_CLOCK (f->clock), NULL, agent_status_seen,
                                         f, NULL, 300))
          mend_test_agent_run_for (30);
        seen->running_in_backoff = f->finished->len == 0 && mend_chat_get_turn (f->chat) != NULL &&
                                   mend_turn_get_state (mend_chat_get_turn (f->chat)) == MEND_TURN_RUNNING;
        stop_us = g_get_monotonic_time ();
        mend_chat_stop (f->chat);
        seen->finished = mend_test_agent_run_within (MEND_MANUAL_CLOCK (f->clock), NULL, n_finished_is,
                                                     f, GUINT_TO_POINTER (1), 5000);
        seen->stop_ms = (g_get_monotonic_time () - stop_us) / 1000;
        /* Longer than the agent's own wait: it sends nothing more. */
        mend_test_agent_run_for (sender->backoff_ms);
      }
      break;

    default:
      seen->finished = run_turns (f, 1);
      break;
    }

  seen->requests = first_prompt_requests (f);
  /* The last request so far answered the first turn. */
  if (seen->finished && f->finished->len >= 1)
    seen->prompt_mentions = continue_mentions (f, mend_test_model_server_n_requests (&f->server) - 1);
  g_string_append_printf (f->seen, "requests by rule: follow-up %u, fault %u, Continue %u, answer %u\n",
                          mend_test_model_server_n_answered (&f->server, RULE_FOLLOW_UP),
                          mend_test_model_server_n_answered (&f->server, RULE_FAULT),
                          mend_test_model_server_n_answered (&f->server, RULE_CONTINUE),
                          mend_test_model_server_n_answered (&f->server, RULE_FIRST));
  seen->side_requests = mend_test_model_server_n_side_requests (&f->server);
  seen->agent_status = f->agent_status_seen;
  seen->n_waits = f->waits->len;
  seen->n_exhausted = f->n_exhausted;
  memcpy (seen->records, f->outcomes, sizeof f->outcomes);
  if (f->waits->len > 0)
    {
      MendRetryWait *wait = g_ptr_array_index (f->waits, 0);

      seen->hint_ms = mend_retry_wait_get_server_hint (wait) ? (int) mend_retry_wait_get_delay_ms (wait) : 0;
      seen->first_delay_ms = (int) mend_retry_wait_get_delay_ms (wait);
    }

  first = finished (f, 0);
  if (first == NULL)
    return;

  seen->state = mend_turn_get_state (first);
  seen->attempts = mend_turn_get_attempt (first);
  failure = mend_turn_get_last_failure (first);
  seen->reason = failure ? (int) mend_failure_get_reason (failure) : -1;
  seen->kind = failure ? (int) mend_failure_get_kind (failure) : -1;
  seen->status = failure ? mend_failure_get_status (failure) : 0;
  seen->partial = failure ? mend_failure_get_partial (failure) : FALSE;
  seen->message = failure ? g_strdup (mend_failure_get_message (failure)) : NULL;
  seen->lifecycle = f->lifecycle_after;
  seen->queue = g_strdupv (f->queue_after);
  seen->first_text = g_strdup (f->text->str);
  g_string_truncate (f->text, 0);

  /* What comes after: the follow-up when the turn succeeded or was
   * stopped (on the app's idle send); Continue, then the follow-up, when
   * it gave up after its retries. */
  if (seen->state == MEND_TURN_STOPPED)
    g_assert_true (mend_chat_send_next (f->chat));
  if (seen->state == MEND_TURN_SUCCEEDED || seen->state == MEND_TURN_STOPPED)
    seen->after_ok = run_turns (f, 2) && mend_turn_get_state (finished (f, 1)) == MEND_TURN_SUCCEEDED;
  else if (seen->state == MEND_TURN_FAILED && cell->scenario == SCENARIO_503_ALWAYS)
    {
      guint before = mend_test_model_server_n_requests (&f->server);

      /* The upstream is back when the user sends Continue. */
      mend_test_model_server_retire_rule (&f->server, RULE_FAULT);
      g_assert_true (mend_chat_send_next (f->chat));
      seen->after_ok = run_turns (f, 3) &&
                       mend_turn_get_state (finished (f, 1)) == MEND_TURN_SUCCEEDED &&
                       mend_turn_get_state (finished (f, 2)) == MEND_TURN_SUCCEEDED;
      seen->continue_mentions = continue_mentions (f, before);
    }
  else
    seen->after_ok = TRUE;
  if (f->finished->len >= 2)
    seen->after_attempts = mend_turn_get_attempt (finished (f, 1));
  if (f->finished->len >= 2 && f->text->len > 0)
    seen->after_text = g_strdup (f->text->str);
  seen->requests_after = first_prompt_requests (f);
  seen->follow_up_requests = mend_test_model_server_n_answered (&f->server, RULE_FOLLOW_UP);
}

static void
test_cell (Fixture       *f,
           gconstpointer  data)
{
  const Cell *cell = data;
  const Expected *expected = &matrix_expected[cell->sender->id][cell->scenario];
  g_autoptr(GString) mismatch = g_string_new (NULL);
  g_autofree char *line = NULL;
  Seen seen = { .reason = -1, .kind = -1, .continue_mentions = -1, .prompt_mentions = -1 };

  if (expected->na != NULL)
    {
      g_test_skip (expected->na);
      return;
    }
  if (!start_chat (f))
    return;

  play (f, &seen);

  line = seen_describe (&seen);
  g_test_message ("%s/%s: %s", cell->sender->name, scenario_names[cell->scenario], line);
  if (expected->note != NULL)
    g_test_message ("The table's note: %s", expected->note);
  matrix_check (expected, cell->scenario, &seen, mismatch);
  seen_clear (&seen);

  if (mismatch->len == 0)
    {
      if (expected->defect != NULL)
        g_test_message ("The defect noted for this cell was not seen: %s", expected->defect);
      return;
    }

  {
    g_autofree char *err = mend_test_agent_dup_stderr (f->sender);

    g_test_message ("What the app saw:\n%s", f->seen->str);
    if (err != NULL)
      g_test_message ("The agent's stderr (its end): %s", strlen (err) > 4000 ? err + strlen (err) - 4000 : err);
  }
  if (expected->defect != NULL)
    {
      g_test_message ("Not as expected: %s", mismatch->str);
      g_test_incomplete (expected->defect);
    }
  else
    g_test_fail_printf ("%s/%s not as expected: %s", cell->sender->name, scenario_names[cell->scenario],
                        mismatch->str);
}

/* The senders */

static MendSender *
make_http (const char *base_url,
           guint       own_retries)
{
  g_autofree char *uri = g_strconcat (base_url, "/v1/messages", NULL);

  return MEND_SENDER (mend_http_sender_new (uri));
}

static MendSender *
make_claude_cli (const char *base_url,
                 guint       own_retries)
{
  g_autofree char *cli = mend_test_claude_code_cli_find ();

  return cli ? MEND_SENDER (mend_test_claude_code_process_new (cli, base_url, own_retries)) : NULL;
}

#if MEND_HAS_ACP
static MendSender *
make_claude_code_acp (const char *base_url,
                      guint       own_retries)
{
  g_autofree char *path = mend_test_claude_code_acp_find ();

  return path ? MEND_SENDER (mend_test_claude_code_acp_agent_new_with_retries (path, base_url, own_retries)) : NULL;
}

static MendSender *
make_claude_agent_acp (const char *base_url,
                       guint       own_retries)
{
  g_autofree char *path = mend_test_claude_agent_acp_find ();

  return path ? MEND_SENDER (mend_test_claude_agent_acp_agent_new_with_retries (path, base_url, own_retries)) : NULL;
}

static MendSender *
make_gemini (const char *base_url,
             guint       own_retries)
{
  g_autofree char *path = mend_test_gemini_cli_find ();

  return path ? MEND_SENDER (mend_test_gemini_cli_acp_agent_new_with_retries (path, base_url, own_retries)) : NULL;
}

static MendSender *
make_ac_claude_agent_acp (const char *base_url,
                          guint       own_retries)
{
  g_autofree char *path = mend_test_ac_claude_agent_acp_find ();

  return path ? MEND_SENDER (mend_test_ac_claude_agent_acp_agent_new_with_retries (path, base_url, own_retries))
              : NULL;
}

static MendSender *
make_ac_codex_acp (const char *base_url,
                   guint       own_retries)
{
  g_autofree char *path = mend_test_ac_codex_acp_find ();

  return path ? MEND_SENDER (mend_test_ac_codex_acp_agent_new_with_retries (path, base_url, own_retries)) : NULL;
}

static MendSender *
make_codex (const char *base_url,
            guint       own_retries)
{
  g_autofree char *path = mend_test_codex_acp_find ();

  return path ? MEND_SENDER (mend_test_codex_acp_agent_new_with_retries (path, base_url, own_retries)) : NULL;
}
#endif

int
main (int   argc,
      char *argv[])
{
  MatrixSender senders[] = {
    { .id = SENDER_HTTP, .name = "http", .api = MATRIX_API_MESSAGES, .make = make_http,
      .own_retries = 0, .backoff_ms = 500, .requests_per_empty = 1, .requests_per_cut = 1 },
    { .id = SENDER_CLAUDE_CLI, .name = "claude-cli", .api = MATRIX_API_MESSAGES, .make = make_claude_cli,
      .own_retries = 2, .backoff_ms = 3000, .requests_per_empty = 2, .requests_per_cut = 2 },
#if MEND_HAS_ACP
    { .id = SENDER_CLAUDE_CODE_ACP, .name = "claude-code-acp", .api = MATRIX_API_MESSAGES, .make = make_claude_code_acp,
      .own_retries = 2, .backoff_ms = 3000, .requests_per_empty = 1, .requests_per_cut = 2 },
    { .id = SENDER_CLAUDE_AGENT_ACP, .name = "claude-agent-acp", .api = MATRIX_API_MESSAGES, .make = make_claude_agent_acp,
      .own_retries = 2, .backoff_ms = 3000, .requests_per_empty = 1, .requests_per_cut = 2 },
    { .id = SENDER_GEMINI, .name = "gemini-cli", .api = MATRIX_API_GEMINI, .make = make_gemini,
      .own_retries = 1, .backoff_ms = 7000, .requests_per_empty = 1, .requests_per_cut = 1 },
    { .id = SENDER_CODEX, .name = "codex-acp", .api = MATRIX_API_RESPONSES, .make = make_codex,
      .own_retries = 1, .backoff_ms = 3000, .requests_per_empty = 1, .requests_per_cut = 1 },
    { .id = SENDER_AC_CLAUDE_AGENT_ACP, .name = "ac-claude-agent-acp", .api = MATRIX_API_MESSAGES,
      .make = make_ac_claude_agent_acp,
      .own_retries = 2, .backoff_ms = 3000, .requests_per_empty = 2, .requests_per_cut = 2 },
    { .id = SENDER_AC_CODEX_ACP, .name = "ac-codex-acp", .api = MATRIX_API_RESPONSES, .make = make_ac_codex_acp,
      .own_retries = 1, .backoff_ms = 3000, .requests_per_empty = 1, .requests_per_cut = 1 },
#endif
  };
  static Cell cells[G_N_ELEMENTS (senders) * N_SCENARIOS];
  static MatrixSender kept[G_N_ELEMENTS (senders)];

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  /* The senders and the request counts go over loopback: no proxy. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

  memcpy (kept, senders, sizeof senders);
  for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
    for (guint j = 0; j < N_SCENARIOS; j++)
      {
        Cell *cell = &cells[i * N_SCENARIOS + j];
        g_autofree char *path = g_strdup_printf ("/Mend/AgentMatrix/%s/%s", kept[i].name, scenario_names[j]);

        cell->sender = &kept[i];
        cell->scenario = j;
        g_test_add (path, Fixture, cell, fixture_set_up, test_cell, fixture_tear_down);
      }

  return g_test_run ();
}
