/* mend-acp-framing-private.h — newline-delimited JSON-RPC framing for ACP agents
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The most bytes one message may take; a longer one fails the stream. */
#define MEND_ACP_FRAMING_MAX_MESSAGE_BYTES (16 * 1024 * 1024)

/* The Agent Client Protocol sends one JSON-RPC message per line. These
 * converters bound each line and frame it with a Content-Length header,
 * as the Language Server Protocol does, and take the frames written back
 * to lines, so that mend-acp-rpc.c reads whole messages only. */
#define MEND_TYPE_ACP_FRAMING (mend_acp_framing_get_type ())

G_DECLARE_FINAL_TYPE (MendAcpFraming, mend_acp_framing, MEND, ACP_FRAMING, GObject)

GIOStream *mend_acp_framing_wrap (GInputStream  *lines_in,
                                  GOutputStream *lines_out);

G_END_DECLS
