/**
 * Small DOM and formatting helpers. Text from the API only ever goes in through textContent and
 * attributes, never as markup, and links only to http(s) addresses.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * @typedef {Node | string | number | null | undefined | false} Child
 * @typedef {Record<string, string | number | boolean | null | undefined>} Attributes
 */

/**
 * @param {Element} element
 * @param {Attributes} attributes
 * @param {Child[]} children
 */
function fill(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'object' ? child : String(child));
  }
}

/**
 * An HTML element: `h('a', { href, class: 'x' }, 'text', otherNode)`.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  fill(element, attributes, children);
  return element;
}

/**
 * An SVG element.
 * @param {string} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {SVGElement}
 */
export function s(tag, attributes = {}, ...children) {
  const element = /** @type {SVGElement} */ (document.createElementNS(SVG_NS, tag));
  fill(element, attributes, children);
  return element;
}

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element;
}

/**
 * Shows an error message (and the API's list of problems) in `element`, or hides it with null.
 * @param {HTMLElement} element
 * @param {string | null} message
 * @param {string[]} [problems]
 */
export function showError(element, message, problems = []) {
  element.replaceChildren();
  element.hidden = message === null;
  if (message === null) return;
  element.append(h('span', { class: 'error-text' }, message));
  if (problems.length > 1) element.append(h('ul', {}, ...problems.map((p) => h('li', {}, p))));
}

/**
 * The address when it is an http(s) URL; null otherwise (a `javascript:` URL in a feed must not
 * become a link).
 * @param {unknown} url
 * @returns {string | null}
 */
export function safeHref(url) {
  if (typeof url !== 'string') return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/**
 * A link that opens a source outside the dashboard.
 * @param {string} href
 * @param {Child} text
 * @param {Attributes} [attributes]
 */
export function externalLink(href, text, attributes = {}) {
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer', ...attributes }, text);
}

/** @param {string} url */
export function hostOf(url) {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return url;
  }
}

/**
 * @param {string | number | null | undefined} value ISO 8601 or epoch milliseconds
 * @returns {Date | null}
 */
export function toDate(value) {
  if (value === null || value === undefined || value === '') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** `2025-01-09` (UTC). @param {string | number | null | undefined} value */
export function formatDay(value) {
  const date = toDate(value);
  return date ? date.toISOString().slice(0, 10) : '—';
}

/** `2025-01-09 14:30 UTC`; day-only times (00:00) as the day alone. @param {string | number | null | undefined} value */
export function formatTime(value) {
  const date = toDate(value);
  if (!date) return '—';
  const iso = date.toISOString();
  return iso.slice(11, 16) === '00:00' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** `14:30:05 UTC`. @param {number} ms */
export function formatClock(ms) {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/**
 * A `<time>` element for a timestamp.
 * @param {string | number | null | undefined} value
 * @param {(value: string | number | null | undefined) => string} [format]
 */
export function timeElement(value, format = formatTime) {
  const date = toDate(value);
  return h('time', date ? { datetime: date.toISOString() } : {}, format(value));
}

const numberFormat = new Intl.NumberFormat('en');

/** @param {unknown} value */
export function formatCount(value) {
  return typeof value === 'number' && Number.isFinite(value) ? numberFormat.format(value) : '—';
}

/** @param {unknown} value @param {number} [digits] */
export function formatScore(value, digits = 2) {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '—';
}

/**
 * Reads a number field that may be missing.
 * @param {unknown} value
 * @returns {number | null}
 */
export function num(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Whether the user asked for less motion (animations and smooth scrolling are then skipped). */
export function reducedMotion() {
  return window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}
