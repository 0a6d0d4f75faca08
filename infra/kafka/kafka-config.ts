import { randomBytes } from 'node:crypto';
import { InfraError } from '../errors.js';

export interface KafkaServerSettings {
  port: number;
  controllerPort: number;
  logDirs: string;
  /** A secured broker (SCRAM logins, ACLs, optionally TLS); none: plaintext and open, as `neon infra up`. */
  security?: KafkaBrokerSecurity;
}

/** A SCRAM-SHA-512 login. Names and passwords are kept to `[A-Za-z0-9._-]`: they go into tool arguments and JAAS. */
export interface ScramLogin {
  name: string;
  password: string;
}

/**
 * How a secured local broker is locked down, the way a Strimzi cluster is: clients log in with
 * SCRAM-SHA-512 and may do only what ACLs allow (no ACL: denied). The logins exist from the first
 * start (created when the storage is formatted). `admin` is a super user, and the broker's own login.
 */
export interface KafkaBrokerSecurity {
  admin: ScramLogin;
  users: readonly ScramLogin[];
  /** A PKCS12 keystore with the broker's key and certificate: SASL_SSL instead of SASL_PLAINTEXT. */
  tls?: { keystoreFile: string; keystorePassword: string };
}

const SCRAM_TEXT = /^[A-Za-z0-9._-]+$/;

function scramLogins(security: KafkaBrokerSecurity): ScramLogin[] {
  const logins = [security.admin, ...security.users.filter((user) => user.name !== security.admin.name)];
  const bad = logins.filter(({ name, password }) => !SCRAM_TEXT.test(name) || !SCRAM_TEXT.test(password));
  if (bad.length > 0) {
    throw new InfraError(
      'invalid_config',
      `SCRAM login(s) ${bad.map((login) => `"${login.name}"`).join(', ')}: names and passwords must match [A-Za-z0-9._-]+`,
    );
  }
  return logins;
}

/** The storage tool's arguments that create every login of a secured broker at format time. */
export function renderScramFormatArguments(security: KafkaBrokerSecurity): string[] {
  return scramLogins(security).flatMap(({ name, password }) => [
    '--add-scram',
    `SCRAM-SHA-512=[name=${name},password=${password}]`,
  ]);
}

/**
 * The client listener of a secured broker: SASL (SCRAM-SHA-512) over TLS or plaintext, the
 * StandardAuthorizer denying whatever no ACL allows. The controller listener stays PLAINTEXT on
 * loopback (KRaft controllers cannot use SCRAM), so its principal, ANONYMOUS, must be a super user
 * for the broker and controller to talk under the authorizer.
 */
function securedListenerProperties(
  settings: KafkaServerSettings,
  security: KafkaBrokerSecurity,
): Record<string, string | number> {
  const protocol = security.tls ? 'SASL_SSL' : 'SASL_PLAINTEXT';
  const listener = protocol.toLowerCase();
  scramLogins(security); // validated: the admin's password goes into the JAAS line below
  const { admin, tls } = security;
  return {
    listeners: `${protocol}://127.0.0.1:${settings.port},CONTROLLER://127.0.0.1:${settings.controllerPort}`,
    'advertised.listeners': `${protocol}://127.0.0.1:${settings.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': protocol,
    'listener.security.protocol.map': `CONTROLLER:PLAINTEXT,${protocol}:${protocol}`,
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
    'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
    [`listener.name.${listener}.scram-sha-512.sasl.jaas.config`]: `org.apache.kafka.common.security.scram.ScramLoginModule required username="${admin.name}" password="${admin.password}";`,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'allow.everyone.if.no.acl.found': 'false',
    'super.users': `User:${admin.name};User:ANONYMOUS`,
    ...(tls
      ? {
          'ssl.keystore.type': 'PKCS12',
          'ssl.keystore.location': tls.keystoreFile,
          'ssl.keystore.password': tls.keystorePassword,
          // The broker's own (inter-broker) connections trust the CA kept in the same keystore.
          'ssl.truststore.type': 'PKCS12',
          'ssl.truststore.location': tls.keystoreFile,
          'ssl.truststore.password': tls.keystorePassword,
          'ssl.client.auth': 'none',
        }
      : {}),
  };
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
    ...(settings.security ? securedListenerProperties(settings, settings.security) : {}),
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
