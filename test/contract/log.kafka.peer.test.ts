import { pino } from 'pino';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import { startMockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { describeLogContract } from './log.contract.ts';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

describeLogContract('kafka (mock broker)', async () => {
  const broker = await startMockBroker();
  // The mock has no InitProducerId: idempotence stays off here and on against real Kafka.
  // It re-balances a group only after (session timeout - 1 s) once a member left: keep it short.
  const open = (clientId: string) =>
    new KafkaEventLog({ brokers: [broker.brokers], clientId, idempotent: false, logger, sessionTimeoutMs: 6_000 });
  const log = open('contract');
  const others: KafkaEventLog[] = [];
  return {
    log,
    describesGroups: false,
    reopen: async () => {
      const other = open(`contract-${others.length + 1}`);
      others.push(other);
      return other;
    },
    cleanup: async () => {
      try {
        await Promise.all([log, ...others].map((l) => l.close()));
      } finally {
        await broker.stop();
      }
    },
  };
});
