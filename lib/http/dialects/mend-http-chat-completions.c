/* mend-http-chat-completions.c — the OpenAI Chat Completions format, as MendHttpSender speaks it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The format of OpenAI's /v1/chat/completions and of the servers that
 * copy it (Ollama, llama.cpp's server, vLLM, LM Studio, OpenRouter, Groq,
 * Mistral, DeepSeek…), after https://platform.openai.com/docs/api-reference/chat.
 *
 * The request: {"model","max_tokens","stream":true,
 * "stream_options":{"include_usage":true},"messages":[…]}, each message
 * {"role","content"} with the text of its blocks; an assistant's tool calls
 * as "tool_calls", their results as messages of role "tool". The answer:
 * chunks {"choices":[{"index":0,"delta":{"content","tool_calls"},
 * "finish_reason"}]}, a last chunk of usage with no choice, then `data:
 * [DONE]`; an {"error":{…}} object inside the stream for a failure; or one
 * JSON body, {"choices":[{"message":{…},"finish_reason"}]}.
 */

#include "config.h"

#include <string.h>

#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-json-scan-private.h"

/* An assistant's tool calls, as "tool_calls" after its content. */
static void
write_tool_calls (GString   *out,
                  JsonArray *blocks)
{
  gboolean any = FALSE;

  for (guint i = 0; i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = mend_http_block_at (blocks, i);
      const char *id = mend_json_get_string (block, "id");
      const char *name = mend_json_get_string (block, "name");
      g_autofree char *arguments = NULL;

      if (g_strcmp0 (mend_json_get_string (block, "type"), "tool_use") != 0 || id == NULL || name == NULL)
        continue;
      arguments = mend_http_tool_arguments (block);
      g_string_append (out, any ? ",{\"id\":" : ",\"tool_calls\":[{\"id\":");
      mend_json_write_string (out, id);
      g_string_append (out, ",\"type\":\"function\",\"function\":{\"name\":");
      mend_json_write_string (out, name);
      g_string_append (out, ",\"arguments\":");
      mend_json_write_string (out, arguments);
      g_string_append (out, "}}");
      any = TRUE;
    }
  if (any)
    g_string_append_c (out, ']');
}

/* The results of tool calls in a user message, each a message of role
 * "tool", items after @start. */
static void
write_tool_results (GString   *out,
                    gsize      start,
                    JsonArray *blocks)
{
  for (guint i = 0; i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = mend_http_block_at (blocks, i);
      const char *id = mend_json_get_string (block, "tool_use_id");

      if (g_strcmp0 (mend_json_get_string (block, "type"), "tool_result") != 0 || id == NULL)
        continue;
      mend_http_begin_item (out, start);
      g_string_append (out, "{\"role\":\"tool\",\"tool_call_id\":");
      mend_json_write_string (out, id);
      g_string_append (out, ",\"content\":");
      mend_http_write_content_text (out, json_object_get_member (block, "content"), TRUE);
      g_string_append_c (out, '}');
    }
}

static void
chat_write_frame (const char *model,
                  guint       max_tokens,
                  GString    *head,
                  GString    *tail)
{
  mend_http_write_streamed_frame (model, "max_tokens", max_tokens, TRUE, "messages", head, tail);
}

static void
chat_write_message (GString              *out,
                    JsonObject           *message,
                    MendTranscriptLookup *lookup)
{
  const char *role = mend_json_get_string (message, "role");
  JsonNode *content = json_object_get_member (message, "content");
  JsonArray *blocks = content != NULL && JSON_NODE_HOLDS_ARRAY (content) ? json_node_get_array (content) : NULL;
  gsize start = out->len;
  gsize results;

  if (role == NULL)
    return;
  if (blocks != NULL && g_str_equal (role, "user"))
    write_tool_results (out, start, blocks);

  /* The user's own words after the results, if any. */
  results = out->len;
  mend_http_begin_item (out, start);
  g_string_append (out, "{\"role\":");
  mend_json_write_string (out, role);
  g_string_append (out, ",\"content\":");
  if (!mend_http_write_content_text (out, content, results == start))
    {
      g_string_truncate (out, results);
      return;
    }
  if (blocks != NULL && g_str_equal (role, "assistant"))
    write_tool_calls (out, blocks);
  g_string_append_c (out, '}');
}

/* The first choice of a chunk or an answer, or NULL. */
static JsonObject *
first_choice (JsonObject *object)
{
  JsonNode *choices = json_object_get_member (object, "choices");

  if (choices == NULL || !JSON_NODE_HOLDS_ARRAY (choices) ||
      json_array_get_length (json_node_get_array (choices)) == 0)
    return NULL;
  return mend_http_block_at (json_node_get_array (choices), 0);
}

/* A message or a delta: its text after what came so far (in a new block
 * after a tool call), its tool calls each in a block of its own, by the
 * stream's index. TRUE when the answer kept any of it. */
static gboolean
read_message (MendHttpAnswer  *answer,
              JsonObject      *message,
              const char     **text)
{
  JsonNode *calls = json_object_get_member (message, "tool_calls");
  gboolean content = FALSE;

  *text = mend_http_answer_add_text_after (answer, mend_json_get_string (message, "content"), NULL);
  /* A refusal is the model's answer too, in words of its own. */
  if (*text == NULL)
    *text = mend_http_answer_add_text_after (answer, mend_json_get_string (message, "refusal"), NULL);
  content = *text != NULL;

  if (calls != NULL && JSON_NODE_HOLDS_ARRAY (calls))
    {
      JsonArray *array = json_node_get_array (calls);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonObject *call = mend_http_block_at (array, i);
          JsonObject *function = mend_json_get_object (call, "function");
          JsonNode *index = call != NULL ? json_object_get_member (call, "index") : NULL;
          gint64 n = i;

          if (call == NULL)
            continue;
          /* Streamed calls come by their index, whole ones in order. */
          if (index != NULL && JSON_NODE_HOLDS_VALUE (index) && json_node_get_value_type (index) == G_TYPE_INT64)
            n = json_node_get_int (index);
          if (n < 0 || n >= G_MAXINT32)
            continue;
          /* A call past the blocks kept is no output. */
          if (mend_http_answer_add_tool_call (answer, mend_http_answer_call_block (answer, (guint) n),
                                              mend_json_get_string (call, "id"),
                                              mend_json_get_string (function, "name"),
                                              mend_json_get_string (function, "arguments")))
            content = TRUE;
        }
    }

  return content;
}

static void
note_finish (MendHttpAnswer *answer,
             JsonObject     *choice)
{
  const char *reason = mend_json_get_string (choice, "finish_reason");

  /* Ollama's own name for it, in some of its versions. */
  if (reason == NULL)
    reason = mend_json_get_string (choice, "done_reason");
  if (reason != NULL)
    mend_http_answer_set_stop_reason (answer, reason);
}

static MendHttpEvent
chat_read_event (MendHttpAnswer *answer,
                 const char     *name,
                 const char     *data,
                 gsize           length,
                 JsonObject     *event,
                 const char    **text)
{
  JsonObject *choice;
  JsonObject *delta;
  gboolean content = FALSE;

  /* As OpenAI's own clients read it: a line that starts with [DONE],
   * whatever spaces pad it. */
  while (length > 0 && g_ascii_isspace (*data))
    data++, length--;
  if (length >= strlen ("[DONE]") && memcmp (data, "[DONE]", strlen ("[DONE]")) == 0)
    return MEND_HTTP_EVENT_END;
  /* An error event fails the attempt with its data, JSON or not (a
   * proxy's own words), as in the other formats. */
  if (g_strcmp0 (name, "error") == 0)
    return MEND_HTTP_EVENT_ERROR;
  if (event == NULL)
    return MEND_HTTP_EVENT_OTHER;
  /* "error":null is the member of a healthy chunk that some servers
   * always write. */
  if (mend_http_has_error (event))
    return MEND_HTTP_EVENT_ERROR;

  choice = first_choice (event);
  if (choice == NULL)
    return MEND_HTTP_EVENT_OTHER;
  delta = mend_json_get_object (choice, "delta");
  if (delta != NULL)
    content = read_message (answer, delta, text);
  note_finish (answer, choice);

  return content ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
}

/* null, or [] (some servers write "tool_calls":[] in every delta). */
static gboolean
scan_no_calls (MendJsonScan *scan)
{
  gboolean first = TRUE;

  if (mend_json_scan_peek (scan) == 'n')
    return mend_json_scan_null (scan);
  return mend_json_scan_char (scan, '[') && mend_json_scan_element (scan, &first) == MEND_JSON_SCAN_DONE;
}

/* A delta with text and no tool call: {"content":"…"} and members
 * read_message () does not read. */
static gboolean
scan_delta (MendJsonScan *scan,
            GString      *scratch,
            gboolean     *has_text)
{
  gboolean first = TRUE, content = FALSE, calls = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "content"))
        {
          if (content)
            return FALSE;
          content = TRUE;
          if (mend_json_scan_peek (scan) == 'n')
            {
              if (!mend_json_scan_null (scan))
                return FALSE;
            }
          else if (!mend_json_scan_string (scan, scratch))
            return FALSE;
          else
            *has_text = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "tool_calls"))
        {
          if (calls || !scan_no_calls (scan))
            return FALSE;
          calls = TRUE;
        }
      /* A refusal's words are the answer's text: the parser reads them. */
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "refusal"))
        {
          if (mend_json_scan_peek (scan) != 'n' || !mend_json_scan_null (scan))
            return FALSE;
        }
      else if (!mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE;
}

/* A choice that has not finished: {"index":0,"delta":{…},
 * "finish_reason":null} and others. */
static gboolean
scan_choice (MendJsonScan *scan,
             GString      *scratch,
             gboolean     *has_text)
{
  gboolean first = TRUE, delta = FALSE, finish = FALSE, done = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "delta"))
        {
          if (delta || !scan_delta (scan, scratch, has_text))
            return FALSE;
          delta = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "finish_reason"))
        {
          if (finish || !mend_json_scan_null (scan))
            return FALSE;
          finish = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "done_reason"))
        {
          if (done || !mend_json_scan_null (scan))
            return FALSE;
          done = TRUE;
        }
      else if (!mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE;
}

/* A chunk of text: {"choices":[{"delta":{"content":"…"}}]} with any of
 * the members servers add (id, model, created, usage:null, error:null…),
 * in any order. */
static gboolean
chat_scan_event (MendHttpAnswer   *answer,
                 const char       *name,
                 const char       *data,
                 gsize             length,
                 GString          *scratch,
                 MendJsonTemplate *memo,
                 MendHttpEvent    *event,
                 const char      **text)
{
  gboolean first = TRUE, choices = FALSE, error = FALSE, has_text = FALSE;
  MendJsonScanStep step;
  MendJsonScan scan;
  const char *key;
  gsize n;

  if (g_strcmp0 (name, "error") == 0)
    return FALSE;
  g_string_truncate (scratch, 0);
  mend_json_scan_init (&scan, data, length);
  if (!mend_json_scan_char (&scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (&scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "choices"))
        {
          gboolean element = TRUE;

          /* The first choice read, the others skipped, as read_event ()
           * does. */
          if (choices || !mend_json_scan_char (&scan, '[') ||
              mend_json_scan_element (&scan, &element) != MEND_JSON_SCAN_NEXT ||
              !scan_choice (&scan, scratch, &has_text))
            return FALSE;
          while ((step = mend_json_scan_element (&scan, &element)) == MEND_JSON_SCAN_NEXT)
            if (!mend_json_scan_skip (&scan))
              return FALSE;
          if (step != MEND_JSON_SCAN_DONE)
            return FALSE;
          choices = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "error"))
        {
          if (error || !mend_json_scan_null (&scan))
            return FALSE;
          error = TRUE;
        }
      else if (!mend_json_scan_skip (&scan))
        return FALSE;
    }
  if (step != MEND_JSON_SCAN_DONE || !choices || !mend_json_scan_end (&scan))
    return FALSE;

  *text = has_text ? mend_http_answer_add_text_after (answer, scratch->str, NULL) : NULL;
  *event = *text != NULL ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  if (has_text)
    mend_json_template_keep (memo, &scan, name, 0);
  return TRUE;
}

static MendHttpEvent
chat_replay_text (MendHttpAnswer *answer,
                  guint           tag,
                  const char     *scratch,
                  const char    **text)
{
  *text = mend_http_answer_add_text_after (answer, scratch, NULL);
  return *text != NULL ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
}

static MendHttpEvent
chat_read_whole (MendHttpAnswer *answer,
                 JsonNode       *root)
{
  JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *choices = object != NULL ? json_object_get_member (object, "choices") : NULL;
  JsonObject *choice;
  JsonObject *message;
  const char *text;

  if (mend_http_has_error (object))
    return MEND_HTTP_EVENT_ERROR;
  if (choices == NULL || !JSON_NODE_HOLDS_ARRAY (choices))
    return MEND_HTTP_EVENT_OTHER;
  /* An answer with no choice, or a choice with no message, has nothing. */
  if ((choice = first_choice (object)) != NULL &&
      (message = mend_json_get_object (choice, "message")) != NULL)
    {
      read_message (answer, message, &text);
      note_finish (answer, choice);
    }
  return MEND_HTTP_EVENT_END;
}

const MendHttpDialectClass mend_http_dialect_chat_completions = {
  .dialect = MEND_HTTP_DIALECT_CHAT_COMPLETIONS,
  .shape = 1,
  .write_frame = chat_write_frame,
  .write_message = chat_write_message,
  /* A prompt alone, as write_message () writes it. */
  .write_prompt = { "{\"role\":\"user\",\"content\":", "}" },
  .read_event = chat_read_event,
  .scan_event = chat_scan_event,
  .replay_text = chat_replay_text,
  .read_whole = chat_read_whole,
};
