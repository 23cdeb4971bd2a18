/* mend-http-sender.h — MendHttpSender: a sender that speaks the Messages API over libsoup
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <libsoup/soup.h>

#include "mend-enums.h"
#include "mend-transcript.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES:
 *
 * The most bytes of an error response's body that are read and parsed.
 */
#define MEND_HTTP_SENDER_MAX_ERROR_BODY_BYTES 65536

/**
 * MEND_HTTP_SENDER_DEFAULT_MAX_BODY_BYTES:
 *
 * The default of [property@Mend.HttpSender:max-body-bytes]: 32 MiB.
 */
#define MEND_HTTP_SENDER_DEFAULT_MAX_BODY_BYTES (32 * 1024 * 1024)

/**
 * MEND_HTTP_SENDER_DEFAULT_MAX_LINE_BYTES:
 *
 * The default of [property@Mend.HttpSender:max-line-bytes]: 1 MiB.
 */
#define MEND_HTTP_SENDER_DEFAULT_MAX_LINE_BYTES (1024 * 1024)

/**
 * MEND_HTTP_SENDER_DEFAULT_MAX_EVENT_BYTES:
 *
 * The default of [property@Mend.HttpSender:max-event-bytes]: 1 MiB.
 */
#define MEND_HTTP_SENDER_DEFAULT_MAX_EVENT_BYTES (1024 * 1024)

#define MEND_TYPE_HTTP_SENDER (mend_http_sender_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendHttpSender, mend_http_sender, MEND, HTTP_SENDER, GObject)

MEND_AVAILABLE_IN_0_2
MendHttpSender *mend_http_sender_new            (const char     *uri);
MEND_AVAILABLE_IN_0_2
const char     *mend_http_sender_get_uri        (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
MendHttpDialect mend_http_sender_get_dialect    (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
SoupSession    *mend_http_sender_get_session    (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
guint           mend_http_sender_get_timeout_ms (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
void            mend_http_sender_set_timeout_ms (MendHttpSender *self,
                                                 guint           timeout_ms);
MEND_AVAILABLE_IN_0_2
const char     *mend_http_sender_get_model      (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
void            mend_http_sender_set_model      (MendHttpSender *self,
                                                 const char     *model);
MEND_AVAILABLE_IN_0_2
guint           mend_http_sender_get_max_tokens (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
void            mend_http_sender_set_max_tokens (MendHttpSender *self,
                                                 guint           max_tokens);
MEND_AVAILABLE_IN_0_2
MendTranscript *mend_http_sender_get_transcript (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
const char     *mend_http_sender_get_answer     (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
gboolean        mend_http_sender_set_header     (MendHttpSender *self,
                                                 const char     *name,
                                                 const char     *value,
                                                 GError        **error);
MEND_AVAILABLE_IN_0_2
guint           mend_http_sender_get_max_body_bytes  (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
void            mend_http_sender_set_max_body_bytes  (MendHttpSender *self,
                                                      guint           value);
MEND_AVAILABLE_IN_0_2
guint           mend_http_sender_get_max_line_bytes  (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
void            mend_http_sender_set_max_line_bytes  (MendHttpSender *self,
                                                      guint           value);
MEND_AVAILABLE_IN_0_2
guint           mend_http_sender_get_max_event_bytes (MendHttpSender *self);
MEND_AVAILABLE_IN_0_2
void            mend_http_sender_set_max_event_bytes (MendHttpSender *self,
                                                      guint           value);
MEND_AVAILABLE_IN_0_2
char           *mend_http_sender_build_messages (MendHttpSender *self,
                                                 MendTurn       *turn);

G_END_DECLS
