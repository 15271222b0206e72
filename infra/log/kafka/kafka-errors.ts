import kafkajs from 'kafkajs';

// Node finds only some of kafkajs's CommonJS exports by name (not its error classes).
const { KafkaJSProtocolError, KafkaJSServerDoesNotSupportApiKey } = kafkajs;

/** An error and the errors it was caused by, outermost first (kafkajs wraps what its retries end with). */
function* errorChain(err: unknown): Generator<Error> {
  for (let e = err; e instanceof Error; e = e.cause) yield e;
}

/** Whether the broker lacks the API asked for: kafkajs says so itself, or inside the error its retries end with. */
export function isUnsupportedApi(err: unknown): boolean {
  return [...errorChain(err)].some((e) => e instanceof KafkaJSServerDoesNotSupportApiKey);
}

/**
 * Whether the error is the broker's answer to a request (an error code, a missing API), as
 * against a failure of the client or its connections: a timeout, a dropped connection, or a
 * client that believes a broker connected when its handshake never finished.
 */
export function isBrokerAnswer(err: unknown): boolean {
  return [...errorChain(err)].some((e) => e instanceof KafkaJSProtocolError || e instanceof KafkaJSServerDoesNotSupportApiKey);
}
