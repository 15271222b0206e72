/**
 * The signed-in key. It comes from the sign-in form or from the URL fragment
 * (`/console/#key=…`, which browsers never send to a server), is kept in sessionStorage
 * (gone when the tab closes) and is removed from the address bar at once.
 */

const STORAGE = 'tqa.console.key';

/** The key a link passed in the URL fragment, or null. */
export function keyInFragment(): string | null {
  const match = /^#key=([^&]+)/.exec(location.hash);
  return match === null ? null : decodeURIComponent(match[1]);
}

/** Keeps a link's key and takes it out of the address bar, which shows the tokens page then. */
export function keepKeyFromLink(key: string): void {
  keepKey(key);
  history.replaceState(null, '', `${location.pathname}#/tokens`);
}

export const storedKey = (): string | null => sessionStorage.getItem(STORAGE);
export const keepKey = (key: string): void => sessionStorage.setItem(STORAGE, key);
export const forgetKey = (): void => sessionStorage.removeItem(STORAGE);
