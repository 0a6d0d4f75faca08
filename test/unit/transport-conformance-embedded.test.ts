import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { describeTransportConformance } from '../harness/transport-conformance.js';

describeTransportConformance('the embedded transport', async () => {
  const transport = createEmbeddedTransport();
  return Promise.resolve({
    transport,
    freshTopic,
    freshGroup: freshTopic,
    topicConfigs: {
      notModelled:
        'in-process topics keep every record for the life of the process; retention and compaction are the operator’s, on the cluster',
    },
    sharedGroups: {
      notModelled: 'embedded mode runs each stage once per process, so a group never has a second member there',
    },
    patienceMs: 5000,
    quietMs: 300,
    cleanup: () => transport.close(),
  });
});
