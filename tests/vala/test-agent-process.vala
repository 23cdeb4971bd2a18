/* test-agent-process.vala
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAgentProcess from Vala: the real Claude Code CLI (tools/setup.sh
 * installs it; MEND_CLAUDE overrides it) as a chat's sender, against the
 * scripted model server. A 529 the CLI gives up on is retried by libmend.
 *
 *   test-agent-process SRCDIR PYTHON
 */

const int64 WALL_START = 1764500000000000;
const string RULES = """[
  {"match": "Fix the build", "times": 1, "answer": {"kind": "status", "status": 529}},
  {"match": null, "times": 0, "answer": {"kind": "text", "text": "Build fixed."}}
]""";

string srcdir;
string python;

void test_529_then_success () {
    var cli = Environment.get_variable ("MEND_CLAUDE")
        ?? srcdir + "/../.agents/claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude";
    /* A missing CLI skips the test, and fails it where CI requires it. */
    if (!FileUtils.test (cli, FileTest.IS_EXECUTABLE)) {
        var missing = "no Claude Code CLI at %s: run tools/setup.sh".printf (cli);
        if (Environment.get_variable ("MEND_REQUIRE_AGENTS") == "1")
            Test.fail_printf ("%s (MEND_REQUIRE_AGENTS=1)", missing);
        else
            Test.skip (missing);
        return;
    }

    try {
        var home = DirUtils.make_tmp ("mend-vala-XXXXXX");
        var script = home + "/rules.json";
        FileUtils.set_contents (script, RULES);
        var server = new Subprocess (SubprocessFlags.STDIN_PIPE | SubprocessFlags.STDOUT_PIPE,
                                     python, srcdir + "/support/model-server.py", script);
        var port = new DataInputStream (server.get_stdout_pipe ()).read_line ();

        var agent = new Mend.AgentProcess.claude_code (cli);
        agent.environ = {
            "PATH=" + (Environment.get_variable ("PATH") ?? "/usr/bin:/bin"),
            "HOME=" + home,
            "TMPDIR=" + home,
            "ANTHROPIC_BASE_URL=http://127.0.0.1:" + port,
            "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "CLAUDE_CODE_MAX_RETRIES=0",
            "IS_SANDBOX=1"
        };
        agent.cwd = home;
        var clock = new Mend.ManualClock (WALL_START);
        var chat = (Mend.Chat) Object.new (typeof (Mend.Chat), "clock", clock, "sender", agent);

        Mend.Turn? done = null;
        chat.turn_finished.connect ((turn) => { done = turn; });
        chat.submit ("Fix the build", null);

        var deadline = get_monotonic_time () + 40 * TimeSpan.SECOND;
        var context = MainContext.default ();
        while (done == null) {
            assert (get_monotonic_time () < deadline);
            if (!context.iteration (false)) {
                if (clock.get_n_pending () > 0)
                    clock.advance_to_next ();
                else
                    Thread.usleep (10000);
            }
        }

        assert (done.state == Mend.TurnState.SUCCEEDED);
        assert (done.attempt == 2);
        assert (done.last_failure.reason == Mend.Reason.CAPACITY);
        assert (agent.session_id != null);

        chat.close ();
        ((Mend.Agent) agent).terminate ();
        server.get_stdin_pipe ().close ();
        server.wait ();
        /* The CLI's private home, with its settings and transcripts. */
        var rm = new Subprocess (SubprocessFlags.NONE, "rm", "-rf", home);
        rm.wait ();
    } catch (Error e) {
        Test.fail_printf ("%s", e.message);
    }
}

int main (string[] args) {
    Test.init (ref args);
    srcdir = args[1];
    python = args[2];
    Test.add_func ("/Mend/Vala/agent-process-retries-the-real-cli", test_529_then_success);
    return Test.run ();
}
