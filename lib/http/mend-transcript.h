/* mend-transcript.h — MendTranscript: the conversation so far, as the model is sent it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_TRANSCRIPT_DEFAULT_MAX_MESSAGES:
 *
 * The default of [property@Mend.Transcript:max-messages]: 200.
 */
#define MEND_TRANSCRIPT_DEFAULT_MAX_MESSAGES 200

/**
 * MEND_TRANSCRIPT_DEFAULT_MAX_BYTES:
 *
 * The default of [property@Mend.Transcript:max-bytes]: 4 MiB.
 */
#define MEND_TRANSCRIPT_DEFAULT_MAX_BYTES (4 * 1024 * 1024)

/**
 * MEND_TRANSCRIPT_MAX_PENDING:
 *
 * The most prompts of turns that gave up that a transcript keeps to send
 * again; past it, the oldest is let go.
 */
#define MEND_TRANSCRIPT_MAX_PENDING 16

#define MEND_TYPE_TRANSCRIPT (mend_transcript_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendTranscript, mend_transcript, MEND, TRANSCRIPT, GObject)

MEND_AVAILABLE_IN_0_2
MendTranscript *mend_transcript_new               (void);
MEND_AVAILABLE_IN_0_2
guint           mend_transcript_get_n_messages    (MendTranscript  *self);
MEND_AVAILABLE_IN_0_2
guint           mend_transcript_get_n_pending     (MendTranscript  *self);
MEND_AVAILABLE_IN_0_2
guint           mend_transcript_get_max_messages  (MendTranscript  *self);
MEND_AVAILABLE_IN_0_2
void            mend_transcript_set_max_messages  (MendTranscript  *self,
                                                   guint            max_messages);
MEND_AVAILABLE_IN_0_2
guint           mend_transcript_get_max_bytes     (MendTranscript  *self);
MEND_AVAILABLE_IN_0_2
void            mend_transcript_set_max_bytes     (MendTranscript  *self,
                                                   guint            max_bytes);
MEND_AVAILABLE_IN_0_2
char           *mend_transcript_to_json           (MendTranscript  *self);
MEND_AVAILABLE_IN_0_2
gboolean        mend_transcript_load_json         (MendTranscript  *self,
                                                   const char      *json,
                                                   GError         **error);
MEND_AVAILABLE_IN_0_2
void            mend_transcript_trim              (MendTranscript  *self,
                                                   guint            keep_last_turns);
MEND_AVAILABLE_IN_0_2
void            mend_transcript_clear             (MendTranscript  *self);

G_END_DECLS
