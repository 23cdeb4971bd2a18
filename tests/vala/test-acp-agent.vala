/* test-acp-agent.vala
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendAcpAgent from Vala, against the scripted ACP agent
 * tests/support/fake-acp-agent.py: the recorded 529 of claude-code-acp is retried,
 * and a permission request is answered from a signal handler.
 *
 *   test-acp-agent SRCDIR PYTHON
 */

const int64 WALL_START = 1764500000000000;
const string SCRIPT = """{"prompts": [
  [{"replay": "529-error"}],
  [{"request": "session/request_permission", "params": {"sessionId": "s",
     "toolCall": {"toolCallId": "t1", "title": "rm -rf build"},
     "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                 {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}},
   {"result": {"stopReason": "end_turn"}}]
]}""";

string srcdir;
string python;

void test_529_then_permission () {
    try {
        var home = DirUtils.make_tmp ("mend-vala-acp-XXXXXX");
        var script = home + "/script.json";
        FileUtils.set_contents (script, SCRIPT);

        var agent = new Mend.AcpAgent ({ python, srcdir + "/support/fake-acp-agent.py", script });
        agent.cwd = home;
        var clock = new Mend.ManualClock (WALL_START);
        var chat = (Mend.Chat) Object.new (typeof (Mend.Chat), "clock", clock, "sender", agent);

        var said = new GenericArray<string> ();
        agent.update.connect ((kind, text) => {
            if (kind == "agent_message_chunk")
                said.add (text);
        });
        agent.request.connect ((method, parameters, request) => {
            assert (method == "session/request_permission");
            return agent.respond (request, """{"outcome": {"outcome": "selected", "optionId": "yes"}}""");
        });

        Mend.Turn? done = null;
        chat.turn_finished.connect ((turn) => { done = turn; });
        chat.submit ("Fix the build", null);

        var deadline = get_monotonic_time () + 20 * TimeSpan.SECOND;
        var context = MainContext.default ();
        while (done == null) {
            assert (get_monotonic_time () < deadline);
            if (!context.iteration (false)) {
                if (clock.get_n_pending () > 0)
                    clock.advance_to_next ();
                else
                    Thread.usleep (5000);
            }
        }

        /* The 529 answer failed attempt 1; the second prompt asked for a
         * permission, which the handler granted. */
        assert (done.state == Mend.TurnState.SUCCEEDED);
        assert (done.attempt == 2);
        assert (done.last_failure.reason == Mend.Reason.CAPACITY);
        assert (said.length == 1);
        assert ("\\\"optionId\\\": \\\"yes\\\"" in said[0]);

        chat.close ();
        ((Mend.Agent) agent).terminate ();
        FileUtils.remove (script);
        DirUtils.remove (home);
    } catch (Error e) {
        error ("%s", e.message);
    }
}

int main (string[] args) {
    Test.init (ref args);
    srcdir = args[1];
    python = args[2];
    Test.add_func ("/Mend/Vala/acp-agent-529-then-permission", test_529_then_permission);
    return Test.run ();
}
