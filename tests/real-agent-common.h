/* real-agent-common.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the end-to-end tests of real agents share: the scripted model
 * server (tests/model-server.py) and finding the agents that
 * tools/setup.sh installs.
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The model server, started with a JSON list of rules. */
typedef struct
{
  GSubprocess *process;
  guint        port;
} ModelServer;

void      model_server_start        (ModelServer *server,
                                     const char  *rules);
void      model_server_stop         (ModelServer *server);
char     *model_server_dup_base_url (ModelServer *server);
guint     model_server_n_requests   (ModelServer *server);

/* An agent program: @env_name overrides @default_path. */
char     *real_agent_path           (const char  *env_name,
                                     const char  *default_path);

/* Whether Claude Code wrote a session's transcript with @text in it,
 * under HOME/.claude/projects. */
gboolean  claude_transcript_has     (const char  *session,
                                     const char  *text);

/* Drops the last reference to @object and waits, in real time, for it to
 * be finalized (GSubprocess lets go in GLib's worker thread). */
void      finalize_eventually       (gpointer     object);

G_END_DECLS
