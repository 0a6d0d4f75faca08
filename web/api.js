/**
 * The query service's API, from the page's own origin: paths resolve against the page's address,
 * so the dashboard also works behind a proxy that mounts the service under a prefix.
 *
 * The API key (when the server wants one) is kept in sessionStorage: it lives as long as the tab
 * and is never written to disk by the page.
 */

const KEY_STORAGE = 'neon.apiKey';

/** An answer that was not a success, with the API's error code and message (or ours). */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status; 0 when the server could not be reached.
   * @param {string} code
   * @param {string} message
   * @param {string[]} [problems]
   */
  constructor(status, code, message, problems = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.problems = problems;
  }
}

/** @type {Set<() => void>} */
const unauthorizedListeners = new Set();

/** @param {() => void} listener called whenever an API call answers 401 */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
}

/** @returns {string | null} */
export function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    // Storage can be disabled (privacy settings); the page then asks on every load.
    return null;
  }
}

/** @param {string | null} key */
export function setApiKey(key) {
  try {
    if (key === null || key === '') sessionStorage.removeItem(KEY_STORAGE);
    else sessionStorage.setItem(KEY_STORAGE, key);
  } catch {
    // See apiKey().
  }
}

/**
 * @param {string} path e.g. `v1/spikes`
 * @param {Record<string, string | number | undefined | null>} [params] empty values are left out
 * @returns {URL}
 */
export function apiUrl(path, params = {}) {
  const url = new URL(path, document.baseURI);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  return url;
}

/**
 * GETs JSON. Non-2xx answers become ApiError with the API's `{error, message, problems}`; a 401 also
 * tells the listeners, so the page can ask for a key.
 * @param {string} path
 * @param {Record<string, string | number | undefined | null>} [params]
 * @param {{ signal?: AbortSignal }} [options]
 * @returns {Promise<any>}
 */
export async function getJson(path, params = {}, options = {}) {
  const key = apiKey();
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  /** @type {Response} */
  let response;
  try {
    response = await fetch(apiUrl(path, params), {
      headers,
      ...(options.signal ? { signal: options.signal } : {}),
      cache: 'no-store',
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'network', 'The server could not be reached. Is the query service running?');
  }
  if (response.ok) return response.json();
  /** @type {{ error?: unknown, message?: unknown, problems?: unknown }} */
  let body = {};
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's error page): fall back to the status line below.
  }
  const code = typeof body.error === 'string' ? body.error : `http_${response.status}`;
  const message =
    typeof body.message === 'string' && body.message !== ''
      ? body.message
      : `The server answered ${response.status} ${response.statusText}`.trim();
  const problems = Array.isArray(body.problems) ? body.problems.map(String) : [];
  if (response.status === 401) for (const listener of unauthorizedListeners) listener();
  throw new ApiError(response.status, code, message, problems);
}

/**
 * A call's answer, or `fallback(error)` when it failed for another reason than being cancelled.
 * @template T, F
 * @param {Promise<T>} call
 * @param {(error: unknown) => F} fallback
 * @returns {Promise<T | F>}
 */
export async function unlessAborted(call, fallback) {
  try {
    return await call;
  } catch (error) {
    if (isAbort(error)) throw error;
    return fallback(error);
  }
}

/** @param {unknown} error */
export function isAbort(error) {
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * The message to show for a failed call.
 * @param {unknown} error
 */
export function describeError(error) {
  if (error instanceof ApiError) {
    if (error.status === 401) return 'An API key is needed (see the form at the top).';
    if (error.status === 429) return `Too many requests: ${error.message}`;
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
