/* test-claude-agent-acp.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end: Claude Code through Zed's claude-agent-acp 0.23.1 (the
 * successor of claude-code-acp, with the Claude Code 2.1.83 its Agent SDK
 * bundles; installed by tools/setup.sh, or MEND_CLAUDE_AGENT_ACP) as a
 * chat's sender through MendAcpAgent, against the Messages API of
 * tests/support/model-server.py on 127.0.0.1, with the CLI's own retries off
 * (CLAUDE_CODE_MAX_RETRIES=0).
 */

#include "config.h"

#include "mend-test-agents.h"
#include "mend-test-acp-real.h"

static const MendTestRealAcpAgent claude_agent = {
  .name = "ClaudeAgentAcp",
  .find = mend_test_claude_agent_acp_find,
  .make = mend_test_claude_agent_acp_agent_new,
  .false_end_turn_after_failure = TRUE,
};

int
main (int   argc,
      char *argv[])
{
  mend_test_real_acp_init (&argc, &argv);
  mend_test_real_acp_add_tests (&claude_agent);

  return g_test_run ();
}
