/* mend-agent-common-private.h — what MendAgentProcess and MendAcpAgent share about child processes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* An agent's standard error is read below everything else, its protocol
 * included: an agent that writes it without end never holds up the
 * answers, and whenever the protocol has nothing to read the tail is
 * read, so that an agent blocked on a full stderr pipe is never stuck. */
#define MEND_AGENT_STDERR_PRIORITY (G_PRIORITY_LOW + 100)

/* What the senders that run an agent as a child process share: the tail
 * of its standard error, its environment, and its standard input. */

/* Keeps the end of what was read, more than is shown. */
void     mend_stderr_tail_append (GByteArray          *tail,
                                  const guint8        *data,
                                  gsize                size);
/* The tail as text, valid UTF-8, redacted, then cut to its last
 * MEND_AGENT_STDERR_MAX_BYTES; %NULL when empty. */
char    *mend_stderr_tail_text   (GByteArray          *tail);

/* Replaces *@slot by a copy of @environ_; %FALSE when they were equal. */
gboolean mend_environ_replace    (char              ***slot,
                                  const char * const  *environ_);
/* @current (or this process's environment when %NULL) with @name set to
 * @value, or removed when @value is %NULL. */
char   **mend_environ_with       (char               **current,
                                  const char          *name,
                                  const char          *value);

/* The agent's standard input, as the returned connection's output: a
 * socket, not a pipe, so that a write to an agent that died fails with
 * EPIPE (GSocket sends with MSG_NOSIGNAL) instead of raising SIGPIPE,
 * which would end the app unless it ignores the signal. @launcher gets
 * the other end as the agent's standard input. */
GSocketConnection *mend_agent_stdin_socket (GSubprocessLauncher  *launcher,
                                            GError              **error);

G_END_DECLS
