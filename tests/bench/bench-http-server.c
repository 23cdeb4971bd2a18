/* bench-http-server.c — the streams of bench-http, and the loopback server that sends them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The events are in the shapes the providers document: Anthropic's
 * https://docs.anthropic.com/en/api/messages-streaming, OpenAI's
 * https://platform.openai.com/docs/api-reference/chat-streaming and
 * https://platform.openai.com/docs/api-reference/responses-streaming,
 * Google's https://ai.google.dev/api/generate-content (its SSE lines end
 * in CRLF, its JSON has a space after each colon and comma).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libsoup/soup.h>

#include "bench-http.h"

const char *const format_names[N_FORMATS] = { "messages", "chat", "responses", "gemini" };
const char *const format_paths[N_FORMATS] = {
  "/v1/messages?",
  "/v1/chat/completions?",
  "/v1/responses?",
  "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&",
};

Format
format_from_name (const char *name)
{
  for (guint i = 0; i < N_FORMATS; i++)
    if (g_str_equal (name, format_names[i]))
      return i;
  g_printerr ("bench-http: no format %s\n", name);
  exit (2);
}

/* The streams */

/* The text of delta @i, as JSON string content: mostly words, some with a
 * line break, a quote or a letter beyond ASCII. */
const char *
delta_text (guint i)
{
  static const char *const words[] = {
    " The", " build", " fails", " because", " libsoup", " is", " not", " found",
    ".\\n\\n", " Install", " `libsoup-3.0-dev`", " and", " run", " \\\"meson", " setup\\\"", " again",
    " caf\xc3\xa9", " then", " rebuild", ":",
  };

  return words[i % G_N_ELEMENTS (words)];
}

static void
append_event (GString *s,
              Format   format,
              guint    i)
{
  const char *text = delta_text (i);

  switch (format)
    {
    case FORMAT_MESSAGES:
      g_string_append_printf (s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                                 "\"delta\":{\"type\":\"text_delta\",\"text\":\"%s\"}}\n\n", text);
      break;
    case FORMAT_CHAT:
      g_string_append_printf (s, "data: {\"id\":\"chatcmpl-mend0000000000000000000001\",\"object\":\"chat.completion.chunk\","
                                 "\"created\":1764500000,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\","
                                 "\"system_fingerprint\":\"fp_0123456789\",\"choices\":[{\"index\":0,\"delta\":"
                                 "{\"content\":\"%s\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", text);
      break;
    case FORMAT_RESPONSES:
      g_string_append_printf (s, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
                                 "\"sequence_number\":%u,\"item_id\":\"msg_0123456789abcdef\",\"output_index\":0,"
                                 "\"content_index\":0,\"delta\":\"%s\",\"logprobs\":[]}\n\n", i + 4, text);
      break;
    case FORMAT_GEMINI:
    default:
      g_string_append_printf (s, "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"%s\"}],"
                                 "\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 9,"
                                 "\"candidatesTokenCount\": %u,\"totalTokenCount\": %u},"
                                 "\"modelVersion\": \"gemini-2.0-flash\",\"responseId\": \"mend0123456789\"}\r\n\r\n",
                              text, i + 1, i + 10);
      break;
    }
}

GPtrArray *
make_stream (Format format,
             guint  n)
{
  GPtrArray *events = g_ptr_array_new_with_free_func (g_free);
  GString *s = g_string_new (NULL);

#define ADD(text) g_ptr_array_add (events, g_strdup (text))
  switch (format)
    {
    case FORMAT_MESSAGES:
      ADD ("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_0123456789\","
           "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\","
           "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n");
      ADD ("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
           "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
      ADD ("event: ping\ndata: {\"type\": \"ping\"}\n\n");
      break;
    case FORMAT_CHAT:
      ADD ("data: {\"id\":\"chatcmpl-mend0000000000000000000001\",\"object\":\"chat.completion.chunk\","
           "\"created\":1764500000,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\","
           "\"system_fingerprint\":\"fp_0123456789\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
           "\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
      break;
    case FORMAT_RESPONSES:
      ADD ("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":"
           "{\"id\":\"resp_0123456789\",\"object\":\"response\",\"created_at\":1764500000,\"status\":\"in_progress\","
           "\"model\":\"gpt-4o-2024-08-06\",\"output\":[]}}\n\n");
      ADD ("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":2,"
           "\"output_index\":0,\"item\":{\"id\":\"msg_0123456789abcdef\",\"type\":\"message\",\"status\":\"in_progress\","
           "\"content\":[],\"role\":\"assistant\"}}\n\n");
      ADD ("event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":3,"
           "\"item_id\":\"msg_0123456789abcdef\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\","
           "\"annotations\":[],\"text\":\"\"}}\n\n");
      break;
    case FORMAT_GEMINI:
    default:
      break;
    }

  for (guint i = 0; i < n; i++)
    {
      g_string_truncate (s, 0);
      append_event (s, format, i);
      ADD (s->str);
    }

  switch (format)
    {
    case FORMAT_MESSAGES:
      ADD ("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n");
      ADD ("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
           "\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n");
      ADD ("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
      break;
    case FORMAT_CHAT:
      ADD ("data: {\"id\":\"chatcmpl-mend0000000000000000000001\",\"object\":\"chat.completion.chunk\","
           "\"created\":1764500000,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\","
           "\"system_fingerprint\":\"fp_0123456789\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,"
           "\"finish_reason\":\"stop\"}]}\n\n");
      ADD ("data: {\"id\":\"chatcmpl-mend0000000000000000000001\",\"object\":\"chat.completion.chunk\","
           "\"created\":1764500000,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,"
           "\"completion_tokens\":12,\"total_tokens\":21}}\n\n");
      ADD ("data: [DONE]\n\n");
      break;
    case FORMAT_RESPONSES:
      ADD ("event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"sequence_number\":9,"
           "\"item_id\":\"msg_0123456789abcdef\",\"output_index\":0,\"content_index\":0,\"text\":\"The build\"}\n\n");
      ADD ("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":10,\"response\":"
           "{\"id\":\"resp_0123456789\",\"object\":\"response\",\"created_at\":1764500000,\"status\":\"completed\","
           "\"model\":\"gpt-4o-2024-08-06\",\"usage\":{\"input_tokens\":9,\"output_tokens\":12,\"total_tokens\":21}}}\n\n");
      break;
    case FORMAT_GEMINI:
    default:
      ADD ("data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \".\"}],\"role\": \"model\"},"
           "\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 9,"
           "\"candidatesTokenCount\": 12,\"totalTokenCount\": 21},\"modelVersion\": \"gemini-2.0-flash\","
           "\"responseId\": \"mend0123456789\"}\r\n\r\n");
      break;
    }
#undef ADD

  g_string_free (s, TRUE);
  return events;
}

/* The server: in a process of its own */

/* A stream paced as a model streams: one event a millisecond. */
typedef struct
{
  SoupServerMessage *msg;
  GPtrArray         *events;
  guint              next;
  guint              timer;
} Paced;

static void
paced_free (gpointer data)
{
  Paced *paced = data;

  if (paced->timer != 0)
    g_source_remove (paced->timer);
  g_ptr_array_unref (paced->events);
  g_free (paced);
}

static gboolean
on_pace (gpointer data)
{
  Paced *paced = data;
  SoupMessageBody *body = soup_server_message_get_response_body (paced->msg);
  const char *event = paced->events->pdata[paced->next++];

  soup_message_body_append (body, SOUP_MEMORY_COPY, event, strlen (event));
  if (paced->next == paced->events->len)
    {
      soup_message_body_complete (body);
      paced->timer = 0;
    }
  soup_server_message_unpause (paced->msg);
  return paced->timer != 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
on_paced_finished (SoupServerMessage *msg,
                   gpointer           data)
{
  g_object_set_data (G_OBJECT (msg), "paced", NULL);
}

static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           user_data)
{
  const char *deltas = query != NULL ? g_hash_table_lookup (query, "deltas") : NULL;
  const char *chunks = query != NULL ? g_hash_table_lookup (query, "chunks") : NULL;
  GPtrArray *events;
  SoupMessageBody *body = soup_server_message_get_response_body (msg);
  Format format = FORMAT_MESSAGES;

  if (g_str_has_suffix (path, "/chat/completions"))
    format = FORMAT_CHAT;
  else if (g_str_has_suffix (path, "/responses"))
    format = FORMAT_RESPONSES;
  else if (g_str_has_suffix (path, ":streamGenerateContent"))
    format = FORMAT_GEMINI;

  events = make_stream (format, deltas != NULL ? (guint) g_ascii_strtoull (deltas, NULL, 10) : 1);
  soup_server_message_set_status (msg, 200, NULL);
  soup_message_headers_set_content_type (soup_server_message_get_response_headers (msg), "text/event-stream", NULL);
  if (g_strcmp0 (chunks, "paced") == 0)
    {
      Paced *paced = g_new0 (Paced, 1);

      paced->msg = msg;
      paced->events = events;
      paced->timer = g_timeout_add (1, on_pace, paced);
      g_object_set_data_full (G_OBJECT (msg), "paced", paced, paced_free);
      g_signal_connect (msg, "finished", G_CALLBACK (on_paced_finished), NULL);
      soup_message_headers_set_encoding (soup_server_message_get_response_headers (msg), SOUP_ENCODING_CHUNKED);
    }
  else if (g_strcmp0 (chunks, "events") == 0)
    {
      /* As model servers send a stream: each event an HTTP chunk of its
       * own, all written at once (a client that keeps up reads one chunk
       * a read). */
      soup_message_headers_set_encoding (soup_server_message_get_response_headers (msg), SOUP_ENCODING_CHUNKED);
      for (guint i = 0; i < events->len; i++)
        soup_message_body_append (body, SOUP_MEMORY_COPY, events->pdata[i], strlen (events->pdata[i]));
      soup_message_body_complete (body);
      g_ptr_array_unref (events);
    }
  else
    {
      GString *whole = g_string_new (NULL);
      gsize length;

      for (guint i = 0; i < events->len; i++)
        g_string_append (whole, events->pdata[i]);
      length = whole->len;
      soup_message_body_append (body, SOUP_MEMORY_TAKE, g_string_free (whole, FALSE), length);
      g_ptr_array_unref (events);
    }
}

static gboolean
on_stdin (GIOChannel   *channel,
          GIOCondition  condition,
          gpointer      loop)
{
  char buffer[64];

  /* The parent went away: so does the server. */
  if (read (0, buffer, sizeof buffer) <= 0)
    g_main_loop_quit (loop);
  return G_SOURCE_CONTINUE;
}

int
run_server (void)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(SoupServer) server = soup_server_new (NULL, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GIOChannel) channel = g_io_channel_unix_new (0);
  GSList *uris;

  soup_server_add_handler (server, NULL, serve, NULL, NULL);
  if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    {
      g_printerr ("bench-http: %s\n", error->message);
      return 1;
    }
  uris = soup_server_get_uris (server);
  printf ("PORT %d\n", g_uri_get_port (uris->data));
  fflush (stdout);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  g_io_add_watch (channel, G_IO_IN | G_IO_HUP | G_IO_ERR, on_stdin, loop);
  g_main_loop_run (loop);
  return 0;
}

guint
start_server (const char *argv0,
              int        *to_server,
              GPid       *pid)
{
  const char *argv[] = { argv0, "--serve", NULL };
  g_autoptr(GError) error = NULL;
  char line[64] = "";
  int from_server;
  FILE *out;
  guint port = 0;

  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, pid,
                                 to_server, &from_server, NULL, &error))
    {
      g_printerr ("bench-http: no server: %s\n", error->message);
      exit (1);
    }
  out = fdopen (from_server, "r");
  if (fgets (line, sizeof line, out) == NULL || sscanf (line, "PORT %u", &port) != 1)
    {
      g_printerr ("bench-http: the server did not start\n");
      exit (1);
    }
  fclose (out);
  return port;
}
