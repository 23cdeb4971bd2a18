/* mend-classifier.c — reads what went wrong out of the text agents, SDKs and gateways print
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reads what went wrong out of the text agents, SDKs and gateways print.
 * Every piece of evidence in the text is weighed (see the ranks in
 * mend-classifier-private.h) by the rows of lib/failure/rules/classifier-rules.txt
 * (mend-classifier-rules.c): provider codes read as whole tokens, so that
 * JSON, JSON inside JSON strings, Python reprs and a body a terminal broke in
 * two all count; a provider's own words; the status of the response or the
 * number a wrapper put in the text. Nothing known fails closed.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-classifier-private.h"
#include "mend-classifier-rules-private.h"
#include "mend-failure-parse-private.h"

/* What never retries first: a tie between two pieces of evidence of the
 * same rank never ends in a retry that the other forbids. The order is the
 * built-in rules' `order` line. */
static int
safety (MendReason reason)
{
  return mend_rule_set_safety (mend_rule_set_get_default (), reason);
}

typedef struct
{
  MendReason        reason;
  MendEvidenceRank  rank;
  char             *rule;
  /* The strongest evidence for another reason: what the winner outranked. */
  MendReason        other_reason;
  MendEvidenceRank  other_rank;
  char             *other_rule;
  gboolean          refused;  /* an auth or permission word was seen */
  MendReason        refused_reason;
  char             *refused_rule;
  /* The strongest evidence that the request itself is wrong. */
  MendReason        wrong_reason;
  MendEvidenceRank  wrong_rank;
  char             *wrong_rule;
} Weighing;

/* Reasons that say the request can never succeed as it is. */
static gboolean
is_request_wrong (MendReason reason)
{
  return reason == MEND_REASON_BAD_REQUEST || reason == MEND_REASON_AUTH ||
         reason == MEND_REASON_PERMISSION || reason == MEND_REASON_USAGE_LIMIT ||
         reason == MEND_REASON_BILLING;
}

static gboolean
beats (MendEvidenceRank rank,
       MendReason       reason,
       MendEvidenceRank than_rank,
       MendReason       than_reason);

static void
keep_other (Weighing         *w,
            MendReason        reason,
            MendEvidenceRank  rank,
            const char       *rule)
{
  if (reason == w->reason || rule == NULL)
    return;
  if (w->other_rule == NULL || beats (rank, reason, w->other_rank, w->other_reason))
    {
      g_free (w->other_rule);
      w->other_rule = g_strdup (rule);
      w->other_reason = reason;
      w->other_rank = rank;
    }
}

static void
weigh (Weighing         *w,
       MendReason        reason,
       MendEvidenceRank  rank,
       char             *rule)
{
  if ((reason == MEND_REASON_AUTH || reason == MEND_REASON_PERMISSION) &&
      rank >= MEND_EVIDENCE_SPECIFIC && !w->refused)
    {
      w->refused = TRUE;
      w->refused_reason = reason;
      w->refused_rule = g_strdup (rule);
    }
  if (is_request_wrong (reason) &&
      (w->wrong_rule == NULL || beats (rank, reason, w->wrong_rank, w->wrong_reason)))
    {
      g_free (w->wrong_rule);
      w->wrong_rule = g_strdup (rule);
      w->wrong_reason = reason;
      w->wrong_rank = rank;
    }

  if (beats (rank, reason, w->rank, w->reason))
    {
      MendReason old_reason = w->reason;
      MendEvidenceRank old_rank = w->rank;
      g_autofree char *old_rule = w->rule;

      w->rule = rule;
      w->reason = reason;
      w->rank = rank;
      keep_other (w, old_reason, old_rank, old_rule);
      if (w->other_reason == reason)
        g_clear_pointer (&w->other_rule, g_free);
    }
  else
    {
      keep_other (w, reason, rank, rule);
      g_free (rule);
    }
}

static gboolean
beats (MendEvidenceRank rank,
       MendReason       reason,
       MendEvidenceRank than_rank,
       MendReason       than_reason)
{
  return rank > than_rank || (rank == than_rank && safety (reason) < safety (than_reason));
}

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

typedef struct
{
  Weighing   *w;
  const char *token;
  gsize       len;
} TokenMatch;

static void
weigh_token_rule (const MendRule *rule,
                  gpointer        data)
{
  TokenMatch *m = data;

  if (rule->match == MEND_MATCH_INFIX)
    {
      g_autofree char *token = g_strndup (m->token, MIN (m->len, 200));

      weigh (m->w, rule->reason, rule->rank,
             g_strdup_printf (_("“%s” in the code “%s” (%s)"), rule->pattern, token, rule->source));
    }
  else
    weigh (m->w, rule->reason, rule->rank,
           g_strdup_printf (_("provider code “%s” (%s)"), rule->pattern, rule->source));
}

static void
weigh_codes (Weighing          *w,
             const MendRuleSet *rules,
             const char        *text)
{
  const char *p = text;

  while (*p != '\0')
    {
      TokenMatch m = { w, NULL, 0 };

      while (*p != '\0' && !is_token_char (*p))
        p++;
      m.token = p;
      while (is_token_char (*p))
        p++;
      m.len = p - m.token;
      if (m.len == 0)
        continue;

      mend_rule_set_foreach_token_rule (rules, m.token, m.len, weigh_token_rule, &m);
    }
}

static guint
count_in (const char *haystack,
          const char *needle)
{
  gsize len = strlen (needle);
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + len, needle))
    n++;
  return n;
}

/* Whether every occurrence of @inner's words is inside an occurrence of
 * @outer's, longer words that hold them: "you have exceeded your usage
 * limits. please try again later" says more than "usage limit" in it, and
 * "does not exist or you do not have access" more than "do not have
 * access". The more specific words speak for the text. */
static gboolean
is_subsumed (const char     *lower,
             const MendRule *inner,
             const MendRule *outer)
{
  guint inside = count_in (outer->pattern, inner->pattern);

  if (inside == 0 || strlen (outer->pattern) <= strlen (inner->pattern))
    return FALSE;
  return count_in (lower, inner->pattern) <= count_in (lower, outer->pattern) * inside;
}

/* @word at @at starts a word: a family's "credit" is found in "credits",
 * never in "accredited". */
static gboolean
starts_word (const char *lower,
             const char *at,
             const char *word)
{
  return at == lower || !g_ascii_isalnum (word[0]) || !g_ascii_isalnum (at[-1]);
}

/* The word of @words that starts a word at most @window bytes past @from
 * (@left bytes of text are there), or NULL. */
static const char *
starts_within (const char  *lower,
               const char  *from,
               gsize        left,
               gsize        window,
               char       **words)
{
  for (guint i = 0; words[i] != NULL; i++)
    {
      gsize room = MIN (window + strlen (words[i]), left);

      for (const char *p = g_strstr_len (from, room, words[i]); p != NULL;
           p = g_strstr_len (p + 1, room - (gsize) (p + 1 - from), words[i]))
        if (starts_word (lower, p, words[i]))
          return words[i];
    }

  return NULL;
}

/* A word of the rule's family with its evidence close after it: "quota …
 * exhausted", "daily … limit", "model … not found". What matched, for
 * people, or NULL. */
static char *
near_match (const MendRule *rule,
            const char     *lower)
{
  gsize total = strlen (lower);

  for (guint i = 0; rule->family[i] != NULL; i++)
    {
      const char *word = rule->family[i];
      gsize n = strlen (word);

      for (const char *p = strstr (lower, word); p != NULL; p = strstr (p + 1, word))
        {
          const char *evidence;

          if (!starts_word (lower, p, word))
            continue;
          evidence = starts_within (lower, p + n, total - (gsize) (p + n - lower),
                                    MEND_RULE_NEAR_WINDOW, rule->evidence);
          if (evidence != NULL)
            /* Translators: a word of a family and the evidence found
             * close after it, as in “quota … exceeded” */
            return g_strdup_printf (_("“%s … %s”"), word, evidence);
        }
    }

  return NULL;
}

static void
weigh_phrases (Weighing          *w,
               const MendRuleSet *rules,
               const char        *lower)
{
  g_autoptr(GPtrArray) matched = g_ptr_array_new ();
  guint n = mend_rule_set_get_n_rules (rules);

  for (guint i = 0; i < n; i++)
    {
      const MendRule *rule = mend_rule_set_get_rule (rules, i);

      if (rule->match == MEND_MATCH_WORDS && strstr (lower, rule->pattern) != NULL)
        g_ptr_array_add (matched, (gpointer) rule);
      else if (rule->match == MEND_MATCH_NEAR)
        {
          g_autofree char *words = near_match (rule, lower);

          if (words != NULL)
            weigh (w, rule->reason, rule->rank,
                   g_strdup_printf (_("the words %s (%s)"), words, rule->source));
        }
    }

  for (guint i = 0; i < matched->len; i++)
    {
      const MendRule *rule = g_ptr_array_index (matched, i);
      gboolean subsumed = FALSE;

      for (guint j = 0; j < matched->len && !subsumed; j++)
        subsumed = j != i && is_subsumed (lower, rule, g_ptr_array_index (matched, j));
      if (!subsumed)
        weigh (w, rule->reason, rule->rank,
               g_strdup_printf (_("words “%s” (%s)"), rule->pattern, rule->source));
    }
}

static gboolean
read_count (const char *p,
            guint64    *value)
{
  guint64 v = 0;
  gboolean any = FALSE;

  for (; g_ascii_isdigit (*p) || (*p == ',' && g_ascii_isdigit (p[1])); p++)
    if (*p != ',')
      {
        v = MIN (v * 10 + (guint64) (*p - '0'), G_MAXUINT64 / 20);
        any = TRUE;
      }

  *value = v;
  return any;
}

static const char *
number_after (const char *p,
              const char *skip)
{
  while (*p != '\0' && strchr (skip, *p) != NULL)
    p++;

  return g_ascii_isdigit (*p) ? p : NULL;
}

/* "Limit 7000, Used 0, Requested ~12903" (OpenAI, Groq): a request larger
 * than the whole limit never fits, however long one waits. */
static void
weigh_request_size (Weighing   *w,
                    const char *lower)
{
  for (const char *limit = strstr (lower, "limit"); limit != NULL; limit = strstr (limit + 5, "limit"))
    {
      const char *l = number_after (limit + 5, " :");
      const char *requested;
      const char *r;
      guint64 limit_value, requested_value;

      if (l == NULL || !read_count (l, &limit_value))
        continue;
      requested = strstr (l, "requested");
      if (requested == NULL || requested - l > 80)
        continue;
      r = number_after (requested + 9, " :~");
      if (r != NULL && read_count (r, &requested_value) && requested_value > limit_value)
        {
          g_autofree char *requested_text = g_strdup_printf ("%" G_GUINT64_FORMAT, requested_value);
          g_autofree char *limit_text = g_strdup_printf ("%" G_GUINT64_FORMAT, limit_value);

          weigh (w, MEND_REASON_BAD_REQUEST, MEND_EVIDENCE_DECISIVE,
                 g_strdup_printf (_("requested %s against a limit of %s: the request can never fit"),
                                  requested_text, limit_text));
        }
      return;
    }
}

static gboolean
is_word_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == ',';
}

/* The first whole number in the text that is an HTTP status we know, or 0. */
guint
mend_classifier_status_in_text (const char *text)
{
  for (const char *p = text; *p != '\0'; p++)
    {
      guint64 value;

      if (!g_ascii_isdigit (*p) || (p > text && is_word_char (p[-1])))
        continue;

      if (!g_ascii_isdigit (p[1]) || !g_ascii_isdigit (p[2]) ||
          g_ascii_isalnum (p[3]) || p[3] == '_' ||
          /* "1,500" and "2.500" are numbers, "500." ends a sentence */
          ((p[3] == '.' || p[3] == ',') && g_ascii_isdigit (p[4])))
        {
          while (g_ascii_isdigit (p[1]))
            p++;
          continue;
        }

      value = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
      if (value >= 400 && value <= 599 &&
          mend_classifier_reason_for_status ((guint) value) != MEND_REASON_UNKNOWN &&
          mend_classifier_reason_for_status ((guint) value) != MEND_REASON_BAD_REQUEST)
        return (guint) value;
      if (value == 400 || value == 404 || value == 413 || value == 422)
        return (guint) value;
      p += 2;
    }

  return 0;
}

static void
weigh_status (Weighing          *w,
              const MendRuleSet *rules,
              guint              status,
              gboolean           status_is_http)
{
  const MendRule *rule = NULL;
  MendReason reason = mend_rule_set_reason_for_status (rules, status, &rule);

  if (rule == NULL)
    return;

  weigh (w, reason, rule->rank,
         status_is_http ? g_strdup_printf (_("HTTP status %u (%s)"), status, rule->source)
                        : g_strdup_printf (_("status %u in the text (%s)"), status, rule->source));
}

static void
finish (Weighing           *w,
        MendClassification *result)
{
  /* A bad request whose words say the key or access was refused is that
   * (Google answers an invalid key with 400 INVALID_ARGUMENT), unless a
   * decisive fact made it one ("does not exist or you do not have access
   * to it" is a missing model). */
  if (w->reason == MEND_REASON_BAD_REQUEST && w->refused && w->rank < MEND_EVIDENCE_DECISIVE)
    {
      g_free (w->rule);
      w->rule = g_strdup_printf (_("%s, over a bad request"), w->refused_rule);
      w->reason = w->refused_reason;
    }
  g_free (w->refused_rule);

  /* A 5xx or a wrapper's catch-all is retried only when nothing in its
   * detail says the request itself is wrong: a JSON-RPC -32603 whose data
   * names a missing configuration, a 500 server_error about an option the
   * model does not take. A server's own "internal error" words are such a
   * catch-all too. */
  if (w->wrong_rule != NULL && !is_request_wrong (w->reason) && w->reason != MEND_REASON_CANCELLED &&
      (w->rank <= MEND_EVIDENCE_GENERIC_CODE ||
       (w->reason == MEND_REASON_SERVER && w->rank <= MEND_EVIDENCE_SPECIFIC)))
    {
      char *rule = g_strdup_printf (_("%s, over a catch-all"), w->wrong_rule);

      g_free (w->rule);
      w->rule = rule;
      w->reason = w->wrong_reason;
      w->rank = w->wrong_rank;
    }
  g_free (w->wrong_rule);

  if (w->rule != NULL && w->other_rule != NULL && w->other_reason != w->reason)
    {
      char *rule = g_strdup_printf (_("%s, over %s"), w->rule, w->other_rule);

      g_free (w->rule);
      w->rule = rule;
    }
  g_free (w->other_rule);

  result->reason = w->reason;
  result->rank = w->rank;
  result->rule = w->rule;
}

void
mend_classifier_classify (const char         *text,
                          guint               status,
                          gboolean            status_is_http,
                          MendClassification *result)
{
  const MendRuleSet *rules = mend_rule_set_get_default ();
  g_autofree char *lower = mend_rules_normalize_text (text);
  Weighing w = { MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL,
                 MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL, FALSE, 0, NULL,
                 MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL };

  weigh_codes (&w, rules, text);
  weigh_phrases (&w, rules, lower);
  weigh_request_size (&w, lower);

  if (!status_is_http)
    status = mend_classifier_status_in_text (lower);
  if (status != 0)
    weigh_status (&w, rules, status, status_is_http);

  finish (&w, result);
  if (result->rule == NULL)
    result->rule = g_strdup (_("nothing known: fails closed"));
}

gboolean
mend_classifier_match (const MendRuleSet  *rules,
                       const char         *text,
                       MendClassification *result)
{
  g_autofree char *lower = mend_rules_normalize_text (text);
  Weighing w = { MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL,
                 MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL, FALSE, 0, NULL,
                 MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL };

  weigh_codes (&w, rules, text);
  weigh_phrases (&w, rules, lower);
  finish (&w, result);

  return result->rule != NULL;
}

void
mend_classification_clear (MendClassification *result)
{
  g_clear_pointer (&result->rule, g_free);
  result->reason = MEND_REASON_UNKNOWN;
  result->rank = MEND_EVIDENCE_NONE;
}

MendReason
mend_classifier_reason_for_status (guint status)
{
  return mend_rule_set_reason_for_status (mend_rule_set_get_default (), status, NULL);
}
