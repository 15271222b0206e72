/**
 * A page's choices kept in the fragment's query (`#/narratives?window=7d`), so a view is a
 * link. A choice absent from the link takes its default; the API checks the values given,
 * so a wrong one answers with its VALIDATION error.
 */
export function choicesOf<T extends Record<string, string>>(query: string, defaults: T): T {
  const given = new URLSearchParams(query);
  return Object.fromEntries(Object.entries(defaults).map(([name, value]) => [name, given.get(name) || value])) as T;
}

/** Shows a page with these choices: the page follows the fragment. */
export function choose(page: string, choices: Record<string, string>): void {
  location.hash = `#/${page}?${new URLSearchParams(choices)}`;
}
