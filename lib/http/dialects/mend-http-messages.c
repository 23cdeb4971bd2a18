/* mend-http-messages.c — the Anthropic Messages API, as MendHttpSender speaks it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The request: {"model","max_tokens","stream":true,"messages":[…]}, the
 * messages as the transcript keeps them. The answer: content_block_start
 * and content_block_delta events per block index, message_stop at the
 * end, an `error` event for a failure inside the stream
 * (https://docs.anthropic.com/en/api/messages-streaming); or one JSON
 * body, {"content":[…]}.
 */

#include "config.h"

#include <string.h>

#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-json-scan-private.h"

static void
messages_write_frame (const char *model,
                      guint       max_tokens,
                      GString    *head,
                      GString    *tail)
{
  mend_http_write_streamed_frame (model, "max_tokens", max_tokens, FALSE, "messages", head, tail);
}

static MendHttpEvent
messages_read_event (MendHttpAnswer *answer,
                     const char     *name,
                     const char     *data,
                     gsize           length,
                     JsonObject     *event,
                     const char    **text)
{
  const char *type = name;
  /* An event that is not read is taken for the model's, as it came. */
  gboolean kept = TRUE;

  if (event != NULL && mend_json_get_string (event, "type") != NULL)
    {
      type = mend_json_get_string (event, "type");
      kept = mend_http_answer_feed_event (answer, event, text);
    }

  if (g_strcmp0 (type, "error") == 0)
    return MEND_HTTP_EVENT_ERROR;
  if (g_strcmp0 (type, "message_stop") == 0)
    return MEND_HTTP_EVENT_END;
  /* A block past those kept, or a delta no block took, is no output. */
  if (g_strcmp0 (type, "content_block_delta") == 0 ||
      g_strcmp0 (type, "content_block_start") == 0)
    return kept ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  return MEND_HTTP_EVENT_OTHER;
}

/* {"type":"text_delta","text":"…"}: its text in @scratch. */
static gboolean
scan_text_delta (MendJsonScan *scan,
                 GString      *scratch)
{
  gboolean first = TRUE, type = FALSE, text = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "type"))
        {
          if (type || !mend_json_scan_string_is (scan, "text_delta"))
            return FALSE;
          type = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "text"))
        {
          if (text || !mend_json_scan_string (scan, scratch))
            return FALSE;
          text = TRUE;
        }
      else if (!mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE && type && text;
}

/* {"type":"content_block_delta","index":N,"delta":{"type":"text_delta",
 * "text":"…"}}, its members in any order, others skipped. */
static gboolean
messages_scan_event (MendHttpAnswer *answer,
                     const char     *name,
                     const char     *data,
                     gsize           length,
                     GString          *scratch,
                     MendJsonTemplate *memo,
                     MendHttpEvent    *event,
                     const char      **text)
{
  gboolean first = TRUE, type = FALSE, has_index = FALSE, delta = FALSE, kept;
  MendJsonScanStep step;
  MendJsonScan scan;
  const char *key;
  guint index = 0;
  gsize n;

  g_string_truncate (scratch, 0);
  mend_json_scan_init (&scan, data, length);
  if (!mend_json_scan_char (&scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (&scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "type"))
        {
          if (type || !mend_json_scan_string_is (&scan, "content_block_delta"))
            return FALSE;
          type = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "index"))
        {
          if (has_index || !mend_json_scan_index (&scan, &index))
            return FALSE;
          has_index = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "delta"))
        {
          if (delta || !scan_text_delta (&scan, scratch))
            return FALSE;
          delta = TRUE;
        }
      else if (!mend_json_scan_skip (&scan))
        return FALSE;
    }
  if (step != MEND_JSON_SCAN_DONE || !type || !has_index || !delta || !mend_json_scan_end (&scan))
    return FALSE;

  *text = mend_http_answer_add_text (answer, index, scratch->str, &kept);
  *event = kept ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  mend_json_template_keep (memo, &scan, name, index);
  return TRUE;
}

static MendHttpEvent
messages_replay_text (MendHttpAnswer *answer,
                      guint           index,
                      const char     *scratch,
                      const char    **text)
{
  gboolean kept;

  *text = mend_http_answer_add_text (answer, index, scratch, &kept);
  return kept ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
}

static MendHttpEvent
messages_read_whole (MendHttpAnswer *answer,
                     JsonNode       *root)
{
  JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;

  if (g_strcmp0 (mend_json_get_string (object, "type"), "error") == 0 || mend_http_has_error (object))
    return MEND_HTTP_EVENT_ERROR;
  return mend_http_answer_read_message (answer, root) ? MEND_HTTP_EVENT_END : MEND_HTTP_EVENT_OTHER;
}

const MendHttpDialectClass mend_http_dialect_messages = {
  .dialect = MEND_HTTP_DIALECT_MESSAGES,
  /* The messages as the transcript keeps them. */
  .shape = MEND_TRANSCRIPT_SHAPE_OWN,
  .write_frame = messages_write_frame,
  .read_event = messages_read_event,
  .scan_event = messages_scan_event,
  .replay_text = messages_replay_text,
  .read_whole = messages_read_whole,
};
