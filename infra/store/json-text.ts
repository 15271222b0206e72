/**
 * JSON text for a `json` column. validateRows parses every `json` value to refuse what is not
 * JSON, which for a whole snapshot costs more than making the row; texts made here are JSON
 * by construction, so the ones made lately are remembered and not parsed again. Bounded: the
 * memory is cleared past MAX_REMEMBERED (a row is validated right after it is made).
 */
const MAX_REMEMBERED = 4_096;
const remembered = new Set<string>();

export function jsonText(value: unknown): string {
  const text = JSON.stringify(value);
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.add(text);
  return text;
}

/** Whether `text` was made by jsonText lately: then it is JSON without parsing it. */
export function isMadeJsonText(text: string): boolean {
  return remembered.has(text);
}
