/* test-codex-acp.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end: Codex through Zed's codex-acp 0.16.0 (its native binary,
 * installed by tools/setup.sh, or MEND_CODEX_ACP) as a chat's sender
 * through MendAcpAgent, against the OpenAI Responses API of
 * tests/support/model-server.py on 127.0.0.1, with Codex's own retries off
 * (request_max_retries and stream_max_retries 0 in its config.toml).
 */

#include "config.h"

#include "mend-test-agents.h"
#include "mend-test-acp-real.h"

static void
check_503_twice (MendTestAgentChat *f,
                 MendTurn          *turn)
{
  /* Its errors are all -32603 "Internal error": the status and the API's
   * message are only in the error's data, which the failure keeps. */
  const char *message = mend_failure_get_message (mend_turn_get_last_failure (turn));

  g_assert_nonnull (strstr (message, "unexpected status 503"));
  g_assert_nonnull (strstr (message, "overloaded"));
}

static const MendTestRealAcpAgent codex = {
  .name = "CodexAcp",
  .find = mend_test_codex_acp_find,
  .make = mend_test_codex_acp_agent_new,
  .check_503_twice = check_503_twice,
};

int
main (int   argc,
      char *argv[])
{
  mend_test_real_acp_init (&argc, &argv);
  mend_test_real_acp_add_tests (&codex);

  return g_test_run ();
}
