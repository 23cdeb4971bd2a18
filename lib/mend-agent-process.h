/* mend-agent-process.h — MendAgentProcess: a sender that drives the Claude Code CLI's stream-json
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
 * MEND_AGENT_PROCESS_STDERR_MAX_BYTES:
 *
 * How much of the agent's standard error is kept: the last bytes, for the
 * text of a failure when the agent dies.
 */
#define MEND_AGENT_PROCESS_STDERR_MAX_BYTES 8192

#define MEND_TYPE_AGENT_PROCESS (mend_agent_process_get_type ())

MEND_AVAILABLE_IN_1_0
G_DECLARE_FINAL_TYPE (MendAgentProcess, mend_agent_process, MEND, AGENT_PROCESS, GObject)

MEND_AVAILABLE_IN_1_0
MendAgentProcess   *mend_agent_process_new               (const char * const *argv);
MEND_AVAILABLE_IN_1_0
MendAgentProcess   *mend_agent_process_new_claude_code   (const char         *path);
MEND_AVAILABLE_IN_1_0
const char * const *mend_agent_process_get_argv          (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
const char * const *mend_agent_process_get_environ       (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_set_environ       (MendAgentProcess   *self,
                                                          const char * const *environ_);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_setenv            (MendAgentProcess   *self,
                                                          const char         *name,
                                                          const char         *value);
MEND_AVAILABLE_IN_1_0
const char         *mend_agent_process_get_cwd           (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_set_cwd           (MendAgentProcess   *self,
                                                          const char         *cwd);
MEND_AVAILABLE_IN_1_0
const char         *mend_agent_process_get_resume_option (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_set_resume_option (MendAgentProcess   *self,
                                                          const char         *option);
MEND_AVAILABLE_IN_1_0
MendChat           *mend_agent_process_get_chat          (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_set_chat          (MendAgentProcess   *self,
                                                          MendChat           *chat);
MEND_AVAILABLE_IN_1_0
MendStreamObserver *mend_agent_process_get_observer      (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
const char         *mend_agent_process_get_session_id    (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_set_session_id    (MendAgentProcess   *self,
                                                          const char         *session_id);
MEND_AVAILABLE_IN_1_0
gboolean            mend_agent_process_get_running       (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
const char         *mend_agent_process_get_identifier    (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
guint               mend_agent_process_get_n_starts      (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
char               *mend_agent_process_dup_stderr        (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_terminate         (MendAgentProcess   *self);

G_END_DECLS
