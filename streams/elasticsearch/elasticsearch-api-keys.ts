/**
 * Elasticsearch's API-key calls as `neon es-api-keys` uses them, and its refusals reduced to a
 * status and Elasticsearch's own reason, so the command decides what to do without the client.
 */
import { errors, type Client, type estypes } from '@elastic/elasticsearch';

/** The ids of the active API keys of that name. */
export async function activeApiKeyIds(es: Client, name: string): Promise<string[]> {
  const found = await es.security.getApiKey({ name, active_only: true });
  return found.api_keys.map((k) => k.id);
}

export async function invalidateApiKeys(es: Client, ids: string[]): Promise<void> {
  await es.security.invalidateApiKey({ ids });
}

export async function createApiKey(
  es: Client,
  request: estypes.SecurityCreateApiKeyRequest,
): Promise<{ id: string; encoded: string }> {
  const key = await es.security.createApiKey(request);
  return { id: key.id, encoded: key.encoded };
}

/** A request Elasticsearch answered with an error status. */
export interface ElasticsearchRefusal {
  /** The HTTP status, when the client recorded one. */
  status: number | undefined;
  /** Elasticsearch's own words: the error's reason, else the first line of the message. */
  reason: string;
}

/** The refusal in an error the client threw for an error status; undefined for anything else. */
export function elasticsearchRefusal(error: unknown): ElasticsearchRefusal | undefined {
  if (!(error instanceof errors.ResponseError)) return undefined;
  return { status: error.meta.statusCode, reason: refusalReason(error) };
}

function refusalReason(error: errors.ResponseError): string {
  const body = error.meta.body as { error?: { reason?: unknown } | string } | string | undefined;
  const reason = typeof body === 'object' ? (typeof body.error === 'object' ? body.error.reason : body.error) : body;
  return typeof reason === 'string' && reason !== '' ? reason : (error.message.split('\n', 1)[0] ?? '');
}
