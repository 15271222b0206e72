import type { LoadedRule } from '../../processors/quant-engine/signals/rule-language.ts';
import { DEFAULT_RULE_SET, EVENT_STUDY_SIGNALS, type EventStudySlug } from '../../processors/quant-engine/signals/rules.ts';

/**
 * The six event studies of spec 2.9. Each is defined by a signal rule: its events are the
 * rule's firings, replayed over snapshot history with the rule's own conditions, end and
 * cooldown (firing.ts), so a new rule version gets its study without waiting for new data.
 */

export interface EventStudy {
  slug: EventStudySlug;
  title: string;
  description: string;
  /** The signal rule whose firings are the study's events. */
  rule: LoadedRule;
}

function ruleOf(type: string): LoadedRule {
  const rule = DEFAULT_RULE_SET.rules.find((r) => r.type === type);
  if (!rule) throw new Error(`no signal rule of type ${type} for its event study`);
  return rule;
}

function study(slug: EventStudySlug, title: string): EventStudy {
  const rule = ruleOf(EVENT_STUDY_SIGNALS[slug]);
  return {
    slug,
    title,
    description: `Forward returns after each firing of ${rule.type} (rule version ${rule.ruleVersion}): ${rule.description}`,
    rule,
  };
}

export const EVENT_STUDIES: readonly EventStudy[] = [
  study('velocity-3x', 'Mention velocity 3x'),
  study('hq-authors-converge', 'High-quality authors converge'),
  study('social-up-price-flat', 'Social up, price flat'),
  study('crowding-spike', 'Crowding spike'),
  study('broad-attention', 'Broad attention'),
  study('cooling', 'Cooling'),
];

export function eventStudy(slug: string): EventStudy | undefined {
  return EVENT_STUDIES.find((s) => s.slug === slug);
}
