/* bench-acp.c — what MendAcpAgent costs per streamed text chunk
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For instruction counts under callgrind (bench_callgrind.py): one prompt
 * to the scripted agent of the tests (tests/support/fake-acp-agent.py, a
 * process of its own, which callgrind does not count) that answers with N
 * agent_message_chunk notifications, then end_turn. libmend: a
 * MendAcpAgent under a MendChat, the text reaching the app through the
 * chat's ::text-delta. Naive: the same agent run by a GSubprocess, its
 * lines read by a GDataInputStream, each parsed by a JsonParser (one,
 * reused) and the text of each chunk appended for the app. Per chunk is
 * (a prompt of N + 1 chunks − a prompt of 1) ÷ N.
 *
 * usage: bench-acp mend|naive N
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libmend.h>

static char *
write_script (guint n)
{
  g_autoptr(GString) script = g_string_new ("{\"prompts\": [[");
  g_autoptr(GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp ("bench-acp-XXXXXX.json", &path, &error);

  if (fd < 0)
    {
      g_printerr ("bench-acp: %s\n", error->message);
      exit (1);
    }
  close (fd);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (script, "{\"update\": {\"sessionUpdate\": \"agent_message_chunk\", "
                                    "\"content\": {\"type\": \"text\", \"text\": \" word%u\"}}}, ", i);
  g_string_append (script, "{\"result\": {\"stopReason\": \"end_turn\"}}]]}");
  if (!g_file_set_contents (path, script->str, -1, &error))
    {
      g_printerr ("bench-acp: %s\n", error->message);
      exit (1);
    }
  return path;
}

static void
check_text (const GString *text,
            guint          n)
{
  for (guint i = 0, at = 0; i < n; i++)
    {
      g_autofree char *word = g_strdup_printf (" word%u", i);

      if (strncmp (text->str + at, word, strlen (word)) != 0)
        {
          g_printerr ("bench-acp: the app's text is not the agent's: %s\n", text->str);
          exit (1);
        }
      at += strlen (word);
    }
}

/* libmend */

typedef struct
{
  GString  *text;
  gboolean  finished;
} App;

static void
on_text_delta (MendChat   *chat,
               MendTurn   *turn,
               const char *delta,
               App        *app)
{
  g_string_append (app->text, delta);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  App      *app)
{
  app->finished = TRUE;
}

static void
run_mend (const char *script,
          App        *app)
{
  const char *argv[] = { BENCH_PYTHON, BENCH_SRCDIR "/tests/support/fake-acp-agent.py", script, NULL };
  g_autoptr(MendAcpAgent) agent = mend_acp_agent_new (argv);
  g_autoptr(MendChat) chat = g_object_new (MEND_TYPE_CHAT, "sender", agent, NULL);

  g_signal_connect (chat, "text-delta", G_CALLBACK (on_text_delta), app);
  g_signal_connect (chat, "turn-finished", G_CALLBACK (on_turn_finished), app);
  if (!mend_chat_submit (chat, "Why does the build fail?", NULL, NULL))
    exit (1);
  while (!app->finished)
    g_main_context_iteration (NULL, TRUE);
  mend_chat_close (chat);
  mend_agent_terminate (MEND_AGENT (agent));
}

/* Naive */

typedef struct
{
  GDataInputStream *lines;
  GOutputStream    *to_agent;
  JsonParser       *parser;
  GString          *text;
  gboolean          done;
} Naive;

static void
say (Naive      *naive,
     const char *line)
{
  if (!g_output_stream_write_all (naive->to_agent, line, strlen (line), NULL, NULL, NULL))
    exit (1);
}

static void read_next (Naive *naive);

static void
on_line (GObject      *object,
         GAsyncResult *result,
         gpointer      data)
{
  Naive *naive = data;
  gsize length = 0;
  g_autofree char *line = g_data_input_stream_read_line_finish (G_DATA_INPUT_STREAM (object), result, &length,
                                                                NULL);
  JsonObject *message;
  JsonObject *params;
  JsonObject *update;
  JsonObject *content;
  gint64 id;

  if (line == NULL)
    exit (1);
  if (!json_parser_load_from_data (naive->parser, line, length, NULL) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (naive->parser)))
    exit (1);
  message = json_node_get_object (json_parser_get_root (naive->parser));
  id = json_object_get_int_member_with_default (message, "id", 0);
  if (id == 1)
    say (naive, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/\",\"mcpServers\":[]}}\n");
  else if (id == 2)
    say (naive, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\","
                "\"prompt\":[{\"type\":\"text\",\"text\":\"Why does the build fail?\"}]}}\n");
  else if (id == 3)
    {
      naive->done = TRUE;
      return;
    }
  else if (g_strcmp0 (json_object_get_string_member_with_default (message, "method", NULL), "session/update") == 0 &&
           (params = json_object_get_object_member (message, "params")) != NULL &&
           (update = json_object_get_object_member (params, "update")) != NULL &&
           g_strcmp0 (json_object_get_string_member_with_default (update, "sessionUpdate", NULL),
                      "agent_message_chunk") == 0 &&
           (content = json_object_get_object_member (update, "content")) != NULL)
    g_string_append (naive->text, json_object_get_string_member_with_default (content, "text", ""));
  read_next (naive);
}

static void
read_next (Naive *naive)
{
  g_data_input_stream_read_line_async (naive->lines, G_PRIORITY_DEFAULT, NULL, on_line, naive);
}

static void
run_naive (const char *script,
           GString    *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) agent = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                                   &error, BENCH_PYTHON,
                                                   BENCH_SRCDIR "/tests/support/fake-acp-agent.py", script, NULL);
  Naive naive = { NULL, NULL, json_parser_new (), text, FALSE };

  if (agent == NULL)
    exit (1);
  naive.lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (agent));
  naive.to_agent = g_subprocess_get_stdin_pipe (agent);
  say (&naive, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n");
  read_next (&naive);
  while (!naive.done)
    g_main_context_iteration (NULL, TRUE);
  g_subprocess_force_exit (agent);
  g_subprocess_wait (agent, NULL, NULL);
  g_object_unref (naive.lines);
  g_object_unref (naive.parser);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *script = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  guint n;

  if (argc != 3)
    return 2;
  n = (guint) g_ascii_strtoull (argv[2], NULL, 10);
  script = write_script (n);
  if (g_str_equal (argv[1], "mend"))
    {
      App app = { text, FALSE };

      run_mend (script, &app);
    }
  else
    run_naive (script, text);
  g_unlink (script);
  check_text (text, n);
  return 0;
}
