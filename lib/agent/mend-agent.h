/* mend-agent.h — MendAgent: the agent child process that the agent senders share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-failure.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_AGENT_STDERR_MAX_BYTES:
 *
 * How much of the end of an agent's standard error is kept, in bytes.
 */
#define MEND_AGENT_STDERR_MAX_BYTES 8192

/**
 * MEND_AGENT_TERMINATE_GRACE_MS:
 *
 * The default of [property@Mend.Agent:terminate-grace-ms]: how long an
 * agent and the processes it started have, after `SIGTERM`, before
 * `SIGKILL`.
 */
#define MEND_AGENT_TERMINATE_GRACE_MS 3000

/**
 * MEND_AGENT_IDLE_TIMEOUT_MS:
 *
 * The default of [property@Mend.Agent:idle-timeout-ms]: five minutes.
 */
#define MEND_AGENT_IDLE_TIMEOUT_MS 300000

#define MEND_TYPE_AGENT (mend_agent_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_DERIVABLE_TYPE (MendAgent, mend_agent, MEND, AGENT, GObject)

/**
 * MendAgentClass:
 * @parent_class: the parent class
 *
 * The class of the agents libmend runs. Its virtual methods are private:
 * apps use [class@Mend.AgentProcess] and [class@Mend.AcpAgent].
 */
struct _MendAgentClass
{
  GObjectClass parent_class;

  /*< private >*/
  /* Starts the agent (mend_agent_spawn () and the protocol's start). */
  gboolean      (*start)       (MendAgent           *self,
                                GError             **error);
  /* Sends the attempt kept by the base (mend_agent_get_turn ()). */
  void          (*attempt)     (MendAgent           *self);
  /* The attempt's cancellable was cancelled: the attempt ends stopped
   * right after. */
  void          (*cancelled)   (MendAgent           *self);
  /* A line of the agent's output; NULL leaves the output to the class. */
  void          (*line)        (MendAgent           *self,
                                const char          *line,
                                gsize                length);
  /* The agent ended on its own, or was terminated: its run is closed. */
  void          (*ended)       (MendAgent           *self);

  gpointer      _reserved[8];
};

MEND_AVAILABLE_IN_0_2
const char * const *mend_agent_get_argv               (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
const char * const *mend_agent_get_environ            (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
void                mend_agent_set_environ            (MendAgent          *self,
                                                       const char * const *environ_);
MEND_AVAILABLE_IN_0_2
void                mend_agent_setenv                 (MendAgent          *self,
                                                       const char         *name,
                                                       const char         *value);
MEND_AVAILABLE_IN_0_2
void                mend_agent_unsetenv               (MendAgent          *self,
                                                       const char         *name);
MEND_AVAILABLE_IN_0_2
const char         *mend_agent_get_cwd                (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
void                mend_agent_set_cwd                (MendAgent          *self,
                                                       const char         *cwd);
MEND_AVAILABLE_IN_0_2
const char         *mend_agent_get_session_id         (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
void                mend_agent_set_session_id         (MendAgent          *self,
                                                       const char         *session_id);
MEND_AVAILABLE_IN_0_2
MendChat           *mend_agent_get_chat               (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_agent_get_running            (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
const char         *mend_agent_get_identifier         (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
guint               mend_agent_get_n_starts           (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
char               *mend_agent_dup_stderr             (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
guint               mend_agent_get_terminate_grace_ms (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
guint               mend_agent_get_idle_timeout_ms    (MendAgent          *self);
MEND_AVAILABLE_IN_0_2
void                mend_agent_set_idle_timeout_ms    (MendAgent          *self,
                                                       guint               timeout_ms);
MEND_AVAILABLE_IN_0_2
void                mend_agent_set_terminate_grace_ms (MendAgent          *self,
                                                       guint               grace_ms);
MEND_AVAILABLE_IN_0_2
void                mend_agent_terminate              (MendAgent          *self);

G_END_DECLS
