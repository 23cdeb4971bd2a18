/* mend-test-utils.h — what the C tests share, compiled once (libmend-test-utils)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The common part of the helpers in tests/support/, and those of
 * mend-test-utils.c: running the loop until a chat reaches a state,
 * turns run by hand, finalizing in real time, records and the queue,
 * the clock and waits fixture, the fixture that plays recordings of the
 * real Claude Code CLI to a stream observer.
 *
 * Every other fixture has a header of its own, which includes this one;
 * a test includes the headers of the fixtures it uses:
 *
 * - mend-test-server.h: a chat over MendHttpSender against a scripted
 *   SoupServer on 127.0.0.1;
 * - mend-test-hostile-server.h: a raw-socket HTTP server that writes
 *   whatever a test says, and a bound on the process's memory;
 * - mend-test-gate.h: a simulated upstream, its chats and a fake network
 *   monitor (test-gate, bench-gate, bench-soak);
 * - mend-test-agents.h (-Dagents): the scripted model server
 *   (tests/support/model-server.py), the real agents tools/setup.sh
 *   installs, the loop that runs them in real time while libmend's waits
 *   pass in virtual time, and a chat in front of a real agent;
 * - mend-test-acp.h and mend-test-acp-real.h (-Dacp): a chat in front of
 *   tests/support/hostile-acp-agent.py, and the scenarios every real ACP
 *   agent plays;
 * - mend-test-bounds.h: whether AddressSanitizer is on (its bounds are
 *   in mend-test-bounds.c).
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
/* Whether the @n-th line of the file at @path (from 1) that has @marker
 * in it also has @text: the Nth request a scripted agent logged, say. */
gboolean  mend_test_file_nth_line_has       (const char    *path,
                                             const char    *marker,
                                             guint          n,
                                             const char    *text);
/* @n units of real time (a watchdog, a process's grace), five times as many
 * under valgrind, where this side of a pipe runs far slower than a child. */
guint     mend_test_real_time               (guint          n);
/* The process's resident memory, in bytes (0 without /proc). */
gsize     mend_test_resident_bytes          (void);

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

/* How many times @needle occurs in @haystack, overlaps counted. */
guint     mend_test_count_occurrences      (const char        *haystack,
                                            const char        *needle);
/* A MendChat::text-delta handler: appends the text to @texts (a GString). */
void      mend_test_append_chat_text       (MendChat          *chat,
                                            MendTurn          *turn,
                                            const char        *text,
                                            GString           *texts);

G_END_DECLS
