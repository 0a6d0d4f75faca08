/**
 * Pinned versions of the local infrastructure. Everything that downloads, the compose file, the
 * Kubernetes manifests and the testcontainers images read these (or are checked against them by a
 * test), so one edit here moves the whole project to a new release.
 */
export const KAFKA_VERSION = '3.9.1';
export const KAFKA_SCALA_VERSION = '2.13';
/** Kafka 3.9's POM carries no SLF4J binding; reload4j is the binding Kafka's own distribution ships. */
export const SLF4J_RELOAD4J_VERSION = '1.7.36';

export const ELASTICSEARCH_VERSION = '8.19.4';
/** SHA-512 of `elasticsearch-8.19.4.zip` (integ-test-zip), as published beside it on Maven Central. */
export const ELASTICSEARCH_ZIP_SHA512 =
  '51d6666aff2064bd50ec02a6aaf2f14d09366a8ec27adb474b3f555dbc99f8d71361c81ae09de5216b64aefe9c8cfc687dd5d7768490905f39f53cc6e28c79d7';

/** The maven-dependency-plugin release used to fetch artefacts, pinned so Maven never picks one. */
export const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

/** Container images with the same versions, for people who have a container runtime. */
export const KAFKA_IMAGE = `apache/kafka:${KAFKA_VERSION}`;
export const ELASTICSEARCH_IMAGE = `docker.elastic.co/elasticsearch/elasticsearch:${ELASTICSEARCH_VERSION}`;
