/* mend-agent-process-private.h — the agent's child process, for MendAgentProcess
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* One run of an agent: the subprocess, its output read line by line, its
 * standard error, and writes to its standard input in order. The async
 * calls hold the child, not its owner; closing it detaches the owner. */
typedef struct _MendAgentChild MendAgentChild;

typedef struct
{
  /* One line of standard output, without its line end. */
  void (*line)   (MendAgentChild *child,
                  const char     *line,
                  gsize           length,
                  gpointer        user_data);
  /* Bytes of standard error, as they come. */
  void (*error)  (MendAgentChild *child,
                  const guint8   *data,
                  gsize           size,
                  gpointer        user_data);
  /* Standard output ended or cannot be read: the agent is gone. */
  void (*ended)  (MendAgentChild *child,
                  gpointer        user_data);
} MendAgentChildCallbacks;

MendAgentChild *mend_agent_child_spawn          (const char * const            *argv,
                                                 const char * const            *envp,
                                                 const char                    *cwd,
                                                 const MendAgentChildCallbacks *callbacks,
                                                 gpointer                       user_data,
                                                 GError                       **error);
void            mend_agent_child_write          (MendAgentChild                *child,
                                                 GBytes                        *bytes);
const char     *mend_agent_child_get_identifier (MendAgentChild                *child);
guint64         mend_agent_child_get_n_lines    (MendAgentChild                *child);
void            mend_agent_child_close          (MendAgentChild                *child);

G_END_DECLS
