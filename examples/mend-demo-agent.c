/* mend-demo-agent.c — mend-demo --agent: the same story with the real
 * Claude Code CLI
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A model server of the demo's own answers the Anthropic Messages API as
 * the CLI calls it, on loopback: 529s until the CLI gives up, 503s, a Task
 * call that starts a background subagent whose own requests fail with 503,
 * and a SendMessage call that resumes it. The CLI runs as the chat's
 * sender through MendAgentProcess, offline, in a private home.
 */

#include <string.h>

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-demo.h"

#if MEND_HAS_AGENTS
#define SURVEY_PROMPT "Survey the source tree and list the modules"

/* One scripted answer: to requests whose last user message contains
 * @match (any request when NULL), @times times (0: always). */
typedef enum { ANSWER_TEXT, ANSWER_STATUS, ANSWER_TASK, ANSWER_SEND_MESSAGE } AnswerKind;

typedef struct
{
  const char *match;
  guint       times;
  AnswerKind  kind;
  guint       status;
  const char *text;
  guint       used;
} Rule;

static Rule *rules;
static guint n_rules;
static guint n_requests;
static guint n_tool_calls;

static const char OVERLOADED[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
static const char NO_ACCOUNTS[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"no non-exhausted claude accounts available\"}}";

/* The text of the request's last user message: the CLI's own reminders
 * come first, the user's words (or a tool's result) last. */
static char *
last_user_text (GBytes *body)
{
  g_autoptr(JsonNode) root = json_from_string (g_bytes_get_data (body, NULL), NULL);
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  JsonArray *messages;

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root) ||
      !json_object_has_member (json_node_get_object (root), "messages"))
    return g_strdup ("");

  messages = json_object_get_array_member (json_node_get_object (root), "messages");
  for (guint i = json_array_get_length (messages); i > 0; i--)
    {
      JsonObject *message = json_array_get_object_element (messages, i - 1);

      if (g_strcmp0 (json_object_get_string_member_with_default (message, "role", ""), "user") == 0)
        {
          /* The whole content as JSON text is enough to look for words in. */
          json_generator_set_root (generator, json_object_get_member (message, "content"));
          return json_generator_to_data (generator, NULL);
        }
    }

  return g_strdup ("");
}

static void
append_event (GString    *out,
              const char *name,
              const char *data)
{
  g_string_append_printf (out, "event: %s\ndata: %s\n\n", name, data);
}

static void
message_start (GString *out)
{
  append_event (out, "message_start",
                "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_demo\",\"type\":\"message\","
                "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"
                "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}");
}

static void
message_end (GString    *out,
             const char *stop_reason)
{
  g_autofree char *delta = g_strdup_printf ("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\","
                                            "\"stop_sequence\":null},\"usage\":{\"output_tokens\":8}}",
                                            stop_reason);

  append_event (out, "message_delta", delta);
  append_event (out, "message_stop", "{\"type\":\"message_stop\"}");
}

static char *
text_answer (const char *text)
{
  GString *out = g_string_new (NULL);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *delta = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "content_block_delta");
  json_builder_set_member_name (builder, "index");
  json_builder_add_int_value (builder, 0);
  json_builder_set_member_name (builder, "delta");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text_delta");
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  node = json_builder_get_root (builder);
  delta = json_to_string (node, FALSE);

  message_start (out);
  append_event (out, "content_block_start",
                "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
  append_event (out, "content_block_delta", delta);
  append_event (out, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
  message_end (out, "end_turn");
  return g_string_free (out, FALSE);
}

/* A tool call, its input sent as one JSON delta as the API does. */
static char *
tool_answer (const char *name,
             JsonNode   *input)
{
  GString *out = g_string_new (NULL);
  g_autofree char *input_text = json_to_string (input, FALSE);
  g_autoptr(JsonNode) partial = json_node_new (JSON_NODE_VALUE);
  g_autofree char *partial_text = NULL;
  g_autofree char *start = NULL;
  g_autofree char *delta = NULL;

  json_node_set_string (partial, input_text);
  partial_text = json_to_string (partial, FALSE);
  start = g_strdup_printf ("{\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                           "{\"type\":\"tool_use\",\"id\":\"toolu_demo%02u\",\"name\":\"%s\",\"input\":{}}}",
                           ++n_tool_calls, name);
  delta = g_strdup_printf ("{\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
                           "{\"type\":\"input_json_delta\",\"partial_json\":%s}}", partial_text);

  message_start (out);
  append_event (out, "content_block_start", start);
  append_event (out, "content_block_delta", delta);
  append_event (out, "content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
  message_end (out, "tool_use");
  return g_string_free (out, FALSE);
}

static char *
task_answer (void)
{
  g_autoptr(JsonNode) input = json_from_string ("{\"description\":\"Survey the tree\","
                                                "\"prompt\":\"" SURVEY_PROMPT "\","
                                                "\"subagent_type\":\"general-purpose\","
                                                "\"run_in_background\":true}", NULL);

  return tool_answer ("Task", input);
}

/* SendMessage to the agent id that the Task call's result named. */
static char *
send_message_answer (const char *body)
{
  const char *at = NULL;
  g_autofree char *agent_id = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) input = NULL;
  gsize n = 0;

  for (const char *p = body; (p = strstr (p, "agentId: ")) != NULL; p++)
    at = p + strlen ("agentId: ");
  while (at != NULL && g_ascii_isalnum (at[n]))
    n++;
  agent_id = at ? g_strndup (at, n) : g_strdup ("unknown");

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "to");
  json_builder_add_string_value (builder, agent_id);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, "Please continue the survey.");
  json_builder_end_object (builder);
  input = json_builder_get_root (builder);

  return tool_answer ("SendMessage", input);
}

static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           user_data)
{
  SoupMessageBody *request = soup_server_message_get_request_body (msg);
  g_autoptr(GBytes) body = soup_message_body_flatten (request);
  g_autofree char *text = NULL;
  char *answer = NULL;
  Rule *rule = NULL;

  if (g_str_has_suffix (path, "/count_tokens"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_STATIC,
                                        "{\"input_tokens\":12}", 19);
      return;
    }

  n_requests++;
  text = last_user_text (body);
  for (guint i = 0; i < n_rules && rule == NULL; i++)
    if ((rules[i].times == 0 || rules[i].used < rules[i].times) &&
        (rules[i].match == NULL || strstr (text, rules[i].match) != NULL))
      rule = &rules[i];

  if (rule != NULL)
    rule->used++;

  if (rule != NULL && rule->kind == ANSWER_STATUS)
    {
      const char *error = rule->status == 529 ? OVERLOADED : NO_ACCOUNTS;

      soup_server_message_set_status (msg, rule->status, NULL);
      soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_STATIC,
                                        error, strlen (error));
      return;
    }

  if (rule != NULL && rule->kind == ANSWER_TASK)
    answer = task_answer ();
  else if (rule != NULL && rule->kind == ANSWER_SEND_MESSAGE)
    answer = send_message_answer (g_bytes_get_data (body, NULL));
  else
    answer = text_answer (rule && rule->text ? rule->text : "Done.");

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/event-stream", SOUP_MEMORY_TAKE, answer, strlen (answer));
}

static void
script (Rule  *new_rules,
        guint  n)
{
  rules = new_rules;
  n_rules = n;
}

/* The scenarios: the same story as the HTTP one, through the CLI. */

static void
on_agent_status (MendTurn   *turn,
                 GParamSpec *pspec,
                 gpointer    data)
{
  if (mend_turn_get_agent_status (turn) != NULL)
    say ("  … %s", mend_turn_get_agent_status (turn));
}

static void
on_stop_when_retrying (MendTurn   *turn,
                       GParamSpec *pspec,
                       Demo       *demo)
{
  if (mend_turn_get_agent_status (turn) != NULL && mend_turn_get_state (turn) == MEND_TURN_RUNNING)
    {
      say ("  ■ %s", _("Stop (while Claude Code retries on its own)"));
      mend_chat_stop (demo->chat);
    }
}

static gboolean stop_armed;

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Demo     *demo)
{
  g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_agent_status), NULL);
  if (stop_armed)
    {
      stop_armed = FALSE;
      g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_stop_when_retrying), demo);
    }
}

static void
agent_retry (Demo *demo)
{
  static Rule r[] = {
    { "Then update the changelog", 0, ANSWER_TEXT, 0, "The changelog is updated.", 0 },
    { "Fix the failing build", 4, ANSWER_STATUS, 529, NULL, 0 },
    { "Fix the failing build", 0, ANSWER_TEXT, 0, "Done: the build is green.", 0 },
  };

  static const MendTurnState planned[] = { MEND_TURN_SUCCEEDED, MEND_TURN_SUCCEEDED };

  say ("\n# %s", _("retry: Claude Code gives up on 529 twice; libmend retries; the follow-up waits"));
  begin_scenario (demo);
  script (r, G_N_ELEMENTS (r));
  mend_chat_submit (demo->chat, "Fix the failing build", NULL, NULL);
  mend_chat_submit (demo->chat, "Then update the changelog", NULL, NULL);
  say ("  %s", _("(queued meanwhile: “Then update the changelog”)"));
  run_until_idle (demo);
  expect_turns (demo, "retry", planned, G_N_ELEMENTS (planned));
}

static void
agent_give_up (Demo *demo)
{
  static Rule r[] = {
    { "Post the release notes", 0, ANSWER_TEXT, 0, NULL, 0 },
    { "Deploy the staging stack", 0, ANSWER_STATUS, 503, NULL, 0 },
  };

  /* The give-up is the point of this scenario. */
  static const MendTurnState planned[] = { MEND_TURN_FAILED };

  say ("\n# %s", _("give-up: Claude Code gives up on 503 five times; Continue goes to the queue's head"));
  begin_scenario (demo);
  script (r, G_N_ELEMENTS (r));
  mend_chat_submit (demo->chat, "Deploy the staging stack", NULL, NULL);
  mend_chat_submit (demo->chat, "Post the release notes", NULL, NULL);
  run_until_idle (demo);
  expect_turns (demo, "give-up", planned, G_N_ELEMENTS (planned));
  clear_queue (demo);
}

static void
agent_stop (Demo *demo)
{
  static Rule r[] = {
    { "Draft the postmortem", 0, ANSWER_TEXT, 0, "The postmortem is drafted.", 0 },
    { "Summarize the incident", 0, ANSWER_STATUS, 529, NULL, 0 },
  };

  static const MendTurnState planned[] = { MEND_TURN_STOPPED, MEND_TURN_SUCCEEDED };

  say ("\n# %s", _("stop: a Stop while Claude Code retries; the CLI keeps its session"));
  begin_scenario (demo);
  script (r, G_N_ELEMENTS (r));
  stop_armed = TRUE;
  mend_chat_submit (demo->chat, "Summarize the incident", NULL, NULL);
  mend_chat_submit (demo->chat, "Draft the postmortem", NULL, NULL);
  run_until_idle (demo);
  say ("  %s", _("the queue moves again on send_next (the idle Send):"));
  mend_chat_send_next (demo->chat);
  run_until_idle (demo);
  expect_turns (demo, "stop", planned, G_N_ELEMENTS (planned));
}

static void
on_subagent_state (MendSubagent *subagent,
                   GParamSpec   *pspec,
                   gpointer      data)
{
  MendFailure *failure = mend_subagent_get_failure (subagent);

  if (mend_subagent_get_state (subagent) == MEND_SUBAGENT_FAILED && failure != NULL)
    say (_("  subagent “%s” failed: %s"), mend_subagent_get_name (subagent), mend_failure_get_message (failure));
  else
    say (_("  subagent “%s” %s"), mend_subagent_get_name (subagent),
         subagent_state_label (mend_subagent_get_state (subagent)));
}

/* Each subagent that joins the list is followed through its state. */
static void
on_subagents_changed (GListModel *subagents,
                      guint       position,
                      guint       removed,
                      guint       added,
                      gpointer    data)
{
  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(MendSubagent) subagent = g_list_model_get_item (subagents, i);

      on_subagent_state (subagent, NULL, NULL);
      g_signal_connect (subagent, "notify::state", G_CALLBACK (on_subagent_state), NULL);
    }
}

static void
on_subagent_waiting (MendSubagentRetry *retry,
                     MendSubagent      *subagent,
                     MendRetryWait     *wait,
                     gpointer           data)
{
  show_wait (wait, _("resume:"));
}

static gboolean
subagent_completed (MendSubagentRetry *retry)
{
  g_autoptr(MendSubagent) subagent = g_list_model_get_item (G_LIST_MODEL (retry), 0);

  return subagent != NULL && mend_subagent_get_state (subagent) == MEND_SUBAGENT_COMPLETED;
}

static void
agent_subagent (Demo *demo)
{
  static Rule r[] = {
    { "with SendMessage to", 1, ANSWER_SEND_MESSAGE, 0, NULL, 0 },
    { "Please continue the survey", 0, ANSWER_TEXT, 0, "The survey is done: five modules.", 0 },
    { "Start the survey", 1, ANSWER_TASK, 0, NULL, 0 },
    { SURVEY_PROMPT, 0, ANSWER_STATUS, 503, NULL, 0 },
    { NULL, 0, ANSWER_TEXT, 0, "The survey runs in the background.", 0 },
  };
  MendSubagentRetry *retry = mend_chat_get_subagents (demo->chat);
  gulong ids[2];

  say ("\n# %s", _("subagent: Claude Code's background subagent dies on 503; it is resumed in its session"));
  begin_scenario (demo);
  script (r, G_N_ELEMENTS (r));
  ids[0] = g_signal_connect (retry, "items-changed", G_CALLBACK (on_subagents_changed), NULL);
  ids[1] = g_signal_connect (retry, "waiting", G_CALLBACK (on_subagent_waiting), NULL);

  mend_chat_submit (demo->chat, "Start the survey in the background", NULL, NULL);
  /* Until the resumed subagent has completed and the chat is idle. */
  while (!subagent_completed (retry) || mend_chat_get_turn (demo->chat) != NULL ||
         mend_chat_get_external_turn (demo->chat))
    g_main_context_iteration (NULL, TRUE);

  /* The Task turn and the resume turn: each succeeded. */
  expect_turns (demo, "subagent", NULL, 0);

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    g_signal_handler_disconnect (retry, ids[i]);
}

/* The private home, with the CLI's settings and transcripts, goes at the end. */
static void
remove_tree (GFile *file)
{
  g_autoptr(GFileEnumerator) children =
    g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                               G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  GFileInfo *info;
  GFile *child;

  while (children != NULL &&
         g_file_enumerator_iterate (children, &info, &child, NULL, NULL) && info != NULL)
    {
      if (g_file_info_get_file_type (info) == G_FILE_TYPE_DIRECTORY)
        remove_tree (child);
      else
        g_file_delete (child, NULL, NULL);
    }
  g_file_delete (file, NULL, NULL);
}

int
run_agent_demo (Demo       *demo,
                MendClock  *clock,
                const char *claude,
                const char *scenario)
{
  static const Scenario scenarios[] = {
    { "retry", agent_retry },
    { "give-up", agent_give_up },
    { "stop", agent_stop },
    { "subagent", agent_subagent },
  };
  g_autoptr(SoupServer) server = soup_server_new (NULL, NULL);
  g_autoptr(MendAgentProcess) agent = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *home = NULL;
  g_autofree char *base_url = NULL;
  GSList *uris;

  soup_server_add_handler (server, "/v1/messages", serve, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    {
      g_printerr (_("mend-demo: cannot start the embedded server: %s\n"), error->message);
      return 1;
    }
  uris = soup_server_get_uris (server);
  base_url = g_strdup_printf ("http://127.0.0.1:%d", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  home = g_dir_make_tmp ("mend-demo-XXXXXX", &error);
  if (home == NULL)
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 1;
    }

  /* Offline, in a private home, and quick to give up on its own. */
  agent = mend_agent_process_new_claude_code (claude);
  mend_agent_set_environ (MEND_AGENT (agent), (const char *[]) { "LANG=C.UTF-8", NULL });
  mend_agent_setenv (MEND_AGENT (agent), "PATH", g_getenv ("PATH"));
  mend_agent_setenv (MEND_AGENT (agent), "HOME", home);
  mend_agent_setenv (MEND_AGENT (agent), "TMPDIR", home);
  mend_agent_setenv (MEND_AGENT (agent), "ANTHROPIC_BASE_URL", base_url);
  mend_agent_setenv (MEND_AGENT (agent), "ANTHROPIC_API_KEY", "sk-ant-demo-not-a-key");
  mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
  mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_MAX_RETRIES", "1");
  mend_agent_setenv (MEND_AGENT (agent), "IS_SANDBOX", "1");
  mend_agent_set_cwd (MEND_AGENT (agent), home);

  demo->chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, "id", "demo-agent", NULL);
  connect_chat (demo);
  g_signal_connect (demo->chat, "turn-started", G_CALLBACK (on_turn_started), demo);

  say (_("libmend %s — Claude Code (%s) as the chat's sender, against a model server on loopback;\n"
         "waits run %g× faster (--speed)"), MEND_VERSION_S, claude, get_speed ());

  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    if (scenario == NULL || g_str_equal (scenario, scenarios[i].name))
      scenarios[i].run (demo);

  say ("\n%s", demo->off_script ? _("A scenario did not play as scripted.")
                                : _("Every scenario played as scripted."));
  say (g_dngettext (NULL,
                    "%u requests reached the server; one Claude Code session (%s), started %u time; "
                    "every queued item was kept.",
                    "%u requests reached the server; one Claude Code session (%s), started %u times; "
                    "every queued item was kept.", mend_agent_get_n_starts (MEND_AGENT (agent))),
       n_requests,
       mend_agent_get_session_id (MEND_AGENT (agent)) ? mend_agent_get_session_id (MEND_AGENT (agent)) : _("none"),
       mend_agent_get_n_starts (MEND_AGENT (agent)));

  mend_chat_close (demo->chat);
  mend_agent_terminate (MEND_AGENT (agent));
  g_clear_object (&demo->chat);
  {
    g_autoptr(GFile) file = g_file_new_for_path (home);

    remove_tree (file);
  }
  return demo->off_script ? 1 : 0;
}

/* mend-demo --acp: the same story through Claude Code's Agent Client
 * Protocol adapter (MendAcpAgent), against the same model server. */

#if MEND_HAS_ACP
static gboolean acp_stop_armed;
/* A Stop while the agent writes sends session/cancel. */
static guint acp_cancels_sent;

static void
on_acp_update (MendAcpAgent *agent,
               const char   *kind,
               const char   *json,
               Demo         *demo)
{
  if (acp_stop_armed && g_str_equal (kind, "agent_message_chunk") && strstr (json, "\"text\":\"\"") == NULL)
    {
      acp_stop_armed = FALSE;
      say ("  ■ %s", _("Stop (while the agent writes): session/cancel"));
      acp_cancels_sent++;
      mend_chat_stop (demo->chat);
    }
}

static void
acp_stop (Demo *demo)
{
  static Rule r[] = {
    { "Draft the postmortem", 0, ANSWER_TEXT, 0, "The postmortem is drafted.", 0 },
    { "Summarize the incident", 0, ANSWER_TEXT, 0, "The incident began at 09:12 when…", 0 },
  };

  static const MendTurnState planned[] = { MEND_TURN_STOPPED, MEND_TURN_SUCCEEDED };

  say ("\n# %s", _("stop: a Stop while the agent writes; the session stays"));
  begin_scenario (demo);
  script (r, G_N_ELEMENTS (r));
  acp_stop_armed = TRUE;
  mend_chat_submit (demo->chat, "Summarize the incident", NULL, NULL);
  mend_chat_submit (demo->chat, "Draft the postmortem", NULL, NULL);
  run_until_idle (demo);
  say ("  %s", _("the queue moves again on send_next (the idle Send):"));
  mend_chat_send_next (demo->chat);
  run_until_idle (demo);
  expect_turns (demo, "stop", planned, G_N_ELEMENTS (planned));
}

static void
acp_subagent (Demo *demo)
{
  static Rule r[] = {
    { "Start the survey", 1, ANSWER_TASK, 0, NULL, 0 },
    { SURVEY_PROMPT, 0, ANSWER_STATUS, 503, NULL, 0 },
    { NULL, 0, ANSWER_TEXT, 0, "The survey runs in the background.", 0 },
  };
  MendSubagentRetry *retry = mend_chat_get_subagents (demo->chat);
  g_autoptr(MendSubagent) subagent = NULL;

  say ("\n# %s", _("subagent: a background subagent starts; its 503 does not reach ACP"));
  begin_scenario (demo);
  script (r, G_N_ELEMENTS (r));
  mend_chat_submit (demo->chat, "Start the survey in the background", NULL, NULL);
  run_until_idle (demo);
  expect_turns (demo, "subagent", NULL, 0);

  subagent = g_list_model_get_item (G_LIST_MODEL (retry), 0);
  if (subagent != NULL)
    say (_("  subagent “%s” runs (agent id %s); claude-code-acp does not forward its failure,\n"
           "  so over this adapter libmend cannot resume it (a hub reporting _meta.acpmux.subagents can)"),
         mend_subagent_get_name (subagent), mend_subagent_get_agent_id (subagent));
  else
    {
      say ("  %s", _("no subagent was reported"));
      demo->off_script = TRUE;
    }
}

int
run_acp_demo (Demo       *demo,
              MendClock  *clock,
              const char *adapter,
              const char *scenario)
{
  static const Scenario scenarios[] = {
    { "retry", agent_retry },
    { "give-up", agent_give_up },
    { "stop", acp_stop },
    { "subagent", acp_subagent },
  };
  g_autoptr(SoupServer) server = soup_server_new (NULL, NULL);
  g_autoptr(MendAcpAgent) agent = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *home = NULL;
  g_autofree char *base_url = NULL;
  GSList *uris;

  soup_server_add_handler (server, "/v1/messages", serve, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    {
      g_printerr (_("mend-demo: cannot start the embedded server: %s\n"), error->message);
      return 1;
    }
  uris = soup_server_get_uris (server);
  base_url = g_strdup_printf ("http://127.0.0.1:%d", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  home = g_dir_make_tmp ("mend-demo-XXXXXX", &error);
  if (home == NULL)
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 1;
    }

  /* Offline, in a private home, and quick to give up on its own. */
  agent = mend_acp_agent_new_claude_code (adapter);
  mend_agent_set_environ (MEND_AGENT (agent), (const char *[]) { "LANG=C.UTF-8", NULL });
  mend_agent_setenv (MEND_AGENT (agent), "PATH", g_getenv ("PATH"));
  mend_agent_setenv (MEND_AGENT (agent), "HOME", home);
  mend_agent_setenv (MEND_AGENT (agent), "ANTHROPIC_BASE_URL", base_url);
  mend_agent_setenv (MEND_AGENT (agent), "ANTHROPIC_API_KEY", "sk-ant-demo-not-a-key");
  mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
  mend_agent_setenv (MEND_AGENT (agent), "CLAUDE_CODE_MAX_RETRIES", "1");
  mend_agent_setenv (MEND_AGENT (agent), "IS_SANDBOX", "1");
  mend_agent_set_cwd (MEND_AGENT (agent), home);

  demo->chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "sender", agent, "id", "demo-acp", NULL);
  connect_chat (demo);
  g_signal_connect (agent, "update", G_CALLBACK (on_acp_update), demo);

  say (_("libmend %s — Claude Code over the Agent Client Protocol (%s) as the chat's sender,\n"
         "against a model server on loopback; waits run %g× faster (--speed)"),
       MEND_VERSION_S, adapter, get_speed ());

  for (guint i = 0; i < G_N_ELEMENTS (scenarios); i++)
    if (scenario == NULL || g_str_equal (scenario, scenarios[i].name))
      scenarios[i].run (demo);

  say ("\n%s", demo->off_script ? _("A scenario did not play as scripted.")
                                : _("Every scenario played as scripted."));
  say (g_dngettext (NULL,
                    "%u requests reached the server; one ACP session (%s), started %u time, "
                    "%u session/cancel sent; every queued item was kept.",
                    "%u requests reached the server; one ACP session (%s), started %u times, "
                    "%u session/cancel sent; every queued item was kept.", mend_agent_get_n_starts (MEND_AGENT (agent))),
       n_requests,
       mend_agent_get_session_id (MEND_AGENT (agent)) ? mend_agent_get_session_id (MEND_AGENT (agent)) : _("none"),
       mend_agent_get_n_starts (MEND_AGENT (agent)),
       acp_cancels_sent);

  mend_chat_close (demo->chat);
  mend_agent_terminate (MEND_AGENT (agent));
  g_clear_object (&demo->chat);
  return demo->off_script ? 1 : 0;
}
#else
int
run_acp_demo (Demo       *demo,
              MendClock  *clock,
              const char *adapter,
              const char *scenario)
{
  g_printerr (_("mend-demo: this libmend was built without the Agent Client Protocol (-Dacp=disabled)\n"));
  return 2;
}
#endif

#else /* !MEND_HAS_AGENTS */
static int
built_without_agents (void)
{
  g_printerr (_("mend-demo: this libmend was built without its agent senders (-Dagents=disabled)\n"));
  return 2;
}

int
run_agent_demo (Demo       *demo,
                MendClock  *clock,
                const char *cli,
                const char *scenario)
{
  return built_without_agents ();
}

int
run_acp_demo (Demo       *demo,
              MendClock  *clock,
              const char *adapter,
              const char *scenario)
{
  return built_without_agents ();
}
#endif /* MEND_HAS_AGENTS */
