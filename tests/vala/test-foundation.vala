/* test-foundation.vala
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libmend from Vala, through the generated libmend-1.vapi: failures,
 * policies and waits on a manual clock, with async/yield.
 */

const int64 WALL_START = 1764500000000000;

class RetryAuthPolicy : Mend.ErrorPolicy {
    public override Mend.FailureKind classify (Mend.Failure failure) {
        if (failure.reason == Mend.Reason.AUTH)
            return Mend.FailureKind.TRANSIENT;
        return base.classify (failure);
    }
}

void test_failure_from_text () {
    var failure = new Mend.Failure.from_text ("API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}");
    assert (failure.reason == Mend.Reason.CAPACITY);
    assert (failure.kind == Mend.FailureKind.TRANSIENT);
    assert (failure.api_error_type == "overloaded_error");
    assert (failure.status == 529);

    var limit = new Mend.Failure.from_text ("Claude AI usage limit reached|1760000000");
    assert (limit.kind == Mend.FailureKind.LIMIT);
}

void test_turn_verdict () {
    var clock = new Mend.ManualClock (1764500000000000);
    var turn = (Mend.Turn) Object.@new (typeof (Mend.Turn), "prompt", "hi", "clock", clock);
    assert (turn.clock == clock);
    var failure = new Mend.Failure.from_http (529, null, null);
    // The test ends the attempt itself, as an app that sends its own way.
    turn.attempt_requested.connect ((n, cancellable) => {});
    turn.start (null);
    turn.note_output ();
    turn.fail (failure);
    assert (turn.last_verdict.kind == Mend.FailureKind.PERMANENT);
    assert (turn.last_verdict.partial);
    assert (turn.last_verdict.delay_ms == -1);
    assert (!failure.partial);
    assert (failure.kind == Mend.FailureKind.TRANSIENT);
}

void test_failure_from_http () {
    var headers = new Soup.MessageHeaders (Soup.MessageHeadersType.RESPONSE);
    headers.append ("retry-after-ms", "1500");
    var failure = new Mend.Failure.from_http (503, headers, null);
    assert (failure.reason == Mend.Reason.CAPACITY);
    assert (failure.retry_after_ms == 1500);
}

void test_policy () {
    var policy = new Mend.ErrorPolicy ();
    policy.jitter = Mend.Jitter.NONE;
    int64[] expected = { 250, 500, 1000, 2000 };
    for (uint retry = 1; retry <= 4; retry++) {
        bool hint;
        assert (policy.delay_for (retry, null, out hint) == expected[retry - 1]);
        assert (!hint);
    }

    var resume = new Mend.ErrorPolicy.for_resume ();
    unowned uint[] delays = resume.get_delays ();
    assert (delays.length == 4);
    assert (delays[3] == 180000);

    var custom = new RetryAuthPolicy ();
    assert (custom.classify (new Mend.Failure.from_http (401, null, null)) == Mend.FailureKind.TRANSIENT);
    assert (custom.classify (new Mend.Failure.from_http (400, null, null)) == Mend.FailureKind.PERMANENT);

    try {
        new Mend.ErrorPolicy.from_json ("{\"jitter\": \"loud\"}");
        assert_not_reached ();
    } catch (Error e) {
        assert (e is Mend.PolicyError.INVALID);
        assert ("jitter" in e.message);
    }
}

async void run_wait (Mend.ManualClock clock, MainLoop loop) {
    var wait = new Mend.RetryWait (clock, 4000, 2, 4, Mend.Reason.CAPACITY);
    assert (wait.describe () == "Retrying in 4 s (retry 2 of 4)");
    assert (wait.next_at == WALL_START + 4000 * 1000);

    Idle.add (() => { clock.advance (4000); return Source.REMOVE; });
    try {
        bool fired = yield wait.run_async (null);
        assert (fired);
        assert (wait.state == Mend.RetryWaitState.FIRED);
    } catch (Error e) {
        assert_not_reached ();
    }

    var cancelled = new Mend.RetryWait (clock, 60000, 3, 4, Mend.Reason.TIMEOUT);
    var cancellable = new Cancellable ();
    Idle.add (() => { cancellable.cancel (); return Source.REMOVE; });
    try {
        yield cancelled.run_async (cancellable);
        assert_not_reached ();
    } catch (IOError.CANCELLED e) {
        assert (cancelled.state == Mend.RetryWaitState.CANCELLED);
    } catch (Error e) {
        assert_not_reached ();
    }

    loop.quit ();
}

void test_wait_async () {
    var clock = (Mend.ManualClock) new Mend.ManualClock (WALL_START);
    var loop = new MainLoop ();
    run_wait.begin (clock, loop);
    loop.run ();
}

void test_chat_with_sender () {
    var sender = new Mend.HttpSender ("http://127.0.0.1:9/v1/messages");
    var chat = new Mend.Chat.with_sender (sender);
    assert (chat.sender == sender);
    assert (chat.lifecycle == Mend.Lifecycle.READY);
}

void test_chat () {
    var clock = new Mend.ManualClock (WALL_START);
    var policy = new Mend.ErrorPolicy ();
    policy.jitter = Mend.Jitter.NONE;
    var chat = (Mend.Chat) Object.new (typeof (Mend.Chat), "clock", clock, "policy", policy);
    uint attempts = 0;
    string[] outcomes = {};

    chat.turn_started.connect ((turn) => {
        turn.attempt_requested.connect ((n, cancellable) => { attempts++; });
    });
    chat.record.connect ((json) => {
        try {
            var node = Json.from_string (json);
            outcomes += node.get_object ().get_string_member ("outcome");
        } catch (Error e) {
            assert_not_reached ();
        }
    });

    try {
        chat.submit ("first");
        chat.submit ("A");
    } catch (Error e) {
        assert_not_reached ();
    }
    chat.turn.fail (new Mend.Failure.from_http (529, null, null));
    assert (chat.lifecycle == Mend.Lifecycle.BUSY);
    ((Mend.ManualClock) clock).advance (250);
    assert (attempts == 2);
    chat.turn.succeed ();
    assert (chat.turn.prompt == "A");
    assert (chat.queue.get_n_items () == 0);
    assert (outcomes.length == 2 && outcomes[0] == "scheduled" && outcomes[1] == "fired");
    chat.close ();
}

/* A sender written in Vala: each attempt answered from a script — "ok",
 * "reset" (a dropped connection, thrown), "401" (a failure returned) or
 * "hang" (until the Stop cancels it). */
class ScriptedSender : Object, Mend.Sender {
    public string[] script;
    public uint n_sent = 0;

    public ScriptedSender (string[] script) {
        this.script = script;
    }

    public async Mend.Failure? send_async (Mend.Turn turn, uint attempt, int io_priority,
                                           Cancellable? cancellable) throws Error {
        var step = script[n_sent++];
        /* An answer comes from the loop, as a real one does. */
        Idle.add (send_async.callback);
        yield;
        if (step == "reset")
            throw new IOError.CONNECTION_CLOSED ("Connection reset by peer");
        if (step == "401")
            return new Mend.Failure.from_http (401, null, null);
        if (step == "hang") {
            var id = cancellable.connect (() => { Idle.add (send_async.callback); });
            yield;
            cancellable.disconnect (id);
            throw new IOError.CANCELLED ("The turn was stopped");
        }
        return null;
    }

    public string? save_state () {
        return null;
    }

    public bool restore_state (string state) throws Error {
        return true;
    }
}

void run_loop () {
    while (MainContext.default ().iteration (false));
}

void test_vala_sender () {
    var clock = (Mend.ManualClock) new Mend.ManualClock (WALL_START);
    Mend.Turn[] finished = {};

    /* Success, and a transient error retried with the same prompt. */
    var sender = new ScriptedSender ({ "ok", "reset", "ok" });
    var chat = (Mend.Chat) Object.new (typeof (Mend.Chat), "clock", clock, "sender", sender);
    chat.turn_finished.connect ((turn) => { finished += turn; });
    try {
        chat.submit ("Fix the build", null);
        run_loop ();
        assert (finished.length == 1 && finished[0].state == Mend.TurnState.SUCCEEDED);
        chat.submit ("Then the changelog", null);
        run_loop ();
        assert (chat.turn.state == Mend.TurnState.WAITING);
        assert (chat.turn.last_failure.reason == Mend.Reason.TRANSPORT);
        clock.advance_to_next ();
        run_loop ();
        assert (finished.length == 2 && finished[1].state == Mend.TurnState.SUCCEEDED);
        assert (finished[1].attempt == 2 && sender.n_sent == 3);
    } catch (Error e) {
        assert_not_reached ();
    }
    chat.close ();

    /* A permanent failure gives up and keeps the follow-up; a Stop ends
     * an attempt that hangs. */
    var other = new ScriptedSender ({ "401", "hang" });
    var second = (Mend.Chat) Object.new (typeof (Mend.Chat), "clock", clock, "sender", other);
    finished = {};
    second.turn_finished.connect ((turn) => { finished += turn; });
    try {
        second.submit ("Deploy", null);
        second.submit ("Post the notes", null);
        run_loop ();
        assert (finished.length == 1 && finished[0].state == Mend.TurnState.FAILED);
        assert (finished[0].last_failure.reason == Mend.Reason.AUTH);
        assert (second.lifecycle == Mend.Lifecycle.ERROR);
        assert (second.queue.get_n_items () == 2);
        second.send_next ();
        run_loop ();
        second.stop ();
        run_loop ();
        assert (finished.length == 2 && finished[1].state == Mend.TurnState.STOPPED);
    } catch (Error e) {
        assert_not_reached ();
    }
    second.close ();
}

int main (string[] args) {
    Test.init (ref args);
    Test.add_func ("/Mend/Vala/failure-from-text", test_failure_from_text);
    Test.add_func ("/Mend/Vala/failure-from-http", test_failure_from_http);
    Test.add_func ("/Mend/Vala/turn-keeps-the-verdict", test_turn_verdict);
    Test.add_func ("/Mend/Vala/policy-schedules-and-classify-override", test_policy);
    Test.add_func ("/Mend/Vala/wait-async-fires-and-cancels", test_wait_async);
    Test.add_func ("/Mend/Vala/chat-retries-and-keeps-the-queue", test_chat);
    Test.add_func ("/Mend/Vala/chat-with-sender-constructor", test_chat_with_sender);
    Test.add_func ("/Mend/Vala/sender-written-in-vala", test_vala_sender);
    return Test.run ();
}
