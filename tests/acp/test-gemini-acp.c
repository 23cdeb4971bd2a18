/* test-gemini-acp.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * End to end: Gemini CLI 0.61.0 (`gemini --acp`, installed by
 * tools/setup.sh, or MEND_GEMINI) as a chat's sender through MendAcpAgent,
 * against the Gemini API of tests/support/model-server.py on 127.0.0.1, with its
 * own retries capped to one attempt ("general": {"maxAttempts": 1}).
 *
 * Gemini CLI asks the API twice per prompt: the chat itself
 * (:streamGenerateContent, which the rules answer and the server counts as
 * the chat's model requests) and its model router's classifier
 * (:generateContent for JSON, a side request the server answers and counts
 * apart).
 */

#include "config.h"

#include "mend-test-agents.h"
#include "mend-test-acp-real.h"

static void
check_503_twice (MendTestAgentChat *f,
                 MendTurn          *turn)
{
  /* Its error is the HTTP status as the JSON-RPC code and the API's
   * message, which names no status: the words decide. */
  g_assert_nonnull (strstr (mend_failure_get_message (mend_turn_get_last_failure (turn)), "high demand"));
  /* One router call per attempt, besides the chat's three requests. */
  g_assert_cmpuint (mend_test_model_server_n_side_requests (&f->server), ==, 3);
}

static const MendTestRealAcpAgent gemini = {
  .name = "GeminiAcp",
  .find = mend_test_gemini_cli_find,
  .make = mend_test_gemini_cli_acp_agent_new,
  .check_503_twice = check_503_twice,
};

int
main (int   argc,
      char *argv[])
{
  mend_test_real_acp_init (&argc, &argv);
  mend_test_real_acp_add_tests (&gemini);

  return g_test_run ();
}
