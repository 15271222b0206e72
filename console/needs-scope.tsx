import type { ComponentChildren } from 'preact';
import { hasScope } from './api.ts';
import type { Session } from './session-type.ts';

/** A page's content, or for a key without the scope it needs a sentence saying so instead of a refused request. */
export function NeedsScope({ session, scope, what, children }: { session: Session; scope: string; what: string; children: ComponentChildren }) {
  if (hasScope(session.info, scope)) return <>{children}</>;
  return <p class="refused">This key lacks the scope {scope}: it cannot read {what}.</p>;
}
