/* mend-subagent-retry.h — MendSubagentRetry: resumes subagents that died on a transient error
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-enums.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED:
 *
 * The default of [property@Mend.SubagentRetry:max-failed].
 */
#define MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED 32

/**
 * MEND_SUBAGENT_NAME_MAX_CHARS:
 *
 * The most characters of a subagent's name that reach the model in a resume
 * prompt.
 */
#define MEND_SUBAGENT_NAME_MAX_CHARS 80

/**
 * MEND_SUBAGENT_MAX_ID_BYTES:
 *
 * The longest subagent id or agent id kept; events with a longer one are
 * ignored, so that no record or entry grows with hostile input.
 */
#define MEND_SUBAGENT_MAX_ID_BYTES 256

/**
 * MEND_SUBAGENT_MAX_NAME_BYTES:
 *
 * The most bytes of a subagent's name kept; a longer name is cut at a
 * character boundary.
 */
#define MEND_SUBAGENT_MAX_NAME_BYTES 1024

#define MEND_TYPE_SUBAGENT_RETRY (mend_subagent_retry_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendSubagentRetry, mend_subagent_retry, MEND, SUBAGENT_RETRY, GObject)

MEND_AVAILABLE_IN_0_2
MendSubagent *mend_subagent_retry_lookup         (MendSubagentRetry *self,
                                                  const char        *id);
MEND_AVAILABLE_IN_0_2
MendSubagent *mend_subagent_retry_note_started   (MendSubagentRetry *self,
                                                  const char        *id,
                                                  const char        *agent_id,
                                                  const char        *name);
MEND_AVAILABLE_IN_0_2
void          mend_subagent_retry_note_failed    (MendSubagentRetry *self,
                                                  const char        *id,
                                                  MendFailure       *failure);
MEND_AVAILABLE_IN_0_2
void          mend_subagent_retry_note_resumed   (MendSubagentRetry *self,
                                                  const char        *agent_id);
MEND_AVAILABLE_IN_0_2
void          mend_subagent_retry_note_ended     (MendSubagentRetry *self,
                                                  const char        *id,
                                                  MendSubagentState  state);
MEND_AVAILABLE_IN_0_2
gboolean      mend_subagent_retry_resume_now     (MendSubagentRetry *self,
                                                  const char        *id,
                                                  GError           **error);
MEND_AVAILABLE_IN_0_2
guint         mend_subagent_retry_get_max_failed (MendSubagentRetry *self);
MEND_AVAILABLE_IN_0_2
void          mend_subagent_retry_set_max_failed (MendSubagentRetry *self,
                                                  guint              max_failed);


G_END_DECLS
