/* mend-classifier.c — reads what went wrong out of the text agents, SDKs and gateways print
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reads what went wrong out of the text agents, SDKs and gateways print.
 * Every piece of evidence in the text is weighed (see the ranks in
 * mend-classifier-private.h): provider codes read as whole tokens, so that
 * JSON, JSON inside JSON strings, Python reprs and a body a terminal broke in
 * two all count; a provider's own words, in one table per reason; the status
 * of the response or the number a wrapper put in the text. Each row names
 * where the wording comes from. Nothing known fails closed.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-classifier-private.h"
#include "mend-reason-private.h"

#define D MEND_EVIDENCE_DECISIVE
#define C MEND_EVIDENCE_CODE
#define S MEND_EVIDENCE_SPECIFIC
#define G MEND_EVIDENCE_GENERIC_CODE
#define W MEND_EVIDENCE_GENERIC

typedef struct
{
  const char       *needle;  /* lower case */
  MendEvidenceRank  rank;
  const char       *source;
} Phrase;

static const Phrase usage_limit_phrases[] = {
  { "usage limit", D, "Claude Code and Codex CLI plan limits" },
  { "hit your limit", D, "Claude Code: You've hit your limit · resets …" },
  { "session limit", D, "Claude Code: the 5-hour session limit" },
  { "weekly limit", D, "Claude Code and Codex CLI weekly limits" },
  { "5-hour limit", D, "Claude Code" },
  { "daily limit", D, "plan limits" },
  { "monthly limit", D, "plan limits" },
  { "limit will reset", D, "Claude Code" },
  { "out of extra usage", D, "Claude Code: paid extra usage used up" },
  { "extra usage is required", D, "Claude Code" },
  { "draw from extra usage", D, "Anthropic: third-party apps use extra usage" },
  { "credit balance is too low", D, "Anthropic: purchase credits" },
  { "credit balance too low", D, "Claude Code's banner" },
  { "insufficient balance", D, "DeepSeek 402" },
  { "insufficient credits", D, "OpenRouter 402" },
  { "insufficient funds", D, "prepaid balances" },
  { "out of credits", D, "prepaid balances" },
  { "spend limit", D, "Anthropic spend limits" },
  { "spending limit", D, "spend limits" },
  { "billing hard limit", D, "OpenAI billing_hard_limit_reached" },
  { "upgrade to plus", D, "Codex CLI: needs a paid plan" },
  { "upgrade to pro", D, "Codex CLI: needs a higher plan" },
  { "upgrade your plan", D, "Codex CLI" },
  { "add funds", D, "Claude Code: Add funds" },
  { "quota will reset", D, "gemini-cli TerminalQuotaError" },
  { "daily quota", D, "gemini-cli: a daily quota is terminal" },
  { "-per-day", D, "OpenRouter free-models-per-day" },
  { "exceeded your current quota", S, "OpenAI insufficient_quota" },
  { "quota exceeded. check your plan", D, "Codex (codex-acp 0.16.0): a response.failed insufficient_quota" },
  { "usage_limit_exceeded", D, "Codex's codex_error_info for a usage limit" },
  { "per day", S, "a daily allowance" },
  { "payment required", S, "HTTP 402" },
};

static const Phrase cancelled_phrases[] = {
  { "request cancelled", S, "client aborts" },
  { "request canceled", S, "client aborts" },
  { "cancelled by user", S, "client aborts" },
  { "canceled by user", S, "client aborts" },
  { "interrupted by user", S, "Claude Code: Interrupted by user" },
  { "aborted by user", S, "client aborts" },
  { "user aborted", S, "client aborts" },
  { "stopped by user", S, "client aborts" },
  { "operation was cancelled", S, "GIO" },
  { "operation was canceled", S, "client aborts" },
  { "request was aborted", S, "Anthropic SDK APIUserAbortError" },
  { "operation aborted", S, "Claude Code after a Stop" },
};

static const Phrase auth_phrases[] = {
  { "invalid x-api-key", S, "Anthropic 401" },
  { "invalid api key", S, "API keys" },
  { "incorrect api key", S, "OpenAI 401" },
  { "api key not valid", S, "Google 400 API_KEY_INVALID" },
  { "missing api key", S, "API keys" },
  { "authentication failed", S, "auth" },
  { "failed to authenticate", S, "Claude Code" },
  { "invalid authentication", S, "Anthropic 401" },
  { "unauthenticated", S, "Google UNAUTHENTICATED" },
  { "invalid bearer", S, "bearer tokens" },
  { "oauth token has expired", S, "Claude Code OAuth" },
  { "token has expired", S, "OAuth" },
  { "token expired", S, "OAuth" },
  { "invalid oauth token", S, "Claude Code OAuth" },
  { "please run /login", S, "Claude Code" },
  { "unauthorized", S, "HTTP 401" },
};

static const Phrase permission_phrases[] = {
  { "permission denied", S, "403 and EACCES" },
  { "do not have permission", S, "Anthropic 403" },
  { "does not have permission", S, "Anthropic 403" },
  { "don't have access", S, "Bedrock AccessDeniedException" },
  { "do not have access", S, "access control" },
  { "does not have access", S, "access control" },
  { "access denied", S, "access control" },
  { "access is denied", S, "Bedrock model access" },
  { "not authorized to", S, "AWS IAM" },
  { "forbidden", W, "HTTP 403" },
};

static const Phrase bad_request_phrases[] = {
  { "must be reduced in order to run", D, "OpenAI: a request above the whole per-minute limit" },
  { "prompt is too long", S, "Anthropic invalid_request_error" },
  { "maximum context length", S, "OpenAI context_length_exceeded" },
  { "context length", S, "context windows" },
  { "context window", S, "context windows" },
  { "context limit", S, "Anthropic" },
  { "conversation too long", S, "Claude" },
  { "maximum allowed number of output tokens", S, "Anthropic max_tokens" },
  { "output token maximum", S, "Claude Code" },
  { "maximum tokens you requested exceed", S, "Bedrock ValidationException" },
  { "content management policy", S, "Azure OpenAI content_filter" },
  { "content filtering", S, "Azure OpenAI content_filter" },
  { "try pulling it first", S, "Ollama 404 model not found" },
  { "model not found", S, "model ids" },
  { "model identifier is invalid", S, "Bedrock ValidationException" },
  { "with on-demand throughput isn", S, "Bedrock ValidationException" },
  { "malformed input request", S, "Bedrock ValidationException" },
  { "reformat your input", S, "Bedrock ValidationException" },
  { "request too large", S, "413" },
  { "request entity too large", S, "413" },
  { "validation error", S, "validation" },
  { "unprocessable", S, "422" },
  { "bad request", W, "HTTP 400" },
  { "invalid request", W, "HTTP 400" },
  { "malformed", W, "HTTP 400" },
};

/* Failures no retry fixes that no reason names: fail closed. */
static const Phrase unknown_phrases[] = {
  { "certificate verify failed", D, "OpenSSL: a certificate the client does not trust" },
  { "self-signed certificate", D, "OpenSSL" },
  { "unable to get local issuer certificate", D, "OpenSSL" },
  { "no such host", D, "Go net: the name does not exist" },
  { "name or service not known", D, "glibc EAI_NONAME" },
  { "nodename nor servname", D, "BSD EAI_NONAME" },
  { "enotfound", D, "Node getaddrinfo ENOTFOUND" },
};

static const Phrase capacity_phrases[] = {
  { "overloaded", S, "Anthropic, OpenAI and Google overload messages" },
  { "over capacity", S, "capacity" },
  { "capacity exceeded", S, "Mistral: service tier capacity exceeded" },
  { "at capacity", S, "capacity" },
  { "no capacity available", S, "gemini-cli MODEL_CAPACITY_EXHAUSTED" },
  { "no non-exhausted", S, "account-pooling gateways" },
  { "high demand", S, "Google 503 UNAVAILABLE, Codex" },
  { "unable to process your request", S, "Bedrock ServiceUnavailableException" },
  { "service unavailable", S, "HTTP 503" },
  { "temporarily unavailable", S, "HTTP 503" },
  { "server is busy", S, "capacity" },
  { "too many connections", S, "Bedrock 503" },
  { "reset reason: overflow", S, "Envoy circuit breaker overflow" },
};

static const Phrase rate_limit_phrases[] = {
  { "rate limit reached", D, "OpenAI, Groq and Claude Code 429" },
  { "rate limit exceeded", D, "OpenRouter and gateways 429" },
  { "exceeded token rate limit", D, "Azure OpenAI 429" },
  { "exceeded call rate limit", D, "Azure OpenAI 429" },
  { "temporarily rate-limited", D, "OpenRouter upstream 429" },
  { "rate limit", S, "429" },
  { "rate-limit", S, "429" },
  { "rate limited", S, "429" },
  { "ratelimit", S, "429" },
  { "too many requests", S, "HTTP 429" },
  { "too many tokens", S, "Bedrock ThrottlingException" },
  { "throttl", S, "AWS throttling" },
  { "slow down", S, "429" },
  { "quota exceeded for", S, "Google per-minute quotas" },
  { "resource exhausted", S, "Vertex AI 429" },
  { "resource has been exhausted", S, "Gemini API 429" },
  { "per minute", S, "per-minute limits" },
  { "tokens per min", S, "OpenAI TPM" },
  { "requests per min", S, "OpenAI RPM" },
};

static const Phrase timeout_phrases[] = {
  { "timed out", S, "timeouts" },
  { "deadline exceeded", S, "gRPC DEADLINE_EXCEEDED" },
  { "took too long", S, "timeouts" },
  { "gateway time-out", S, "nginx 504" },
  { "gateway timeout", S, "HTTP 504" },
  { "timeout", W, "timeouts" },
};

static const Phrase transport_phrases[] = {
  { "connection reset", S, "ECONNRESET" },
  { "connection refused", S, "ECONNREFUSED" },
  { "actively refused", S, "Windows WSAECONNREFUSED (10061)" },
  { "connection aborted", S, "ECONNABORTED" },
  { "broken pipe", S, "EPIPE" },
  { "socket hang up", S, "Node http" },
  { "unexpected eof", S, "TLS and HTTP readers" },
  { "premature close", S, "Node streams" },
  { "premature eof", S, "HTTP readers" },
  { "connection closed", S, "transport" },
  { "connection was closed", S, "Bun fetch: The socket connection was closed unexpectedly" },
  { "closed unexpectedly", S, "Bun fetch, GLib TLS" },
  { "connection terminated", S, "libsoup" },
  { "connection error", S, "OpenAI and Anthropic SDK APIConnectionError" },
  { "connection lost", S, "transport" },
  { "network error", S, "transport" },
  { "network is unreachable", S, "ENETUNREACH" },
  { "no route to host", S, "EHOSTUNREACH" },
  { "temporary failure in name resolution", S, "glibc EAI_AGAIN" },
  { "fetch failed", S, "undici" },
  { "other side closed", S, "undici" },
  { "upstream connect error", S, "Envoy" },
  { "disconnect/reset before headers", S, "Envoy" },
  { "upstream_reset", S, "Envoy access log" },
  { "socket disconnected", S, "Node TLS" },
  { "stream disconnected", S, "Codex CLI: stream disconnected before completion" },
  { "stream closed before", S, "Codex CLI" },
  { "error sending request", S, "reqwest" },
  { "error decoding", S, "reqwest" },
  { "peer closed connection", S, "httpx/h11 RemoteProtocolError" },
  { "incomplete chunked read", S, "httpx/h11" },
  { "server disconnected", S, "httpx and aiohttp" },
  { "cannot connect to host", S, "aiohttp ClientConnectorError" },
  { "failed to establish a new connection", S, "urllib3 NewConnectionError" },
  { "all connection attempts failed", S, "httpx ConnectError" },
  { "forcibly closed", S, "Windows WSAECONNRESET (10054)" },
  { "remote end closed", S, "Python http.client" },
  { "connect call failed", S, "asyncio" },
  { "failed to connect", S, "transport" },
};

static const Phrase empty_phrases[] = {
  { "empty response", S, "empty answers" },
  { "empty model response", S, "empty answers" },
  { "response was empty", S, "empty answers" },
  { "returned no content", S, "empty answers" },
  { "no content in the response", S, "empty answers" },
  { "empty completion", S, "empty answers" },
  { "without valid content", S, "gemini-cli InvalidStreamError" },
};

static const Phrase server_phrases[] = {
  { "internal server error", S, "HTTP 500" },
  { "bad gateway", S, "HTTP 502" },
  { "an error occurred while processing your request", S, "OpenAI server_error" },
  { "server had an error", S, "OpenAI server_error" },
  { "upstream error", S, "gateways" },
  { "internal error", S, "server errors" },
  { "server error", W, "server errors" },
};

#define TABLE(reason, rows) { reason, rows, G_N_ELEMENTS (rows) }

/* In the order a tie is broken: what never retries first. */
static const struct {
  MendReason    reason;
  const Phrase *rows;
  gsize         n_rows;
} phrase_tables[] = {
  TABLE (MEND_REASON_USAGE_LIMIT, usage_limit_phrases),
  TABLE (MEND_REASON_CANCELLED, cancelled_phrases),
  TABLE (MEND_REASON_AUTH, auth_phrases),
  TABLE (MEND_REASON_PERMISSION, permission_phrases),
  TABLE (MEND_REASON_BAD_REQUEST, bad_request_phrases),
  TABLE (MEND_REASON_UNKNOWN, unknown_phrases),
  TABLE (MEND_REASON_CAPACITY, capacity_phrases),
  TABLE (MEND_REASON_RATE_LIMIT, rate_limit_phrases),
  TABLE (MEND_REASON_TIMEOUT, timeout_phrases),
  TABLE (MEND_REASON_TRANSPORT, transport_phrases),
  TABLE (MEND_REASON_EMPTY, empty_phrases),
  TABLE (MEND_REASON_SERVER, server_phrases),
};

typedef struct
{
  const char       *token;
  MendReason        reason;
  MendEvidenceRank  rank;
  gboolean          exact_case;  /* Google's all-caps statuses only */
  const char       *source;
} Code;

static const Code codes[] = {
  { "overloaded_error", MEND_REASON_CAPACITY, C, FALSE, "Anthropic error type" },
  { "server_is_overloaded", MEND_REASON_CAPACITY, C, FALSE, "OpenAI Responses error code" },
  { "service_unavailable", MEND_REASON_CAPACITY, C, FALSE, "error code" },
  { "UNAVAILABLE", MEND_REASON_CAPACITY, C, TRUE, "google.rpc.Code 14" },
  { "MODEL_CAPACITY_EXHAUSTED", MEND_REASON_CAPACITY, C, TRUE, "gemini-cli ErrorInfo reason" },
  { "ServiceUnavailableException", MEND_REASON_CAPACITY, C, FALSE, "AWS, retried by its SDKs" },
  { "ModelNotReadyException", MEND_REASON_CAPACITY, C, FALSE, "Bedrock, retried by its SDKs" },
  { "rate_limit_error", MEND_REASON_RATE_LIMIT, C, FALSE, "Anthropic error type" },
  { "rate_limit_exceeded", MEND_REASON_RATE_LIMIT, C, FALSE, "OpenAI error code" },
  { "rate_limited", MEND_REASON_RATE_LIMIT, C, FALSE, "gateway error code" },
  { "too_many_requests", MEND_REASON_RATE_LIMIT, C, FALSE, "opencode retry.ts" },
  { "RESOURCE_EXHAUSTED", MEND_REASON_RATE_LIMIT, C, TRUE, "Google 429, retried by gemini-cli unless a daily quota" },
  { "RATE_LIMIT_EXCEEDED", MEND_REASON_RATE_LIMIT, C, TRUE, "Google ErrorInfo reason" },
  { "rateLimitExceeded", MEND_REASON_RATE_LIMIT, C, FALSE, "Google errors[].reason" },
  { "ThrottlingException", MEND_REASON_RATE_LIMIT, C, FALSE, "AWS, retried by its SDKs" },
  { "throttling_error", MEND_REASON_RATE_LIMIT, C, FALSE, "litellm proxy" },
  { "insufficient_quota", MEND_REASON_USAGE_LIMIT, C, FALSE, "OpenAI: plan or balance used up" },
  { "billing_error", MEND_REASON_USAGE_LIMIT, C, FALSE, "Anthropic error type" },
  { "billing_hard_limit_reached", MEND_REASON_USAGE_LIMIT, C, FALSE, "OpenAI error code" },
  { "billing_not_active", MEND_REASON_USAGE_LIMIT, C, FALSE, "OpenAI error code" },
  { "QUOTA_EXHAUSTED", MEND_REASON_USAGE_LIMIT, C, TRUE, "gemini-cli: terminal quota" },
  { "INSUFFICIENT_G1_CREDITS_BALANCE", MEND_REASON_USAGE_LIMIT, C, TRUE, "gemini-cli: terminal quota" },
  { "FreeUsageLimitError", MEND_REASON_USAGE_LIMIT, C, FALSE, "opencode retry.ts" },
  { "usage_limit_reached", MEND_REASON_USAGE_LIMIT, C, FALSE, "Codex CLI" },
  { "BudgetExceededError", MEND_REASON_USAGE_LIMIT, C, FALSE, "litellm budgets" },
  { "authentication_error", MEND_REASON_AUTH, C, FALSE, "Anthropic error type" },
  { "invalid_api_key", MEND_REASON_AUTH, C, FALSE, "OpenAI error code" },
  { "UNAUTHENTICATED", MEND_REASON_AUTH, C, TRUE, "google.rpc.Code 16" },
  { "AuthenticationError", MEND_REASON_AUTH, C, FALSE, "SDK error class, never retried" },
  { "UnrecognizedClientException", MEND_REASON_AUTH, C, FALSE, "AWS" },
  { "ExpiredTokenException", MEND_REASON_AUTH, C, FALSE, "AWS" },
  { "permission_error", MEND_REASON_PERMISSION, C, FALSE, "Anthropic error type" },
  { "PERMISSION_DENIED", MEND_REASON_PERMISSION, C, TRUE, "google.rpc.Code 7" },
  { "AccessDeniedException", MEND_REASON_PERMISSION, C, FALSE, "AWS, never retried" },
  { "PermissionDeniedError", MEND_REASON_PERMISSION, C, FALSE, "SDK error class, never retried" },
  { "not_found_error", MEND_REASON_BAD_REQUEST, C, FALSE, "Anthropic error type" },
  { "request_too_large", MEND_REASON_BAD_REQUEST, C, FALSE, "Anthropic error type" },
  { "context_length_exceeded", MEND_REASON_BAD_REQUEST, C, FALSE, "OpenAI error code" },
  { "model_not_found", MEND_REASON_BAD_REQUEST, C, FALSE, "OpenAI error code" },
  { "content_filter", MEND_REASON_BAD_REQUEST, C, FALSE, "Azure OpenAI error code" },
  { "ResponsibleAIPolicyViolation", MEND_REASON_BAD_REQUEST, C, FALSE, "Azure OpenAI inner error" },
  { "ValidationException", MEND_REASON_BAD_REQUEST, C, FALSE, "AWS, never retried" },
  { "ResourceNotFoundException", MEND_REASON_BAD_REQUEST, C, FALSE, "AWS" },
  { "ContextWindowExceededError", MEND_REASON_BAD_REQUEST, C, FALSE, "litellm, never retried by aider" },
  { "ContentPolicyViolationError", MEND_REASON_BAD_REQUEST, C, FALSE, "litellm" },
  { "INVALID_ARGUMENT", MEND_REASON_BAD_REQUEST, C, TRUE, "google.rpc.Code 3" },
  { "FAILED_PRECONDITION", MEND_REASON_BAD_REQUEST, C, TRUE, "google.rpc.Code 9" },
  { "NOT_FOUND", MEND_REASON_BAD_REQUEST, C, TRUE, "google.rpc.Code 5" },
  { "timeout_error", MEND_REASON_TIMEOUT, C, FALSE, "Anthropic error type" },
  { "DEADLINE_EXCEEDED", MEND_REASON_TIMEOUT, C, TRUE, "google.rpc.Code 4" },
  { "ETIMEDOUT", MEND_REASON_TIMEOUT, C, TRUE, "Node errno" },
  { "TimeoutError", MEND_REASON_TIMEOUT, C, FALSE, "Python and DOM timeouts" },
  { "APITimeoutError", MEND_REASON_TIMEOUT, C, FALSE, "openai-python, retried" },
  { "APIConnectionTimeoutError", MEND_REASON_TIMEOUT, C, FALSE, "anthropic SDK, retried" },
  { "ReadTimeout", MEND_REASON_TIMEOUT, C, FALSE, "httpx, retried by aider" },
  { "ConnectTimeout", MEND_REASON_TIMEOUT, C, FALSE, "httpx" },
  { "ECONNRESET", MEND_REASON_TRANSPORT, C, TRUE, "Node errno" },
  { "ECONNREFUSED", MEND_REASON_TRANSPORT, C, TRUE, "Node errno" },
  { "ECONNABORTED", MEND_REASON_TRANSPORT, C, TRUE, "Node errno" },
  { "EPIPE", MEND_REASON_TRANSPORT, C, TRUE, "Node errno" },
  { "EAI_AGAIN", MEND_REASON_TRANSPORT, C, TRUE, "getaddrinfo: a temporary failure" },
  { "ENETUNREACH", MEND_REASON_TRANSPORT, C, TRUE, "Node errno" },
  { "EHOSTUNREACH", MEND_REASON_TRANSPORT, C, TRUE, "Node errno" },
  { "UND_ERR_SOCKET", MEND_REASON_TRANSPORT, C, TRUE, "undici" },
  { "ERR_STREAM_PREMATURE_CLOSE", MEND_REASON_TRANSPORT, C, TRUE, "Node streams" },
  { "RemoteProtocolError", MEND_REASON_TRANSPORT, C, FALSE, "httpx, retried by aider" },
  { "ClientConnectorError", MEND_REASON_TRANSPORT, C, FALSE, "aiohttp" },
  { "ServerDisconnectedError", MEND_REASON_TRANSPORT, C, FALSE, "aiohttp" },
  { "ConnectionResetError", MEND_REASON_TRANSPORT, C, FALSE, "Python" },
  { "ConnectionRefusedError", MEND_REASON_TRANSPORT, C, FALSE, "Python" },
  { "ConnectionAbortedError", MEND_REASON_TRANSPORT, C, FALSE, "Python" },
  { "BrokenPipeError", MEND_REASON_TRANSPORT, C, FALSE, "Python" },
  { "INTERNAL", MEND_REASON_SERVER, C, TRUE, "google.rpc.Code 13" },
  { "internal_error", MEND_REASON_SERVER, C, FALSE, "error code" },
  /* Codes a wrapper puts on anything: the message's words outrank them. */
  { "invalid_request_error", MEND_REASON_BAD_REQUEST, G, FALSE, "Anthropic and OpenAI catch-all type" },
  { "BadRequestError", MEND_REASON_BAD_REQUEST, G, FALSE, "SDK error class" },
  { "NotFoundError", MEND_REASON_BAD_REQUEST, G, FALSE, "SDK error class" },
  { "UnprocessableEntityError", MEND_REASON_BAD_REQUEST, G, FALSE, "SDK error class" },
  { "api_error", MEND_REASON_SERVER, G, FALSE, "Anthropic catch-all type" },
  { "server_error", MEND_REASON_SERVER, G, FALSE, "OpenAI catch-all type" },
  { "InternalServerError", MEND_REASON_SERVER, G, FALSE, "SDK error class, retried" },
  { "BadGatewayError", MEND_REASON_SERVER, G, FALSE, "litellm" },
  { "ServiceUnavailableError", MEND_REASON_CAPACITY, G, FALSE, "litellm, retried by aider" },
  { "RateLimitError", MEND_REASON_RATE_LIMIT, G, FALSE, "SDK error class, retried" },
  { "RouterRateLimitError", MEND_REASON_RATE_LIMIT, G, FALSE, "litellm, retried by aider" },
  { "APIConnectionError", MEND_REASON_TRANSPORT, G, FALSE, "SDK error class, retried" },
  { "ConnectError", MEND_REASON_TRANSPORT, G, FALSE, "httpx, retried by aider" },
  { "Timeout", MEND_REASON_TIMEOUT, G, FALSE, "litellm.Timeout, retried by aider" },
};

/* What never retries first: a tie between two pieces of evidence of the
 * same rank never ends in a retry that the other forbids. */
static int
safety (MendReason reason)
{
  for (guint i = 0; i < G_N_ELEMENTS (phrase_tables); i++)
    if (phrase_tables[i].reason == reason)
      return (int) i;

  return G_N_ELEMENTS (phrase_tables);
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
} Weighing;

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

/* Google quota ids: a per-day quota is terminal, a per-minute one resets
 * (gemini-cli googleQuotaErrors.ts checks the daily one first). */
static void
weigh_quota_id (Weighing   *w,
                const char *token,
                gsize       len)
{
  g_autofree char *id = g_strndup (token, len);

  if (strstr (id, "PerDay") != NULL)
    weigh (w, MEND_REASON_USAGE_LIMIT, MEND_EVIDENCE_CODE,
           g_strdup_printf (_("quota id “%s”: a per-day quota (%s)"), id,
                            "gemini-cli googleQuotaErrors.ts"));
  else if (strstr (id, "PerMinute") != NULL)
    weigh (w, MEND_REASON_RATE_LIMIT, MEND_EVIDENCE_CODE,
           g_strdup_printf (_("quota id “%s”: a per-minute quota (%s)"), id,
                            "gemini-cli googleQuotaErrors.ts"));
}

static void
weigh_codes (Weighing   *w,
             const char *text)
{
  const char *p = text;

  while (*p != '\0')
    {
      const char *start;
      gsize len;

      while (*p != '\0' && !is_token_char (*p))
        p++;
      start = p;
      while (is_token_char (*p))
        p++;
      len = p - start;
      if (len < 4)
        continue;

      weigh_quota_id (w, start, len);
      for (guint i = 0; i < G_N_ELEMENTS (codes); i++)
        {
          const Code *code = &codes[i];

          if (strlen (code->token) != len)
            continue;
          if (code->exact_case ? strncmp (start, code->token, len) != 0
                               : g_ascii_strncasecmp (start, code->token, len) != 0)
            continue;

          weigh (w, code->reason, code->rank,
                 g_strdup_printf (_("provider code “%s” (%s)"), code->token, code->source));
          break;
        }
    }
}

static void
weigh_phrases (Weighing   *w,
               const char *lower)
{
  for (guint t = 0; t < G_N_ELEMENTS (phrase_tables); t++)
    for (gsize i = 0; i < phrase_tables[t].n_rows; i++)
      {
        const Phrase *row = &phrase_tables[t].rows[i];

        if (strstr (lower, row->needle) != NULL)
          weigh (w, phrase_tables[t].reason, row->rank,
                 g_strdup_printf (_("words “%s” (%s)"), row->needle, row->source));
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

char *
mend_classifier_normalize (const char *text)
{
  g_autofree char *lower = g_ascii_strdown (text, -1);
  GString *out = g_string_sized_new (strlen (lower));

  for (const char *p = lower; *p != '\0'; )
    {
      if (g_str_has_prefix (p, "http://") || g_str_has_prefix (p, "https://"))
        {
          /* "…/account/billing" in a link says nothing about the error. */
          while (*p != '\0' && !g_ascii_isspace (*p) && *p != '"' && *p != '\'')
            p++;
          g_string_append_c (out, ' ');
          continue;
        }
      if (g_ascii_isspace (*p))
        {
          while (g_ascii_isspace (*p))
            p++;
          g_string_append_c (out, ' ');
          continue;
        }
      g_string_append_c (out, *p++);
    }

  return g_string_free (out, FALSE);
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

void
mend_classifier_classify (const char  *text,
                          guint        status,
                          gboolean     status_is_http,
                          MendClassification *verdict)
{
  g_autofree char *lower = mend_classifier_normalize (text);
  Weighing w = { MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL,
                 MEND_REASON_UNKNOWN, MEND_EVIDENCE_NONE, NULL, FALSE, 0, NULL };

  weigh_codes (&w, text);
  weigh_phrases (&w, lower);
  weigh_request_size (&w, lower);

  if (!status_is_http)
    status = mend_classifier_status_in_text (lower);
  if (status != 0 && mend_classifier_reason_for_status (status) != MEND_REASON_UNKNOWN)
    weigh (&w, mend_classifier_reason_for_status (status), MEND_EVIDENCE_STATUS,
           status_is_http ? g_strdup_printf (_("HTTP status %u"), status)
                          : g_strdup_printf (_("status %u in the text"), status));

  /* A bad request whose words say the key or access was refused is that
   * (Google answers an invalid key with 400 INVALID_ARGUMENT). */
  if (w.reason == MEND_REASON_BAD_REQUEST && w.refused)
    {
      g_free (w.rule);
      w.rule = g_strdup_printf (_("%s, over a bad request"), w.refused_rule);
      w.reason = w.refused_reason;
    }
  g_free (w.refused_rule);

  if (w.rule != NULL && w.other_rule != NULL && w.other_reason != w.reason)
    {
      char *rule = g_strdup_printf (_("%s, over %s"), w.rule, w.other_rule);

      g_free (w.rule);
      w.rule = rule;
    }
  g_free (w.other_rule);

  verdict->reason = w.reason;
  verdict->rank = w.rank;
  verdict->rule = w.rule != NULL ? w.rule : g_strdup (_("nothing known: fails closed"));
}

void
mend_classification_clear (MendClassification *verdict)
{
  g_clear_pointer (&verdict->rule, g_free);
  verdict->reason = MEND_REASON_UNKNOWN;
  verdict->rank = MEND_EVIDENCE_NONE;
}

MendReason
mend_classifier_reason_for_status (guint status)
{
  switch (status)
    {
    case 503:
    case 529:
      return MEND_REASON_CAPACITY;
    case 429:
      return MEND_REASON_RATE_LIMIT;
    case 408:
    case 504:
    case 524:
      return MEND_REASON_TIMEOUT;
    case 500:
    case 502:
    case 409:
    case 520:
    case 521:
    case 522:
    case 523:
      return MEND_REASON_SERVER;
    case 401:
    case 407:
      return MEND_REASON_AUTH;
    case 403:
      return MEND_REASON_PERMISSION;
    case 402:
      return MEND_REASON_USAGE_LIMIT;
    case 499:
      return MEND_REASON_CANCELLED;
    default:
      if (status >= 400 && status < 500)
        return MEND_REASON_BAD_REQUEST;
      return MEND_REASON_UNKNOWN;
    }
}
