import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '../../logging.ts';

/** The kafkajs level that lets through what the pino logger would print, so kafkajs skips formatting the rest. */
export function kafkaLogLevel(logger: Logger): logLevel {
  if (logger.isLevelEnabled('debug')) return logLevel.DEBUG;
  if (logger.isLevelEnabled('info')) return logLevel.INFO;
  if (logger.isLevelEnabled('warn')) return logLevel.WARN;
  if (logger.isLevelEnabled('error')) return logLevel.ERROR;
  return logLevel.NOTHING;
}

/** Routes kafkajs log entries into pino at the matching level, keeping kafkajs's fields as bindings. */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      // kafkajs stamps its own timestamp and logger name; pino has both already
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = log;
      const bindings = { kafkajs: namespace, ...fields };
      switch (level) {
        case logLevel.ERROR:
          logger.error(bindings, message);
          break;
        case logLevel.WARN:
          logger.warn(bindings, message);
          break;
        case logLevel.INFO:
          logger.info(bindings, message);
          break;
        default:
          logger.debug(bindings, message);
      }
    };
}
