/* mend-agent-private.h — what MendAgent gives the agent senders that derive from it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-agent.h"
#include "mend-agent-child-private.h"
#include "mend-owner-private.h"

G_BEGIN_DECLS

/* The agent's thread (see mend-owner-private.h), for its subclasses' public functions. */
const MendOwner     *mend_agent_get_owner         (MendAgent          *self);

/* The attempt in flight: its turn, or NULL when none runs. */
MendTurn            *mend_agent_get_turn          (MendAgent          *self);
/* Ends the attempt in flight, if any: with @failure (NULL for a
 * success), or with @error (taken) when it could not be made. */
void                 mend_agent_finish_attempt    (MendAgent          *self,
                                                   MendFailure        *failure,
                                                   GError             *error);

/* The agent was heard from during the attempt in flight (a message on
 * its output): its idle timeout starts again. The base class hears each
 * line itself for a class with line (). */
void                 mend_agent_note_heard        (MendAgent          *self);
/* Whether the agent waits on the app (a request the app has not answered
 * yet): the attempt is not idle then, however long the app takes. */
typedef gboolean (*MendAgentWaitsFunc) (MendAgent *self);
void                 mend_agent_set_waits_func    (MendAgent          *self,
                                                   MendAgentWaitsFunc  waits);

/* Starts the agent's process with @extra_args after its argv. */
gboolean             mend_agent_spawn             (MendAgent          *self,
                                                   const char * const *extra_args,
                                                   GError            **error);
/* The run, or NULL when the agent does not run. */
MendAgentChild      *mend_agent_get_child         (MendAgent          *self);
/* Ends the run without telling the class (its ended () is not called). */
void                 mend_agent_close_child       (MendAgent          *self);
/* How many lines the run that ended last wrote (for a class with line ()). */
guint64              mend_agent_get_last_n_lines  (MendAgent          *self);
GByteArray          *mend_agent_get_stderr_tail   (MendAgent          *self);
/* The failure of an attempt whose agent is gone: a dropped connection,
 * with the end of its standard error. */
MendFailure         *mend_agent_new_exit_failure  (MendAgent          *self);

G_END_DECLS
