/* mend-test-utils.h — what the C tests share, compiled once (libmend-test-utils)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One header for the helpers of tests/mend-test-*.c, by subject:
 *
 * - mend-test-utils.c: running the loop until a chat reaches a state,
 *   turns run by hand, finalizing in real time, records and the queue,
 *   the clock and waits fixture, the fixture that plays recordings of the
 *   real Claude Code CLI to a stream observer;
 * - mend-test-server.c: a chat over MendHttpSender against a scripted
 *   SoupServer on 127.0.0.1;
 * - mend-test-hostile-server.c: a raw-socket HTTP server that writes
 *   whatever a test says, and a bound on the process's memory;
 * - mend-test-gate.c: a simulated upstream, its chats and a fake network
 *   monitor (test-gate, bench-gate, bench-soak);
 * - mend-test-agents.c (-Dagents): the scripted model server
 *   (tests/support/model-server.py), the real agents tools/setup.sh installs, the
 *   loop that runs them in real time while libmend's waits pass in
 *   virtual time, and a chat in front of a real agent;
 * - mend-test-acp.c and mend-test-acp-real.c (-Dacp): a chat in front of
 *   tests/support/hostile-acp-agent.py, and the scenarios every real ACP agent
 *   plays.
 *
 * Every function here asserts as the test itself would: a failed step
 * fails the test that called it.
 */

#pragma once

#include <string.h>

#include <gio/gio.h>
#include <libsoup/soup.h>
#include <libmend.h>

#if defined(__has_include)
# if __has_include(<valgrind/valgrind.h>)
#  include <valgrind/valgrind.h>
# endif
#endif
#ifndef RUNNING_ON_VALGRIND
# define RUNNING_ON_VALGRIND 0
#endif

#if defined(__SANITIZE_ADDRESS__)
# define MEND_TEST_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define MEND_TEST_ASAN 1
# endif
#endif

G_BEGIN_DECLS

/* The loop, turns run by hand, saved state (mend-test-utils.c) */

/* The gateway's words for a subagent's 503, from Claude Code's output. */
#define MEND_TEST_GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available"

/* The app's MendTurn::attempt handler when the test itself ends each
 * attempt (mend_turn_succeed (), mend_turn_fail ()), as an app that sends
 * the prompt its own way does. A turn with no sender and no handler fails
 * at once: nothing would ever end its attempts. */
void      mend_test_on_attempt_by_hand      (MendTurn      *turn,
                                             guint          attempt,
                                             GCancellable  *cancellable,
                                             gpointer       data);
void      mend_test_run_by_hand             (MendTurn      *turn);
/* The MendChat::turn-started handler that runs each turn by hand. */
void      mend_test_on_turn_started_by_hand (MendChat      *chat,
                                             MendTurn      *turn,
                                             gpointer       data);
/* Every turn of @chat, a chat with no sender, is run by the test. */
void      mend_test_run_turns_by_hand       (MendChat      *chat);

/* A chat on @clock with the default policy, no jitter, its turns run by
 * the test. */
MendChat *mend_test_new_chat_by_hand        (MendClock     *clock);

/* A GSourceFunc that ends the test: @data, a string, did not reach its
 * state in time. */
gboolean  mend_test_watchdog                (gpointer       data);

/* Runs the loop until *@served reaches @requests and the chat's turn is in
 * @state (SUCCEEDED or FAILED: no turn left); real time only for loopback
 * I/O, bounded by a 20 s watchdog. */
void      mend_test_run_chat_until          (MendChat      *chat,
                                             const guint   *served,
                                             MendTurnState  state,
                                             guint          requests);

/* The saved state of @chat (taken, closed and finalized) busy with the
 * user's turn, a subagent's resume prompt queued behind it. */
char     *mend_test_state_with_queued_resume_prompt (MendChat  *chat,
                                                     MendClock *clock);

/* Drops the last reference to @object and waits, in real time, for it to
 * be finalized (GSubprocess lets go in GLib's worker thread). */
void      mend_test_finalize_eventually     (gpointer       object);

/* How many of @records (JSON text of the chat's `record` signal) are of
 * @kind with @outcome. */
guint     mend_test_count_records           (GPtrArray     *records,
                                             const char    *kind,
                                             const char    *outcome);

/* The text at the head of @chat's queue, or NULL. */
char     *mend_test_queue_head              (MendChat      *chat);

/* Submits @text to @chat, which takes it. */
void      mend_test_submit                  (MendChat      *chat,
                                             const char    *text);

/* The turn at @i of @turns (MendTurn), which has one there. */
MendTurn *mend_test_turn_at                 (GPtrArray     *turns,
                                             guint          i);

/* A property a class has: its name, its value type (or a parent of it),
 * the flags it has and the flags it must not have. */
typedef struct
{
  const char  *name;
  GType        type;
  GParamFlags  has;
  GParamFlags  lacks;
} MendTestProperty;

/* @type, a class, has exactly the @n_expected properties of @expected,
 * each its own (not inherited) and of the type and flags given. */
void      mend_test_assert_properties       (GType                   type,
                                             const MendTestProperty *expected,
                                             guint                   n_expected);

/* A clock and the waits on it (mend-test-utils.c) */

/* A MendManualClock at @MEND_TEST_WALL_START, the waits' fired and
 * cancelled signals counted, and a log of the test's own. */
#define MEND_TEST_WALL_START 1764500000000000  /* µs */

typedef struct
{
  MendClock *clock;
  guint      fired;
  guint      cancelled;
  guint      notified;
  GString   *log;
} MendTestWaitFixture;

void           mend_test_wait_fixture_set_up    (MendTestWaitFixture *f,
                                                 gconstpointer        data);
void           mend_test_wait_fixture_tear_down (MendTestWaitFixture *f,
                                                 gconstpointer        data);
/* A wait of @delay_ms on the fixture's clock: attempt 2 of 4, for
 * MEND_REASON_CAPACITY, its signals counted. */
MendRetryWait *mend_test_wait_new               (MendTestWaitFixture *f,
                                                 guint64              delay_ms);
void           mend_test_wait_advance           (MendTestWaitFixture *f,
                                                 guint64              ms);
guint          mend_test_wait_n_pending         (MendTestWaitFixture *f);

/* A stream observer fed lines the real Claude Code CLI wrote
 * (mend-test-utils.c) */

/* Recordings of the real CLI (tests/support/record-claude-code.py against
 * tests/support/model-server.py, in tests/data/claude-code-VERSION/) played to a
 * MendStreamObserver on a chat with a MendManualClock. The turns the chat
 * finished and the records it emitted are kept; every object is
 * finalized at the end. */
typedef struct
{
  MendClock *clock;
  MendChat *chat;
  MendStreamObserver *observer;
  GPtrArray *finished;   /* MendTurn, owned */
  GPtrArray *records;    /* char *, owned */
  char **lines;          /* the recording being fed */
  guint next;            /* its next line */
} MendTestRecording;

void      mend_test_recording_set_up       (MendTestRecording *f,
                                            gconstpointer      data);
void      mend_test_recording_tear_down    (MendTestRecording *f,
                                            gconstpointer      data);
/* Loads the recording of @scenario by CLI @version: its lines, without
 * the empty one after the last. */
void      mend_test_recording_load         (MendTestRecording *f,
                                            const char        *version,
                                            const char        *scenario);
/* Feeds the recording's lines up to and including the next one that
 * contains @until (all of them when NULL); says whether it was found. */
gboolean  mend_test_recording_feed_until   (MendTestRecording *f,
                                            const char        *until);
/* Submits @text: the turn, running. */
MendTurn *mend_test_recording_submit       (MendTestRecording *f,
                                            const char        *text);
MendTurn *mend_test_recording_last_finished (MendTestRecording *f);
guint     mend_test_recording_n_subagents  (MendTestRecording *f);
gboolean  mend_test_recording_has_record   (MendTestRecording *f,
                                            const char        *kind,
                                            const char        *outcome);

/* A chat over MendHttpSender against a scripted SoupServer
 * (mend-test-server.c) */

/* The server answers each request with the next reply of the script:
 * its status, headers and body. */
typedef struct
{
  guint       status;
  const char *content_type;
  const char *body;
  const char *headers;  /* "Name: value" lines, or NULL */
} MendTestHttpReply;

/* The sender takes its wire format from the endpoint's path; every
 * request's body is kept. Waits run in virtual time; every object is
 * finalized at the end. */
typedef struct
{
  SoupServer *server;
  const MendTestHttpReply *script;
  guint n_script;
  guint served;
  GPtrArray *bodies;
  char *endpoint;

  MendClock *clock;
  MendChat *chat;
  MendHttpSender *sender;
  GString *deltas;
  GPtrArray *finished;
  GPtrArray *loaded;   /* what mend_test_http_chat_load () read */
} MendTestHttpChat;

/* A chat whose sender's endpoint is @path on the server (Chat Completions'
 * when NULL), from which the sender takes its format. */
void        mend_test_http_chat_set_up_at  (MendTestHttpChat        *f,
                                            const char              *path);
/* The same, the test data being the path. */
void        mend_test_http_chat_set_up     (MendTestHttpChat        *f,
                                            gconstpointer            data);
void        mend_test_http_chat_tear_down  (MendTestHttpChat        *f,
                                            gconstpointer            data);
/* A recorded answer, tests/data/http/@name (see its SOURCES.md), kept
 * until the end of the test. */
const char *mend_test_http_chat_load       (MendTestHttpChat        *f,
                                            const char              *name);
/* Serves @script (@n replies) from now on, and submits the user's prompt. */
void        mend_test_http_chat_start      (MendTestHttpChat        *f,
                                            const MendTestHttpReply *script,
                                            guint                    n);

/* A hostile HTTP server on raw sockets (mend-test-hostile-server.c) */

/* Bounds the test process's memory, so that a missing cap fails the test
 * instead of the machine; under AddressSanitizer, the bounds are ASan's
 * own (see mend-test-bounds.c). */
void        mend_test_limit_memory         (void);

/* strcasestr, without _GNU_SOURCE. */
const char *mend_test_find_nocase          (const char *haystack,
                                            const char *needle);

/* A raw-socket HTTP server on 127.0.0.1, port 0, in a thread of its own,
 * that answers each request with whatever bytes a test's behaviour writes:
 * headers that never end, bodies that never end, a gzip bomb, a redirect.
 * Every server stops by itself: it takes a bounded number of connections,
 * writes a bounded number of bytes, and gives up waiting after a while. */
typedef struct _MendTestHostileServer MendTestHostileServer;

/* Answers one request on @connection; @request is its head and body. */
typedef void (*MendTestHostileBehaviour) (MendTestHostileServer *server,
                                          GSocket               *connection,
                                          const char            *request);

struct _MendTestHostileServer
{
  GSocket                  *listener;
  guint16                   port;
  GThread                  *thread;
  MendTestHostileBehaviour  behaviour;
  gconstpointer             data;           /* for the behaviour */
  guint                     max_connections;

  GMutex                    lock;
  GPtrArray                *requests;       /* under lock */
  guint64                   written;        /* under lock */
  gint                      stop;           /* atomic */
};

/* Bytes the server writes at most in one answer, whatever the client does. */
#define MEND_TEST_HOSTILE_MAX_WRITE ((guint64) 512 << 20)

MendTestHostileServer *mend_test_hostile_server_new        (MendTestHostileBehaviour  behaviour,
                                                            gconstpointer             data,
                                                            guint                     max_connections);
void                   mend_test_hostile_server_free       (MendTestHostileServer    *server);
/* Its /v1/messages. */
char                  *mend_test_hostile_server_uri        (MendTestHostileServer    *server);
guint                  mend_test_hostile_server_n_requests (MendTestHostileServer    *server);
guint64                mend_test_hostile_server_written    (MendTestHostileServer    *server);
/* Writes @length bytes; FALSE once the client is gone or the server has
 * written its most. */
gboolean               mend_test_hostile_write             (MendTestHostileServer    *server,
                                                            GSocket                  *connection,
                                                            const void               *data,
                                                            gsize                     length);
gboolean               mend_test_hostile_write_str         (MendTestHostileServer    *server,
                                                            GSocket                  *connection,
                                                            const char               *text);
/* Waits until the client closes the connection (or a while passes). */
void                   mend_test_hostile_wait_for_close    (MendTestHostileServer    *server,
                                                            GSocket                  *connection);

/* A simulated upstream, its chats and a fake network monitor
 * (mend-test-gate.c) */

/* A network monitor whose availability the test sets. */
#define MEND_TEST_TYPE_FAKE_MONITOR (mend_test_fake_monitor_get_type ())
G_DECLARE_FINAL_TYPE (MendTestFakeMonitor, mend_test_fake_monitor, MEND_TEST, FAKE_MONITOR, GObject)

void      mend_test_fake_monitor_set       (MendTestFakeMonitor *self,
                                            gboolean             available);

/* Chats (with or without a MendGate) whose attempts an upstream answers
 * from the turns' attempt signal, in the virtual time of a
 * MendManualClock. */
typedef struct
{
  MendClock           *clock;
  MendGate            *gate;
  MendTestFakeMonitor *monitor;
  GPtrArray           *chats;
  GArray              *attempt_ms;   /* virtual time of every attempt */
  gboolean             down;
  guint                unanswered;   /* the next attempts that get no answer at all */
  gboolean             streaming;    /* ...or output, and then no end */
  guint                status;       /* what a down upstream answers */
  const char          *retry_after;  /* its Retry-After, or NULL */
  guint                served;       /* turns that succeeded */
  GPtrArray           *served_at;    /* per chat, a GArray of its successes' times */
  guint                gave_up;
  gint64               now_ms;
} MendTestGateSim;

/* The chats' MendChat::turn-started handler, which the upstream answers:
 * for a chat the test makes itself. */
void      mend_test_gate_sim_on_turn_started (MendChat        *chat,
                                              MendTurn        *turn,
                                              MendTestGateSim *sim);
void      mend_test_gate_sim_init          (MendTestGateSim *sim,
                                            gboolean         with_gate,
                                            guint            n_chats);
void      mend_test_gate_sim_clear         (MendTestGateSim *sim);
/* Advances the clock in steps of 50 ms, so that attempts are stamped with
 * their time. */
void      mend_test_gate_sim_advance       (MendTestGateSim *sim,
                                            gint64           ms);
void      mend_test_gate_sim_submit_all    (MendTestGateSim *sim);
guint     mend_test_gate_sim_attempts_between (MendTestGateSim *sim,
                                               gint64           from_ms,
                                               gint64           to_ms);
/* Chats that work without a pause: each one whose turn ended sends the
 * next. */
void      mend_test_gate_sim_resubmit_idle (MendTestGateSim *sim);
/* A flapping upstream: down for @down_ms, then up for @up_ms, from the
 * start, for @total_ms; every @every_ms the chats whose turn ended send
 * the next. */
void      mend_test_gate_sim_flap          (MendTestGateSim *sim,
                                            gint64           down_ms,
                                            gint64           up_ms,
                                            gint64           total_ms,
                                            gint64           every_ms);
/* The successes of chat @index within [@from_ms, @to_ms). */
guint     mend_test_gate_sim_served_between (MendTestGateSim *sim,
                                             guint            index,
                                             gint64           from_ms,
                                             gint64           to_ms);

#if MEND_HAS_AGENTS

/* The scripted model server and the real agents (mend-test-agents.c) */

/* The model server (tests/support/model-server.py), started with a JSON list of
 * rules. */
typedef struct
{
  GSubprocess *process;
  guint        port;
} MendTestModelServer;

void      mend_test_model_server_start        (MendTestModelServer *server,
                                               const char          *rules);
void      mend_test_model_server_stop         (MendTestModelServer *server);
char     *mend_test_model_server_dup_base_url (MendTestModelServer *server);
guint     mend_test_model_server_n_requests   (MendTestModelServer *server);
/* How many model requests the rule at @index (0-based) answered. */
guint     mend_test_model_server_n_answered   (MendTestModelServer *server,
                                               guint                index);
/* How many of Gemini CLI's own requests for JSON (its router's, on
 * :generateContent) the server answered: they are not in
 * mend_test_model_server_n_requests(). */
guint     mend_test_model_server_n_side_requests (MendTestModelServer *server);
/* Uses the rule at @index (0-based) up: it answers no more requests. */
void      mend_test_model_server_retire_rule  (MendTestModelServer *server,
                                               guint                index);
/* The body of the chat's model request @n (1-based, in the order the
 * server counted them), as it came; NULL when there is none. */
char     *mend_test_model_server_dup_request  (MendTestModelServer *server,
                                               guint                n);

/* The Claude Code CLI and its ACP adapter that tools/setup.sh installs
 * (or MEND_CLAUDE, MEND_CLAUDE_CODE_ACP); NULL when it is not there, with
 * the test skipped (failed when agents are required: MEND_REQUIRE_AGENTS=1,
 * as CI sets). */
char     *mend_test_claude_code_cli_find      (void);
char     *mend_test_claude_code_acp_find      (void);

/* The other ACP agents tools/setup.sh installs: claude-agent-acp (or
 * MEND_CLAUDE_AGENT_ACP), Gemini CLI (or MEND_GEMINI; it needs node 20 or
 * later, and is missing with an older one) and codex-acp's native binary
 * (or MEND_CODEX_ACP). NULL when it is not there, with the test skipped
 * (failed when agents are required). */
char     *mend_test_claude_agent_acp_find     (void);
char     *mend_test_gemini_cli_find           (void);
char     *mend_test_codex_acp_find            (void);

/* The agents set up for the model server at @base_url: offline, the
 * test's private home as HOME and working directory, IS_SANDBOX since
 * the tests may run as root; the CLI's own retries at most @max_retries,
 * the adapter's none. */
MendAgentProcess *mend_test_claude_code_process_new   (const char *cli,
                                                       const char *base_url,
                                                       guint       max_retries);
#if MEND_HAS_ACP
MendAcpAgent     *mend_test_claude_code_acp_agent_new (const char *adapter,
                                                       const char *base_url);
/* The same with the CLI's own retries at most @max_retries. */
MendAcpAgent     *mend_test_claude_code_acp_agent_new_with_retries (const char *adapter,
                                                                    const char *base_url,
                                                                    guint       max_retries);

/* Each agent set up offline for the model server at @base_url, in the
 * test's private home (HOME, TMPDIR and working directory) with its own
 * retries off, so that each of libmend's attempts is one model request:
 * claude-agent-acp as claude-code-acp (CLAUDE_CODE_MAX_RETRIES=0);
 * `gemini --acp` with HOME/.gemini/settings.json choosing the API key,
 * no updates, statistics or telemetry, and "general": {"maxAttempts": 1};
 * codex-acp with CODEX_HOME/config.toml naming the server as a Responses
 * provider with request_max_retries and stream_max_retries 0. */
MendAcpAgent     *mend_test_claude_agent_acp_agent_new (const char *adapter,
                                                        const char *base_url);
MendAcpAgent     *mend_test_gemini_cli_acp_agent_new   (const char *gemini,
                                                        const char *base_url);
MendAcpAgent     *mend_test_codex_acp_agent_new        (const char *codex_acp,
                                                        const char *base_url);

/* The same with the agent's own retries at most @max_retries (for Gemini
 * CLI, "maxAttempts" @max_retries + 1; for codex-acp, request_max_retries
 * and stream_max_retries), for a test of what happens while the agent
 * waits between its own attempts. */
MendAcpAgent     *mend_test_claude_agent_acp_agent_new_with_retries (const char *adapter,
                                                                     const char *base_url,
                                                                     guint       max_retries);
MendAcpAgent     *mend_test_gemini_cli_acp_agent_new_with_retries   (const char *gemini,
                                                                     const char *base_url,
                                                                     guint       max_retries);
MendAcpAgent     *mend_test_codex_acp_agent_new_with_retries        (const char *codex_acp,
                                                                     const char *base_url,
                                                                     guint       max_retries);
#endif

/* What an agent sender wrote on its stderr, or NULL (also for a sender
 * that runs no process). */
char     *mend_test_agent_dup_stderr   (MendSender  *sender);

/* A check of a test's fixture, with data of the check's own: the shape
 * of each test file's predicates, which take their Fixture pointer. */
typedef gboolean (*MendTestAgentCheck) (gpointer      fixture,
                                        gconstpointer data);

/* A check that always holds. */
gboolean  mend_test_agent_always       (gpointer      fixture,
                                        gconstpointer data);

/* Runs the main loop until @done (@fixture, @data) holds, in real time for
 * the agent and the server, bounded by a 40 s watchdog. Whenever nothing
 * else is left to do and @may_advance (nullable: never) holds, the next of
 * @clock's timers fires in virtual time. @sender's stderr is shown when
 * the watchdog bites. */
void      mend_test_agent_run_until    (MendManualClock    *clock,
                                        MendTestAgentCheck  may_advance,
                                        MendSender         *sender,
                                        MendTestAgentCheck  done,
                                        gpointer            fixture,
                                        gconstpointer       data,
                                        const char         *what);

/* The same, for at most @timeout_ms of real time: FALSE when @done did
 * not come to hold by then (the caller says what that means). */
gboolean  mend_test_agent_run_within   (MendManualClock    *clock,
                                        MendTestAgentCheck  may_advance,
                                        MendTestAgentCheck  done,
                                        gpointer            fixture,
                                        gconstpointer       data,
                                        guint               timeout_ms);

/* The real time a test lets one of libmend's waits take before it passes
 * the rest in virtual time, as the shortest of them (250 ms) would: no
 * agent is asked again within milliseconds of its answer, which no app
 * does (codex-acp 0.16.0 then now and then loses the prompt: its stderr
 * says "Received event for unknown submission ID", and the prompt is never
 * answered; see docs/agents.md). */
#define MEND_TEST_AGENT_MIN_WAIT_MS 300

/* Runs the main loop for @ms of real time, libmend's clock standing. */
void      mend_test_agent_run_for      (guint        ms);

/* Whether Claude Code wrote a session's transcript with @text in it,
 * under HOME/.claude/projects. */
gboolean  mend_test_claude_transcript_has (const char *session,
                                           const char *text);

/* A chat in front of a real agent (mend-test-agents.c) */

/* A chat on a MendManualClock whose sender is a real agent, in front of
 * the model server: the turns it finished, the records it emitted and an
 * ACP agent's updates are kept. The agent and the server run in real
 * time, libmend's waits in virtual time; every object is finalized at
 * the end. */
typedef struct
{
  MendClock           *clock;
  MendChat            *chat;
  MendAgent           *agent;
  MendTestModelServer  server;
  GPtrArray           *finished;         /* MendTurn, owned */
  GPtrArray           *records;          /* char *, owned */
  GPtrArray           *updates;          /* char *, "kind json", owned: an ACP agent's */
  GString             *text;             /* its agent_message_chunk texts: what the app shows */
  gint64               waiting_since_us; /* real time, when a turn began its wait */
  gboolean             auto_advance;     /* mend_test_agent_chat_run_until () passes waits */
} MendTestAgentChat;

/* A check of the fixture, with data of the check's own. */
typedef gboolean (*MendTestAgentChatCheck) (MendTestAgentChat *f,
                                            gconstpointer      data);

void      mend_test_agent_chat_set_up    (MendTestAgentChat *f,
                                          gconstpointer      data);
void      mend_test_agent_chat_tear_down (MendTestAgentChat *f,
                                          gconstpointer      data);
/* The chat @id with @agent (taken) as its sender. */
void      mend_test_agent_chat_attach    (MendTestAgentChat *f,
                                          MendAgent         *agent,
                                          const char        *id);
/* Runs the main loop until @done: the agent in real time, libmend's
 * waits in virtual time whenever nothing else is left to do (when
 * auto_advance is set). */
void      mend_test_agent_chat_run_until (MendTestAgentChat      *f,
                                          MendTestAgentChatCheck  done,
                                          gconstpointer           data,
                                          const char             *what);
/* A check: at least GPOINTER_TO_UINT (@data) turns finished. */
gboolean  mend_test_agent_chat_n_finished_is   (MendTestAgentChat *f,
                                                gconstpointer      data);
/* A check: the chat's turn waits, and has for MEND_TEST_AGENT_MIN_WAIT_MS
 * of real time. */
gboolean  mend_test_agent_chat_turn_is_waiting (MendTestAgentChat *f,
                                                gconstpointer      data);
MendTurn *mend_test_agent_chat_finished  (MendTestAgentChat *f,
                                          guint              i);
void      mend_test_agent_chat_submit    (MendTestAgentChat *f,
                                          const char        *text);

#endif /* MEND_HAS_AGENTS */

#if MEND_HAS_ACP

/* A chat in front of tests/support/hostile-acp-agent.py (mend-test-acp.c) */

/* The agent's script: JSON with ' for " (the texts in it have no
 * apostrophe). */
#define MEND_TEST_ACP_CHUNK(text) \
  "{'update': {'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': '" text "'}}}"
/* The model's answer, then the prompt's end: a prompt that ends with no
 * answer is an empty response. */
#define MEND_TEST_ACP_ANSWER_END_TURN "{'answer': {'stopReason': 'end_turn'}}"
#define MEND_TEST_ACP_END_TURN MEND_TEST_ACP_CHUNK ("Done.") ", " MEND_TEST_ACP_ANSWER_END_TURN
#define MEND_TEST_ACP_PERMISSION \
  "{'send': {'jsonrpc': '2.0', 'id': 'perm-1', 'method': 'session/request_permission', 'params': {" \
  "  'sessionId': '$SESSION', 'toolCall': {'toolCallId': 'toolu_1', 'title': 'rm -rf build'}," \
  "  'options': [{'optionId': 'yes', 'name': 'Allow', 'kind': 'allow_once'}," \
  "              {'optionId': 'no', 'name': 'Reject', 'kind': 'reject_once'}]}}}"
/* Claude Code's answer to a prompt when the model is overloaded, as
 * claude-code-acp 0.16.2 sent it (docs: REAL-AGENTS.md). */
#define MEND_TEST_ACP_OVERLOADED \
  "{'error': {'code': -32603, 'message': 'Internal error: API Error: 529 {\\'type\\':\\'error\\'," \
  "\\'error\\':{\\'type\\':\\'overloaded_error\\',\\'message\\':\\'Overloaded\\'}}'}}"

/* What a re-entrant handler does, once. */
typedef enum
{
  MEND_TEST_ACT_NONE,
  MEND_TEST_ACT_STOP,
  MEND_TEST_ACT_CLOSE,
  MEND_TEST_ACT_TERMINATE,
  MEND_TEST_ACT_UNREF,
  MEND_TEST_ACT_SUBMIT,
  MEND_TEST_ACT_SET_PROFILE,
} MendTestAct;

/* The chat runs on a virtual clock, the agent in real time; every turn
 * finished, update emitted and wait's failure is kept; the agent's log of
 * what it read and its number of starts are files in the test's home.
 * Every object is finalized at the end. */
typedef struct
{
  MendClock    *clock;
  MendChat     *chat;
  MendAcpAgent *agent;
  GPtrArray    *finished;       /* MendTurn, owned */
  GPtrArray    *updates;        /* char *, "kind json", owned */
  GPtrArray    *failures;       /* MendFailure of the waits, owned */
  char         *log;            /* what the agent read */
  char         *count;          /* its number of starts */
  guint         held_request;   /* a request the test answers */
  guint         n_requests;
  MendTestAct   action;         /* what a re-entrant handler does, once */
} MendTestHostileAcp;

/* A check of the fixture, with data of the check's own. */
typedef gboolean (*MendTestHostileAcpCheck) (MendTestHostileAcp *f,
                                             gconstpointer       data);

void      mend_test_hostile_acp_set_up     (MendTestHostileAcp *f,
                                            gconstpointer       data);
void      mend_test_hostile_acp_tear_down  (MendTestHostileAcp *f,
                                            gconstpointer       data);
/* The agent playing @script (see MEND_TEST_ACP_CHUNK), and a chat with
 * it as its sender. */
void      mend_test_hostile_acp_start_chat (MendTestHostileAcp *f,
                                            const char         *script);
/* Real time for the agent; libmend's waits fire in virtual time when
 * nothing else is left to do. */
void      mend_test_hostile_acp_run_until  (MendTestHostileAcp      *f,
                                            MendTestHostileAcpCheck  done,
                                            gconstpointer            data);
/* Checks for mend_test_hostile_acp_run_until (). */
gboolean  mend_test_hostile_acp_n_finished_is (MendTestHostileAcp *f,
                                               gconstpointer       data);
gboolean  mend_test_hostile_acp_not_running   (MendTestHostileAcp *f,
                                               gconstpointer       data);
gboolean  mend_test_hostile_acp_log_has       (MendTestHostileAcp *f,
                                               gconstpointer       data);
/* How often the agent read @text. */
guint     mend_test_hostile_acp_log_count  (MendTestHostileAcp *f,
                                            const char         *text);
MendTurn *mend_test_hostile_acp_finished   (MendTestHostileAcp *f,
                                            guint               i);
void      mend_test_hostile_acp_submit     (MendTestHostileAcp *f,
                                            const char         *text);
guint     mend_test_hostile_acp_count_updates (MendTestHostileAcp *f,
                                               const char         *containing);
/* One turn against @script; returns it once finished. */
MendTurn *mend_test_hostile_acp_run_one_turn (MendTestHostileAcp *f,
                                              const char         *script);

/* The chat's handlers that keep the turns finished and the waits'
 * failures, for a chat the test makes itself. */
void      mend_test_hostile_acp_on_turn_started  (MendChat           *chat,
                                                  MendTurn           *turn,
                                                  MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_turn_finished (MendChat           *chat,
                                                  MendTurn           *turn,
                                                  MendTestHostileAcp *f);

/* Does the fixture's action, once; the handlers that do it from inside a
 * turn's waiting, a turn-started (connecting that) or a turn-finished. */
void      mend_test_hostile_acp_act        (MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_waiting_act       (MendTurn           *turn,
                                                      MendRetryWait      *wait,
                                                      MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_turn_started_act  (MendChat           *chat,
                                                      MendTurn           *turn,
                                                      MendTestHostileAcp *f);
void      mend_test_hostile_acp_on_turn_finished_act (MendChat           *chat,
                                                      MendTurn           *turn,
                                                      MendTestHostileAcp *f);

/* The scenarios every real ACP agent plays (mend-test-acp-real.c) */

/* A real ACP agent, other than claude-code-acp, of the end-to-end tests
 * (test-gemini-acp, test-codex-acp, test-claude-agent-acp): how to find
 * it, how to launch it offline against the model server, and the defects
 * it is known to have. */
typedef struct
{
  const char    *name;          /* the tests' path: /Mend/<name>/… */
  char         *(*find) (void);
  MendAcpAgent *(*make) (const char *path,
                         const char *base_url);
  /* When the 503-twice turn finished as a known defect of the agent has
   * it finish: the defect, named; otherwise NULL. */
  const char   *(*defect_503_twice) (MendTestAgentChat *f,
                                     MendTurn          *turn);
  /* The agent's own checks of that turn, when it went as it should
   * (nullable). */
  void          (*check_503_twice)  (MendTestAgentChat *f,
                                     MendTurn          *turn);
  /* The agent answers the prompt after a failed one at once with an
   * end_turn and no output (claude-agent-acp 0.23.1): libmend reads it
   * as an empty response and tries again, so the turn's last failure is
   * that empty response. */
  gboolean        false_end_turn_after_failure;
} MendTestRealAcpAgent;

/* The rules' indexes of the 503-twice scenario, which
 * mend_test_model_server_n_answered() counts. */
enum { MEND_TEST_RULE_503, MEND_TEST_RULE_ANSWER };

/* The tests' environment: loopback without proxies, settings in memory. */
void      mend_test_real_acp_init          (int                        *argc,
                                            char                     ***argv);
/* Registers the scenarios for @kind. */
void      mend_test_real_acp_add_tests     (const MendTestRealAcpAgent *kind);

#endif /* MEND_HAS_ACP */

G_END_DECLS
