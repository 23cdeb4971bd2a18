/* mend-transcript-entry-private.h — a transcript's messages, each written once per wire format
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The shapes a message is written in: its own JSON (as the transcript
 * writes it), and one for each wire format that writes it otherwise. */
#define MEND_TRANSCRIPT_SHAPE_OWN  0
#define MEND_TRANSCRIPT_N_SHAPES   4

/* One message of a transcript, sealed, with the JSON text of each shape
 * it was written in, kept for the next requests. */
typedef struct _MendTranscriptEntry MendTranscriptEntry;

/* A transcript's entries, shared with its requests: the transcript
 * changes a list no request holds, else a copy of it (copy on write), so
 * that a request holds the messages as they were for what one pointer
 * costs. */
typedef struct _MendTranscriptEntries MendTranscriptEntries;

/* The messages of one request: the transcript's as they were, then the
 * turn's user message. */
typedef struct _MendTranscriptRequest MendTranscriptRequest;

/* What a message being written may ask of the messages before it. */
typedef struct _MendTranscriptLookup MendTranscriptLookup;

/* Writes one message in a shape: the items it becomes, joined by commas,
 * appended to @out (nothing for a message the shape drops). */
typedef void (*MendTranscriptWriteFunc) (GString              *out,
                                         JsonObject           *message,
                                         MendTranscriptLookup *lookup);
/* How a shape writes {"role":"user","content":prompt}: @head, the prompt
 * as a JSON string, @tail. */
typedef struct
{
  const char *head;
  const char *tail;
} MendTranscriptPromptShape;

/* An entry of @message, which is sealed; @own_json, if given, is its own
 * JSON text (taken). */
MendTranscriptEntry   *mend_transcript_entry_new          (JsonNode            *message,
                                                           char                *own_json);
/* An entry of {"role":"user","content":@prompt}, made only when asked
 * for: a request's user message, which is written from its prompt. */
MendTranscriptEntry   *mend_transcript_entry_new_prompt   (const char          *prompt);
MendTranscriptEntry   *mend_transcript_entry_ref          (MendTranscriptEntry *entry);
void                   mend_transcript_entry_unref        (MendTranscriptEntry *entry);
JsonNode              *mend_transcript_entry_get_message  (MendTranscriptEntry *entry);
/* Its place among the messages a transcript ever held: later is greater. */
void                   mend_transcript_entry_set_seq      (MendTranscriptEntry *entry,
                                                           guint64              seq);
/* Its own JSON text and length, written now if it was not. */
const char            *mend_transcript_entry_get_json     (MendTranscriptEntry *entry,
                                                           gsize               *length);

MendTranscriptEntries *mend_transcript_entries_new        (void);
void                   mend_transcript_entries_unref      (MendTranscriptEntries *list);
/* The list to change: @list, or a copy of it when a request holds it
 * (@list is then let go). */
MendTranscriptEntries *mend_transcript_entries_own        (MendTranscriptEntries *list);
/* The entries, in order: MendTranscriptEntry*, which the array holds. */
GPtrArray             *mend_transcript_entries_get_array  (MendTranscriptEntries *list);

/* A request of @list's entries, then @user (if any). */
MendTranscriptRequest *mend_transcript_request_new        (MendTranscriptEntries *list,
                                                           MendTranscriptEntry   *user);
/* A request of the messages of @messages (a JSON array), as they are. */
MendTranscriptRequest *mend_transcript_request_new_from_array (JsonArray       *messages);
MendTranscriptRequest *mend_transcript_request_ref        (MendTranscriptRequest *request);
void                   mend_transcript_request_unref      (MendTranscriptRequest *request);
guint                  mend_transcript_request_get_n_entries (MendTranscriptRequest *request);
MendTranscriptEntry   *mend_transcript_request_get_entry  (MendTranscriptRequest *request,
                                                           guint                  i);
/* Whether the request's transcript part is @list as it is now. */
gboolean               mend_transcript_request_is_current (MendTranscriptRequest *request,
                                                           MendTranscriptEntries *list);
/* The messages as a JSON array. */
JsonNode              *mend_transcript_request_dup_messages (MendTranscriptRequest *request);

/* Writes every message of the request in @shape that is not written yet
 * (or was written for messages before it that are gone), with @write, and
 * returns the length of them all, joined by commas. */
gsize                  mend_transcript_request_prepare    (MendTranscriptRequest           *request,
                                                           guint                            shape,
                                                           MendTranscriptWriteFunc          write,
                                                           const MendTranscriptPromptShape *prompt);
/* Copies the messages as prepare () wrote them, joined by commas, to
 * @out, which has room for them; returns the end of what it wrote. */
char                  *mend_transcript_request_copy       (MendTranscriptRequest   *request,
                                                           guint                    shape,
                                                           char                    *out);

/* The name of the tool call @id (a tool_use block) in the message being
 * written or, nearest first, the messages before it; NULL if none. What
 * is written then depends on those messages: it is written again when
 * they are gone. */
const char            *mend_transcript_lookup_tool_name   (MendTranscriptLookup  *lookup,
                                                           const char            *id);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendTranscriptEntry, mend_transcript_entry_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendTranscriptRequest, mend_transcript_request_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendTranscriptEntries, mend_transcript_entries_unref)

G_END_DECLS
