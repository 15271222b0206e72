/**
 * The signed-in key. It comes from the sign-in form or from the URL fragment
 * (`/console/#key=…`, which browsers never send to a server), is kept in sessionStorage
 * (gone when the tab closes) and is removed from the address bar at once.
 */

const STORAGE = 'tqa.console.key';

export function keyFromFragment(): void {
  const match = /^#key=([^&]+)/.exec(location.hash);
  if (match === null) return;
  sessionStorage.setItem(STORAGE, decodeURIComponent(match[1]));
  history.replaceState(null, '', `${location.pathname}#/tokens`);
}

export const storedKey = (): string | null => sessionStorage.getItem(STORAGE);
export const keepKey = (key: string): void => sessionStorage.setItem(STORAGE, key);
export const forgetKey = (): void => sessionStorage.removeItem(STORAGE);
