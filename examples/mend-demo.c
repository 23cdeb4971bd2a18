/* mend-demo.c — libmend in front of you
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Starts a flaky model server on loopback and runs a chat against it
 * through MendHttpSender: a turn that meets two 529s and then answers while
 * a follow-up waits in the queue, a turn that gives up so that "Continue the
 * current turn" heads the queue, a Stop during a wait, and a subagent that a
 * 503 failed, resumed through MendStreamObserver and a scripted agent.
 * With --agent, the same story runs through the real Claude Code CLI
 * (MendAgentProcess) against a model server of its own (mend-demo-agent.c);
 * with --acp, through Claude Code's Agent Client Protocol adapter
 * (MendAcpAgent), against the same server.
 * Waits run on a clock N× faster than real time (--speed).
 */

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-demo.h"

/* A clock that runs @speed times faster than the real one: libmend's clock
 * is an extension point, and this is all a subclass needs. */

typedef struct { MendClock parent; double speed; gint64 start; } ScaledClock;
typedef struct { MendClockClass parent_class; } ScaledClockClass;
static GType scaled_clock_get_type (void);
G_DEFINE_TYPE (ScaledClock, scaled_clock, MEND_TYPE_CLOCK)

static gint64
scaled_now (ScaledClock *self)
{
  return self->start + (gint64) ((g_get_monotonic_time () - self->start) * self->speed);
}

static gint64
scaled_clock_get_monotonic_time (MendClock *clock)
{
  return scaled_now ((ScaledClock *) clock);
}

static gint64
scaled_clock_get_real_time (MendClock *clock)
{
  ScaledClock *self = (ScaledClock *) clock;

  return g_get_real_time () - g_get_monotonic_time () + scaled_now (self);
}

static guint
scaled_clock_add_timer (MendClock      *clock,
                        gint64          deadline_us,
                        MendClockFunc   func,
                        gpointer        user_data,
                        GDestroyNotify  notify)
{
  ScaledClock *self = (ScaledClock *) clock;
  gint64 real = self->start + (gint64) ((deadline_us - self->start) / self->speed);

  return MEND_CLOCK_CLASS (scaled_clock_parent_class)->add_timer (clock, real, func, user_data, notify);
}

static void
scaled_clock_class_init (ScaledClockClass *klass)
{
  MendClockClass *clock_class = MEND_CLOCK_CLASS (klass);

  clock_class->get_monotonic_time = scaled_clock_get_monotonic_time;
  clock_class->get_real_time = scaled_clock_get_real_time;
  clock_class->add_timer = scaled_clock_add_timer;
}

static void
scaled_clock_init (ScaledClock *self)
{
  self->speed = 1.0;
  self->start = g_get_monotonic_time ();
}

/* Options and output */

static double opt_speed = 2.0;
static gboolean opt_json;
static gboolean opt_list;
static char *opt_scenario;
static char *opt_url;
static char **opt_headers;
static char *opt_policy;
static char **opt_classify;
static gboolean opt_agent;
static char *opt_claude;
static gboolean opt_acp;
static char *opt_acp_adapter;

static gboolean is_tty;
static GMainLoop *loop;
static MendRetryWait *countdown_wait;
static guint countdown_id;

void
say (const char *format,
     ...)
{
  g_autofree char *line = NULL;
  va_list args;

  if (opt_json)
    return;

  va_start (args, format);
  line = g_strdup_vprintf (format, args);
  va_end (args);

  if (is_tty && countdown_wait != NULL)
    g_print ("\r\033[K");
  g_print ("%s\n", line);
}

static char *
countdown_text (MendRetryWait *wait)
{
  gint64 left = mend_retry_wait_get_remaining_ms (wait);

  return g_strdup_printf ("⟳ %s · retrying in %" G_GINT64_FORMAT " s · retry %u of %u",
                          mend_reason_to_nick (mend_retry_wait_get_reason (wait)),
                          (left + 999) / 1000,
                          mend_retry_wait_get_attempt (wait),
                          mend_retry_wait_get_of (wait));
}

static gboolean
update_countdown (gpointer data)
{
  g_autofree char *text = NULL;

  if (countdown_wait == NULL)
    return G_SOURCE_REMOVE;

  text = countdown_text (countdown_wait);
  g_print ("\r\033[K%s", text);
  fflush (stdout);
  return G_SOURCE_CONTINUE;
}

static void
stop_countdown (void)
{
  if (countdown_wait != NULL && is_tty && !opt_json)
    g_print ("\r\033[K");
  g_clear_handle_id (&countdown_id, g_source_remove);
  g_clear_object (&countdown_wait);
}

void
show_wait (MendRetryWait *wait,
           const char    *who)
{
  g_autofree char *text = countdown_text (wait);

  stop_countdown ();
  if (opt_json)
    return;

  if (is_tty)
    {
      countdown_wait = g_object_ref (wait);
      g_signal_connect (wait, "fired", G_CALLBACK (stop_countdown), NULL);
      g_signal_connect (wait, "cancelled", G_CALLBACK (stop_countdown), NULL);
      countdown_id = g_timeout_add (100, update_countdown, NULL);
      update_countdown (NULL);
    }
  else
    say ("  %s%s%s", who, *who ? " " : "", text);
}

/* The first @n characters of @text: g_utf8_substring () must not be asked
 * for more than there are. */
static char *
head_of (const char *text,
         glong       n)
{
  return g_utf8_substring (text, 0, MIN (n, g_utf8_strlen (text, -1)));
}

static char *
queue_line (MendChat *chat)
{
  GListModel *queue = G_LIST_MODEL (mend_chat_get_queue (chat));
  GString *out = g_string_new ("[");

  for (guint i = 0; i < g_list_model_get_n_items (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (queue, i);
      g_autofree char *text = head_of (mend_queue_item_get_text (item), 40);

      g_string_append_printf (out, "%s“%s”", i ? ", " : "", text);
    }
  g_string_append (out, "]");
  return g_string_free (out, FALSE);
}

/* The flaky model server */

typedef struct
{
  guint       status;
  const char *body;
  const char *retry_after;
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

static GQueue script = G_QUEUE_INIT;   /* const Reply* for the next requests */
static guint requests;

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

/* The chat and what it says */

double
get_speed (void)
{
  return opt_speed;
}

static void
on_record (GObject    *source,
           const char *json,
           gpointer    data)
{
  if (opt_json)
    g_print ("%s\n", json);
}

static void
on_content (MendHttpSender *sender,
            MendTurn       *turn,
            const char     *event,
            Demo           *demo)
{
  g_autoptr(JsonNode) node = json_from_string (event, NULL);
  JsonObject *delta;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  delta = json_object_get_object_member (json_node_get_object (node), "delta");
  if (delta != NULL && json_object_has_member (delta, "text"))
    say ("  ← %s", json_object_get_string_member (delta, "text"));
}

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Demo          *demo)
{
  MendFailure *failure = mend_retry_wait_get_failure (wait);

  say ("  ✗ attempt %u: %s (%s)", mend_turn_get_attempt (turn),
       failure ? mend_failure_get_message (failure) : "",
       failure ? mend_failure_kind_to_nick (mend_failure_get_kind (failure)) : "");
  show_wait (wait, "");
}

static void
on_resumed (MendTurn *turn,
            guint     n,
            Demo     *demo)
{
  say ("  ↻ attempt %u of %u, same prompt, no new user line", n, mend_turn_get_max_attempts (turn));
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Demo     *demo)
{
  g_autofree char *queue = queue_line (chat);
  g_autofree char *prompt = head_of (mend_turn_get_prompt (turn), 72);
  const char *provenance = mend_turn_get_provenance (turn);

  say ("→ %s%s", prompt, g_utf8_strlen (mend_turn_get_prompt (turn), -1) > 72 ? "…" : "");
  if (provenance != NULL && strstr (provenance, "subagent_retry") != NULL)
    say ("  (a resume prompt, provenance %s)", provenance);
  say ("  lifecycle busy · queue %s", queue);
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), demo);
  g_signal_connect (turn, "resumed", G_CALLBACK (on_resumed), demo);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Demo     *demo)
{
  static const char * const how[] = { "idle", "running", "waiting", "succeeded", "gave up", "stopped" };
  g_autofree char *queue = queue_line (chat);
  MendFailure *failure = mend_turn_get_last_failure (turn);
  const char *lifecycle[] = { "ready", "busy", "error", "closed" };

  stop_countdown ();
  if (mend_turn_get_state (turn) == MEND_TURN_FAILED && failure != NULL)
    say ("  ✗ %s after %u attempt%s: %s (%s)", how[mend_turn_get_state (turn)],
         mend_turn_get_attempt (turn), mend_turn_get_attempt (turn) == 1 ? "" : "s",
         mend_failure_get_message (failure), mend_failure_kind_to_nick (mend_failure_get_kind (failure)));
  else
    say ("  %s %s after %u attempt%s",
         mend_turn_get_state (turn) == MEND_TURN_SUCCEEDED ? "✓" : "■",
         how[mend_turn_get_state (turn)],
         mend_turn_get_attempt (turn), mend_turn_get_attempt (turn) == 1 ? "" : "s");
  say ("  lifecycle %s · queue %s", lifecycle[mend_chat_get_lifecycle (chat)], queue);

  demo->turns_done++;
}

void
connect_chat (Demo *demo)
{
  g_signal_connect (demo->chat, "turn-started", G_CALLBACK (on_turn_started), demo);
  g_signal_connect (demo->chat, "turn-finished", G_CALLBACK (on_turn_finished), demo);
  g_signal_connect (demo->chat, "record", G_CALLBACK (on_record), NULL);
}

/* Scenarios */

typedef struct
{
  const char *name;
  const char *summary;
  void (*run) (Demo *demo);
} Scenario;

void
run_until_idle (Demo *demo)
{
  while (mend_chat_get_turn (demo->chat) != NULL || mend_chat_get_external_turn (demo->chat))
    g_main_context_iteration (NULL, TRUE);
}

static void
scenario_retry (Demo *demo)
{
  static const Reply replies[] = {
    { 529, OVERLOADED, NULL },
    { 529, OVERLOADED, NULL },
  };

  say ("\n# retry: a turn meets 529 twice, then answers; the follow-up waits");
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Fix the failing build", NULL, NULL);
  mend_chat_submit (demo->chat, "Then update the changelog", NULL, NULL);
  say ("  (queued meanwhile: “Then update the changelog”)");
  run_until_idle (demo);
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

  say ("\n# give-up: five 503s; the queue is kept and Continue goes to its head");
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Deploy the staging stack", NULL, NULL);
  mend_chat_submit (demo->chat, "Post the release notes", NULL, NULL);
  run_until_idle (demo);
  /* Clear the queue for the next scenario. */
  while (mend_queue_get_length (mend_chat_get_queue (demo->chat)) > 0)
    g_object_unref (mend_queue_pop (mend_chat_get_queue (demo->chat)));
}

static gboolean
press_stop (gpointer data)
{
  Demo *demo = data;

  say ("  ■ Stop");
  mend_chat_stop (demo->chat);
  return G_SOURCE_REMOVE;
}

static void
scenario_stop (Demo *demo)
{
  static const Reply replies[] = {
    { 429, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}}", "8" },
  };

  say ("\n# stop: a Stop during the wait ends the turn; no retry, no Continue");
  script_replies (replies, G_N_ELEMENTS (replies));
  mend_chat_submit (demo->chat, "Summarize the incident", NULL, NULL);
  mend_chat_submit (demo->chat, "Draft the postmortem", NULL, NULL);
  g_timeout_add ((guint) (2000 / opt_speed), press_stop, demo);
  run_until_idle (demo);
  say ("  the queue moves again on send_next (the idle Send):");
  mend_chat_send_next (demo->chat);
  run_until_idle (demo);
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

  on_record (G_OBJECT (retry), json, NULL);
  if (obj != NULL)
    say ("  subagent record: %s, %s, attempt %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT,
         json_object_get_string_member (obj, "outcome"),
         json_object_get_string_member (obj, "reason"),
         json_object_get_int_member (obj, "attempt"),
         json_object_get_int_member (obj, "of"));
}

static void
on_subagent_waiting (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     MendRetryWait     *wait,
                     Demo              *demo)
{
  say ("  subagent “%s” failed: %s", mend_subagent_get_name (subagent),
       mend_failure_get_message (mend_subagent_get_failure (subagent)));
  show_wait (wait, "resume:");
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
  say ("  subagent “%s” runs again (retryable: %s)", mend_subagent_get_name (subagent),
       mend_subagent_get_retryable (subagent) ? "yes" : "no");
}

static void
scenario_subagent (Demo *demo)
{
  MendSubagentRetry *retry = mend_chat_get_subagents (demo->chat);
  MendSubagent *subagent;
  gulong ids[4];

  say ("\n# subagent: a background subagent dies on a 503; it is resumed in its chat");
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
  say ("  subagent “%s” completed", mend_subagent_get_name (subagent));

  g_signal_handler_disconnect (demo->chat, ids[3]);
  for (guint i = 0; i < 3; i++)
    g_signal_handler_disconnect (retry, ids[i]);
}

static const Scenario scenarios[] = {
  { "retry", "a turn meets 529 twice, then answers; a queued follow-up runs after", scenario_retry },
  { "give-up", "five 503s: the turn gives up and Continue heads the queue", scenario_give_up },
  { "stop", "a Stop during a 429's wait: no retry, no Continue, queue kept", scenario_stop },
  { "subagent", "a subagent a 503 failed is resumed in its chat", scenario_subagent },
};

/* Classification of error texts, for --classify */

static void
classify (char **texts)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  for (guint i = 0; texts[i] != NULL; i++)
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (texts[i]);
      MendFailureKind kind = mend_error_policy_classify (policy, failure);

      g_print ("“%s”\n  reason %s · %s", texts[i],
               mend_reason_to_nick (mend_failure_get_reason (failure)),
               mend_failure_kind_to_nick (kind));
      if (mend_failure_get_retry_after_ms (failure) >= 0)
        g_print (" · server asks to wait %" G_GINT64_FORMAT " ms", mend_failure_get_retry_after_ms (failure));
      g_print ("\n  decided by %s\n", mend_failure_get_rule (failure));
      if (mend_failure_get_reason (failure) == MEND_REASON_RATE_LIMIT && kind == MEND_FAILURE_LIMIT)
        g_print ("  a limit: the server's wait is above retry-after-max-ms (%u ms)\n",
                 mend_error_policy_get_retry_after_max_ms (policy));
      if (kind == MEND_FAILURE_TRANSIENT)
        {
          g_print ("  waits:");
          for (guint retry = 1; retry <= mend_error_policy_get_max_retries (policy); retry++)
            {
              gint64 delay = mend_error_policy_delay_for (policy, retry, failure, NULL);

              if (delay < 0)
                {
                  g_print (" none: the server's wait is above %u ms, so it gives up at once",
                           mend_error_policy_get_retry_after_max_ms (policy));
                  break;
                }
              g_print (" %" G_GINT64_FORMAT " ms", delay);
            }
          g_print ("\n");
        }
    }
}

static void
add_headers (MendHttpSender *sender)
{
  for (guint i = 0; opt_headers != NULL && opt_headers[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (opt_headers[i], ":", 2);
      g_autoptr(GError) error = NULL;

      if (parts[0] == NULL || parts[1] == NULL)
        {
          g_printerr ("mend-demo: --header wants NAME: VALUE, not “%s”\n", opt_headers[i]);
          exit (2);
        }
      if (!mend_http_sender_set_header (sender, g_strstrip (parts[0]), g_strstrip (parts[1]), &error))
        {
          g_printerr ("mend-demo: %s\n", error->message);
          exit (2);
        }
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(MendErrorPolicy) policy = NULL;
  g_autoptr(SoupServer) server = NULL;
  g_autoptr(MendHttpSender) sender = NULL;
  g_autoptr(MendClock) clock = NULL;
  g_auto(GStrv) prompts = NULL;
  g_autofree char *endpoint = NULL;
  Demo demo = { 0 };
  const GOptionEntry entries[] = {
    { "scenario", 's', 0, G_OPTION_ARG_STRING, &opt_scenario, "Run only scenario NAME (see --list)", "NAME" },
    { "list", 'l', 0, G_OPTION_ARG_NONE, &opt_list, "List the scenarios", NULL },
    { "speed", 0, 0, G_OPTION_ARG_DOUBLE, &opt_speed, "Run the waits N× faster than real time (default 2)", "N" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &opt_json, "Print the retry records as JSON lines only", NULL },
    { "url", 'u', 0, G_OPTION_ARG_STRING, &opt_url, "Send PROMPT… to a real endpoint instead of the embedded server", "URL" },
    { "header", 'H', 0, G_OPTION_ARG_STRING_ARRAY, &opt_headers, "Add a header to every request (with --url), e.g. “x-api-key: …”", "NAME: VALUE" },
    { "policy", 'p', 0, G_OPTION_ARG_FILENAME, &opt_policy, "Load the turn policy from a JSON FILE", "FILE" },
    { "classify", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &opt_classify, "Show how an error TEXT is classified and the waits it implies (repeatable)", "TEXT" },
    { "agent", 'a', 0, G_OPTION_ARG_NONE, &opt_agent, "Play the story with the real Claude Code CLI as the sender", NULL },
    { "claude", 0, 0, G_OPTION_ARG_FILENAME, &opt_claude, "The claude program for --agent (default: $MEND_CLAUDE, else the one tools/setup.sh installed)", "PATH" },
    { "acp", 0, 0, G_OPTION_ARG_NONE, &opt_acp, "Play the story with Claude Code over the Agent Client Protocol (claude-code-acp) as the sender", NULL },
    { "acp-adapter", 0, 0, G_OPTION_ARG_FILENAME, &opt_acp_adapter, "The claude-code-acp program for --acp (default: $MEND_CLAUDE_CODE_ACP, else the one tools/setup.sh installed)", "PATH" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &prompts, NULL, "[PROMPT…]" },
    { NULL }
  };

  setlocale (LC_ALL, "");
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", FALSE);

  context = g_option_context_new (NULL);
  g_option_context_set_summary (context,
    "Shows libmend keeping an agent's work going when the model's upstream\n"
    "fails for a moment. With no options it starts a flaky model server on\n"
    "loopback and plays every scenario against it: retries with backoff, a\n"
    "give-up that keeps the queue, a Stop, and a subagent resumed in its chat.");
  g_option_context_set_description (context,
    "Examples:\n"
    "  mend-demo                      play every scenario\n"
    "  mend-demo -s retry --speed 1   one scenario, waits in real time\n"
    "  mend-demo --json               the structured retry records only\n"
    "  mend-demo --agent              the same story through the real Claude Code CLI\n"
    "  mend-demo --acp                the same story over the Agent Client Protocol\n"
    "  mend-demo -c 'API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}'\n"
    "  mend-demo --url https://api.anthropic.com/v1/messages \\\n"
    "            -H 'x-api-key: …' -H 'anthropic-version: 2023-06-01' 'Say hello'");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 2;
    }

  if (opt_list)
    {
      for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
        g_print ("%-9s %s\n", scenarios[i].name, scenarios[i].summary);
      return 0;
    }

  if (opt_classify != NULL)
    {
      classify (opt_classify);
      return 0;
    }

  if (!(opt_speed > 0 && opt_speed <= 1000))
    {
      g_printerr ("mend-demo: --speed must be above 0 and at most 1000\n");
      return 2;
    }

  if (opt_policy != NULL)
    policy = mend_error_policy_new_from_file (opt_policy, &error);
  else
    policy = mend_error_policy_new ();
  if (policy == NULL)
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 2;
    }

  is_tty = isatty (STDOUT_FILENO) && !opt_json;
  loop = g_main_loop_new (NULL, FALSE);
  clock = g_object_new (scaled_clock_get_type (), NULL);
  ((ScaledClock *) clock)->speed = opt_speed;

  if (opt_acp)
    {
      const char *adapter = opt_acp_adapter ? opt_acp_adapter : g_getenv ("MEND_CLAUDE_CODE_ACP");
      int status;

      if (adapter == NULL || adapter[0] == '\0')
        adapter = MEND_DEMO_CLAUDE_CODE_ACP;
      if (!g_file_test (adapter, G_FILE_TEST_IS_EXECUTABLE))
        {
          g_printerr ("mend-demo: no claude-code-acp at %s: run tools/setup.sh, or give --acp-adapter PATH\n", adapter);
          return 1;
        }
      status = run_acp_demo (&demo, clock, adapter, opt_scenario);
      stop_countdown ();
      g_main_loop_unref (loop);
      g_free (opt_scenario);
      g_free (opt_acp_adapter);
      return status;
    }

  if (opt_agent)
    {
      const char *claude = opt_claude ? opt_claude : g_getenv ("MEND_CLAUDE");
      int status;

      if (claude == NULL || claude[0] == '\0')
        claude = MEND_DEMO_CLAUDE;
      if (!g_file_test (claude, G_FILE_TEST_IS_EXECUTABLE))
        {
          g_printerr ("mend-demo: no Claude Code CLI at %s: run tools/setup.sh, or give --claude PATH\n", claude);
          return 1;
        }
      status = run_agent_demo (&demo, clock, claude, opt_scenario);
      stop_countdown ();
      g_main_loop_unref (loop);
      g_free (opt_scenario);
      g_free (opt_claude);
      return status;
    }

  if (opt_url == NULL)
    {
      GSList *uris;
      GUri *uri;

      server = soup_server_new (NULL, NULL);
      soup_server_add_handler (server, "/v1/messages", serve, NULL, NULL);
      if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
        {
          g_printerr ("mend-demo: cannot start the embedded server: %s\n", error->message);
          return 1;
        }
      uris = soup_server_get_uris (server);
      uri = uris->data;
      endpoint = g_strdup_printf ("http://127.0.0.1:%d/v1/messages", g_uri_get_port (uri));
      g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
    }
  else
    endpoint = g_strdup (opt_url);

  sender = mend_http_sender_new (endpoint);
  add_headers (sender);
  g_signal_connect (sender, "content", G_CALLBACK (on_content), &demo);

  demo.chat = g_object_new (MEND_TYPE_CHAT,
                            "clock", clock,
                            "policy", policy,
                            "sender", sender,
                            "id", "demo",
                            NULL);
  demo.observer = mend_stream_observer_new (demo.chat);
  connect_chat (&demo);

  say ("libmend %s — a chat against %s; waits run %g× faster (--speed)",
       MEND_VERSION_S, opt_url ? opt_url : "a flaky model server on loopback", opt_speed);

  if (opt_url != NULL)
    {
      const char *prompt = prompts && prompts[0] ? prompts[0] : "Say hello in five words.";

      mend_chat_submit (demo.chat, prompt, NULL, NULL);
      run_until_idle (&demo);
    }
  else
    {
      gboolean found = FALSE;

      for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
        if (opt_scenario == NULL || g_str_equal (opt_scenario, scenarios[i].name))
          {
            found = TRUE;
            scenarios[i].run (&demo);
          }

      if (!found)
        {
          g_printerr ("mend-demo: no scenario “%s” (see --list)\n", opt_scenario);
          return 2;
        }
      say ("\n%u requests reached the server; every queued item was kept.", requests);
    }

  stop_countdown ();
  mend_chat_close (demo.chat);
  g_clear_object (&demo.observer);
  g_clear_object (&demo.chat);
  g_main_loop_unref (loop);
  g_free (opt_scenario);
  g_free (opt_url);
  g_free (opt_policy);
  g_strfreev (opt_headers);
  g_strfreev (opt_classify);
  return 0;
}
