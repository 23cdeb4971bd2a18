/* mend-http-answer-private.h — the assistant's message, put together from a Messages API answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The assistant's message of one attempt, put together from the events of
 * a Messages stream or read whole from a JSON answer: its content blocks
 * (text, tool_use, thinking…) as the model sent them, and its text. */
typedef struct _MendHttpAnswer MendHttpAnswer;

MendHttpAnswer *mend_http_answer_new          (void);
void            mend_http_answer_free         (MendHttpAnswer *self);

/* One event of a Messages stream. Sets *@text to the text it adds to the
 * message (owned by @event), or %NULL; returns whether the message kept
 * anything of it (not for a block past those kept, say). */
gboolean        mend_http_answer_feed_event   (MendHttpAnswer  *self,
                                               JsonObject      *event,
                                               const char     **text);
/* A whole Messages answer, `{"content":[…]}`. Returns FALSE, and keeps
 * nothing, when @root has no content array. */
gboolean        mend_http_answer_read_message (MendHttpAnswer *self,
                                               JsonNode       *root);

/* A piece of the text of block @index (of an answer whose blocks come by
 * their index, as a Responses output's do). Returns @text when it is not
 * empty, else %NULL; *@kept (if given) tells whether the block took it
 * (none past the blocks kept, or of another type). */
const char     *mend_http_answer_add_text     (MendHttpAnswer *self,
                                               guint           index,
                                               const char     *text,
                                               gboolean       *kept);
/* A piece of text after what came so far (a Chat Completions choice's
 * content): the last block's when it is a text block, else a new text
 * block after it (after a tool call), which empty text does not make. */
const char     *mend_http_answer_add_text_after (MendHttpAnswer *self,
                                                 const char     *text,
                                                 gboolean       *kept);
/* The same as add_text () for text the caller does not keep: the answer
 * keeps the piece until the next one, and returns its copy. */
const char     *mend_http_answer_add_text_copy (MendHttpAnswer *self,
                                                guint           index,
                                                const char     *text,
                                                gboolean       *kept);
/* The block of the tool call a stream numbers @key: after the blocks so
 * far when first seen; -1 past the blocks kept. */
gint            mend_http_answer_call_block   (MendHttpAnswer *self,
                                               guint           key);
/* How many blocks the answer has, by index (the next free index). */
guint           mend_http_answer_get_n_blocks (MendHttpAnswer *self);
/* A piece of the tool call of block @index: its id and name when they
 * come, a piece of its arguments' JSON text. Returns whether the block
 * took it (none past the blocks kept, or of another type). Arguments that
 * never form a JSON value are kept as the text sent: the call's input is
 * then a string. */
gboolean        mend_http_answer_add_tool_call (MendHttpAnswer *self,
                                                guint           index,
                                                const char     *id,
                                                const char     *name,
                                                const char     *arguments);
/* How the model ended the answer (a finish_reason), or %NULL. */
void            mend_http_answer_set_stop_reason (MendHttpAnswer *self,
                                                  const char     *reason);
const char     *mend_http_answer_get_stop_reason (MendHttpAnswer *self);

/* No content: no text, no tool call, no block the model started. */
gboolean        mend_http_answer_is_empty     (MendHttpAnswer *self);

/* The text: of a stream, every piece feed_event() returned, joined; of a
 * whole answer, its text blocks' text; "" when there is none. */
const char     *mend_http_answer_get_text     (MendHttpAnswer *self);
/* The content array, complete; %NULL when the message has no block. */
JsonNode       *mend_http_answer_dup_content  (MendHttpAnswer *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendHttpAnswer, mend_http_answer_free)

G_END_DECLS
