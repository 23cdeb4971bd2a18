/* mend-test-acp-real.h — the scenarios every real ACP agent plays against tests/support/model-server.py
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its functions are in mend-test-acp-real.c (-Dacp); a real agent's chat
 * is the one of mend-test-agents.h.
 */

#pragma once

#include "mend-test-agents.h"

G_BEGIN_DECLS

#if MEND_HAS_ACP

/* A real ACP agent, other than claude-code-acp, of the end-to-end tests
 * (test-gemini-acp, test-codex-acp, test-claude-agent-acp): how to find
 * it, how to launch it offline against the model server, and the defects
 * it is known to have. */
typedef struct
{
  const char    *name;          /* the tests' path: /Mend/<name>/… */
  char         *(*find) (void);
  MendAcpAgent *(*make) (const char *path,
                         const char *base_url);
  /* When the 503-twice turn finished as a known defect of the agent has
   * it finish: the defect, named; otherwise NULL. */
  const char   *(*defect_503_twice) (MendTestAgentChat *f,
                                     MendTurn          *turn);
  /* The agent's own checks of that turn, when it went as it should
   * (nullable). */
  void          (*check_503_twice)  (MendTestAgentChat *f,
                                     MendTurn          *turn);
  /* The agent answers the prompt after a failed one at once with an
   * end_turn and no output (claude-agent-acp 0.23.1): libmend reads it
   * as an empty response and tries again, so the turn's last failure is
   * that empty response. */
  gboolean        false_end_turn_after_failure;
} MendTestRealAcpAgent;

/* The rules' indexes of the 503-twice scenario, which
 * mend_test_model_server_n_answered() counts. */
enum { MEND_TEST_RULE_503, MEND_TEST_RULE_ANSWER };

/* The tests' environment: loopback without proxies, settings in memory. */
void      mend_test_real_acp_init          (int                        *argc,
                                            char                     ***argv);
/* Registers the scenarios for @kind. */
void      mend_test_real_acp_add_tests     (const MendTestRealAcpAgent *kind);

#endif /* MEND_HAS_ACP */

G_END_DECLS
