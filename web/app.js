/**
 * The dashboard's entry point: wires the panels together, asks for an API key when the API wants
 * one, and makes sure an unexpected failure shows a message instead of a broken page.
 */
import { apiKey, onUnauthorized, setApiKey } from './api.js';
import { AskPanel } from './ask.js';
import { byId, showError } from './dom.js';
import { EntityPanel } from './entity.js';
import { SpikePanel } from './spikes.js';
import { StatusStrip } from './status.js';

const pageError = byId('page-error');
window.addEventListener('error', (event) => {
  showError(pageError, `Something went wrong on this page: ${event.message}. Reloading may help.`);
});
window.addEventListener('unhandledrejection', (event) => {
  const reason = event.reason instanceof Error ? event.reason.message : String(event.reason);
  showError(pageError, `Something went wrong on this page: ${reason}. Reloading may help.`);
});

const status = new StatusStrip();
const entity = new EntityPanel();
const ask = new AskPanel();
let refreshTimer = 0;
const spikes = new SpikePanel(
  (chosen) => {
    const input = /** @type {HTMLInputElement} */ (byId('entity-q'));
    input.value = chosen.name;
    void entity.select(chosen, true);
  },
  (alert) => {
    // The entity on screen just changed state: redraw its bands (once for a burst of alerts).
    if (entity.current?.id !== alert.entity_id) return;
    window.clearTimeout(refreshTimer);
    refreshTimer = window.setTimeout(() => entity.reload(), 1000);
  },
);

const auth = byId('auth');
const authForm = /** @type {HTMLFormElement} */ (byId('auth-form'));
const authInput = /** @type {HTMLInputElement} */ (byId('auth-key'));
const authError = byId('auth-error');

/** Every call that answered 401 lands here: once the form is up, further 401s change nothing. */
onUnauthorized(() => {
  if (!auth.hidden) return;
  const hadKey = apiKey() !== null;
  setApiKey(null);
  spikes.stop();
  status.stop();
  auth.hidden = false;
  showError(authError, hadKey ? 'The API key was not accepted. Enter another one.' : null);
  authInput.focus();
});

authForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = authInput.value.trim();
  if (key === '') {
    showError(authError, 'Enter the API key first.');
    authInput.focus();
    return;
  }
  setApiKey(key);
  authInput.value = '';
  showError(authError, null);
  auth.hidden = true;
  // Everything that may have failed for want of a key is asked again.
  status.start();
  void spikes.start();
  entity.reload();
  ask.reload();
});

status.start();
void spikes.start();
