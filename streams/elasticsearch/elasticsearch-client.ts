import { Client, type ClientOptions } from '@elastic/elasticsearch';
import type { ElasticsearchConnection } from '../../schemas/connection-config.js';

/** The client, named for the code above streams/ that holds one without importing the package. */
export type ElasticsearchClient = Client;

/**
 * The one place an Elasticsearch client is built. Credentials come from the connection (read from
 * the environment) and are revealed only here, at the last moment, never logged.
 */
export function createElasticsearchClient(
  connection: ElasticsearchConnection,
  options: { requestTimeoutMs?: number; maxRetries?: number } = {},
): Client {
  const clientOptions: ClientOptions = {
    node: connection.url,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    maxRetries: options.maxRetries ?? 3,
  };
  // A private CA (ECK's) is trusted in addition to the system's, never instead of verification.
  if (connection.caCertificate !== undefined) clientOptions.tls = { ca: connection.caCertificate };
  if (connection.apiKey) clientOptions.auth = { apiKey: connection.apiKey.reveal() };
  else if (connection.username !== undefined && connection.password)
    clientOptions.auth = { username: connection.username, password: connection.password.reveal() };
  return new Client(clientOptions);
}
