/* mend-agent-common-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the senders that run an agent as a child process share: the tail
 * of its standard error, and its environment. */

/* Keeps the last MEND_AGENT_PROCESS_STDERR_MAX_BYTES of what was read. */
void     mend_stderr_tail_append (GByteArray          *tail,
                                  const guint8        *data,
                                  gsize                size);
/* The tail as text, valid UTF-8 and redacted, or %NULL when empty. */
char    *mend_stderr_tail_text   (GByteArray          *tail);

/* Replaces *@slot by a copy of @environ_; %FALSE when they were equal. */
gboolean mend_environ_replace    (char              ***slot,
                                  const char * const  *environ_);
/* @current (or this process's environment when %NULL) with @name set to
 * @value, or removed when @value is %NULL. */
char   **mend_environ_with       (char               **current,
                                  const char          *name,
                                  const char          *value);

G_END_DECLS
