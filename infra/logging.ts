import { pino, type Logger } from 'pino';

export type { Logger };

/** The root logger: JSON lines on stderr with level names, so stdout stays free for CLI output. */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.destination(2),
  );
}
