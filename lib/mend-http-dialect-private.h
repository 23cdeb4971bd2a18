/* mend-http-dialect-private.h — the wire formats MendHttpSender speaks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-enums.h"
#include "mend-http-answer-private.h"

G_BEGIN_DECLS

/* What one server-sent event of an answer was. */
typedef enum
{
  MEND_HTTP_EVENT_OTHER,    /* nothing the turn needs (a ping, usage, metadata) */
  MEND_HTTP_EVENT_CONTENT,  /* content of the answer: output was seen */
  MEND_HTTP_EVENT_END,      /* the answer is complete */
  MEND_HTTP_EVENT_ERROR,    /* the server reports an error: the event is its body */
} MendHttpEvent;

/* One wire format: how a request is written and an answer read. The
 * transcript keeps messages in the Messages API's shape (role, content
 * blocks); a dialect writes them in its own. */
typedef struct
{
  MendHttpDialect dialect;

  /* The request body, streamed, from the messages of the request. */
  char          *(*build_body) (const char     *model,
                                guint           max_tokens,
                                JsonNode       *messages);

  /* One event: @data as sent, @event the same parsed when it is a JSON
   * object (else %NULL). Sets *@text to the text it adds to the answer
   * (owned by @event), if any. */
  MendHttpEvent   (*read_event) (MendHttpAnswer *answer,
                                 const char     *name,
                                 const char     *data,
                                 gsize           length,
                                 JsonObject     *event,
                                 const char    **text);

  /* The quick way for the bulk of a stream, its text deltas: a byte scan
   * of @data, no parse. TRUE when it read the event with certainty, with
   * the same effect on @answer as read_event () (*@text, if any, in
   * @scratch); FALSE, having changed nothing, for anything else, which
   * read_event () then reads. */
  gboolean        (*scan_event) (MendHttpAnswer *answer,
                                 const char     *name,
                                 const char     *data,
                                 gsize           length,
                                 GString        *scratch,
                                 MendHttpEvent  *event,
                                 const char    **text);

  /* A whole answer in one JSON body: END when it is one (read into
   * @answer, maybe with no content), ERROR when it reports an error (the
   * body is its error), OTHER when it is not the dialect's answer. */
  MendHttpEvent   (*read_whole) (MendHttpAnswer *answer,
                                 JsonNode       *root);
} MendHttpDialectClass;

/* The text of a message's content as the transcript keeps it: a string,
 * or its text blocks (and the text of its tool results) joined. */
char       *mend_http_content_text (JsonNode  *content);
/* Whether @object has an "error" member that is not null. */
gboolean    mend_http_has_error    (JsonObject *object);
/* Element @i of a content array as an object, or NULL. */
JsonObject *mend_http_block_at     (JsonArray *blocks,
                                    guint      i);
/* A tool_use block's input as JSON text ("{}" without one). */
char       *mend_http_tool_arguments (JsonObject *block);

/* Writes one message of the transcript in a dialect's shape. */
typedef void (*MendHttpAddMessage) (JsonBuilder *builder,
                                    JsonObject  *message);

/* A streamed request: {"model", @max_name: @max_tokens, "stream": true,
 * "stream_options": {"include_usage": true} when @include_usage,
 * @list_name: [the messages, each through @add, or as they are when @add
 * is NULL]}. */
char *mend_http_build_streamed_body (const char         *model,
                                     const char         *max_name,
                                     guint               max_tokens,
                                     gboolean            include_usage,
                                     const char         *list_name,
                                     JsonNode           *messages,
                                     MendHttpAddMessage  add);

extern const MendHttpDialectClass mend_http_dialect_messages;
extern const MendHttpDialectClass mend_http_dialect_chat_completions;
extern const MendHttpDialectClass mend_http_dialect_responses;
extern const MendHttpDialectClass mend_http_dialect_gemini;

/* The dialect of @dialect, or of the endpoint's path for AUTO. */
const MendHttpDialectClass *mend_http_dialect_lookup (MendHttpDialect  dialect,
                                                      const char      *uri);

G_END_DECLS
