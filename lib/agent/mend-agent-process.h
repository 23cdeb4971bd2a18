/* mend-agent-process.h — MendAgentProcess: a sender that drives the Claude Code CLI's stream-json
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-agent.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_AGENT_PROCESS_STDERR_MAX_BYTES:
 *
 * The same as %MEND_AGENT_STDERR_MAX_BYTES.
 */
#define MEND_AGENT_PROCESS_STDERR_MAX_BYTES MEND_AGENT_STDERR_MAX_BYTES

#define MEND_TYPE_AGENT_PROCESS (mend_agent_process_get_type ())

MEND_AVAILABLE_IN_1_0
G_DECLARE_FINAL_TYPE (MendAgentProcess, mend_agent_process, MEND, AGENT_PROCESS, MendAgent)

MEND_AVAILABLE_IN_1_0
MendAgentProcess   *mend_agent_process_new               (const char * const *argv);
MEND_AVAILABLE_IN_1_0
MendAgentProcess   *mend_agent_process_new_claude_code   (const char         *path);
MEND_AVAILABLE_IN_1_0
const char         *mend_agent_process_get_resume_option (MendAgentProcess   *self);
MEND_AVAILABLE_IN_1_0
void                mend_agent_process_set_resume_option (MendAgentProcess   *self,
                                                          const char         *option);
MEND_AVAILABLE_IN_1_0
MendStreamObserver *mend_agent_process_get_observer      (MendAgentProcess   *self);

MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_argv)
const char * const *mend_agent_process_get_argv          (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_environ)
const char * const *mend_agent_process_get_environ       (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_set_environ)
void                mend_agent_process_set_environ       (MendAgentProcess   *self,
                                                          const char * const *environ_);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_setenv)
void                mend_agent_process_setenv            (MendAgentProcess   *self,
                                                          const char         *name,
                                                          const char         *value);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_cwd)
const char         *mend_agent_process_get_cwd           (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_set_cwd)
void                mend_agent_process_set_cwd           (MendAgentProcess   *self,
                                                          const char         *cwd);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_chat)
MendChat           *mend_agent_process_get_chat          (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0
void                mend_agent_process_set_chat          (MendAgentProcess   *self,
                                                          MendChat           *chat);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_session_id)
const char         *mend_agent_process_get_session_id    (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_set_session_id)
void                mend_agent_process_set_session_id    (MendAgentProcess   *self,
                                                          const char         *session_id);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_running)
gboolean            mend_agent_process_get_running       (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_identifier)
const char         *mend_agent_process_get_identifier    (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_get_n_starts)
guint               mend_agent_process_get_n_starts      (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_dup_stderr)
char               *mend_agent_process_dup_stderr        (MendAgentProcess   *self);
MEND_DEPRECATED_IN_1_0_FOR (mend_agent_terminate)
void                mend_agent_process_terminate         (MendAgentProcess   *self);

G_END_DECLS
