/**
 * A usage mistake: the CLI prints the message and the command's usage, exit code 2.
 * It lives here, not in cli/, because parseOrUsage (projections/control-events.ts), which
 * the api and the CLI both call, throws it.
 */
export class UsageError extends Error {}
