import { randomBytes } from 'node:crypto';

export interface KafkaServerSettings {
  port: number;
  controllerPort: number;
  logDirs: string;
}

/**
 * A single-node KRaft broker+controller on loopback. Replication factors are 1 because there is one
 * broker; topic auto-creation is off so that a misspelt topic fails loudly instead of appearing.
 */
export function renderServerProperties(settings: KafkaServerSettings): string {
  const lines: Record<string, string | number> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.voters': `1@127.0.0.1:${settings.controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${settings.port},CONTROLLER://127.0.0.1:${settings.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${settings.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': settings.logDirs,
    'num.partitions': 3,
    'default.replication.factor': 1,
    'min.insync.replicas': 1,
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'auto.create.topics.enable': 'false',
    'delete.topic.enable': 'true',
    // Consumer groups in tests and local runs should not sit out the 3 s default before assigning.
    'group.initial.rebalance.delay.ms': 0,
    'log.retention.hours': 168,
    'log.segment.bytes': 268_435_456,
    'log.retention.check.interval.ms': 300_000,
  };
  return `${Object.entries(lines)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n')}\n`;
}

/** Kafka logs through log4j 1 (reload4j); this keeps them in the instance's log directory. */
export function renderLog4jProperties(logsDir: string): string {
  return [
    'log4j.rootLogger=INFO, serverLog',
    'log4j.appender.serverLog=org.apache.log4j.RollingFileAppender',
    `log4j.appender.serverLog.File=${logsDir}/server.log`,
    'log4j.appender.serverLog.MaxFileSize=50MB',
    'log4j.appender.serverLog.MaxBackupIndex=3',
    'log4j.appender.serverLog.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.serverLog.layout.ConversionPattern=[%d] %p %m (%c)%n',
    'log4j.logger.kafka=INFO',
    'log4j.logger.org.apache.kafka=INFO',
    'log4j.logger.state.change.logger=WARN',
    'log4j.logger.kafka.request.logger=WARN',
    '',
  ].join('\n');
}

/**
 * A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (what StorageTool expects).
 * An id starting with '-' would be read by the tool's argument parser as an option (1 draw in 64), so
 * such draws are rejected, as Kafka's own Uuid.randomUuid does.
 */
export function newClusterId(drawBytes: (size: number) => Buffer = randomBytes): string {
  for (;;) {
    const id = drawBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** The Maven project whose runtime closure is the broker's classpath. */
export function renderKafkaRuntimePom(kafkaVersion: string, scalaVersion: string, slf4jVersion: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.neon-stream.infra</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_${scalaVersion}</artifactId>
      <version>${kafkaVersion}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-reload4j</artifactId>
      <version>${slf4jVersion}</version>
    </dependency>
  </dependencies>
</project>
`;
}
