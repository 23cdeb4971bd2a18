/* mend-classifier-rules.c — the classifier's rules as data: rows, their parser, the built-in set
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The phrases, provider codes, statuses and precedence the classifier
 * weighs are rows of lib/failure/rules/classifier-rules.txt, compiled in as a
 * GResource and parsed once, at first use. Apps add rows of their own to a
 * policy (mend_error_policy_add_rule ()), kept in a set of their own.
 */

#include "config.h"

#include <string.h>

#include <gio/gio.h>
#include <glib/gi18n-lib.h>

#include "mend-classifier-rules-private.h"
#include "mend-enum-types.h"
#include "mend-error.h"
#include "mend-rules-resource.h"

char *
mend_rules_normalize_text (const char *text)
{
  g_autofree char *lower = g_ascii_strdown (text, -1);
  GString *out = g_string_sized_new (strlen (lower));

  /* Never two spaces in a row: normalizing normalized text changes
   * nothing, so that a rule's words can be checked against it. */
  for (const char *p = lower; *p != '\0'; )
    {
      if (g_str_has_prefix (p, "http://") || g_str_has_prefix (p, "https://"))
        {
          /* "…/account/billing" in a link says nothing about the error. */
          while (*p != '\0' && !g_ascii_isspace (*p) && *p != '"' && *p != '\'')
            p++;
        }
      else if (g_ascii_isspace (*p))
        {
          while (g_ascii_isspace (*p))
            p++;
        }
      else
        {
          g_string_append_c (out, *p++);
          continue;
        }
      if (out->len == 0 || out->str[out->len - 1] != ' ')
        g_string_append_c (out, ' ');
    }

  return g_string_free (out, FALSE);
}

#define RULES_PATH "/org/libmend/rules/classifier-rules.txt"
#define N_REASONS (MEND_REASON_UNKNOWN + 1)
#define MAX_STATUS 599

struct _MendRuleSet
{
  gatomicrefcount  ref_count;
  GPtrArray       *rules;        /* MendRule */
  GHashTable      *tokens;       /* lower-cased token → GPtrArray of MendRule, file order */
  GPtrArray       *infixes;      /* MendRule */
  const MendRule  *statuses[MAX_STATUS + 1];
  const MendRule  *classes[6];   /* "1xx" … "5xx" */
  int              safety[N_REASONS];
  gboolean         has_order;
};

static const char *match_names[] = { "words", "token", "TOKEN", "infix", "status", "near" };

static const struct {
  const char       *name;
  MendEvidenceRank  rank;
} rank_names[] = {
  { "decisive", MEND_EVIDENCE_DECISIVE },
  { "code", MEND_EVIDENCE_CODE },
  { "specific", MEND_EVIDENCE_SPECIFIC },
  { "generic-code", MEND_EVIDENCE_GENERIC_CODE },
  { "status", MEND_EVIDENCE_STATUS },
  { "generic", MEND_EVIDENCE_GENERIC },
};

static void
rule_free (MendRule *rule)
{
  g_free (rule->pattern);
  g_free (rule->source);
  g_strfreev (rule->family);
  g_strfreev (rule->evidence);
  g_free (rule);
}

MendRuleSet *
mend_rule_set_new (void)
{
  MendRuleSet *self = g_new0 (MendRuleSet, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) rule_free);
  self->tokens = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) g_ptr_array_unref);
  self->infixes = g_ptr_array_new ();
  for (guint i = 0; i < N_REASONS; i++)
    self->safety[i] = N_REASONS;

  return self;
}

MendRuleSet *
mend_rule_set_ref (MendRuleSet *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
mend_rule_set_unref (MendRuleSet *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_ptr_array_unref (self->infixes);
  g_hash_table_unref (self->tokens);
  g_ptr_array_unref (self->rules);
  g_free (self);
}

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

/* Takes @rule; indexes it for its match. */
static void
add_rule (MendRuleSet *self,
          MendRule    *rule)
{
  g_ptr_array_add (self->rules, rule);

  switch (rule->match)
    {
    case MEND_MATCH_TOKEN:
    case MEND_MATCH_TOKEN_EXACT:
      {
        char *key = g_ascii_strdown (rule->pattern, -1);
        GPtrArray *list = g_hash_table_lookup (self->tokens, key);

        if (list == NULL)
          {
            list = g_ptr_array_new ();
            g_hash_table_insert (self->tokens, key, list);
          }
        else
          g_free (key);
        g_ptr_array_add (list, rule);
      }
      break;
    case MEND_MATCH_INFIX:
      g_ptr_array_add (self->infixes, rule);
      break;
    case MEND_MATCH_STATUS:
      if (rule->pattern[1] == 'x')
        self->classes[rule->pattern[0] - '0'] = rule;
      else
        self->statuses[atoi (rule->pattern)] = rule;
      break;
    case MEND_MATCH_WORDS:
    case MEND_MATCH_NEAR:
    default:
      break;
    }
}

static gboolean
fail (GError     **error,
      guint        line,
      const char  *format,
      ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError     **error,
      guint        line,
      const char  *format,
      ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);

  /* Translators: a line of classifier rules that does not parse; the
   * second %s says what is wrong with it. */
  g_set_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID,
               _("Classifier rules, line %u: %s"), line, detail);
  return FALSE;
}

/* The next blank-separated word of *p, NUL-terminated in place. */
static char *
next_word (char **p)
{
  char *start = *p;

  while (*start == ' ' || *start == '\t')
    start++;
  if (*start == '\0')
    {
      *p = start;
      return NULL;
    }

  *p = start;
  while (**p != '\0' && **p != ' ' && **p != '\t')
    (*p)++;
  if (**p != '\0')
    *(*p)++ = '\0';

  return start;
}

static int
reason_by_nick (const char *nick)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (MEND_TYPE_REASON);
  GEnumValue *value = g_enum_get_value_by_nick (klass, nick);

  return value != NULL ? value->value : -1;
}

static gboolean
parse_order (MendRuleSet *self,
             char        *rest,
             guint        line,
             GError     **error)
{
  gboolean seen[N_REASONS] = { FALSE };
  int n = 0;
  char *word;

  if (self->has_order)
    return fail (error, line, _("a second “order” line"));

  while ((word = next_word (&rest)) != NULL)
    {
      int reason = reason_by_nick (word);

      if (reason < 0)
        return fail (error, line, _("“%s” is not a reason"), word);
      if (seen[reason])
        return fail (error, line, _("“%s” is named twice"), word);
      seen[reason] = TRUE;
      self->safety[reason] = n++;
    }

  if (n != N_REASONS)
    return fail (error, line, _("names %d of the %d reasons"), n, N_REASONS);

  self->has_order = TRUE;
  return TRUE;
}

/* A quoted pattern: "…" with \" and \\. */
static char *
parse_pattern (char       **p,
               guint        line,
               GError     **error)
{
  GString *out;
  char *s = *p;

  while (*s == ' ' || *s == '\t')
    s++;
  if (*s != '"')
    {
      fail (error, line, _("expected a pattern in double quotes"));
      return NULL;
    }

  out = g_string_new (NULL);
  for (s++; *s != '"'; s++)
    {
      if (*s == '\0')
        {
          g_string_free (out, TRUE);
          fail (error, line, _("the pattern’s quote is not closed"));
          return NULL;
        }
      if (*s == '\\')
        {
          s++;
          if (*s != '"' && *s != '\\')
            {
              g_string_free (out, TRUE);
              fail (error, line, _("only \\\" and \\\\ may follow a backslash"));
              return NULL;
            }
        }
      g_string_append_c (out, *s);
    }
  *p = s + 1;

  return g_string_free (out, FALSE);
}

/* Words as the text is made before it is searched: anything else can never
 * match. */
static gboolean
is_normal_words (const char *words)
{
  g_autofree char *normal = mend_rules_normalize_text (words);
  gsize len = strlen (words);

  return len > 0 && strcmp (normal, words) == 0 && words[0] != ' ' && words[len - 1] != ' ';
}

/* "a|b|c ~ x|y": two families of words, each word as a words rule's. */
static gboolean
check_near (const char  *pattern,
            guint        line,
            GError     **error)
{
  g_auto(GStrv) groups = g_strsplit (pattern, " ~ ", -1);

  if (strlen (pattern) > MEND_RULE_MAX_PHRASE)
    return fail (error, line, _("the pattern is longer than %d bytes"), MEND_RULE_MAX_PHRASE);
  if (g_strv_length (groups) != 2)
    return fail (error, line, _("a near pattern is two families of words, “a|b ~ x|y”"));

  for (guint g = 0; g < 2; g++)
    {
      g_auto(GStrv) words = g_strsplit (groups[g], "|", -1);

      for (guint i = 0; words[i] != NULL; i++)
        if (!is_normal_words (words[i]) || strchr (words[i], '~') != NULL)
          return fail (error, line, _("words are lower case, single-spaced, without a link"));
    }

  return TRUE;
}

static gboolean
check_pattern (MendMatch    match,
               const char  *pattern,
               guint        line,
               GError     **error)
{
  gsize len = strlen (pattern);

  if (len == 0)
    return fail (error, line, _("the pattern is empty"));
  if (!g_utf8_validate (pattern, len, NULL))
    return fail (error, line, _("the pattern is not UTF-8"));

  switch (match)
    {
    case MEND_MATCH_WORDS:
      if (len > MEND_RULE_MAX_PHRASE)
        return fail (error, line, _("the pattern is longer than %d bytes"), MEND_RULE_MAX_PHRASE);
      if (!is_normal_words (pattern))
        return fail (error, line, _("words are lower case, single-spaced, without a link"));
      return TRUE;
    case MEND_MATCH_TOKEN:
    case MEND_MATCH_TOKEN_EXACT:
    case MEND_MATCH_INFIX:
      if (match != MEND_MATCH_INFIX && (len < 3 || len > MEND_RULE_MAX_TOKEN))
        return fail (error, line, _("a token is 3 to %d bytes"), MEND_RULE_MAX_TOKEN);
      if (len > MEND_RULE_MAX_TOKEN)
        return fail (error, line, _("a token is at most %d bytes"), MEND_RULE_MAX_TOKEN);
      for (const char *p = pattern; *p != '\0'; p++)
        if (!is_token_char (*p))
          return fail (error, line, _("a token has only letters, digits, “_” and “-”"));
      return TRUE;
    case MEND_MATCH_NEAR:
      return check_near (pattern, line, error);
    case MEND_MATCH_STATUS:
      if (len == 3 && pattern[0] >= '1' && pattern[0] <= '5' &&
          ((g_ascii_isdigit (pattern[1]) && g_ascii_isdigit (pattern[2])) ||
           (pattern[1] == 'x' && pattern[2] == 'x')))
        return TRUE;
      return fail (error, line, _("a status is three digits from 100 to 599, or a class such as “4xx”"));
    default:
      g_assert_not_reached ();
    }
}

static gboolean
parse_line (MendRuleSet *self,
            char        *text,
            guint        line,
            GError     **error)
{
  g_autofree char *pattern = NULL;
  char *rest = text;
  char *word = next_word (&rest);
  MendEvidenceRank rank = MEND_EVIDENCE_NONE;
  MendRule *rule;
  int match = -1;
  int reason;

  if (word == NULL || word[0] == '#')
    return TRUE;

  if (strcmp (word, "order") == 0)
    return parse_order (self, rest, line, error);

  for (guint i = 0; i < G_N_ELEMENTS (match_names); i++)
    if (strcmp (word, match_names[i]) == 0)
      match = (int) i;
  if (match < 0)
    return fail (error, line, _("“%s” is not a match (words, near, token, TOKEN, infix, status) or “order”"),
                 word);

  word = next_word (&rest);
  for (guint i = 0; word != NULL && i < G_N_ELEMENTS (rank_names); i++)
    if (strcmp (word, rank_names[i].name) == 0)
      rank = rank_names[i].rank;
  if (rank == MEND_EVIDENCE_NONE)
    return fail (error, line, _("“%s” is not a rank"), word ? word : "");

  word = next_word (&rest);
  reason = word != NULL ? reason_by_nick (word) : -1;
  if (reason < 0)
    return fail (error, line, _("“%s” is not a reason"), word ? word : "");

  pattern = parse_pattern (&rest, line, error);
  if (pattern == NULL || !check_pattern (match, pattern, line, error))
    return FALSE;

  if (*rest != '\0' && *rest != ' ' && *rest != '\t')
    return fail (error, line, _("the source must follow the pattern"));
  g_strstrip (rest);
  if (*rest == '\0')
    return fail (error, line, _("the rule has no source"));
  if (!g_utf8_validate (rest, -1, NULL))
    return fail (error, line, _("the source is not UTF-8"));

  rule = g_new0 (MendRule, 1);
  rule->match = match;
  rule->rank = rank;
  rule->reason = reason;
  rule->pattern = g_steal_pointer (&pattern);
  rule->source = g_strdup (rest);
  if (match == MEND_MATCH_NEAR)
    {
      g_auto(GStrv) groups = g_strsplit (rule->pattern, " ~ ", 2);

      rule->family = g_strsplit (groups[0], "|", -1);
      rule->evidence = g_strsplit (groups[1], "|", -1);
    }
  add_rule (self, rule);

  return TRUE;
}

MendRuleSet *
mend_rule_set_parse (const char  *text,
                     gssize       length,
                     gboolean     need_order,
                     GError     **error)
{
  g_autoptr(MendRuleSet) self = mend_rule_set_new ();
  g_autofree char *copy = NULL;
  char *line;
  char *next;
  guint number = 0;

  g_return_val_if_fail (text != NULL || length == 0, NULL);

  if (length < 0)
    length = strlen (text);
  if (memchr (text, '\0', length) != NULL || !g_utf8_validate (text, length, NULL))
    {
      fail (error, 0, _("the rules are not UTF-8 text"));
      return NULL;
    }
  copy = g_strndup (text, length);

  for (line = copy; line != NULL; line = next)
    {
      gsize len;

      number++;
      next = strchr (line, '\n');
      if (next != NULL)
        *next++ = '\0';
      len = strlen (line);
      if (len > 0 && line[len - 1] == '\r')
        line[len - 1] = '\0';
      if (!parse_line (self, line, number, error))
        return NULL;
    }

  if (need_order && !self->has_order)
    {
      fail (error, number, _("the rules have no “order” line"));
      return NULL;
    }
  if (!need_order && self->has_order)
    {
      fail (error, number, _("only the built-in rules set the order"));
      return NULL;
    }

  return g_steal_pointer (&self);
}

GBytes *
mend_rule_set_dup_default_text (void)
{
  g_autoptr(GError) error = NULL;
  GBytes *bytes = g_resource_lookup_data (mend_rules_get_resource (), RULES_PATH,
                                          G_RESOURCE_LOOKUP_FLAGS_NONE, &error);

  if (bytes == NULL)
    g_error ("The classifier's rules are not in the library: %s", error->message);
  return bytes;
}

MendRuleSet *
mend_rule_set_get_default (void)
{
  static MendRuleSet *rules;

  if (g_once_init_enter (&rules))
    {
      g_autoptr(GBytes) bytes = mend_rule_set_dup_default_text ();
      g_autoptr(GError) error = NULL;
      gsize size = 0;
      const char *data = g_bytes_get_data (bytes, &size);
      MendRuleSet *parsed = mend_rule_set_parse (data, size, TRUE, &error);

      /* The file is part of the library: a row that does not parse is a
       * mistake in it, which test-failure-classifier-rules catches. */
      if (parsed == NULL)
        g_error ("%s", error->message);
      g_once_init_leave (&rules, parsed);
    }

  return rules;
}

gboolean
mend_rule_set_add_words (MendRuleSet       *self,
                         const char        *phrase,
                         MendReason         reason,
                         MendEvidenceRank   rank,
                         const char        *source,
                         GError           **error)
{
  g_autofree char *normal = NULL;
  MendRule *rule;

  g_return_val_if_fail (phrase != NULL, FALSE);

  if (strlen (phrase) > MEND_RULE_MAX_PHRASE || !g_utf8_validate (phrase, -1, NULL))
    return fail (error, 0, _("a phrase is UTF-8 text of at most %d bytes"), MEND_RULE_MAX_PHRASE);

  normal = mend_rules_normalize_text (phrase);
  g_strstrip (normal);
  if (*normal == '\0')
    return fail (error, 0, _("the phrase has nothing to match"));

  rule = g_new0 (MendRule, 1);
  rule->match = MEND_MATCH_WORDS;
  rule->rank = rank;
  rule->reason = reason;
  rule->pattern = g_steal_pointer (&normal);
  rule->source = source != NULL && *source != '\0' ? g_utf8_make_valid (source, -1)
                                                     : g_strdup (_("the app’s rule"));
  /* One line, as in the file. */
  for (char *p = rule->source; *p != '\0'; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  add_rule (self, rule);

  return TRUE;
}

guint
mend_rule_set_get_n_rules (const MendRuleSet *self)
{
  return self->rules->len;
}

const MendRule *
mend_rule_set_get_rule (const MendRuleSet *self,
                        guint              i)
{
  g_return_val_if_fail (i < self->rules->len, NULL);

  return g_ptr_array_index (self->rules, i);
}

int
mend_rule_set_safety (const MendRuleSet *self,
                      MendReason         reason)
{
  if ((guint) reason >= N_REASONS)
    return N_REASONS;
  return self->safety[reason];
}

static gboolean
token_matches (const MendRule *rule,
               const char     *token,
               gsize           len)
{
  return rule->match == MEND_MATCH_TOKEN ||
         strncmp (token, rule->pattern, len) == 0;
}

void
mend_rule_set_foreach_token_rule (const MendRuleSet *self,
                                  const char        *token,
                                  gsize              len,
                                  MendRuleFunc       func,
                                  gpointer           data)
{
  for (guint i = 0; i < self->infixes->len; i++)
    {
      const MendRule *rule = g_ptr_array_index (self->infixes, i);
      gsize n = strlen (rule->pattern);

      for (gsize at = 0; at + n <= len; at++)
        if (memcmp (token + at, rule->pattern, n) == 0)
          {
            func (rule, data);
            break;
          }
    }

  if (len >= 3 && len <= MEND_RULE_MAX_TOKEN && g_hash_table_size (self->tokens) > 0)
    {
      char key[MEND_RULE_MAX_TOKEN + 1];
      GPtrArray *list;

      for (gsize i = 0; i < len; i++)
        key[i] = g_ascii_tolower (token[i]);
      key[len] = '\0';

      list = g_hash_table_lookup (self->tokens, key);
      for (guint i = 0; list != NULL && i < list->len; i++)
        {
          const MendRule *rule = g_ptr_array_index (list, i);

          if (token_matches (rule, token, len))
            func (rule, data);
        }
    }
}

MendReason
mend_rule_set_reason_for_status (const MendRuleSet  *self,
                                 guint               status,
                                 const MendRule    **rule)
{
  const MendRule *found = NULL;

  if (status >= 100 && status <= MAX_STATUS)
    {
      found = self->statuses[status];
      if (found == NULL)
        found = self->classes[status / 100];
    }

  if (rule != NULL)
    *rule = found;
  return found != NULL ? found->reason : MEND_REASON_UNKNOWN;
}

char *
mend_rule_set_to_text (const MendRuleSet *self)
{
  g_autoptr(GEnumClass) reasons = g_type_class_ref (MEND_TYPE_REASON);
  GString *out = g_string_new (NULL);

  if (self->has_order)
    {
      g_string_append (out, "order");
      for (int n = 0; n < N_REASONS; n++)
        for (guint r = 0; r < N_REASONS; r++)
          if (self->safety[r] == n)
            g_string_append_printf (out, " %s", g_enum_get_value (reasons, r)->value_nick);
      g_string_append_c (out, '\n');
    }

  for (guint i = 0; i < self->rules->len; i++)
    {
      const MendRule *rule = g_ptr_array_index (self->rules, i);
      const char *rank = NULL;

      for (guint r = 0; r < G_N_ELEMENTS (rank_names); r++)
        if (rank_names[r].rank == rule->rank)
          rank = rank_names[r].name;
      g_assert (rank != NULL);

      g_string_append_printf (out, "%s %s %s \"", match_names[rule->match], rank,
                              g_enum_get_value (reasons, rule->reason)->value_nick);
      for (const char *p = rule->pattern; *p != '\0'; p++)
        {
          if (*p == '"' || *p == '\\')
            g_string_append_c (out, '\\');
          g_string_append_c (out, *p);
        }
      g_string_append_printf (out, "\" %s\n", rule->source);
    }

  return g_string_free (out, FALSE);
}
