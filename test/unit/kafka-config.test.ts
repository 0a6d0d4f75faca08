import { describe, expect, it } from 'vitest';
import {
  newClusterId,
  renderKafkaRuntimePom,
  renderLog4jProperties,
  renderScramFormatArguments,
  renderServerProperties,
  type KafkaBrokerSecurity,
} from '../../infra/kafka/kafka-config.js';

/** Parses a Java properties file of `key=value` lines, failing on a repeated key. */
function parseProperties(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    expect(eq, `line without '=': ${line}`).toBeGreaterThan(0);
    const key = line.slice(0, eq);
    expect(map.has(key), `duplicate key ${key}`).toBe(false);
    map.set(key, line.slice(eq + 1));
  }
  return map;
}

describe('renderServerProperties', () => {
  const text = renderServerProperties({ port: 19092, controllerPort: 19093, logDirs: '/data/kafka/logs' });
  const props = parseProperties(text);

  it('ends with a newline and has one key per line, each unique', () => {
    expect(text.endsWith('\n')).toBe(true);
    const keys = text
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0]);
    expect(new Set(keys).size).toBe(keys.length);
    expect(props.size).toBe(keys.length);
  });

  it('listens and advertises on 127.0.0.1 with the given ports', () => {
    expect(props.get('listeners')).toBe('PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    expect(props.get('advertised.listeners')).toBe('PLAINTEXT://127.0.0.1:19092');
    expect(props.get('controller.listener.names')).toBe('CONTROLLER');
    expect(props.get('listener.security.protocol.map')).toBe('CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT');
  });

  it('is a single-node KRaft broker and controller', () => {
    expect(props.get('process.roles')).toBe('broker,controller');
    expect(props.get('node.id')).toBe('1');
    expect(props.get('controller.quorum.voters')).toBe('1@127.0.0.1:19093');
  });

  it('uses replication factor 1 everywhere and disables topic auto-creation', () => {
    expect(props.get('default.replication.factor')).toBe('1');
    expect(props.get('offsets.topic.replication.factor')).toBe('1');
    expect(props.get('transaction.state.log.replication.factor')).toBe('1');
    expect(props.get('transaction.state.log.min.isr')).toBe('1');
    expect(props.get('min.insync.replicas')).toBe('1');
    expect(props.get('auto.create.topics.enable')).toBe('false');
  });

  it('writes the log directory', () => {
    expect(props.get('log.dirs')).toBe('/data/kafka/logs');
  });

  it('follows the ports it is given', () => {
    const other = parseProperties(renderServerProperties({ port: 9092, controllerPort: 9093, logDirs: '/x' }));
    expect(other.get('listeners')).toBe('PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093');
    expect(other.get('controller.quorum.voters')).toBe('1@127.0.0.1:9093');
    expect(other.get('log.dirs')).toBe('/x');
  });
});

describe('renderServerProperties for a secured broker', () => {
  const security: KafkaBrokerSecurity = {
    admin: { name: 'admin', password: 'admin-secret' },
    users: [{ name: 'neon-markup', password: 'markup-secret' }],
  };
  const settings = { port: 19092, controllerPort: 19093, logDirs: '/x' };

  it('leaves the open broker of `neon infra up` as it was: plaintext, no authorizer', () => {
    const props = parseProperties(renderServerProperties(settings));
    expect([...props.keys()].filter((key) => /sasl|ssl|authorizer|super\.users|acl/.test(key))).toEqual([]);
  });

  it('puts clients on SASL_PLAINTEXT with SCRAM-SHA-512, and denies what no ACL allows', () => {
    const props = parseProperties(renderServerProperties({ ...settings, security }));
    expect(props.get('listeners')).toBe('SASL_PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    expect(props.get('advertised.listeners')).toBe('SASL_PLAINTEXT://127.0.0.1:19092');
    expect(props.get('listener.security.protocol.map')).toBe('CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT');
    expect(props.get('inter.broker.listener.name')).toBe('SASL_PLAINTEXT');
    expect(props.get('sasl.enabled.mechanisms')).toBe('SCRAM-SHA-512');
    expect(props.get('sasl.mechanism.inter.broker.protocol')).toBe('SCRAM-SHA-512');
    expect(props.get('listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config')).toBe(
      'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";',
    );
    expect(props.get('authorizer.class.name')).toBe('org.apache.kafka.metadata.authorizer.StandardAuthorizer');
    expect(props.get('allow.everyone.if.no.acl.found')).toBe('false');
    // The controller listener stays PLAINTEXT (KRaft controllers cannot use SCRAM): its principal is ANONYMOUS.
    expect(props.get('super.users')).toBe('User:admin;User:ANONYMOUS');
    expect(props.has('ssl.keystore.location')).toBe(false);
  });

  it('uses SASL_SSL with the given keystore when TLS is asked for', () => {
    const tls = { keystoreFile: '/tmp/broker.p12', keystorePassword: 'store-secret' };
    const props = parseProperties(renderServerProperties({ ...settings, security: { ...security, tls } }));
    expect(props.get('listeners')).toBe('SASL_SSL://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    expect(props.get('listener.security.protocol.map')).toBe('CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL');
    expect(props.has('listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config')).toBe(true);
    expect(props.get('ssl.keystore.type')).toBe('PKCS12');
    expect(props.get('ssl.keystore.location')).toBe('/tmp/broker.p12');
    expect(props.get('ssl.keystore.password')).toBe('store-secret');
  });
});

describe('renderScramFormatArguments', () => {
  it('creates the admin and every user once, as SCRAM-SHA-512 logins', () => {
    const args = renderScramFormatArguments({
      admin: { name: 'admin', password: 'a1' },
      users: [
        { name: 'neon-markup', password: 'm-1' },
        { name: 'admin', password: 'a1' },
      ],
    });
    expect(args).toEqual([
      '--add-scram',
      'SCRAM-SHA-512=[name=admin,password=a1]',
      '--add-scram',
      'SCRAM-SHA-512=[name=neon-markup,password=m-1]',
    ]);
  });

  it('refuses names and passwords the tool or the JAAS line would misread', () => {
    expect(() =>
      renderScramFormatArguments({
        admin: { name: 'admin', password: 'x"; y' },
        users: [{ name: 'a,b', password: 'p' }],
      }),
    ).toThrow(/"admin", "a,b"/);
  });
});

describe('newClusterId', () => {
  it('is 22 characters of base64url (16 bytes, no padding)', () => {
    const id = newClusterId();
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(id, 'base64url')).toHaveLength(16);
  });

  it('differs between calls', () => {
    const ids = new Set(Array.from({ length: 20 }, () => newClusterId()));
    expect(ids.size).toBe(20);
  });

  it('never starts with "-", which the storage tool would parse as an option', () => {
    // 0xf8 → first base64url character '-'; the second draw is all zeros → 'AAAA…'.
    const draws = [Buffer.alloc(16, 0xf8), Buffer.alloc(16, 0)];
    const id = newClusterId(() => draws.shift() ?? Buffer.alloc(16, 1));
    expect(id).toBe('A'.repeat(22));
    expect(draws).toHaveLength(0);
  });
});

describe('renderKafkaRuntimePom', () => {
  const pom = renderKafkaRuntimePom('3.9.1', '2.13', '1.7.36');

  it('declares Kafka and the reload4j binding with the given versions', () => {
    expect(pom.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(pom).toContain('<artifactId>kafka_2.13</artifactId>');
    expect(pom).toMatch(
      /<groupId>org\.apache\.kafka<\/groupId>\s*<artifactId>kafka_2\.13<\/artifactId>\s*<version>3\.9\.1<\/version>/,
    );
    expect(pom).toMatch(
      /<groupId>org\.slf4j<\/groupId>\s*<artifactId>slf4j-reload4j<\/artifactId>\s*<version>1\.7\.36<\/version>/,
    );
    expect(pom).toContain('<packaging>pom</packaging>');
  });
});

describe('renderLog4jProperties', () => {
  it('writes the server log into the given directory', () => {
    const props = parseProperties(renderLog4jProperties('/var/lib/neon-stream/kafka/logs'));
    expect(props.get('log4j.appender.serverLog.File')).toBe('/var/lib/neon-stream/kafka/logs/server.log');
    expect(props.get('log4j.rootLogger')).toBe('INFO, serverLog');
  });
});
