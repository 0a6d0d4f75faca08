/**
 * CPU time by process over a phase of the benchmark: every `neon pipeline` child of this process (by
 * the stages it runs), Elasticsearch, Kafka and the benchmark itself (the replay, the fake endpoint,
 * the visibility probes). Read from /proc (user + system time of all a process's threads), so it is
 * Linux-only and costs nothing while the phase runs; elsewhere the figure is simply absent.
 *
 * Why: on a machine shared by every stage, Elasticsearch and Kafka, throughput is the cores divided
 * by the CPU an article costs, summed over every process. The stages' own throughputs, each measured
 * alone, do not show what the processes cost together; this does.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ, the unit of /proc/<pid>/stat times: 100 on every mainstream Linux build. */
const TICKS_PER_SECOND = 100;

interface ProcessTimes {
  ppid: number;
  cpuSeconds: number;
}

function readTimes(pid: string): ProcessTimes | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
  } catch {
    return undefined; // gone meanwhile
  }
}

function commandLine(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** What a process is, for this benchmark; undefined for processes it does not account for. */
function labelOf(pid: string, times: ProcessTimes): string | undefined {
  if (Number(pid) === process.pid) return 'benchmark';
  const command = commandLine(pid);
  if (times.ppid === process.pid) {
    const stages = / pipeline --stages (\S+)/.exec(command);
    if (stages) return `pipeline ${stages[1]!}`;
  }
  if (command.includes('org.elasticsearch.bootstrap.Elasticsearch')) return 'elasticsearch';
  if (/\bkafka\.Kafka\b/.test(command)) return 'kafka';
  return undefined;
}

/** CPU seconds used so far, per label; undefined where /proc is not there. */
export function cpuSnapshot(): Map<string, number> | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const byLabel = new Map<string, number>();
  for (const pid of pids) {
    const times = readTimes(pid);
    if (times === undefined) continue;
    const label = labelOf(pid, times);
    if (label !== undefined) byLabel.set(label, (byLabel.get(label) ?? 0) + times.cpuSeconds);
  }
  return byLabel;
}

export interface CpuFigure {
  /** CPU milliseconds per article, by process, the largest first, and in total. */
  ms_per_article: Record<string, number>;
  total_ms_per_article: number;
  /** Cores kept busy on average over the phase (all processes above). */
  cores_busy: number;
}

/** The CPU between two snapshots, per article of the phase; null when either is missing. */
export function cpuBetween(
  before: Map<string, number> | undefined,
  after: Map<string, number> | undefined,
  articles: number,
  seconds: number,
): CpuFigure | null {
  if (before === undefined || after === undefined || articles <= 0 || seconds <= 0) return null;
  const used = [...after]
    .map(([label, cpu]) => [label, cpu - (before.get(label) ?? 0)] as const)
    .filter(([, cpu]) => cpu > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = used.reduce((sum, [, cpu]) => sum + cpu, 0);
  return {
    ms_per_article: Object.fromEntries(used.map(([label, cpu]) => [label, Math.round((cpu * 1000) / articles)])),
    total_ms_per_article: Math.round((total * 1000) / articles),
    cores_busy: Math.round((total / seconds) * 100) / 100,
  };
}
