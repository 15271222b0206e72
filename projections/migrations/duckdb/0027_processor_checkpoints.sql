-- The processors' checkpoints, shared by every processors process (processors/runtime/checkpoints/store.ts).
CREATE TABLE IF NOT EXISTS processor_checkpoints (
  processor VARCHAR NOT NULL,
  task BIGINT NOT NULL,
  slot BIGINT NOT NULL,
  part BIGINT NOT NULL,
  generation BIGINT NOT NULL,
  parts BIGINT NOT NULL,
  digest VARCHAR NOT NULL,
  saved_at BIGINT NOT NULL,
  data VARCHAR NOT NULL,
  PRIMARY KEY (processor, task, slot, part)
);
