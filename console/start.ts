import { startFirstRequests } from './first-requests.ts';
import { keepKeyFromLink, keyInFragment, storedKey } from './session.ts';

/**
 * The head script, inlined into index.html by build.ts ahead of the stylesheet (a script
 * after one waits for it): with a key to check, it starts the first requests
 * (first-requests.ts) as the page arrives, while the console's script loads. The tokens page
 * is the default one, so an empty route is it too, and a link with a key opens it.
 */

const linked = keyInFragment();
// The requests before the key is kept: the first use of sessionStorage can wait on the browser.
const key = linked ?? storedKey();
const page = linked !== null ? 'tokens' : location.hash.replace(/^#\/?/, '').split(/[/?]/)[0];
if (key !== null) startFirstRequests(key, page === '' || page === 'tokens');
if (linked !== null) keepKeyFromLink(linked);
