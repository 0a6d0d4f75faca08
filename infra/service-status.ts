/** What `neon infra status` reports for one service; `state` never claims more than was checked. */
export type ServiceState =
  /** our process is alive and answered its readiness probe */
  | 'ready'
  /** our process is alive but did not answer (starting, or wedged) */
  | 'unresponsive'
  /** nothing recorded, nothing running */
  | 'stopped'
  /** a record exists but its process is gone (crash, reboot, kill -9) */
  | 'stale'
  /** not ours, but something answers on the configured port */
  | 'foreign';

export interface ServiceStatus {
  service: 'kafka' | 'elasticsearch';
  state: ServiceState;
  version: string;
  endpoint: string;
  pid?: number;
  dataDir: string;
  detail: string;
}
