/* bench-http.h — what bench-http.c and its server share: the formats and their streams
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

typedef enum
{
  FORMAT_MESSAGES,
  FORMAT_CHAT,
  FORMAT_RESPONSES,
  FORMAT_GEMINI,
  N_FORMATS
} Format;

extern const char *const format_names[N_FORMATS];
/* The endpoint's path and query, up to the deltas asked for. */
extern const char *const format_paths[N_FORMATS];

Format      format_from_name (const char *name);
/* The text of delta @i, as JSON string content. */
const char *delta_text       (guint       i);
/* The events of a stream of @n deltas, each a string of its own. */
GPtrArray  *make_stream      (Format      format,
                              guint       n);
/* The server: serves streams until its stdin closes; prints its port. */
int         run_server       (void);
/* Starts it as "ARGV0 --serve"; @to_server is its stdin. */
guint       start_server     (const char *argv0,
                              int        *to_server,
                              GPid       *pid);
