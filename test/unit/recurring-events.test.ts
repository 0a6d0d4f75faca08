import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { describeRecurringEvents } from '../harness/recurring-events.js';

describeRecurringEvents('the embedded datastore', async () => {
  const datastore = new EmbeddedDatastore('neonrec');
  return { datastore, cleanup: () => datastore.destroy() };
});
