/* real-agent-common.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the end-to-end tests of real agents share: the scripted model
 * server (tests/model-server.py), finding and setting up the agents that
 * tools/setup.sh installs, and the run loop that lets them work in real
 * time while libmend's waits pass in virtual time.
 */

#pragma once

#include <gio/gio.h>
#include <libmend.h>

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
/* How many model requests the rule at @index (0-based) answered. */
guint     model_server_n_answered   (ModelServer *server,
                                     guint        index);
/* How many of Gemini CLI's own requests for JSON (its router's, on
 * :generateContent) the server answered: they are not in
 * model_server_n_requests(). */
guint     model_server_n_side_requests (ModelServer *server);
/* Uses the rule at @index (0-based) up: it answers no more requests. */
void      model_server_retire_rule  (ModelServer *server,
                                     guint        index);
/* The body of the chat's model request @n (1-based, in the order the
 * server counted them), as it came; NULL when there is none. */
char     *model_server_dup_request  (ModelServer *server,
                                     guint        n);

/* An agent program: @env_name overrides @default_path. */
char     *real_agent_path           (const char  *env_name,
                                     const char  *default_path);

/* Whether a missing agent fails a test (MEND_REQUIRE_AGENTS=1, as CI
 * sets) rather than skips it. */
gboolean  real_agents_required      (void);

/* The Claude Code CLI and its ACP adapter that tools/setup.sh installs
 * (or MEND_CLAUDE, MEND_CLAUDE_CODE_ACP); NULL when it is not there, with
 * the test skipped (failed when agents are required). */
char     *claude_code_cli_find      (void);
char     *claude_code_acp_find      (void);

/* The agents set up for the model server at @base_url: offline, the
 * test's private home as HOME and working directory, IS_SANDBOX since
 * the tests may run as root; the CLI's own retries at most @max_retries,
 * the adapter's none. */
MendAgentProcess *claude_code_process_new   (const char *cli,
                                             const char *base_url,
                                             guint       max_retries);
#if MEND_HAS_ACP
MendAcpAgent     *claude_code_acp_agent_new (const char *adapter,
                                             const char *base_url);
/* The same with the CLI's own retries at most @max_retries. */
MendAcpAgent     *claude_code_acp_agent_new_with_retries (const char *adapter,
                                                          const char *base_url,
                                                          guint       max_retries);
#endif

/* The other ACP agents tools/setup.sh installs: claude-agent-acp (or
 * MEND_CLAUDE_AGENT_ACP), Gemini CLI (or MEND_GEMINI; it needs node 20 or
 * later, and is missing with an older one) and codex-acp's native binary
 * (or MEND_CODEX_ACP). NULL when it is not there, with the test skipped
 * (failed when agents are required). */
char     *claude_agent_acp_find     (void);
char     *gemini_cli_find           (void);
char     *codex_acp_find            (void);

#if MEND_HAS_ACP
/* Each agent set up offline for the model server at @base_url, in the
 * test's private home (HOME, TMPDIR and working directory) with its own
 * retries off, so that each of libmend's attempts is one model request:
 * claude-agent-acp as claude-code-acp (CLAUDE_CODE_MAX_RETRIES=0);
 * `gemini --acp` with HOME/.gemini/settings.json choosing the API key,
 * no updates, statistics or telemetry, and "general": {"maxAttempts": 1};
 * codex-acp with CODEX_HOME/config.toml naming the server as a Responses
 * provider with request_max_retries and stream_max_retries 0. */
MendAcpAgent     *claude_agent_acp_agent_new (const char *adapter,
                                              const char *base_url);
MendAcpAgent     *gemini_cli_acp_agent_new   (const char *gemini,
                                              const char *base_url);
MendAcpAgent     *codex_acp_agent_new        (const char *codex_acp,
                                              const char *base_url);

/* The same with the agent's own retries at most @max_retries (for Gemini
 * CLI, "maxAttempts" @max_retries + 1; for codex-acp, request_max_retries
 * and stream_max_retries), for a test of what happens while the agent
 * waits between its own attempts. */
MendAcpAgent     *claude_agent_acp_agent_new_with_retries (const char *adapter,
                                                           const char *base_url,
                                                           guint       max_retries);
MendAcpAgent     *gemini_cli_acp_agent_new_with_retries   (const char *gemini,
                                                           const char *base_url,
                                                           guint       max_retries);
MendAcpAgent     *codex_acp_agent_new_with_retries        (const char *codex_acp,
                                                           const char *base_url,
                                                           guint       max_retries);
#endif

/* What an agent sender wrote on its stderr, or NULL (also for a sender
 * that runs no process). */
char     *real_agent_dup_stderr     (MendSender  *sender);

/* A check of a test's fixture, with data of the check's own: the shape
 * of each test file's predicates, which take their Fixture pointer. */
typedef gboolean (*RealAgentCheck) (gpointer      fixture,
                                    gconstpointer data);

/* A check that always holds. */
gboolean  real_agent_always         (gpointer      fixture,
                                     gconstpointer data);

/* Runs the main loop until @done (@fixture, @data) holds, in real time for
 * the agent and the server, bounded by a 40 s watchdog. Whenever nothing
 * else is left to do and @may_advance (nullable: never) holds, the next of
 * @clock's timers fires in virtual time. @sender's stderr is shown when
 * the watchdog bites. */
void      real_agent_run_until      (MendManualClock *clock,
                                     RealAgentCheck   may_advance,
                                     MendSender      *sender,
                                     RealAgentCheck   done,
                                     gpointer         fixture,
                                     gconstpointer    data,
                                     const char      *what);

/* The same, for at most @timeout_ms of real time: FALSE when @done did
 * not come to hold by then (the caller says what that means). */
gboolean  real_agent_run_within     (MendManualClock *clock,
                                     RealAgentCheck   may_advance,
                                     RealAgentCheck   done,
                                     gpointer         fixture,
                                     gconstpointer    data,
                                     guint            timeout_ms);

/* The real time a test lets one of libmend's waits take before it passes
 * the rest in virtual time, as the shortest of them (250 ms) would: no
 * agent is asked again within milliseconds of its answer, which no app
 * does (codex-acp 0.16.0 then now and then loses the prompt: its stderr
 * says "Received event for unknown submission ID", and the prompt is never
 * answered; see docs/agents.md). */
#define REAL_AGENT_MIN_WAIT_MS 300

/* Runs the main loop for @ms of real time, libmend's clock standing. */
void      real_agent_run_for        (guint            ms);

/* How many of @records (JSON text of the chat's `record` signal) are of
 * @kind with @outcome. */
guint     real_agent_count_records  (GPtrArray   *records,
                                     const char  *kind,
                                     const char  *outcome);

/* The text at the head of @chat's queue, or NULL. */
char     *real_agent_queue_head     (MendChat    *chat);

/* Whether Claude Code wrote a session's transcript with @text in it,
 * under HOME/.claude/projects. */
gboolean  claude_transcript_has     (const char  *session,
                                     const char  *text);

/* Drops the last reference to @object and waits, in real time, for it to
 * be finalized (GSubprocess lets go in GLib's worker thread). */
void      finalize_eventually       (gpointer     object);

G_END_DECLS
