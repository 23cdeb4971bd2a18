/* chat.vala — a console chat in Vala with libmend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Sends two prompts through a MendChat and a MendHttpSender, with async and
 * yield, and prints what an app would show: the answer as the chat's
 * text-delta streams it, and the chat's status line. A turn that gives up
 * is retried once with Mend.Chat.retry (), as a user's Retry button would.
 * Without --url it talks to a small flaky server of its own on loopback
 * that answers the first request with a 529 and the third with a 401.
 *
 *   chat [--url URL] [--header 'Name: value']… [PROMPT…]
 */

const string SSE_OK = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from the flaky server.\"}}\n\n" +
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
const string OVERLOADED = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
const string UNAUTHORIZED = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";

uint served = 0;

void serve_request (Soup.Server server, Soup.ServerMessage msg, string path, HashTable<string, string>? query) {
    served++;
    if (served == 1) {
        msg.set_status (529, null);
        msg.set_response ("application/json", Soup.MemoryUse.COPY, OVERLOADED.data);
    } else if (served == 3) {
        msg.set_status (401, null);
        msg.set_response ("application/json", Soup.MemoryUse.COPY, UNAUTHORIZED.data);
    } else {
        msg.set_status (200, null);
        msg.set_response ("text/event-stream", Soup.MemoryUse.COPY, SSE_OK.data);
    }
}

/* Sends one prompt (or, with @retry, runs again the turn that gave up)
 * and waits, without blocking the loop, for its turn to end: retries and
 * waits happen inside. */
async Mend.TurnState send_prompt (Mend.Chat chat, string prompt, bool retry = false) throws Error {
    Mend.TurnState result = Mend.TurnState.IDLE;
    ulong id = 0;

    id = chat.turn_finished.connect ((turn) => {
        if (turn.prompt != prompt)
            return;
        result = turn.state;
        chat.disconnect (id);
        Idle.add (send_prompt.callback);
    });

    if (retry)
        chat.retry ();
    else
        chat.submit (prompt);
    yield;
    return result;
}

async int run_chat (string[] prompts, string? url, string[] headers) {
    Soup.Server? server = null;
    string endpoint;

    if (url == null) {
        server = (Soup.Server) Object.new (typeof (Soup.Server));
        server.add_handler ("/v1/messages", serve_request);
        try {
            server.listen_local (0, Soup.ServerListenOptions.IPV4_ONLY);
        } catch (Error e) {
            stderr.printf ("chat: %s\n", e.message);
            return 1;
        }
        endpoint = "http://127.0.0.1:%d/v1/messages".printf (server.get_uris ().data.get_port ());
    } else {
        endpoint = url;
    }

    var sender = new Mend.HttpSender (endpoint);
    foreach (var header in headers) {
        var parts = header.split (":", 2);
        if (parts.length != 2)
            continue;
        try {
            sender.set_header (parts[0].strip (), parts[1].strip ());
        } catch (Error e) {
            stderr.printf ("chat: %s\n", e.message);
            return 1;
        }
    }
    var chat = new Mend.Chat.with_sender (sender);
    // What an app shows, bound once for every turn: the answer as it
    // streams in (from any sender), and one status sentence.
    chat.text_delta.connect ((turn, text) => print ("  ← %s\n", text));
    chat.notify["status-text"].connect (() => {
        if (chat.status_text != "")
            print ("  ⟳ %s\n", chat.status_text);
    });
    chat.turn_started.connect ((turn) => {
        print (turn.retry_of == null ? "→ %s\n" : "→ %s (Retry)\n", turn.prompt);
    });

    int status = 0;
    foreach (var prompt in prompts) {
        try {
            var state = yield send_prompt (chat, prompt);
            // The user's Retry after a give-up: the same turn, once more.
            if (state == Mend.TurnState.FAILED && chat.can_retry)
                state = yield send_prompt (chat, prompt, true);
            if (state == Mend.TurnState.SUCCEEDED)
                print ("  ✓ %s\n", sender.answer);
            else
                print ("  ✗ %s\n", chat.last_failure != null ? chat.last_failure.describe () : "stopped");
            if (state != Mend.TurnState.SUCCEEDED)
                status = 1;
        } catch (Error e) {
            stderr.printf ("chat: %s\n", e.message);
            status = 1;
        }
    }

    chat.close ();
    if (server != null)
        server.disconnect ();
    return status;
}

int main (string[] args) {
    Intl.setlocale ();
    string? url = null;
    string[] headers = {};
    string[] prompts = {};

    for (int i = 1; i < args.length; i++) {
        if (args[i] == "--url" && i + 1 < args.length)
            url = args[++i];
        else if (args[i] == "--header" && i + 1 < args.length)
            headers += args[++i];
        else
            prompts += args[i];
    }
    if (prompts.length == 0)
        prompts = { "Say hello", "And goodbye" };

    Environment.set_variable ("GIO_USE_PROXY_RESOLVER", "dummy", false);

    var loop = new MainLoop ();
    int status = 0;
    run_chat.begin (prompts, url, headers, (obj, res) => {
        status = run_chat.end (res);
        loop.quit ();
    });
    loop.run ();
    return status;
}
