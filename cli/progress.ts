/**
 * A one-line progress display for long CLI jobs: count, rate per second and, when the
 * share done is known, a bar and the time left. On a terminal it redraws in place; into a
 * pipe or file it writes a plain line every few seconds so logs stay readable.
 */

export interface ProgressOptions {
  stream: NodeJS.WritableStream;
  label: string;
  /** What is counted, e.g. "records" or "rows". */
  unit: string;
  now?: () => number;
  /** Minimum ms between lines when the stream is not a terminal. */
  lineEveryMs?: number;
}

const REDRAW_MS = 100;
const BAR_WIDTH = 24;

export class Progress {
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly started: number;
  private lastDraw = -Infinity;
  private count = 0;
  private fraction: number | null = null;
  private note = '';
  private secondsLeft: number | null | undefined;

  constructor(private readonly options: ProgressOptions) {
    this.tty = (options.stream as { isTTY?: boolean }).isTTY === true;
    this.now = options.now ?? (() => Date.now());
    this.started = this.now();
  }

  /**
   * `fraction` is the share of the work done (0..1), when known; it drives the bar and, unless
   * the caller knows the time left better (`secondsLeft`, null while it does not know yet), the ETA.
   */
  update(count: number, fraction: number | null = null, note = '', secondsLeft?: number | null): void {
    this.count = count;
    this.fraction = fraction;
    this.note = note;
    this.secondsLeft = secondsLeft;
    const now = this.now();
    if (now - this.lastDraw < (this.tty ? REDRAW_MS : (this.options.lineEveryMs ?? 5000))) return;
    this.lastDraw = now;
    this.draw(now, false);
  }

  /** Writes a line of its own (a warning, a rejected row) without garbling a redrawn bar. */
  log(line: string): void {
    if (this.tty && this.lastDraw > -Infinity) this.options.stream.write('\r\x1b[K');
    this.options.stream.write(line + '\n');
    if (this.tty && this.lastDraw > -Infinity) this.draw(this.now(), false);
  }

  /** Draws the final state and ends the line. */
  finish(note?: string): void {
    if (note !== undefined) this.note = note;
    this.draw(this.now(), true);
  }

  private draw(now: number, final: boolean): void {
    const line = this.render(now);
    if (this.tty) this.options.stream.write(`\r${line}\x1b[K${final ? '\n' : ''}`);
    else this.options.stream.write(line + '\n');
  }

  private render(now: number): string {
    const seconds = Math.max(0.001, (now - this.started) / 1000);
    const parts = [this.options.label];
    const f = this.fraction;
    if (f !== null) {
      const clamped = Math.min(1, Math.max(0, f));
      const filled = Math.round(clamped * BAR_WIDTH);
      parts.push(`[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${(clamped * 100).toFixed(0).padStart(3)}%`);
    }
    parts.push(`${formatCount(this.count)} ${this.options.unit}`, `${formatCount(this.count / seconds)}/s`);
    if (this.secondsLeft !== undefined) parts.push(this.secondsLeft === null ? 'ETA measuring' : `ETA ${formatDuration(this.secondsLeft)}`);
    else if (f !== null && f > 0 && f < 1) parts.push(`ETA ${formatDuration((seconds * (1 - f)) / f)}`);
    else parts.push(`${formatDuration(seconds)} elapsed`);
    if (this.note) parts.push(this.note);
    return parts.join('  ');
  }
}

export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}
