import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { describeDatastoreConformance } from '../harness/datastore-conformance.js';

describeDatastoreConformance('the embedded datastore', async () => {
  const datastore = new EmbeddedDatastore('neonq');
  return { datastore, cleanup: () => datastore.destroy() };
});
