import { APPLY_TIMEOUT_MS, BUSY_APPLY_TIMEOUT_MS } from '../../projections/control-events.ts';

/** What a control command says when the service runs but has not applied its change by the first deadline (applied's onBusy). */
export function busyNote(id: string): string {
  return `${id}: the service is running but has not applied the change yet (it may be catching up); waiting up to ${BUSY_APPLY_TIMEOUT_MS / 1000} s in all\n`;
}

/** What a control command says when its change was not applied (applied returned false). */
export function notAppliedNote(id: string, topic: string): string {
  return (
    `${id}: the change is in ${topic} but no projections role applied it ` +
    `(within ${APPLY_TIMEOUT_MS / 1000} s with none running, ${BUSY_APPLY_TIMEOUT_MS / 1000} s with one running); it takes effect once one does\n`
  );
}
