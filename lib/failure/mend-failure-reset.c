/* mend-failure-reset.c — when a usage limit resets, from the words and headers that say so
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mend-failure-reset-private.h"

/* The sources of a reset time, each as it was seen (see the tests in
 * tests/failure/test-failure-reset.c):
 *
 * - Claude Code: "You've hit your 5-hour limit · resets 9:23pm (UTC)",
 *   "… session limit · resets 3pm", "… weekly limit · resets Dec 8,
 *   9:23pm (Europe/Berlin)" — a time of day, the next one after the
 *   failure, in the zone named or else the machine's;
 * - Codex: "try again at Dec 2nd, 2026 3:05 PM", "resets in 3h 12m",
 *   "Try again in 2 days 4 hours";
 * - an ISO 8601 time: "resets at 2026-12-02T21:23:00Z";
 * - HTTP: anthropic-ratelimit-unified-reset (Unix seconds),
 *   x-ratelimit-reset-requests and -tokens ("6m0s", "1h2m3.5s", "20ms").
 */

#define MAX_TEXT 4096

static const char * const months[] = {
  "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
};

static GRegex *
compile (const char *pattern)
{
  GRegex *regex = g_regex_new (pattern, G_REGEX_CASELESS | G_REGEX_OPTIMIZE, 0, NULL);

  g_assert (regex != NULL);
  return regex;
}

/* "3h 12m", "2 days 4 hours", "1h2m3.5s", "20ms", "45 seconds": the
 * milliseconds, or -1 when @text holds no duration. */
gint64
mend_failure_time_after_ms (gint64 now_us,
                            gint64 ms)
{
  if (ms > (G_MAXINT64 - MAX (now_us, 0)) / 1000)
    return G_MAXINT64;
  return now_us + ms * 1000;
}

gint64
mend_failure_parse_duration_ms (const char *text)
{
  static GRegex *part;
  static gsize once;
  g_autoptr(GMatchInfo) info = NULL;
  gint64 total = 0;
  gboolean any = FALSE;

  if (g_once_init_enter (&once))
    {
      part = compile ("([0-9]+(?:\\.[0-9]+)?)\\s*"
                      "(ms|milliseconds?|d|days?|h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)(?![a-z])");
      g_once_init_leave (&once, 1);
    }

  g_regex_match (part, text, 0, &info);
  while (g_match_info_matches (info))
    {
      g_autofree char *number = g_match_info_fetch (info, 1);
      g_autofree char *fetched = g_match_info_fetch (info, 2);
      g_autofree char *unit = g_ascii_strdown (fetched, -1);
      double value = g_ascii_strtod (number, NULL);
      double scale;

      if (g_str_has_prefix (unit, "ms") || g_str_has_prefix (unit, "milli"))
        scale = 1;
      else if (unit[0] == 'd')
        scale = 86400000;
      else if (unit[0] == 'h')
        scale = 3600000;
      else if (unit[0] == 'm')
        scale = 60000;
      else
        scale = 1000;
      if (value * scale > (double) (G_MAXINT64 / 4))
        return -1;
      total += (gint64) (value * scale);
      any = TRUE;
      g_match_info_next (info, NULL);
    }

  return any ? total : -1;
}

/* The zone a text names in brackets ("(UTC)", "(Europe/Berlin)"), or the
 * machine's. */
static GTimeZone *
zone_named (const char *name)
{
  GTimeZone *zone;

  if (name == NULL || *name == '\0')
    return g_time_zone_new_local ();
  if (g_ascii_strcasecmp (name, "utc") == 0 || g_ascii_strcasecmp (name, "gmt") == 0 ||
      g_ascii_strcasecmp (name, "z") == 0)
    return g_time_zone_new_utc ();
  zone = g_time_zone_new_identifier (name);
  return zone != NULL ? zone : g_time_zone_new_local ();
}

static int
hour_of (const char *hour,
         const char *meridiem)
{
  int h = atoi (hour);

  if (meridiem != NULL && (meridiem[0] == 'p' || meridiem[0] == 'P') && h < 12)
    h += 12;
  if (meridiem != NULL && (meridiem[0] == 'a' || meridiem[0] == 'A') && h == 12)
    h = 0;
  return h;
}

static int
month_of (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (months); i++)
    if (g_ascii_strncasecmp (name, months[i], 3) == 0)
      return (int) i + 1;
  return 0;
}

/* The first time at or after @after_us (wall µs) whose day is @month/@day
 * (0 for the next matching day) and whose time of day is @hour:@minute in
 * @zone. Words name the minute, not the second: a time of day whose
 * minute is the current one ("resets 7:38am", read at 7:38:24) is a reset
 * within that minute, taken as its end, not tomorrow's. */
static gint64
next_time (gint64     after_us,
           GTimeZone *zone,
           int        year,
           int        month,
           int        day,
           int        hour,
           int        minute)
{
  g_autoptr(GDateTime) now = g_date_time_new_from_unix_utc (after_us / G_USEC_PER_SEC);
  g_autoptr(GDateTime) here = now != NULL ? g_date_time_to_timezone (now, zone) : NULL;
  g_autoptr(GDateTime) then = NULL;

  if (here == NULL || hour > 23 || minute > 59)
    return 0;

  if (month == 0)
    {
      then = g_date_time_new (zone, g_date_time_get_year (here), g_date_time_get_month (here),
                              g_date_time_get_day_of_month (here), hour, minute, 0);
      if (then != NULL && g_date_time_to_unix (then) * G_USEC_PER_SEC < after_us &&
          after_us - g_date_time_to_unix (then) * G_USEC_PER_SEC < G_TIME_SPAN_MINUTE)
        return (g_date_time_to_unix (then) + 60) * G_USEC_PER_SEC;
      /* Not later today: tomorrow. */
      if (then != NULL && g_date_time_to_unix (then) * G_USEC_PER_SEC < after_us)
        {
          GDateTime *next = g_date_time_add_days (then, 1);

          g_date_time_unref (then);
          then = next;
        }
    }
  else
    {
      int y = year > 0 ? year : g_date_time_get_year (here);

      then = g_date_time_new (zone, y, month, day, hour, minute, 0);
      /* A date without its year that passed already: next year's. */
      if (year == 0 && then != NULL && g_date_time_to_unix (then) * G_USEC_PER_SEC < after_us)
        {
          g_date_time_unref (then);
          then = g_date_time_new (zone, y + 1, month, day, hour, minute, 0);
        }
    }

  return then != NULL ? g_date_time_to_unix (then) * G_USEC_PER_SEC : 0;
}

gint64
mend_failure_parse_reset (const char *text,
                          gint64      now_us)
{
  static GRegex *relative, *iso, *dated, *clock_time;
  static gsize once;
  g_autofree char *head = NULL;
  g_autoptr(GMatchInfo) info = NULL;

  if (text == NULL || now_us <= 0)
    return 0;
  head = g_strndup (text, MAX_TEXT);

  if (g_once_init_enter (&once))
    {
      clock_time = compile ("\\bresets?(?:\\s+(?:at|on))?\\s+([0-9]{1,2})(?::([0-9]{2}))?\\s*(am|pm)?"
                            "(?:\\s*\\(([A-Za-z_/+-]+)\\))?");
      dated = compile ("\\b(?:resets?|try again|available(?: again)?)(?:\\s+(?:at|on))?\\s+"
                       "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?\\s+([0-9]{1,2})(?:st|nd|rd|th)?"
                       "(?:,?\\s+([0-9]{4}))?,?\\s+(?:at\\s+)?([0-9]{1,2})(?::([0-9]{2}))?\\s*(am|pm)?"
                       "(?:\\s*\\(([A-Za-z_/+-]+)\\))?");
      iso = compile ("\\b(?:resets?|try again|available(?: again)?)(?:\\s+(?:at|on|after))?\\s+"
                     "([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\\.[0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)");
      relative = compile ("\\b(?:resets?|try again|available(?: again)?|retry)\\s+in\\s+"
                          "((?:[0-9]+(?:\\.[0-9]+)?\\s*[a-z]+[\\s,]*(?:and\\s+)?){1,4})");
      g_once_init_leave (&once, 1);
    }

  if (g_regex_match (iso, head, 0, &info))
    {
      g_autofree char *when = g_match_info_fetch (info, 1);
      g_autoptr(GTimeZone) local = g_time_zone_new_local ();
      g_autoptr(GDateTime) then = g_date_time_new_from_iso8601 (g_strdelimit (when, " ", 'T'), local);

      if (then != NULL)
        return g_date_time_to_unix (then) * G_USEC_PER_SEC;
    }
  g_clear_pointer (&info, g_match_info_free);

  if (g_regex_match (dated, head, 0, &info))
    {
      g_autofree char *month = g_match_info_fetch (info, 1);
      g_autofree char *day = g_match_info_fetch (info, 2);
      g_autofree char *year = g_match_info_fetch (info, 3);
      g_autofree char *hour = g_match_info_fetch (info, 4);
      g_autofree char *minute = g_match_info_fetch (info, 5);
      g_autofree char *meridiem = g_match_info_fetch (info, 6);
      g_autofree char *name = g_match_info_fetch (info, 7);
      g_autoptr(GTimeZone) zone = zone_named (name);

      return next_time (now_us, zone, year && *year ? atoi (year) : 0, month_of (month), atoi (day),
                        hour_of (hour, meridiem && *meridiem ? meridiem : NULL),
                        minute && *minute ? atoi (minute) : 0);
    }
  g_clear_pointer (&info, g_match_info_free);

  if (g_regex_match (relative, head, 0, &info))
    {
      g_autofree char *span = g_match_info_fetch (info, 1);
      gint64 ms = mend_failure_parse_duration_ms (span);

      if (ms > 0)
        return mend_failure_time_after_ms (now_us, ms);
    }
  g_clear_pointer (&info, g_match_info_free);

  if (g_regex_match (clock_time, head, 0, &info))
    {
      g_autofree char *hour = g_match_info_fetch (info, 1);
      g_autofree char *minute = g_match_info_fetch (info, 2);
      g_autofree char *meridiem = g_match_info_fetch (info, 3);
      g_autofree char *name = g_match_info_fetch (info, 4);
      g_autoptr(GTimeZone) zone = zone_named (name);

      /* A bare number needs a minute or a meridiem to be a time. */
      if ((minute != NULL && *minute) || (meridiem != NULL && *meridiem))
        return next_time (now_us, zone, 0, 0, 0, hour_of (hour, meridiem && *meridiem ? meridiem : NULL),
                          minute && *minute ? atoi (minute) : 0);
    }

  return 0;
}

gint64
mend_failure_parse_reset_headers (SoupMessageHeaders *headers,
                                  gint64              now_us,
                                  gboolean           *rejected)
{
  static const char * const durations[] = { "x-ratelimit-reset-requests", "x-ratelimit-reset-tokens" };
  const char *status;
  const char *reset;
  gint64 latest = 0;

  *rejected = FALSE;
  if (headers == NULL)
    return 0;

  /* Anthropic's subscription windows: "rejected" when one is spent, its
   * reset in Unix seconds. */
  status = soup_message_headers_get_one (headers, "anthropic-ratelimit-unified-status");
  *rejected = status != NULL && g_ascii_strcasecmp (status, "rejected") == 0;
  reset = soup_message_headers_get_one (headers, "anthropic-ratelimit-unified-reset");
  if (reset != NULL)
    {
      gint64 seconds = g_ascii_strtoll (reset, NULL, 10);

      if (seconds > 0 && seconds < G_MAXINT64 / G_USEC_PER_SEC)
        return seconds * G_USEC_PER_SEC;
    }

  /* OpenAI's: the time until the limit's window resets. */
  for (guint i = 0; i < G_N_ELEMENTS (durations); i++)
    {
      const char *value = soup_message_headers_get_one (headers, durations[i]);
      gint64 ms = value != NULL ? mend_failure_parse_duration_ms (value) : -1;

      if (ms >= 0)
        latest = MAX (latest, mend_failure_time_after_ms (now_us, ms));
    }
  return latest;
}
