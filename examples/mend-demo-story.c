/* mend-demo-story.c — mend-demo's story against its flaky model server
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The embedded server answers each request from a script; the scenarios
 * script it, play a chat against it through MendHttpSender and say whether
 * every turn ended as the script planned (the give-up scenario plans a
 * give-up).
 */

#include <string.h>

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-demo.h"

/* The flaky model server */

typedef struct
{
  guint       status;
  const char *body;
  const char *retry_after;
  guint       resets_in_s;   /* a plan's window spent, resetting in so many s */
} Reply;

static const char SSE_OK[] =
  "event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Done: the build is green.\"}}\n\n"
  "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

static const char OVERLOADED[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";

static const char NO_ACCOUNTS[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"no non-exhausted claude accounts available\"}}";

/* Anthropic's answer when a plan's window is spent: a 429 whose unified
 * rate-limit headers say "rejected" and when the window resets. */
static const char LIMITED[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
  "\"message\":\"This request would exceed your account's rate limit. Please try again later.\"}}";

static GQueue script = G_QUEUE_INIT;   /* const Reply* for the next requests */
static guint requests;
static MendClock *story_clock;         /* the chat's: its wall time names a reset */

static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           user_data)
{
  const Reply *reply = g_queue_pop_head (&script);
  static const Reply ok = { 200, SSE_OK, NULL };

  requests++;
  if (reply == NULL)
    reply = &ok;

  soup_server_message_set_status (msg, reply->status, NULL);
  if (reply->retry_after != NULL)
    soup_message_headers_append (soup_server_message_get_response_headers (msg),
                                 "Retry-After", reply->retry_after);
  if (reply->resets_in_s > 0 && story_clock != NULL)
    {
      SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);
      g_autofree char *reset = g_strdup_printf ("%" G_GINT64_FORMAT,
                                                mend_clock_get_real_time (story_clock) / G_USEC_PER_SEC +
                                                reply->resets_in_s);

      soup_message_headers_append (headers, "anthropic-ratelimit-unified-status", "rejected");
      soup_message_headers_append (headers, "anthropic-ratelimit-unified-reset", reset);
    }
  soup_server_message_set_response (msg,
                                    reply->status == 200 ? "text/event-stream" : "application/json",
                                    SOUP_MEMORY_STATIC, reply->body, strlen (reply->body));
}

static void
script_replies (const Reply *replies,
                guint        n)
{
  for (guint i = 0; i < n; i++)
    g_queue_push_tail (&script, (gpointer) &replies[i]);
}

void
story_serve (SoupServer *server)
{
  soup_server_add_handler (server, "/v1/messages", serve, NULL, NULL);
}

guint
story_requests (void)
{
  return requests;
}

/* The scenarios */

static void
scenario_retry (Demo *demo)
{
  static const Reply replies[] = {
    { 529, OVERLOADED, NULL },
    { 529, OVERLOADED, NULL },
  };
  static const MendTurnState planned[] = { MEND_TURN_SUCCEEDED, MEND_TURN_SUCCEEDED };

  say ("\n# %s", _("retry: a turn meets 529 twice, then answers; the follow-up waits"));
  begin_scenario (demo);
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Fix the failing build", NULL, NULL);
  mend_chat_submit (demo->chat, "Then update the changelog", NULL, NULL);
  say ("  %s", _("(queued meanwhile: “Then update the changelog”)"));
  run_until_idle (demo);
  expect_turns (demo, "retry", planned, G_N_ELEMENTS (planned));
}

static void
scenario_give_up (Demo *demo)
{
  static const Reply replies[] = {
    { 503, NO_ACCOUNTS, NULL },
    { 503, NO_ACCOUNTS, NULL },
    { 503, NO_ACCOUNTS, NULL },
    { 503, NO_ACCOUNTS, NULL },
    { 503, NO_ACCOUNTS, NULL },
  };
  /* The give-up is the point of this scenario; then the user's Retry. */
  static const MendTurnState planned[] = { MEND_TURN_FAILED, MEND_TURN_SUCCEEDED, MEND_TURN_SUCCEEDED };

  say ("\n# %s", _("give-up: five 503s; the queue is kept and Continue goes to its head"));
  begin_scenario (demo);
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Deploy the staging stack", NULL, NULL);
  mend_chat_submit (demo->chat, "Post the release notes", NULL, NULL);
  run_until_idle (demo);
  say ("  %s", _("the user presses Retry: the same turn runs again, Continue leaves the queue:"));
  if (!mend_chat_retry (demo->chat, NULL))
    demo->off_script = TRUE;
  run_until_idle (demo);
  expect_turns (demo, "give-up", planned, G_N_ELEMENTS (planned));
  clear_queue (demo);
}

static gboolean
press_stop (gpointer data)
{
  Demo *demo = data;

  say ("  ■ %s", _("Stop"));
  mend_chat_stop (demo->chat);
  return G_SOURCE_REMOVE;
}

static void
scenario_stop (Demo *demo)
{
  static const Reply replies[] = {
    { 429, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}}", "8" },
  };
  static const MendTurnState planned[] = { MEND_TURN_STOPPED, MEND_TURN_SUCCEEDED };

  say ("\n# %s", _("stop: a Stop during the wait ends the turn; no retry, no Continue"));
  begin_scenario (demo);
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Summarize the incident", NULL, NULL);
  mend_chat_submit (demo->chat, "Draft the postmortem", NULL, NULL);
  g_timeout_add ((guint) (2000 / get_speed ()), press_stop, demo);
  run_until_idle (demo);
  say ("  %s", _("the queue moves again on send_next (the idle Send):"));
  mend_chat_send_next (demo->chat);
  run_until_idle (demo);
  expect_turns (demo, "stop", planned, G_N_ELEMENTS (planned));
}

static void
scenario_limit (Demo *demo)
{
  static const Reply replies[] = {
    { 429, LIMITED, NULL, 6 },
  };
  static const MendTurnState planned[] = { MEND_TURN_SUCCEEDED, MEND_TURN_SUCCEEDED };
  MendErrorPolicy *policy = mend_chat_get_policy (demo->chat);
  gboolean was_on = mend_error_policy_get_continue_at_reset (policy);
  MendJitter jitter = mend_error_policy_get_jitter (policy);

  say ("\n# %s", _("limit: the plan’s usage limit resets in 6 s; with continue-at-reset on, the turn waits for it"));
  begin_scenario (demo);
  /* No minute of jitter after the reset: one chat, and a demo to watch. */
  mend_error_policy_set_continue_at_reset (policy, TRUE);
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  story_clock = mend_chat_get_clock (demo->chat);
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Refactor the parser", NULL, NULL);
  mend_chat_submit (demo->chat, "Then run the tests", NULL, NULL);
  say ("  %s", _("(queued meanwhile: “Then run the tests”; it waits for the reset too)"));
  run_until_idle (demo);
  story_clock = NULL;
  mend_error_policy_set_continue_at_reset (policy, was_on);
  mend_error_policy_set_jitter (policy, jitter);
  expect_turns (demo, "limit", planned, G_N_ELEMENTS (planned));
}

/* The scripted agent: Claude Code's stream-json, fed to the observer. */

static void
agent_line (Demo       *demo,
            const char *line)
{
  mend_stream_observer_feed_line (demo->observer, line, -1);
}

static void
on_subagent_record (MendSubagentRetry *retry,
                    const char        *json,
                    Demo              *demo)
{
  g_autoptr(JsonNode) node = json_from_string (json, NULL);
  JsonObject *obj = node ? json_node_get_object (node) : NULL;

  if (obj != NULL)
    say (_("  subagent record: %s, %s, attempt %d of %d"),
         json_object_get_string_member (obj, "outcome"),
         json_object_get_string_member (obj, "reason"),
         (int) json_object_get_int_member (obj, "attempt"),
         (int) json_object_get_int_member (obj, "of"));
}

static void
on_subagent_waiting (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     MendRetryWait     *wait,
                     Demo              *demo)
{
  say (_("  subagent “%s” failed: %s"), mend_subagent_get_name (subagent),
       mend_failure_get_message (mend_subagent_get_failure (subagent)));
  show_wait (wait, _("resume:"));
}

static void
on_resume_turn (MendChat *chat,
                MendTurn *turn,
                Demo     *demo)
{
  const char *provenance = mend_turn_get_provenance (turn);

  /* The agent answers a resume prompt by resuming the subagent with
   * SendMessage: a task_started for the same task id. */
  if (provenance != NULL && strstr (provenance, "subagent_retry") != NULL)
    agent_line (demo, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a7c41f\","
                      "\"tool_use_id\":\"toolu_send_1\",\"description\":\"Push relay for GCP lane bundles\"}");
}

static void
on_subagent_resumed (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     Demo              *demo)
{
  say (mend_subagent_get_retryable (subagent) ? _("  subagent “%s” runs again (retryable: yes)")
                                              : _("  subagent “%s” runs again (retryable: no)"),
       mend_subagent_get_name (subagent));
}

static void
scenario_subagent (Demo *demo)
{
  static const MendTurnState planned[] = { MEND_TURN_SUCCEEDED };
  MendSubagentRetry *retry = mend_chat_get_subagents (demo->chat);
  MendSubagent *subagent;
  gulong ids[4];

  say ("\n# %s", _("subagent: a background subagent dies on a 503; it is resumed in its chat"));
  begin_scenario (demo);
  ids[0] = g_signal_connect (retry, "record", G_CALLBACK (on_subagent_record), demo);
  ids[1] = g_signal_connect (retry, "waiting", G_CALLBACK (on_subagent_waiting), demo);
  ids[2] = g_signal_connect (retry, "resumed", G_CALLBACK (on_subagent_resumed), demo);
  ids[3] = g_signal_connect (demo->chat, "turn-started", G_CALLBACK (on_resume_turn), demo);

  agent_line (demo, "{\"type\":\"system\",\"subtype\":\"task_started\",\"task_id\":\"a7c41f\","
                    "\"tool_use_id\":\"toolu_01\",\"description\":\"Push relay for GCP lane bundles\"}");
  agent_line (demo, "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\","
                    "\"delta\":{\"type\":\"text_delta\",\"text\":\"working on the system result…\"}}}");
  agent_line (demo, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41f\","
                    "\"status\":\"failed\",\"summary\":\"API Error: 503 no non-exhausted claude accounts "
                    "available (error type server_error, HTTP 503)\"}");

  subagent = mend_subagent_retry_lookup (retry, "a7c41f");
  while (mend_subagent_get_state (subagent) != MEND_SUBAGENT_RUNNING)
    g_main_context_iteration (NULL, TRUE);
  run_until_idle (demo);
  agent_line (demo, "{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":\"a7c41f\","
                    "\"status\":\"completed\",\"summary\":\"Relay pushed\"}");
  say (_("  subagent “%s” %s"), mend_subagent_get_name (subagent),
       subagent_state_label (mend_subagent_get_state (subagent)));
  if (mend_subagent_get_state (subagent) != MEND_SUBAGENT_COMPLETED)
    demo->off_script = TRUE;
  expect_turns (demo, "subagent", planned, G_N_ELEMENTS (planned));

  g_signal_handler_disconnect (demo->chat, ids[3]);
  for (guint i = 0; i < 3; i++)
    g_signal_handler_disconnect (retry, ids[i]);
}

const Scenario story_scenarios[] = {
  { "retry", scenario_retry },
  { "give-up", scenario_give_up },
  { "stop", scenario_stop },
  { "limit", scenario_limit },
  { "subagent", scenario_subagent },
};
const guint n_story_scenarios = G_N_ELEMENTS (story_scenarios);

const char *
story_summary (guint i)
{
  const char *summaries[] = {
    N_("a turn meets 529 twice, then answers; a queued follow-up runs after"),
    N_("five 503s: the turn gives up and Continue heads the queue; Retry runs it again"),
    N_("a Stop during a 429's wait: no retry, no Continue, queue kept"),
    N_("a plan's usage limit: with continue-at-reset on, one attempt at its reset"),
    N_("a subagent a 503 failed is resumed in its chat"),
  };

  g_assert (i < G_N_ELEMENTS (summaries));
  return _(summaries[i]);
}
