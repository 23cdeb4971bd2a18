/* mend-http-gemini.c — the Gemini API, as MendHttpSender speaks it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * After https://ai.google.dev/api/generate-content. The endpoint names the
 * model (/v1beta/models/MODEL:streamGenerateContent?alt=sse, or
 * :generateContent for one answer); the request: {"contents":[…],
 * "generationConfig":{"maxOutputTokens"}}, each message {"role":"user" or
 * "model","parts":[…]} with its text as a text part, an assistant's tool
 * calls as functionCall parts and their results as functionResponse
 * parts. The answer: chunks {"candidates":[{"content":{"parts":[…]},
 * "finishReason"}],"usageMetadata"}, ending when the stream does (there
 * is no end marker; a chunk with a finishReason ends the answer); an
 * {"error":{"code","message","status"}} object for a failure; a prompt
 * refused as a whole has promptFeedback.blockReason and no candidate.
 */

#include "config.h"

#include <string.h>

#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-json-scan-private.h"

static void
gemini_write_message (GString              *out,
                      JsonObject           *message,
                      MendTranscriptLookup *lookup)
{
  const char *role = mend_json_get_string (message, "role");
  JsonNode *content = json_object_get_member (message, "content");
  JsonArray *blocks = content != NULL && JSON_NODE_HOLDS_ARRAY (content) ? json_node_get_array (content) : NULL;
  gboolean model = g_strcmp0 (role, "assistant") == 0;
  gsize parts;
  gsize text;

  if (role == NULL)
    return;

  g_string_append (out, model ? "{\"role\":\"model\",\"parts\":[" : "{\"role\":\"user\",\"parts\":[");
  parts = out->len;
  for (guint i = 0; blocks != NULL && i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = mend_http_block_at (blocks, i);
      const char *type = mend_json_get_string (block, "type");
      const char *id = mend_json_get_string (block, "tool_use_id");
      const char *name = mend_json_get_string (block, "name");

      if (g_strcmp0 (type, "tool_result") == 0 && id != NULL)
        {
          /* The name of its call, before it; else its id. */
          name = mend_transcript_lookup_tool_name (lookup, id);
          mend_http_begin_item (out, parts);
          g_string_append (out, "{\"functionResponse\":{\"name\":");
          mend_json_write_string (out, name != NULL ? name : id);
          g_string_append (out, ",\"response\":{\"content\":");
          mend_http_write_content_text (out, json_object_get_member (block, "content"), TRUE);
          g_string_append (out, "}}}");
        }
      else if (model && g_strcmp0 (type, "tool_use") == 0 && name != NULL)
        {
          JsonNode *input = json_object_get_member (block, "input");

          mend_http_begin_item (out, parts);
          g_string_append (out, "{\"functionCall\":{\"name\":");
          mend_json_write_string (out, name);
          g_string_append (out, ",\"args\":");
          if (input != NULL && JSON_NODE_HOLDS_OBJECT (input))
            {
              g_autofree char *args = mend_json_to_string (input);

              g_string_append (out, args);
            }
          else
            g_string_append (out, "{}");
          g_string_append (out, "}}");
        }
    }

  /* A message has at least one part. */
  text = out->len;
  mend_http_begin_item (out, parts);
  g_string_append (out, "{\"text\":");
  if (mend_http_write_content_text (out, content, text == parts))
    g_string_append_c (out, '}');
  else
    g_string_truncate (out, text);
  g_string_append (out, "]}");
}

static void
gemini_write_frame (const char *model,
                    guint       max_tokens,
                    GString    *head,
                    GString    *tail)
{
  /* The model is the endpoint's, in its path. */
  g_string_assign (head, "{\"contents\":[");
  g_string_printf (tail, "],\"generationConfig\":{\"maxOutputTokens\":%u}}", max_tokens);
}

/* The parts of the first candidate: their text at block 0 (the parts of
 * one chunk as one delta), each call in a block after the ones before.
 * TRUE when there was content. */
static gboolean
read_candidate (MendHttpAnswer  *answer,
                JsonObject      *candidate,
                const char     **text)
{
  JsonObject *body = mend_json_get_object (candidate, "content");
  JsonNode *parts = body != NULL ? json_object_get_member (body, "parts") : NULL;
  g_autoptr(GString) joined = g_string_new (NULL);
  gboolean content = FALSE;

  *text = NULL;
  if (parts != NULL && JSON_NODE_HOLDS_ARRAY (parts))
    {
      JsonArray *array = json_node_get_array (parts);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonObject *part = mend_http_block_at (array, i);
          JsonObject *call = mend_json_get_object (part, "functionCall");
          const char *piece = mend_json_get_string (part, "text");

          if (call != NULL && mend_json_get_string (call, "name") != NULL)
            {
              /* Gemini's calls have no id of their own, or not always. */
              guint index = MAX (mend_http_answer_get_n_blocks (answer), 1);
              g_autofree char *id = mend_json_get_string (call, "id") != NULL
                                    ? g_strdup (mend_json_get_string (call, "id"))
                                    : g_strdup_printf ("call_%u", index);
              JsonNode *args = json_object_get_member (call, "args");
              g_autofree char *arguments = args != NULL ? mend_json_to_string (args) : g_strdup ("{}");

              /* A call past the blocks kept is no output. */
              if (mend_http_answer_add_tool_call (answer, index, id, mend_json_get_string (call, "name"), arguments))
                content = TRUE;
            }
          else if (piece != NULL)
            g_string_append (joined, piece);
        }
    }
  if (joined->len > 0)
    {
      *text = mend_http_answer_add_text_copy (answer, 0, joined->str, NULL);
      content = TRUE;
    }
  if (mend_json_get_string (candidate, "finishReason") != NULL)
    mend_http_answer_set_stop_reason (answer, mend_json_get_string (candidate, "finishReason"));
  return content;
}

/* The first candidate of a chunk or an answer, or NULL. */
static JsonObject *
first_candidate (JsonObject *object)
{
  JsonNode *candidates = json_object_get_member (object, "candidates");

  if (candidates == NULL || !JSON_NODE_HOLDS_ARRAY (candidates) ||
      json_array_get_length (json_node_get_array (candidates)) == 0)
    return NULL;
  return mend_http_block_at (json_node_get_array (candidates), 0);
}

/* A prompt refused as a whole: no candidate, a block reason. */
static gboolean
blocked (JsonObject *object)
{
  return first_candidate (object) == NULL &&
         mend_json_get_string (mend_json_get_object (object, "promptFeedback"), "blockReason") != NULL;
}

static MendHttpEvent
gemini_read_event (MendHttpAnswer *answer,
                   const char     *name,
                   const char     *data,
                   gsize           length,
                   JsonObject     *event,
                   const char    **text)
{
  JsonObject *candidate;

  if (event == NULL)
    return MEND_HTTP_EVENT_OTHER;
  if (mend_http_has_error (event) || blocked (event))
    return MEND_HTTP_EVENT_ERROR;
  candidate = first_candidate (event);
  if (candidate == NULL)
    return MEND_HTTP_EVENT_OTHER;
  return read_candidate (answer, candidate, text) ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
}

/* A part with text (appended to @scratch) or none, and no call. */
static gboolean
scan_part (MendJsonScan *scan,
           GString      *scratch)
{
  gboolean first = TRUE, text = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "text"))
        {
          if (text || !mend_json_scan_string (scan, scratch))
            return FALSE;
          text = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "functionCall") || !mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE;
}

/* {"parts":[…],"role":"model"} */
static gboolean
scan_content (MendJsonScan *scan,
              GString      *scratch)
{
  gboolean first = TRUE, parts = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "parts"))
        {
          gboolean element = TRUE;

          if (parts || !mend_json_scan_char (scan, '['))
            return FALSE;
          while ((step = mend_json_scan_element (scan, &element)) == MEND_JSON_SCAN_NEXT)
            if (!scan_part (scan, scratch))
              return FALSE;
          if (step != MEND_JSON_SCAN_DONE)
            return FALSE;
          parts = TRUE;
        }
      else if (!mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE;
}

/* A candidate that has not finished. */
static gboolean
scan_candidate (MendJsonScan *scan,
                GString      *scratch)
{
  gboolean first = TRUE, content = FALSE, finish = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "content"))
        {
          if (content || !scan_content (scan, scratch))
            return FALSE;
          content = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "finishReason"))
        {
          if (finish || !mend_json_scan_null (scan))
            return FALSE;
          finish = TRUE;
        }
      else if (!mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE;
}

static MendHttpEvent
gemini_replay_text (MendHttpAnswer *answer,
                    guint           tag,
                    const char     *scratch,
                    const char    **text)
{
  *text = NULL;
  if (scratch[0] == '\0')
    return MEND_HTTP_EVENT_OTHER;
  *text = mend_http_answer_add_text (answer, 0, scratch, NULL);
  return MEND_HTTP_EVENT_CONTENT;
}

/* A chunk of text: {"candidates":[{"content":{"parts":[{"text":"…"}]}}]}
 * with usageMetadata, modelVersion and the like, in any order. */
static gboolean
gemini_scan_event (MendHttpAnswer   *answer,
                   const char       *name,
                   const char       *data,
                   gsize             length,
                   GString          *scratch,
                   MendJsonTemplate *memo,
                   MendHttpEvent    *event,
                   const char      **text)
{
  gboolean first = TRUE, candidates = FALSE, error = FALSE;
  MendJsonScanStep step;
  MendJsonScan scan;
  const char *key;
  gsize n;

  g_string_truncate (scratch, 0);
  mend_json_scan_init (&scan, data, length);
  if (!mend_json_scan_char (&scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (&scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "candidates"))
        {
          gboolean element = TRUE;

          /* The first candidate read, the others skipped. */
          if (candidates || !mend_json_scan_char (&scan, '[') ||
              mend_json_scan_element (&scan, &element) != MEND_JSON_SCAN_NEXT ||
              !scan_candidate (&scan, scratch))
            return FALSE;
          while ((step = mend_json_scan_element (&scan, &element)) == MEND_JSON_SCAN_NEXT)
            if (!mend_json_scan_skip (&scan))
              return FALSE;
          if (step != MEND_JSON_SCAN_DONE)
            return FALSE;
          candidates = TRUE;
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
  if (step != MEND_JSON_SCAN_DONE || !candidates || !mend_json_scan_end (&scan))
    return FALSE;

  /* The parts of one chunk are one delta, as read_candidate () makes it. */
  *event = gemini_replay_text (answer, 0, scratch->str, text);
  /* One part's text: a template (of several, the parts' texts are not
   * one string). */
  mend_json_template_keep (memo, &scan, name, 0);
  return TRUE;
}

static MendHttpEvent
gemini_read_whole (MendHttpAnswer *answer,
                   JsonNode       *root)
{
  JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonObject *candidate;
  const char *text;

  if (object == NULL)
    return MEND_HTTP_EVENT_OTHER;
  if (mend_http_has_error (object) || blocked (object))
    return MEND_HTTP_EVENT_ERROR;
  if (json_object_get_member (object, "candidates") == NULL)
    return MEND_HTTP_EVENT_OTHER;
  if ((candidate = first_candidate (object)) != NULL)
    read_candidate (answer, candidate, &text);
  return MEND_HTTP_EVENT_END;
}

const MendHttpDialectClass mend_http_dialect_gemini = {
  .dialect = MEND_HTTP_DIALECT_GEMINI,
  .shape = 3,
  .write_frame = gemini_write_frame,
  .write_message = gemini_write_message,
  /* A prompt alone, as write_message () writes it. */
  .write_prompt = { "{\"role\":\"user\",\"parts\":[{\"text\":", "}]}" },
  .read_event = gemini_read_event,
  .scan_event = gemini_scan_event,
  .replay_text = gemini_replay_text,
  .read_whole = gemini_read_whole,
};
