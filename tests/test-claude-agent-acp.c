/* test-claude-agent-acp.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end: Claude Code through Zed's claude-agent-acp 0.23.1 (the
 * successor of claude-code-acp, with the Claude Code 2.1.83 its Agent SDK
 * bundles; installed by tools/setup.sh, or MEND_CLAUDE_AGENT_ACP) as a
 * chat's sender through MendAcpAgent, against the Messages API of
 * tests/model-server.py on 127.0.0.1, with the CLI's own retries off
 * (CLAUDE_CODE_MAX_RETRIES=0).
 */

#include "config.h"

#include "real-acp-fixture.h"

/* After a failed prompt, the adapter answers the next one at once with
 * stopReason end_turn and no output, before any model request: it takes
 * the failed turn's late "idle" for the new prompt's end, and the model's
 * answer streams during the prompt after. The retry then "succeeds" with
 * nothing to show. */
static const char *
defect_503_twice (Fixture  *f,
                  MendTurn *turn)
{
  if (mend_turn_get_state (turn) == MEND_TURN_SUCCEEDED && mend_turn_get_attempt (turn) == 2 &&
      !mend_turn_get_output_seen (turn) && f->text->len == 0 &&
      g_strcmp0 (mend_acp_agent_get_stop_reason (f->agent), "end_turn") == 0)
    return "claude-agent-acp 0.23.1 answers the prompt after a failed one with a false "
           "end_turn (no output, no model request): libmend's second attempt succeeds empty";

  return NULL;
}

static void
check_503_twice (Fixture  *f,
                 MendTurn *turn)
{
  g_assert_cmpstr (mend_failure_get_api_error_type (mend_turn_get_last_failure (turn)), ==, "api_error");
}

static const RealAcpAgent claude_agent = {
  .name = "ClaudeAgentAcp",
  .find = claude_agent_acp_find,
  .make = claude_agent_acp_agent_new,
  .defect_503_twice = defect_503_twice,
  .check_503_twice = check_503_twice,
};

int
main (int   argc,
      char *argv[])
{
  real_acp_init (&argc, &argv);
  real_acp_add_tests (&claude_agent);

  return g_test_run ();
}
