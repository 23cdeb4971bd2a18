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

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendAgentProcess, mend_agent_process, MEND, AGENT_PROCESS, MendAgent)

MEND_AVAILABLE_IN_0_2
MendAgentProcess   *mend_agent_process_new               (const char * const *argv);
MEND_AVAILABLE_IN_0_2
MendAgentProcess   *mend_agent_process_new_claude_code   (const char         *path);
MEND_AVAILABLE_IN_0_2
const char         *mend_agent_process_get_resume_option (MendAgentProcess   *self);
MEND_AVAILABLE_IN_0_2
void                mend_agent_process_set_resume_option (MendAgentProcess   *self,
                                                          const char         *option);
MEND_AVAILABLE_IN_0_2
MendStreamObserver *mend_agent_process_get_observer      (MendAgentProcess   *self);


G_END_DECLS
