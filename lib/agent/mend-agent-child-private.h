/* mend-agent-child-private.h — one run of an agent's child process, for MendAgent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* One run of an agent: the subprocess in a process group of its own, its
 * standard error kept in a tail, its standard input as a socket, and its
 * output read line by line or left to the owner. The async calls hold the
 * child, not its owner; closing it detaches the owner. */
typedef struct _MendAgentChild MendAgentChild;

/* The longest line of the agent's output that is kept whole, without its
 * line end; a longer one is skipped. */
#define MEND_AGENT_MAX_LINE_BYTES (16 * 1024 * 1024)

typedef struct
{
  /* One line of standard output, without its line end, at most
   * MEND_AGENT_MAX_LINE_BYTES long; %NULL to leave standard output to the
   * owner (mend_agent_child_get_stdout()). */
  void (*line)   (MendAgentChild *child,
                  const char     *line,
                  gsize           length,
                  gpointer        user_data);
  /* The run is over: the agent exited (and what it wrote before is read),
   * or its output ended. Not when a process it left behind still holds
   * its output open: the agent's exit decides. */
  void (*ended)  (MendAgentChild *child,
                  gpointer        user_data);
} MendAgentChildCallbacks;

/* Starts @argv in a process group of its own. Its standard error is kept
 * at the end of @stderr_tail (MEND_AGENT_STDERR_MAX_BYTES at most). */
MendAgentChild *mend_agent_child_spawn          (const char * const            *argv,
                                                 const char * const            *envp,
                                                 const char                    *cwd,
                                                 GByteArray                    *stderr_tail,
                                                 const MendAgentChildCallbacks *callbacks,
                                                 gpointer                       user_data,
                                                 GError                       **error);
/* The agent's standard output, for an owner that reads it itself. */
GInputStream   *mend_agent_child_get_stdout     (MendAgentChild                *child);
/* The agent's standard input: writes to an agent that is gone fail with
 * EPIPE instead of raising SIGPIPE. */
GOutputStream  *mend_agent_child_get_stdin      (MendAgentChild                *child);
/* Queues @bytes for the agent's standard input, written in order. */
void            mend_agent_child_write          (MendAgentChild                *child,
                                                 GBytes                        *bytes);
/* Reads what the agent wrote on its standard error and nobody read yet,
 * without waiting: its output ended, and the tail is wanted now. */
void            mend_agent_child_drain_stderr   (MendAgentChild                *child);
const char     *mend_agent_child_get_identifier (MendAgentChild                *child);
guint64         mend_agent_child_get_n_lines    (MendAgentChild                *child);
/* Ends the run: detaches the owner (no callback comes after), closes the
 * agent's input, sends SIGTERM to its process group and, when anything of
 * the group is left after @grace_ms, SIGKILL; drops the owner's
 * reference. What is left of the group is ended even after the agent
 * exited. */
void            mend_agent_child_close          (MendAgentChild                *child,
                                                 guint                          grace_ms);

/* The processes that a close is still ending, for tests: 0 once every
 * group closed is gone. */
guint           mend_agent_child_get_n_closing  (void);

G_END_DECLS
