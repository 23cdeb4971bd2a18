/* mend-test-acp.h — a chat whose sender is tests/support/hostile-acp-agent.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its functions are in mend-test-acp.c (-Dacp).
 */

#pragma once

#include "mend-test-utils.h"

G_BEGIN_DECLS

#if MEND_HAS_ACP

/* The agent's script: JSON with ' for " (the texts in it have no
 * apostrophe). */
#define MEND_TEST_ACP_CHUNK(text) \
  "{'update': {'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': '" text "'}}}"
/* The model's answer, then the prompt's end: a prompt that ends with no
 * answer is an empty response. */
#define MEND_TEST_ACP_ANSWER_END_TURN "{'answer': {'stopReason': 'end_turn'}}"
#define MEND_TEST_ACP_END_TURN MEND_TEST_ACP_CHUNK ("Done.") ", " MEND_TEST_ACP_ANSWER_END_TURN
#define MEND_TEST_ACP_PERMISSION \
  "{'send': {'jsonrpc': '2.0', 'id': 'perm-1', 'method': 'session/request_permission', 'params': {" \
  "  'sessionId': '$SESSION', 'toolCall': {'toolCallId': 'toolu_1', 'title': 'rm -rf build'}," \
  "  'options': [{'optionId': 'yes', 'name': 'Allow', 'kind': 'allow_once'}," \
  "              {'optionId': 'no', 'name': 'Reject', 'kind': 'reject_once'}]}}}"
/* Claude Code's answer to a prompt when the model is overloaded, as
 * claude-code-acp 0.16.2 sent it (docs: REAL-AGENTS.md). */
#define MEND_TEST_ACP_OVERLOADED \
  "{'error': {'code': -32603, 'message': 'Internal error: API Error: 529 {\\'type\\':\\'error\\'," \
  "\\'error\\':{\\'type\\':\\'overloaded_error\\',\\'message\\':\\'Overloaded\\'}}'}}"

/* What a re-entrant handler does, once. */
typedef enum
{
  MEND_TEST_ACT_NONE,
  MEND_TEST_ACT_STOP,
  MEND_TEST_ACT_CLOSE,
  MEND_TEST_ACT_TERMINATE,
  MEND_TEST_ACT_UNREF,
  MEND_TEST_ACT_SUBMIT,
  MEND_TEST_ACT_SET_PROFILE,
} MendTestAct;

/* The chat runs on a virtual clock, the agent in real time; every turn
 * finished, update emitted and wait's failure is kept; the agent's log of
 * what it read and its number of starts are files in the test's home.
 * Every object is finalized at the end. */
typedef struct
{
  MendClock    *clock;
  MendChat     *chat;
  MendAcpAgent *agent;
  GPtrArray    *finished;       /* MendTurn, owned */
  GPtrArray    *updates;        /* char *, "kind json", owned */
  GPtrArray    *failures;       /* MendFailure of the waits, owned */
  char         *log;            /* what the agent read */
  char         *count;          /* its number of starts */
  guint         held_request;   /* a request the test answers */
  guint         n_requests;
  MendTestAct   action;         /* what a re-entrant handler does, once */
} MendTestHostileAcp;

/* A check of the fixture, with data of the check's own. */
typedef gboolean (*MendTestHostileAcpCheck) (MendTestHostileAcp *f,
                                             gconstpointer       data);

void      mend_test_hostile_acp_set_up     (MendTestHostileAcp *f,
                                            gconstpointer       data);
void      mend_test_hostile_acp_tear_down  (MendTestHostileAcp *f,
                                            gconstpointer       data);
/* The agent playing @script (see MEND_TEST_ACP_CHUNK), and a chat with
 * it as its sender. */
void      mend_test_hostile_acp_start_chat (MendTestHostileAcp *f,
                                            const char         *script);
/* Real time for the agent; libmend's waits fire in virtual time when
 * nothing else is left to do. */
void      mend_test_hostile_acp_run_until  (MendTestHostileAcp      *f,
                                            MendTestHostileAcpCheck  done,
                                            gconstpointer            data);
/* Checks for mend_test_hostile_acp_run_until (). */
gboolean  mend_test_hostile_acp_n_finished_is (MendTestHostileAcp *f,
                                               gconstpointer       data);
gboolean  mend_test_hostile_acp_not_running   (MendTestHostileAcp *f,
                                               gconstpointer       data);
gboolean  mend_test_hostile_acp_log_has       (MendTestHostileAcp *f,
                                               gconstpointer       data);
/* How often the agent read @text. */
guint     mend_test_hostile_acp_log_count  (MendTestHostileAcp *f,
                                            const char         *text);
MendTurn *mend_test_hostile_acp_finished   (MendTestHostileAcp *f,
                                            guint               i);
void      mend_test_hostile_acp_submit     (MendTestHostileAcp *f,
                                            const char         *text);
guint     mend_test_hostile_acp_count_updates (MendTestHostileAcp *f,
                                               const char         *containing);
/* One turn against @script; returns it once finished. */
MendTurn *mend_test_hostile_acp_run_one_turn (MendTestHostileAcp *f,
                                              const char         *script);

/* The chat's handlers that keep the turns finished and the waits'
 * failures, for a chat the test makes itself. */
void      mend_test_hostile_acp_on_turn_started  (MendChat           *chat,
                                                  MendTurn           *turn,
                                                  MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_turn_finished (MendChat           *chat,
                                                  MendTurn           *turn,
                                                  MendTestHostileAcp *f);

/* Runs @f's chat, whose handler acts as @f->action says, until it
 * settles: the handler acted and the chat's turns finished, or the chat
 * and the agent it dropped are gone. FALSE when it dropped them. */
gboolean  mend_test_hostile_acp_run_settled (MendTestHostileAcp *f);

/* Keeps every agent status the chat's turns show in @statuses (strings,
 * owned by it); the turns' handlers have @statuses as their data. */
void      mend_test_acp_watch_agent_status  (MendChat           *chat,
                                             GPtrArray          *statuses);

/* Does the fixture's action, once; the handlers that do it from inside a
 * turn's waiting, a turn-started (connecting that) or a turn-finished. */
void      mend_test_hostile_acp_act        (MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_waiting_act       (MendTurn           *turn,
                                                      MendRetryWait      *wait,
                                                      MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_turn_started_act  (MendChat           *chat,
                                                      MendTurn           *turn,
                                                      MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_turn_finished_act (MendChat           *chat,
                                                      MendTurn           *turn,
                                                      MendTestHostileAcp *f);

#endif /* MEND_HAS_ACP */

G_END_DECLS
