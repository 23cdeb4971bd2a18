/* mend-stream-text-private.h — the model's text in a stream-json line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The model's text that a line of an agent CLI's stream-json carries: a
 * streamed text delta (@is_delta set) or the text blocks of an assistant
 * message of the model's; NULL for any other line, and for a subagent's
 * (one with a parent_tool_use_id). */
char *mend_stream_text_from_line (const char *line,
                                  gsize       length,
                                  gboolean   *is_delta);

G_END_DECLS
