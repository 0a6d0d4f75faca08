import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import kafkajs, { logLevel, type AclEntry, type Kafka } from 'kafkajs';
import { InfraError } from '../../infra/errors.js';
import { findJava } from '../../infra/java.js';
import type { ScramLogin } from '../../infra/kafka/kafka-config.js';
import { kafkaBrokers, kafkaPaths, startKafka, stopKafka } from '../../infra/kafka/kafka-launcher.js';
import { kafkaUserName, KEDA_KAFKA_USER } from '../../infra/kubernetes/cluster-names.js';
import { kedaAcls, processAcls, type Acl, type AclOperation } from '../../infra/kubernetes/kafka-resources.js';
import { findFreePorts } from '../../infra/ports.js';
import { kafkaSecurityFromEnv } from '../../schemas/connection-config.js';
import { loadLocalInfraConfig, type LocalInfraConfig } from '../../schemas/local-infra-config.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { DEPLOYED_PROCESSES } from '../../streams/pipeline/stage-catalog.js';
import { localTopicSpecs } from '../../streams/pipeline/topics.js';

const run = promisify(execFile);
// Node sees only some of kafkajs's CommonJS exports as named ones; these come from the module object.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;

/**
 * A Kafka broker of its own for one test file, locked down like the Strimzi cluster of k8s/: a
 * SASL_SSL listener (SCRAM-SHA-512 logins, a certificate from a throw-away CA), the StandardAuthorizer
 * with nothing allowed that no ACL allows, every product topic created, and each deployed process's
 * login holding exactly the ACLs rendered into k8s/base/generated/kafka-users.yaml. It runs beside the
 * suite's broker (own data directory, free ports) and is stopped, by its pid, and deleted by `stop`.
 */
export interface SecuredKafka {
  readonly brokers: string[];
  /** PEM of the CA that signed the broker's certificate (what `KAFKA_CA_FILE` points at). */
  readonly caFile: string;
  /** Logins: `admin` (super user), `neon-<process>` for every deployed process, and `neon-keda`. */
  readonly users: readonly string[];
  /**
   * The product's own Kafka settings for a login, as a Deployment gets them: `KAFKA_BROKERS`,
   * `KAFKA_TLS`, `KAFKA_CA_FILE`, `KAFKA_SASL_*`. `password` overrides the login's real one.
   */
  env(user: string, password?: string): Record<string, string>;
  /** A kafkajs client built the product's way (createKafkaClient with kafkaSecurityFromEnv) as `user`. */
  client(user: string, clientId?: string, password?: string): Kafka;
  /** Where the broker logs, for a failure message. */
  readonly logFile: string;
  /** The authorizer's denials so far (its audit lines in the broker log), oldest first. */
  denials(): Promise<string[]>;
  stop(): Promise<void>;
}

const ADMIN = 'admin';

/** Every login the deployment has, with the ACLs generated for it. */
function deployedLogins(): { user: string; acls: Acl[] }[] {
  return [
    ...DEPLOYED_PROCESSES.map((process) => ({ user: kafkaUserName(process.name), acls: processAcls(process) })),
    { user: KEDA_KAFKA_USER, acls: kedaAcls() },
  ];
}

const OPERATIONS: Record<AclOperation, kafkajs.AclOperationTypes> = {
  Read: AclOperationTypes.READ,
  Write: AclOperationTypes.WRITE,
  Describe: AclOperationTypes.DESCRIBE,
};

/** A Strimzi `simple` ACL rule as the AclEntries Kafka stores for it (one per operation). */
export function aclEntries(user: string, acl: Acl): AclEntry[] {
  return acl.operations.map((operation) => ({
    resourceType: acl.resource.type === 'topic' ? AclResourceTypes.TOPIC : AclResourceTypes.GROUP,
    resourceName: acl.resource.name,
    resourcePatternType:
      acl.resource.patternType === 'prefix' ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal: `User:${user}`,
    host: acl.host,
    operation: OPERATIONS[operation],
    permissionType: AclPermissionTypes.ALLOW,
  }));
}

/**
 * A throw-away CA and a broker certificate for 127.0.0.1 signed by it, with the JDK's keytool (Java
 * is there anyway for the broker): `broker.p12` holds the broker's key, its chain and the CA as a
 * trusted entry; `ca.pem` is what clients trust.
 */
async function makeThrowawayCa(
  javaHome: string,
  dir: string,
): Promise<{ keystoreFile: string; keystorePassword: string; caFile: string }> {
  const keytool = join(javaHome, 'bin', 'keytool');
  const password = randomBytes(12).toString('hex');
  const env = { ...process.env, NEON_TEST_STOREPASS: password };
  const ca = join(dir, 'ca.p12');
  const keystoreFile = join(dir, 'broker.p12');
  const caFile = join(dir, 'ca.pem');
  const csr = join(dir, 'broker.csr');
  const cert = join(dir, 'broker.pem');
  const store = (file: string) => ['-keystore', file, '-storetype', 'PKCS12', '-storepass:env', 'NEON_TEST_STOREPASS'];
  const newKey = (alias: string, dname: string, file: string, ...ext: string[]) =>
    ['-genkeypair', '-alias', alias, '-keyalg', 'EC', '-groupname', 'secp256r1', '-dname', dname, '-validity', '2']
      .concat(ext)
      .concat(store(file));
  const steps: string[][][] = [
    [newKey('ca', 'CN=neon-stream test CA', ca, '-ext', 'bc:c'), newKey('broker', 'CN=localhost', keystoreFile)],
    [
      ['-exportcert', '-alias', 'ca', '-rfc', '-file', caFile, ...store(ca)],
      ['-certreq', '-alias', 'broker', '-file', csr, ...store(keystoreFile)],
    ],
    [
      [
        '-gencert',
        '-alias',
        'ca',
        '-infile',
        csr,
        '-outfile',
        cert,
        '-rfc',
        '-validity',
        '2',
        '-ext',
        'san=ip:127.0.0.1,dns:localhost',
        '-ext',
        'eku=serverAuth',
        ...store(ca),
      ],
    ],
    [['-importcert', '-alias', 'ca', '-file', caFile, '-noprompt', ...store(keystoreFile)]],
    [['-importcert', '-alias', 'broker', '-file', cert, '-noprompt', ...store(keystoreFile)]],
  ];
  for (const parallel of steps) {
    await Promise.all(
      parallel.map((args) =>
        run(keytool, args, { env, timeout: 60_000 }).catch((error: unknown) => {
          const output = `${(error as { stdout?: string }).stdout ?? ''}${(error as { stderr?: string }).stderr ?? ''}`;
          throw new InfraError('start_failed', `keytool ${args[0]} failed: ${output.trim() || String(error)}`);
        }),
      ),
    );
  }
  return { keystoreFile, keystorePassword: password, caFile };
}

/**
 * Starts the secured broker (a fresh data directory under the system temp directory, free ports),
 * creates the product's topics as `admin`, and grants every login its generated ACLs. Throws — with
 * the broker's reason — when it cannot start; never falls back to an open broker.
 */
export async function startSecuredKafka(log: (line: string) => void = () => undefined): Promise<SecuredKafka> {
  const root = await mkdtemp(join(tmpdir(), 'neon-secured-kafka-'));
  let config: LocalInfraConfig | undefined;
  const cleanUp = async (): Promise<void> => {
    if (config) log((await stopKafka(config, 15_000)).replace(/^kafka:/, 'secured kafka:'));
    await rm(root, { recursive: true, force: true });
  };
  try {
    const java = await findJava();
    const tls = await makeThrowawayCa(java.javaHome, root);
    const caCertificate = await readFile(tls.caFile, 'utf8');
    const logins = deployedLogins();
    const passwords = new Map<string, string>(
      [ADMIN, ...logins.map((login) => login.user)].map((user) => [user, randomBytes(18).toString('base64url')]),
    );
    const scram = (name: string): ScramLogin => ({ name, password: passwords.get(name)! });
    const [kafkaPort, kafkaControllerPort] = await findFreePorts(2);
    config = loadLocalInfraConfig(process.env, {
      dataDir: join(root, 'instance'),
      kafkaPort,
      kafkaControllerPort,
      kafkaHeap: '256m',
    });
    await startKafka(config, java, log, {
      security: {
        admin: scram(ADMIN),
        users: logins.map((login) => scram(login.user)),
        tls: { keystoreFile: tls.keystoreFile, keystorePassword: tls.keystorePassword },
      },
      caCertificate,
    });
    const brokers = kafkaBrokers(config);
    const env = (user: string, password?: string): Record<string, string> => ({
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_TLS: 'true',
      KAFKA_CA_FILE: tls.caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: user,
      KAFKA_SASL_PASSWORD: password ?? passwords.get(user) ?? 'no-such-login',
    });
    const client = (user: string, clientId = `test-${user}`, password?: string): Kafka =>
      createKafkaClient({
        clientId,
        brokers,
        logLevel: logLevel.NOTHING,
        security: kafkaSecurityFromEnv(env(user, password)),
      });

    const admin = client(ADMIN).admin();
    await admin.connect();
    try {
      await createKafkaTransport(client(ADMIN)).ensureTopics(localTopicSpecs());
      const entries = logins.flatMap(({ user, acls }) => acls.flatMap((acl) => aclEntries(user, acl)));
      await admin.createAcls({ acl: entries });
      // ACLs reach the broker's authorizer through the metadata log: wait until it lists them all.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { resources } = await admin.describeAcls({
          resourceType: AclResourceTypes.ANY,
          resourcePatternType: ResourcePatternTypes.ANY,
          operation: AclOperationTypes.ANY,
          permissionType: AclPermissionTypes.ANY,
        });
        const listed = resources.reduce((n, resource) => n + resource.acls.length, 0);
        if (listed >= entries.length) break;
        if (Date.now() > deadline) throw new Error(`only ${listed} of ${entries.length} ACLs became visible`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      log(`secured kafka: ${passwords.size} SCRAM logins, ${entries.length} ACL entries at ${brokers.join(',')}`);
    } finally {
      await admin.disconnect();
    }
    const started = config;
    return {
      brokers,
      caFile: tls.caFile,
      users: [...passwords.keys()],
      env,
      client,
      logFile: join(kafkaPaths(started).logs, 'server.log'),
      denials: async () =>
        (await readFile(join(kafkaPaths(started).logs, 'server.log'), 'utf8'))
          .split('\n')
          .filter((line) => line.includes('kafka.authorizer.logger') || / is Denied operation /.test(line)),
      stop: cleanUp,
    };
  } catch (error) {
    await cleanUp().catch(() => undefined);
    throw error;
  }
}
