/* mend-test-agents.h — the scripted model server, the real agents, and a chat in front of one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its functions are in mend-test-agents.c (-Dagents).
 */

#pragma once

#include "mend-test-utils.h"

G_BEGIN_DECLS

#if MEND_HAS_AGENTS

/* The scripted model server and the real agents (mend-test-agents.c) */

/* The model server (tests/support/model-server.py), started with a JSON list of
 * rules. */
typedef struct
{
  GSubprocess *process;
  guint        port;
} MendTestModelServer;

void      mend_test_model_server_start        (MendTestModelServer *server,
                                               const char          *rules);
void      mend_test_model_server_stop         (MendTestModelServer *server);
char     *mend_test_model_server_dup_base_url (MendTestModelServer *server);
guint     mend_test_model_server_n_requests   (MendTestModelServer *server);
/* How many model requests the rule at @index (0-based) answered. */
guint     mend_test_model_server_n_answered   (MendTestModelServer *server,
                                               guint                index);
/* How many of Gemini CLI's own requests for JSON (its router's, on
 * :generateContent) the server answered: they are not in
 * mend_test_model_server_n_requests(). */
guint     mend_test_model_server_n_side_requests (MendTestModelServer *server);
/* Uses the rule at @index (0-based) up: it answers no more requests. */
void      mend_test_model_server_retire_rule  (MendTestModelServer *server,
                                               guint                index);
/* The body of the chat's model request @n (1-based, in the order the
 * server counted them), as it came; NULL when there is none. */
char     *mend_test_model_server_dup_request  (MendTestModelServer *server,
                                               guint                n);

/* The Claude Code CLI and its ACP adapter that tools/setup.sh installs
 * (or MEND_CLAUDE, MEND_CLAUDE_CODE_ACP); NULL when it is not there, with
 * the test skipped (failed when agents are required: MEND_REQUIRE_AGENTS=1,
 * as CI sets). */
char     *mend_test_claude_code_cli_find      (void);
char     *mend_test_claude_code_acp_find      (void);

/* The other ACP agents tools/setup.sh installs: claude-agent-acp (or
 * MEND_CLAUDE_AGENT_ACP), Gemini CLI (or MEND_GEMINI; it needs node 20 or
 * later, and is missing with an older one) and codex-acp's native binary
 * (or MEND_CODEX_ACP). NULL when it is not there, with the test skipped
 * (failed when agents are required). */
char     *mend_test_claude_agent_acp_find     (void);
char     *mend_test_gemini_cli_find           (void);
char     *mend_test_codex_acp_find            (void);

/* Today's adapters, which tools/setup.sh installs with the node 22 they
 * need (or MEND_NODE22): @agentclientprotocol/claude-agent-acp (or
 * MEND_AC_CLAUDE_AGENT_ACP) and @agentclientprotocol/codex-acp (or
 * MEND_AC_CODEX_ACP), each its dist/index.js, run by that node. NULL
 * when either is not there, with the test skipped (failed when agents
 * are required). */
char     *mend_test_ac_claude_agent_acp_find  (void);
char     *mend_test_ac_codex_acp_find         (void);

/* The agents set up for the model server at @base_url: offline, the
 * test's private home as HOME and working directory, IS_SANDBOX since
 * the tests may run as root; the CLI's own retries at most @max_retries,
 * the adapter's none. */
MendAgentProcess *mend_test_claude_code_process_new   (const char *cli,
                                                       const char *base_url,
                                                       guint       max_retries);
/* Claude Code (the CLI, or an adapter that runs it) signed in with a
 * plan, a dummy OAuth token instead of the API key: how it reads a plan's
 * usage limit (tests/support/record-claude-code.py records so). */
void              mend_test_claude_sign_in_with_plan (MendAgent  *agent);
#if MEND_HAS_ACP
MendAcpAgent     *mend_test_claude_code_acp_agent_new (const char *adapter,
                                                       const char *base_url);
/* The same with the CLI's own retries at most @max_retries. */
MendAcpAgent     *mend_test_claude_code_acp_agent_new_with_retries (const char *adapter,
                                                                    const char *base_url,
                                                                    guint       max_retries);

/* Each agent set up offline for the model server at @base_url, in the
 * test's private home (HOME, TMPDIR and working directory) with its own
 * retries off, so that each of libmend's attempts is one model request:
 * claude-agent-acp as claude-code-acp (CLAUDE_CODE_MAX_RETRIES=0);
 * `gemini --acp` with HOME/.gemini/settings.json choosing the API key,
 * no updates, statistics or telemetry, and "general": {"maxAttempts": 1};
 * codex-acp with CODEX_HOME/config.toml naming the server as a Responses
 * provider with request_max_retries and stream_max_retries 0. */
MendAcpAgent     *mend_test_claude_agent_acp_agent_new (const char *adapter,
                                                        const char *base_url);
MendAcpAgent     *mend_test_gemini_cli_acp_agent_new   (const char *gemini,
                                                        const char *base_url);
MendAcpAgent     *mend_test_codex_acp_agent_new        (const char *codex_acp,
                                                        const char *base_url);

/* The same with the agent's own retries at most @max_retries (for Gemini
 * CLI, "maxAttempts" @max_retries + 1; for codex-acp, request_max_retries
 * and stream_max_retries), for a test of what happens while the agent
 * waits between its own attempts. */
MendAcpAgent     *mend_test_claude_agent_acp_agent_new_with_retries (const char *adapter,
                                                                     const char *base_url,
                                                                     guint       max_retries);
MendAcpAgent     *mend_test_gemini_cli_acp_agent_new_with_retries   (const char *gemini,
                                                                     const char *base_url,
                                                                     guint       max_retries);
MendAcpAgent     *mend_test_codex_acp_agent_new_with_retries        (const char *codex_acp,
                                                                     const char *base_url,
                                                                     guint       max_retries);

/* Today's adapters, offline as REAL-AGENTS.md says, run by node 22:
 * claude-agent-acp with claude-code-acp's environment and
 * HOME/.claude/settings.json (default permission mode, no prompt
 * suggestions); codex-acp with codex-acp's config.toml, the model
 * gpt-5.5 and the features that look things up online off. Their own
 * retries at most @max_retries. */
MendAcpAgent     *mend_test_ac_claude_agent_acp_agent_new_with_retries (const char *script,
                                                                        const char *base_url,
                                                                        guint       max_retries);
MendAcpAgent     *mend_test_ac_codex_acp_agent_new_with_retries        (const char *script,
                                                                        const char *base_url,
                                                                        guint       max_retries);
#endif

/* What an agent sender wrote on its stderr, or NULL (also for a sender
 * that runs no process). */
char     *mend_test_agent_dup_stderr   (MendSender  *sender);

/* A check of a test's fixture, with data of the check's own: the shape
 * of each test file's predicates, which take their Fixture pointer. */
typedef gboolean (*MendTestAgentCheck) (gpointer      fixture,
                                        gconstpointer data);

/* A check that always holds. */
gboolean  mend_test_agent_always       (gpointer      fixture,
                                        gconstpointer data);

/* Runs the main loop until @done (@fixture, @data) holds, in real time for
 * the agent and the server, bounded by a 40 s watchdog. Whenever nothing
 * else is left to do and @may_advance (nullable: never) holds, the next of
 * @clock's timers fires in virtual time. @sender's stderr is shown when
 * the watchdog bites. */
void      mend_test_agent_run_until    (MendManualClock    *clock,
                                        MendTestAgentCheck  may_advance,
                                        MendSender         *sender,
                                        MendTestAgentCheck  done,
                                        gpointer            fixture,
                                        gconstpointer       data,
                                        const char         *what);

/* The same, for at most @timeout_ms of real time: FALSE when @done did
 * not come to hold by then (the caller says what that means). */
gboolean  mend_test_agent_run_within   (MendManualClock    *clock,
                                        MendTestAgentCheck  may_advance,
                                        MendTestAgentCheck  done,
                                        gpointer            fixture,
                                        gconstpointer       data,
                                        guint               timeout_ms);

/* The real time a test lets one of libmend's waits take before it passes
 * the rest in virtual time, as the shortest of them (250 ms) would: no
 * agent is asked again within milliseconds of its answer, which no app
 * does (codex-acp 0.16.0 then now and then loses the prompt: its stderr
 * says "Received event for unknown submission ID", and the prompt is never
 * answered; see docs/agents.md). */
#define MEND_TEST_AGENT_MIN_WAIT_MS 300

/* Runs the main loop for @ms of real time, libmend's clock standing. */
void      mend_test_agent_run_for      (guint        ms);

/* Whether Claude Code wrote a session's transcript with @text in it,
 * under HOME/.claude/projects. */
gboolean  mend_test_claude_transcript_has (const char *session,
                                           const char *text);

/* A chat in front of a real agent (mend-test-agents.c) */

/* A chat on a MendManualClock whose sender is a real agent, in front of
 * the model server: the turns it finished, the records it emitted and an
 * ACP agent's updates are kept. The agent and the server run in real
 * time, libmend's waits in virtual time; every object is finalized at
 * the end. */
typedef struct
{
  MendClock           *clock;
  MendChat            *chat;
  MendAgent           *agent;
  MendTestModelServer  server;
  GPtrArray           *finished;         /* MendTurn, owned */
  GPtrArray           *records;          /* char *, owned */
  GPtrArray           *updates;          /* char *, "kind json", owned: an ACP agent's */
  GString             *text;             /* its agent_message_chunk texts: what the app shows */
  gint64               waiting_since_us; /* real time, when a turn began its wait */
  gboolean             auto_advance;     /* mend_test_agent_chat_run_until () passes waits */
} MendTestAgentChat;

/* A check of the fixture, with data of the check's own. */
typedef gboolean (*MendTestAgentChatCheck) (MendTestAgentChat *f,
                                            gconstpointer      data);

void      mend_test_agent_chat_set_up    (MendTestAgentChat *f,
                                          gconstpointer      data);
void      mend_test_agent_chat_tear_down (MendTestAgentChat *f,
                                          gconstpointer      data);
/* The chat @id with @agent (taken) as its sender. */
void      mend_test_agent_chat_attach    (MendTestAgentChat *f,
                                          MendAgent         *agent,
                                          const char        *id);
/* Runs the main loop until @done: the agent in real time, libmend's
 * waits in virtual time whenever nothing else is left to do (when
 * auto_advance is set). */
void      mend_test_agent_chat_run_until (MendTestAgentChat      *f,
                                          MendTestAgentChatCheck  done,
                                          gconstpointer           data,
                                          const char             *what);
/* A check: at least GPOINTER_TO_UINT (@data) turns finished. */
gboolean  mend_test_agent_chat_n_finished_is   (MendTestAgentChat *f,
                                                gconstpointer      data);
/* A check: the chat waits for a usage limit's reset. */
gboolean  mend_test_agent_chat_waits_at_reset  (MendTestAgentChat *f,
                                                gconstpointer      data);
/* A check: the chat's turn waits, and has for MEND_TEST_AGENT_MIN_WAIT_MS
 * of real time. */
gboolean  mend_test_agent_chat_turn_is_waiting (MendTestAgentChat *f,
                                                gconstpointer      data);
MendTurn *mend_test_agent_chat_finished  (MendTestAgentChat *f,
                                          guint              i);
void      mend_test_agent_chat_submit    (MendTestAgentChat *f,
                                          const char        *text);

/* The chat's one subagent (the test fails when there are more), or NULL
 * before any; the list holds it. */
MendSubagent *mend_test_agent_chat_the_subagent      (MendTestAgentChat *f);
/* A check: the chat's one subagent is in state GPOINTER_TO_INT (@data). */
gboolean      mend_test_agent_chat_subagent_in_state (MendTestAgentChat *f,
                                                      gconstpointer      data);

#endif /* MEND_HAS_AGENTS */

G_END_DECLS
