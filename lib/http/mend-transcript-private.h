/* mend-transcript-private.h — MendTranscript's internals for the HTTP sender
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-transcript.h"
#include "mend-transcript-entry-private.h"

G_BEGIN_DECLS

/* The messages to send for @turn: the transcript, then one user message
 * made of the pending prompts and the turn's prompt, each written in a
 * wire format's shape once and kept (see mend-transcript-entry-private.h).
 * With @track the transcript follows @turn: later calls for it give the
 * same messages, and the turn's end commits, keeps or drops the exchange.
 * Without, a turn already followed gives what it was given. */
MendTranscriptRequest *mend_transcript_request_for (MendTranscript  *self,
                                                    MendTurn        *turn,
                                                    gboolean         track);

/* An attempt of @turn succeeded with this assistant content (an array of
 * blocks), or with none (%NULL). */
void                   mend_transcript_answered    (MendTranscript  *self,
                                                    MendTurn        *turn,
                                                    JsonNode        *content);

/* The messages and the pending prompts, as JSON text, for a sender's saved
 * state; restore checks all of it before it changes anything. */
char                  *mend_transcript_save        (MendTranscript  *self);
gboolean               mend_transcript_restore     (MendTranscript  *self,
                                                    const char      *json,
                                                    GError         **error);

G_END_DECLS
