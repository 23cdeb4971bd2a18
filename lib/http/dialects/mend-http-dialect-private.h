/* mend-http-dialect-private.h — the wire formats MendHttpSender speaks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-enums.h"
#include "mend-http-answer-private.h"
#include "mend-json-scan-private.h"
#include "mend-transcript-entry-private.h"

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

  /* The request body: @head, the messages of the request written in
   * @shape (by write_message (), the transcript's own JSON for
   * MEND_TRANSCRIPT_SHAPE_OWN), joined by commas, then @tail. Each message
   * is written once, and its text kept for the next requests. */
  guint                     shape;
  void                    (*write_frame)   (const char *model,
                                            guint       max_tokens,
                                            GString    *head,
                                            GString    *tail);
  MendTranscriptWriteFunc   write_message;
  MendTranscriptPromptShape write_prompt;

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
   * read_event () then reads. A text delta read so is kept in @memo,
   * with what replay_text () needs, when its text is one string. */
  gboolean        (*scan_event) (MendHttpAnswer   *answer,
                                 const char       *name,
                                 const char       *data,
                                 gsize             length,
                                 GString          *scratch,
                                 MendJsonTemplate *memo,
                                 MendHttpEvent    *event,
                                 const char      **text);
  /* An event that matched @memo: the same as the text delta kept there,
   * with @scratch its text and @tag the memo's. */
  MendHttpEvent   (*replay_text) (MendHttpAnswer *answer,
                                  guint           tag,
                                  const char     *scratch,
                                  const char    **text);

  /* A whole answer in one JSON body: END when it is one (read into
   * @answer, maybe with no content), ERROR when it reports an error (the
   * body is its error), OTHER when it is not the dialect's answer. */
  MendHttpEvent   (*read_whole) (MendHttpAnswer *answer,
                                 JsonNode       *root);
} MendHttpDialectClass;

/* Whether @object has an "error" member that is not null. */
gboolean    mend_http_has_error    (JsonObject *object);
/* Element @i of a content array as an object, or NULL. */
JsonObject *mend_http_block_at     (JsonArray *blocks,
                                    guint      i);
/* A tool_use block's input as JSON text ("{}" without one). */
char       *mend_http_tool_arguments (JsonObject *block);

/* The frame of a streamed request: {"model", @max_name: @max_tokens,
 * "stream": true, "stream_options": {"include_usage": true} when
 * @include_usage, @list_name: [ in @head, and ]} in @tail. */
void  mend_http_write_streamed_frame (const char  *model,
                                      const char  *max_name,
                                      guint        max_tokens,
                                      gboolean     include_usage,
                                      const char  *list_name,
                                      GString     *head,
                                      GString     *tail);
/* A message is written straight as the items it becomes, joined by
 * commas, each as json-glib's JsonGenerator writes it (members in order,
 * strings as mend_json_write_string () writes them): a comma before an
 * item when @out holds items past @start. */
void  mend_http_begin_item           (GString     *out,
                                      gsize        start);
/* Appends the text of a message's content as the transcript keeps it (a
 * string, or its text blocks and the text of its tool results, a blank
 * line between each two, for the formats that take one string) as a JSON
 * string; FALSE, having appended nothing, when it is empty and
 * @empty_too is FALSE. */
gboolean mend_http_write_content_text (GString    *out,
                                       JsonNode   *content,
                                       gboolean    empty_too);

/* The quick way to read an event: as the last text delta kept in @memo
 * if it matches, else by @wire's scan. FALSE when neither read it. */
gboolean mend_http_dialect_scan      (const MendHttpDialectClass *wire,
                                      MendHttpAnswer             *answer,
                                      MendJsonTemplate           *memo,
                                      const char                 *name,
                                      const char                 *data,
                                      gsize                       length,
                                      GString                    *scratch,
                                      MendHttpEvent              *event,
                                      const char                **text);

/* The body of @request, in @wire's shape, in the frame of @head and @tail. */
char *mend_http_dialect_write_body   (const MendHttpDialectClass *wire,
                                      GString                    *head,
                                      GString                    *tail,
                                      MendTranscriptRequest      *request,
                                      gsize                      *length);
/* The body of the messages of @messages (a JSON array), with the frame
 * for @model and @max_tokens. */
char *mend_http_dialect_build_body   (const MendHttpDialectClass *wire,
                                      const char                 *model,
                                      guint                       max_tokens,
                                      JsonNode                   *messages);

extern const MendHttpDialectClass mend_http_dialect_messages;
extern const MendHttpDialectClass mend_http_dialect_chat_completions;
extern const MendHttpDialectClass mend_http_dialect_responses;
extern const MendHttpDialectClass mend_http_dialect_gemini;

/* The dialect of @dialect, or of the endpoint's path for AUTO. */
const MendHttpDialectClass *mend_http_dialect_lookup (MendHttpDialect  dialect,
                                                      const char      *uri);

G_END_DECLS
