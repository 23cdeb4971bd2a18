/* chat.vala — a console chat in Vala with libmend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Sends two prompts through a MendChat and a MendHttpSender, with async and
 * yield. Without --url it talks to a small flaky server of its own on
 * loopback that answers the first request with a 529.
 *
 *   chat [--url URL] [--header 'Name: value']… [PROMPT…]
 */

const string SSE_OK = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from the flaky server.\"}}\n\n" +
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
const string OVERLOADED = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";

uint served = 0;

void serve_request (Soup.Server server, Soup.ServerMessage msg, string path, HashTable<string, string>? query) {
    served++;
    if (served == 1) {
        msg.set_status (529, null);
        msg.set_response ("application/json", Soup.MemoryUse.COPY, OVERLOADED.data);
    } else {
        msg.set_status (200, null);
        msg.set_response ("text/event-stream", Soup.MemoryUse.COPY, SSE_OK.data);
    }
}

/* Sends one prompt and waits, without blocking the loop, for its turn to
 * end: retries and waits happen inside. */
async Mend.TurnState send_prompt (Mend.Chat chat, string prompt) throws Error {
    Mend.TurnState result = Mend.TurnState.IDLE;
    ulong id = 0;

    id = chat.turn_finished.connect ((turn) => {
        if (turn.prompt != prompt)
            return;
        result = turn.state;
        chat.disconnect (id);
        Idle.add (send_prompt.callback);
    });

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
    // The answer as it streams in; sender.answer holds it whole at the end.
    sender.text_delta.connect ((delta) => print ("  ← %s\n", delta));

    var policy = new Mend.ErrorPolicy ();
    var chat = new Mend.Chat.with_sender (sender, policy);
    chat.turn_started.connect ((turn) => {
        print ("→ %s\n", turn.prompt);
        turn.waiting.connect ((wait) => {
            print ("  ⟳ %s: %s\n", wait.reason.to_nick (), wait.describe ());
        });
    });

    int status = 0;
    foreach (var prompt in prompts) {
        try {
            var state = yield send_prompt (chat, prompt);
            if (state == Mend.TurnState.SUCCEEDED)
                print ("  ✓ %s\n", sender.answer);
            else
                print ("  ✗ gave up\n");
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
