-- The processors' checkpoints, shared by every processors process (processors/runtime/checkpoints/store.ts).
CREATE TABLE IF NOT EXISTS processor_checkpoints (
  processor String,
  task Int64,
  slot Int64,
  part Int64,
  generation Int64,
  parts Int64,
  digest String,
  saved_at Int64,
  data String
) ENGINE = ReplacingMergeTree(generation)
ORDER BY (processor, task, slot, part);
