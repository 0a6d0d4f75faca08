import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { describeDatastoreConformance } from '../harness/datastore-conformance.js';
import { freshIndex } from '../../devkit/fresh-names.js';
import { useLiveClients } from '../harness/live-clients.js';

const live = useLiveClients();

describeDatastoreConformance('real Elasticsearch', async () => {
  const datastore = new ElasticsearchDatastore({ es: live.es, prefix: freshIndex('neonq') });
  return { datastore, cleanup: () => datastore.destroy() };
});
