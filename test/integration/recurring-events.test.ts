import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { freshIndex } from '../../devkit/fresh-names.js';
import { useLiveClients } from '../harness/live-clients.js';
import { describeRecurringEvents } from '../harness/recurring-events.js';

const live = useLiveClients();

describeRecurringEvents('real Elasticsearch', async () => {
  const datastore = new ElasticsearchDatastore({ es: live.es, prefix: freshIndex('neonrec') });
  return { datastore, cleanup: () => datastore.destroy() };
});
